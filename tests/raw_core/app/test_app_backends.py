"""The session backend the config names, and what ``raw sessions show --json`` prints of
what the user saw."""

from __future__ import annotations

import json
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from raw_core import Reply, ScriptedProvider, hookimpl
from raw_core.app import App
from raw_core.cli import cli
from raw_core.errors import ConfigInvalid
from raw_core.plugins import PluginHost
from raw_core.runtime.frontend import CallbackFrontEnd
from raw_core.sessions.backend import SessionBackend, SessionBackendRecord
from raw_core.sessions.sqlite import SqliteBackend

pytestmark = pytest.mark.anyio


class FolderBackends:
    """A plug-in whose backend ``folders`` keeps SQLite stores under ``root``/``name``."""

    def __init__(self) -> None:
        self.opened: list[Mapping[str, Any]] = []

    async def open(self, *, options: Mapping[str, Any], expire_after_days: float, **_: Any) -> Any:
        self.opened.append(dict(options))
        return await SqliteBackend.open(
            Path(options["root"]) / options["name"], expire_after_days=expire_after_days
        )

    @staticmethod
    def validate(options: Mapping[str, Any], field: str) -> None:
        for key in ("root", "name"):
            if not isinstance(options.get(key), str):
                raise ConfigInvalid(f"expected a string {key}", field=f"{field}.{key}")

    @hookimpl
    def raw_register_session_backends(self) -> list[SessionBackendRecord]:
        return [
            SessionBackendRecord(name="folders", factory=self.open, validate_config=self.validate)
        ]


def write_config(project: Path, backend: dict[str, Any]) -> Path:
    config = json.loads((project / "raw.json").read_text())
    config["sessions"] = {"backend": backend}
    path = project / "with-backend.json"
    path.write_text(json.dumps(config))
    return path


async def test_the_app_stores_sessions_in_the_backend_the_config_names(
    project: Path, host: PluginHost, tmp_path: Path
) -> None:
    plugin = FolderBackends()
    host.register(plugin, name="folders")
    config = write_config(
        project, {"type": "folders", "root": str(tmp_path / "stores"), "name": "team"}
    )
    model = ScriptedProvider([Reply(text="hello")])
    async with App.open(config, host=host, provider=model) as app:
        async with app.open_session() as session:
            await session.run_turn("hi")
        backend = await app.backend()
        assert isinstance(backend, SessionBackend)
        listed = [info.id for info in await app.list_sessions()]
    assert plugin.opened == [{"root": str(tmp_path / "stores"), "name": "team"}]
    assert listed == [session.id]
    assert (tmp_path / "stores" / "team" / "sessions-v3.sqlite3").is_file()


@pytest.mark.parametrize(
    ("backend", "field"),
    [
        pytest.param({"type": "nowhere"}, "$.sessions.backend.type", id="unknown-type"),
        pytest.param({"type": "folders", "root": 3}, "$.sessions.backend.root", id="bad-option"),
    ],
)
async def test_a_backend_the_config_cannot_use_is_config_invalid(
    project: Path, host: PluginHost, backend: dict[str, Any], field: str
) -> None:
    host.register(FolderBackends(), name="folders")
    with pytest.raises(ConfigInvalid) as raised:
        async with App.open(write_config(project, backend), host=host) as app:
            await app.list_sessions()
    assert raised.value.field == field


def test_sessions_show_json_gives_each_item_its_kind(
    project: Path, host: PluginHost, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import anyio

    monkeypatch.setenv("XDG_STATE_HOME", str(tmp_path / "state"))
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path / "no-user-config"))
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    monkeypatch.chdir(elsewhere)  # no raw.json here, no user config: the default store
    long_text = "x" * 200  # over agent a's 160-byte cap
    model = ScriptedProvider(
        [
            Reply(tool_calls=(("echo", {"text": "ask first"}),)),
            Reply(tool_calls=(("echo", {"text": long_text}),)),
            Reply(text="done"),
        ]
    )

    async def approve(request: Any) -> bool:
        return True

    async def run() -> str:
        async with App.open(project / "raw.json", host=host, provider=model) as app:
            front_end = CallbackFrontEnd(approve=approve, name="terminal")
            async with app.open_session(front_end=front_end) as session:
                await session.run_turn("go")
            return session.id

    session_id = anyio.run(run)
    shown = CliRunner().invoke(cli, ["sessions", "show", session_id, "--json"])
    assert shown.exit_code == 0, shown.output
    body = json.loads(shown.stdout)
    items = body["items"]
    assert [item["kind"] for item in items] == [
        "message",
        "message",
        "request",
        "request",
        "message",
        "message",
        "message",
        "tool_output",
        "message",
    ]
    assert [item["seq"] for item in items] == list(range(1, 10))
    for item in items:
        assert item["created_at"].endswith("+00:00")
    opened, approval = items[2], items[3]
    assert set(approval) == {
        "seq",
        "created_at",
        "kind",
        "request_id",
        "request_kind",
        "tool_call_id",
        "show",
        "deadline",
        "state",
        "answer",
    }
    assert opened["request_id"] == approval["request_id"]
    assert (opened["state"], opened["answer"]) == ("pending", None)
    assert approval["request_kind"] == "approval"
    assert approval["show"]["identity"] == "agent/echo"
    assert approval["show"]["arguments"] == {"text": "ask first"}
    assert approval["state"] == "approved"
    assert approval["answer"] == {"approved": True, "by": "terminal", "message": None}
    assert approval["tool_call_id"] == items[4]["message"]["tool_call_id"]
    output = items[7]
    assert output["tool_call_id"] == items[6]["message"]["tool_call_id"]
    assert output["content"] == [{"type": "text", "text": long_text}]
    assert output["truncated"] is False
    assert body["has_more"] is False
