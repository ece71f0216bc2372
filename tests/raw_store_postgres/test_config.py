"""Selecting the PostgreSQL backend in the config: every option checked, the connection
string read from the environment or a config variable (never written in the config, never
in an error), the plug-in found through the ``raw`` entry-point group, and the app storing
its sessions on the server."""

from __future__ import annotations

import json
import re
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from raw_core import Reply, ScriptedProvider
from raw_core.app import App
from raw_core.config import load_config
from raw_core.errors import ConfigInvalid, VarNotSelected
from raw_core.plugins import PluginHost
from raw_store_postgres import PostgresBackend, PostgresOptions, parse_options
from raw_store_postgres import plugin as postgres_plugin
from raw_store_postgres.config import resolve_dsn
from raw_store_postgres.testing import ThrowawayServer
from tests.conftest import run_raw

GOOD = {"type": "postgres", "dsn": {"env": "RAW_TEST_PG_DSN"}}


def test_the_options_and_their_defaults() -> None:
    assert parse_options(GOOD) == PostgresOptions(dsn_env="RAW_TEST_PG_DSN")
    full = {
        **GOOD,
        "dsn": {"var": "TEAM_DB"},
        "pool_size": 8,
        "statement_timeout_ms": 5000,
        "connect_timeout_ms": 2000,
    }
    assert parse_options(full) == PostgresOptions(
        dsn_var="TEAM_DB", pool_size=8, statement_timeout_ms=5000, connect_timeout_ms=2000
    )


@pytest.mark.parametrize(
    ("options", "field", "says"),
    [
        pytest.param({"type": "postgres"}, "$.sessions.backend.dsn", "expected", id="no-dsn"),
        pytest.param(
            {**GOOD, "dsn": "postgresql://u:secret@db/raw"},
            "$.sessions.backend.dsn",
            "never written in the config",
            id="dsn-as-text",
        ),
        pytest.param(
            {**GOOD, "dsn": {"env": "A", "var": "B"}},
            "$.sessions.backend.dsn",
            "exactly one key",
            id="dsn-two-keys",
        ),
        pytest.param(
            {**GOOD, "dsn": {"file": "x"}}, "$.sessions.backend.dsn", "exactly one", id="dsn-file"
        ),
        pytest.param(
            {**GOOD, "dsn": {"env": ""}}, "$.sessions.backend.dsn.env", "non-empty", id="empty"
        ),
        pytest.param(
            {**GOOD, "dsn": {"var": 3}}, "$.sessions.backend.dsn.var", "string", id="var-number"
        ),
        pytest.param(
            {**GOOD, "pool_size": 0}, "$.sessions.backend.pool_size", "from 1", id="pool-0"
        ),
        pytest.param(
            {**GOOD, "pool_size": True}, "$.sessions.backend.pool_size", "boolean", id="pool-bool"
        ),
        pytest.param(
            {**GOOD, "statement_timeout_ms": 1.5},
            "$.sessions.backend.statement_timeout_ms",
            "integer",
            id="timeout-float",
        ),
        pytest.param(
            {**GOOD, "connect_timeout_ms": 10},
            "$.sessions.backend.connect_timeout_ms",
            "from 1,000",
            id="connect-too-short",
        ),
        pytest.param(
            {**GOOD, "directory": "/srv"}, "$.sessions.backend.directory", "unknown", id="unknown"
        ),
    ],
)
def test_every_option_is_checked(options: dict[str, Any], field: str, says: str) -> None:
    with pytest.raises(ConfigInvalid) as raised:
        parse_options(options)
    assert raised.value.code == "config_invalid"
    assert raised.value.field == field
    assert says in raised.value.message
    assert "secret" not in raised.value.message


def write_project(root: Path, backend: dict[str, Any], **extra: Any) -> Path:
    root.mkdir(parents=True, exist_ok=True)
    config = {"agents": {"a": {"tools": {"use": []}}}, "sessions": {"backend": backend}, **extra}
    path = root / "raw.json"
    path.write_text(json.dumps(config))
    return path


def postgres_host() -> PluginHost:
    host = PluginHost()
    host.register(postgres_plugin, name="postgres")
    return host


def test_the_config_check_names_the_bad_field(tmp_path: Path) -> None:
    path = write_project(tmp_path, {**GOOD, "pool_size": "many"})
    with pytest.raises(ConfigInvalid) as raised:
        load_config(path, host=postgres_host())
    assert raised.value.field == "$.sessions.backend.pool_size"


def test_the_plugin_comes_from_the_entry_point_group_and_imports_no_psycopg() -> None:
    host = PluginHost()
    host.load_entry_points()
    assert "postgres" in host.session_backends()
    code = (
        "import sys\n"
        "from raw_core.plugins import PluginHost\n"
        "host = PluginHost(); host.load_entry_points(); host.session_backends()\n"
        "print(','.join(m for m in ('psycopg', 'psycopg_pool') if m in sys.modules))\n"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == ""


@pytest.mark.anyio
async def test_an_unset_environment_variable_is_config_invalid_naming_it(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("RAW_TEST_PG_DSN", raising=False)
    path = write_project(tmp_path, GOOD)
    with pytest.raises(ConfigInvalid) as raised:
        async with App.open(path, host=postgres_host()) as app:
            await app.list_sessions()
    assert raised.value.field == "$.sessions.backend.dsn.env"
    assert raised.value.context["env"] == "RAW_TEST_PG_DSN"


@pytest.mark.anyio
@pytest.mark.parametrize("source", ["env", "var"])
async def test_the_app_keeps_its_sessions_on_the_server(
    source: str,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    postgres_server: ThrowawayServer,
    postgres_dsn: str,
) -> None:
    monkeypatch.setenv("RAW_TEST_PG_DSN", postgres_dsn)
    if source == "env":
        path = write_project(tmp_path, GOOD)
    else:
        path = write_project(
            tmp_path,
            {"type": "postgres", "dsn": {"var": "TEAM_DB"}},
            vars={
                "TEAM_DB": {
                    "description": "the team's database",
                    "from": {"env": "RAW_TEST_PG_DSN"},
                }
            },
        )
    model = ScriptedProvider([Reply(text="hello from the server")])
    async with App.open(path, host=postgres_host(), provider=model) as app:
        async with app.open_session() as session:
            ended = await session.run_turn("hi")
        assert ended.reason == "completed"
        backend = await app.backend()
        assert isinstance(backend, PostgresBackend)
        assert [info.id for info in await app.list_sessions()] == [session.id]
    dbname = postgres_dsn.rsplit("dbname=", 1)[1]
    stored = postgres_server.psql("SELECT count(*) FROM raw_sessions_v2.entries", dbname=dbname)
    assert stored == "2"  # the prompt and the reply


def test_the_config_examples_of_the_scale_out_page_are_valid(tmp_path: Path) -> None:
    page = Path(__file__).parents[2] / "docs" / "scale-out.md"
    blocks = re.findall(r"```json\n(.*?)```", page.read_text(encoding="utf-8"), re.S)
    assert len(blocks) == 2
    for index, block in enumerate(blocks):
        example = json.loads(block)
        assert example["sessions"]["backend"]["type"] == "postgres"
        path = write_project(tmp_path / str(index), example["sessions"]["backend"])
        config = json.loads(path.read_text())
        path.write_text(json.dumps({**config, **{k: v for k, v in example.items() if k == "vars"}}))
        loaded = load_config(path, host=postgres_host())
        assert loaded.sessions.backend.type == "postgres"
        parse_options(loaded.sessions.backend.options)


def test_a_dsn_naming_an_undefined_variable_is_refused_by_validate_and_every_command(
    tmp_path: Path,
) -> None:
    path = write_project(tmp_path / "p", {"type": "postgres", "dsn": {"var": "NOPE"}})
    checked = run_raw(tmp_path, "config", "validate", "--json", "--config", str(path))
    assert checked.returncode == 2, checked.stdout
    report = json.loads(checked.stdout)
    assert [(p["code"], p["field"]) for p in report["problems"]] == [
        ("config_invalid", "$.sessions.backend.dsn.var")
    ]
    assert "'NOPE' is not defined in vars" in report["problems"][0]["message"]
    listed = run_raw(tmp_path, "sessions", "list", "--config", str(path))
    assert listed.returncode == 2
    assert "config_invalid" in listed.stderr
    assert "$.sessions.backend.dsn.var" in listed.stderr
    assert "var_not_selected" not in listed.stderr
    assert "Traceback" not in listed.stderr + checked.stderr


def test_a_dsn_variable_defined_in_vars_passes_the_check(tmp_path: Path) -> None:
    team_db = {"description": "the team's database", "from": {"env": "RAW_TEST_PG_DSN"}}
    path = write_project(
        tmp_path, {"type": "postgres", "dsn": {"var": "TEAM_DB"}}, vars={"TEAM_DB": team_db}
    )
    assert load_config(path, host=postgres_host()).sessions.backend.type == "postgres"


def test_resolving_an_undefined_dsn_variable_names_the_field() -> None:
    def resolve(name: str) -> str:
        raise VarNotSelected(f"no variable named {name!r} is defined", var=name)

    with pytest.raises(ConfigInvalid) as raised:
        resolve_dsn(PostgresOptions(dsn_var="NOPE"), resolve_var=resolve)
    assert raised.value.field == "$.sessions.backend.dsn.var"


@pytest.mark.parametrize(
    ("dsn", "says"),
    [
        ({"env": "A", "var": "B"}, 'found an object with the keys "env", "var"'),
        ({}, "found an empty object"),
    ],
)
def test_a_dsn_with_the_wrong_keys_names_them_as_json(dsn: dict[str, str], says: str) -> None:
    with pytest.raises(ConfigInvalid) as raised:
        parse_options({**GOOD, "dsn": dsn})
    assert raised.value.field == "$.sessions.backend.dsn"
    assert says in raised.value.message
    assert "['" not in raised.value.message


def test_a_project_variable_never_supplies_the_users_dsn(tmp_path: Path) -> None:
    user = tmp_path / "config" / "raw" / "config.json"
    user.parent.mkdir(parents=True)
    user.write_text(
        json.dumps({"sessions": {"backend": {"type": "postgres", "dsn": {"var": "TEAM_DB"}}}})
    )
    team_db = {"description": "a project's database", "from": {"env": "RAW_TEST_PG_DSN"}}
    project = write_project(tmp_path / "p", {"type": "sqlite"}, vars={"TEAM_DB": team_db})
    checked = run_raw(tmp_path, "config", "validate", "--json", "--config", str(project))
    assert checked.returncode == 2, checked.stdout
    (problem,) = json.loads(checked.stdout)["problems"]
    assert (problem["field"], problem["path"]) == ("$.sessions.backend.dsn.var", str(user))
