"""Variable sources at their edges: what the config refuses, what a read that fails ends as,
empty and oversized values, and one cache for a runtime's sessions and calls."""

from __future__ import annotations

import json
import os
import sys
import threading
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

import pytest

from raw_core.agent import load_agent
from raw_core.agent.variables import MAX_VALUE_BYTES, VarCache, VarService
from raw_core.app import App
from raw_core.config import VarDefinition, VarSource, parse_config
from raw_core.dispatch import Dispatcher
from raw_core.errors import ConfigInvalid, VarUnavailable
from raw_core.plugins import PluginHost
from raw_core.providers.scripted import Reply, ScriptedProvider
from raw_core.tools.calls import ToolCall
from tests.conftest import run_raw

pytestmark = pytest.mark.anyio


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


def config_with(source: dict[str, Any], **agent: Any) -> dict[str, Any]:
    """A config whose model's credential is the variable X, read from ``source``."""
    return {
        "models": {
            "m": {
                "provider": "openai",
                "model": "x",
                "base_url": "http://127.0.0.1:9/v1",
                "api_key": {"var": "X"},
            }
        },
        "agents": {"a": {"model": "m", "tools": {"use": []}, **agent}},
        "vars": {"X": {"description": "d", "from": source}},
    }


# --- the config refuses sources raw could never read ------------------------------------


@pytest.mark.parametrize(
    ("source", "field", "fragment"),
    [
        pytest.param({"file": "a\0b"}, "file", "a NUL character", id="file-nul"),
        pytest.param({"file": "a\ud800b"}, "file", "lone surrogate", id="file-surrogate"),
        pytest.param({"file": ""}, "file", "found an empty string", id="file-empty"),
        pytest.param({"env": "A\0B"}, "env", "a NUL character", id="env-nul"),
        pytest.param({"env": "A\udc80"}, "env", "lone surrogate", id="env-surrogate"),
        pytest.param({"env": ""}, "env", "found an empty string", id="env-empty"),
        pytest.param({"env": "A=B"}, "env", "'='", id="env-equals"),
        pytest.param({"command": ["echo", "a\0"]}, "command[1]", "NUL", id="command-nul"),
        pytest.param({"command": ["ec\ud800ho"]}, "command[0]", "surrogate", id="command-surr"),
        pytest.param({"command": [""]}, "command[0]", "the program to run", id="command-empty"),
    ],
)
def test_the_config_refuses_a_source_that_cannot_be_read(
    source: dict[str, Any], field: str, fragment: str
) -> None:
    with pytest.raises(ConfigInvalid) as caught:
        parse_config(json.dumps(config_with(source)))  # \u0000 and \ud800 escapes
    assert caught.value.field == f"$.vars.X.from.{field}"
    assert fragment in caught.value.message
    assert caught.value.message.startswith("expected ")
    caught.value.message.encode("utf-8")  # printable: the bad text is never quoted


@pytest.mark.parametrize("name", ["a\ud800b", "A\0B", "A=B", ""])
def test_the_config_refuses_a_credential_env_name_that_cannot_be_read(name: str) -> None:
    config = config_with({"env": "X"})
    config["models"]["m"]["api_key"] = {"env": name}
    with pytest.raises(ConfigInvalid) as caught:
        parse_config(json.dumps(config))
    assert caught.value.field == "$.models.m.api_key.env"
    assert caught.value.message.startswith("expected the name of an environment variable")


def test_raw_run_with_a_nul_in_a_credential_file_is_config_invalid(tmp_path: Path) -> None:
    config = tmp_path / "n.json"
    config.write_text(json.dumps(config_with({"file": "a\0b"})))
    validated = run_raw(tmp_path, "config", "validate", "--config", str(config))
    assert validated.returncode == 2, validated.stdout
    assert "$.vars.X.from.file" in validated.stderr
    ran = run_raw(tmp_path, "run", "hi", "--config", str(config))
    assert ran.returncode == 2
    assert "config_invalid" in ran.stderr
    assert "Traceback" not in ran.stderr + ran.stdout


# --- a read that fails is var_unavailable, whatever the reason ----------------------------


def unchecked(source: VarSource, **fields: Any) -> VarSource:
    """``source`` with ``fields`` set past the record's checks (as an embedding could)."""
    for name, value in fields.items():
        object.__setattr__(source, name, value)
    return source


@pytest.mark.parametrize(
    "source",
    [
        pytest.param(lambda: unchecked(VarSource(file="f"), file="a\0b"), id="file-nul"),
        pytest.param(lambda: unchecked(VarSource(file="f"), file="a\ud800"), id="file-surrogate"),
        pytest.param(lambda: unchecked(VarSource(env="E"), env="E\ud800"), id="env-surrogate"),
        pytest.param(
            lambda: unchecked(VarSource(command=("echo",)), command=("echo", "a\0")),
            id="command-nul",
        ),
        pytest.param(
            lambda: unchecked(VarSource(command=("echo",)), command=("ec\ud800ho",)),
            id="command-surrogate",
        ),
    ],
)
async def test_a_source_the_system_cannot_take_is_var_unavailable(
    tmp_path: Path, builtin_host: PluginHost, source: Callable[[], VarSource]
) -> None:
    definitions = {"X": VarDefinition(description="d", source=source())}
    variables = VarService(definitions, ["X"], base_dir=tmp_path)
    with pytest.raises(VarUnavailable) as caught:
        variables.read("X")
    caught.value.message.encode("utf-8")
    # Through builtin/read_var: the call ends as var_unavailable, not as a handler error.
    config = tmp_path / "raw.json"
    config.write_text(
        json.dumps(
            {
                "agents": {"a": {"tools": {"use": ["builtin/read_var"]}, "vars": {"use": ["X"]}}},
                "vars": {"X": {"description": "d", "from": {"env": "UNUSED"}}},
            }
        )
    )
    agent = load_agent(parse_config(config.read_bytes(), path=config), host=builtin_host)
    dispatcher = Dispatcher(agent.registry, agent.policy, vars=variables)
    result = await dispatcher.dispatch(
        ToolCall(id="c", name="read_var", arguments=json.dumps({"name": "X"}))
    )
    assert result.code == "var_unavailable", result.text()


# --- empty and oversized values ------------------------------------------------------------


def one(source: VarSource, base_dir: Path, environ: dict[str, str] | None = None) -> VarService:
    definitions = {"V": VarDefinition(description="d", source=source)}
    return VarService(definitions, ["V"], base_dir=base_dir, environ=environ or {})


@pytest.mark.parametrize(
    "source",
    [
        pytest.param(VarSource(env="E"), id="env"),
        pytest.param(VarSource(file="empty.txt"), id="file"),
        pytest.param(VarSource(file="newline.txt"), id="file-newline-only"),
        pytest.param(VarSource(command=(sys.executable, "-c", "pass")), id="command"),
    ],
)
def test_an_empty_value_is_var_unavailable_from_every_source(
    tmp_path: Path, source: VarSource
) -> None:
    (tmp_path / "empty.txt").write_bytes(b"")
    (tmp_path / "newline.txt").write_bytes(b"\n")
    with pytest.raises(VarUnavailable, match="is empty"):
        one(source, tmp_path, {"E": ""}).read("V")


def test_an_oversized_environment_value_is_var_unavailable(tmp_path: Path) -> None:
    environ = {"E": "x" * (MAX_VALUE_BYTES + 1)}
    with pytest.raises(VarUnavailable, match="larger than"):
        one(VarSource(env="E"), tmp_path, environ).read("V")


def test_a_file_is_read_no_further_than_the_limit(tmp_path: Path) -> None:
    """A FIFO whose writer keeps it open after more than the limit: a reader that reads the
    whole file would wait for its end."""
    fifo = tmp_path / "endless"
    os.mkfifo(fifo)
    release = threading.Event()

    def write() -> None:
        with fifo.open("wb") as stream:
            try:
                stream.write(b"x" * (MAX_VALUE_BYTES + 2))
                stream.flush()
            except BrokenPipeError:
                pass  # the reader stopped at the limit and closed its end
            release.wait(30)

    writer = threading.Thread(target=write)
    writer.start()
    try:
        with ThreadPoolExecutor(1) as pool:
            read = pool.submit(one(VarSource(file=str(fifo)), tmp_path).read, "V")
            try:
                with pytest.raises(VarUnavailable, match="larger than"):
                    read.result(timeout=15)
            finally:
                release.set()
    finally:
        release.set()
        writer.join(30)


# --- one cache for the runtime ------------------------------------------------------------


def counting(tmp_path: Path) -> tuple[list[str], Path]:
    """A command that appends a line to ``count`` each time it runs, and prints a token."""
    count = tmp_path / "count"
    code = (
        f"import pathlib; p = pathlib.Path({str(count)!r});"
        " p.open('a').write('read\\n'); print('tok')"
    )
    return [sys.executable, "-c", code], count


async def test_one_app_reads_a_variable_once_for_its_sessions_and_calls(
    tmp_path: Path, builtin_host: PluginHost
) -> None:
    command, count = counting(tmp_path)
    config = tmp_path / "raw.json"
    config.write_text(
        json.dumps(
            {
                "agents": {"a": {"tools": {"use": ["builtin/read_var"]}, "vars": {"use": ["V"]}}},
                "vars": {"V": {"description": "d", "from": {"command": command}}},
            }
        )
    )
    provider = ScriptedProvider(
        [
            Reply(tool_calls=(("read_var", {"name": "V"}),)),
            Reply(text="read"),
            Reply(tool_calls=(("read_var", {"name": "V"}),)),
            Reply(text="again"),
        ]
    )
    loaded = parse_config(config.read_bytes(), path=config)
    async with App.open(
        loaded, host=builtin_host, provider=provider, store_dir=tmp_path / "store"
    ) as app:
        async with app.open_session() as session:
            await session.run_turn("read it")
        async with app.open_session(session.id) as resumed:
            await resumed.run_turn("read it again")
        result = await app.call_tool("builtin/read_var", {"name": "V"})
        assert result.text() == "tok"
    assert count.read_text() == "read\n"
    # Another runtime reads it again: the cache lives in memory for one runtime only.
    async with App.open(loaded, host=builtin_host, store_dir=tmp_path / "store") as app:
        await app.call_tool("builtin/read_var", {"name": "V"})
    assert count.read_text() == "read\nread\n"


def test_services_given_one_cache_share_its_values(tmp_path: Path) -> None:
    command, count = counting(tmp_path)
    source = VarSource(command=tuple(command))
    cache = VarCache()
    definitions = {"V": VarDefinition(description="d", source=source)}
    for _ in range(3):
        assert VarService(definitions, ["V"], base_dir=tmp_path, cache=cache).read("V") == "tok"
    assert count.read_text() == "read\n"
