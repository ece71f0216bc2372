"""JSON Schema's ``integer`` takes ``2.0`` as well as ``2``: every built-in tool's integer
field does what the integer does, through the real dispatcher (a model may well write
``2.0``)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from raw_core.agent import load_agent
from raw_core.config import load_config
from raw_core.dispatch import Dispatcher
from raw_core.plugins import PluginHost
from raw_core.tools.calls import ToolCall
from raw_core.tools.resources import SessionResources

pytestmark = pytest.mark.anyio

TOOLS = ["builtin/read_file", "builtin/write_file", "builtin/process"]


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


@pytest.fixture
def work(tmp_path: Path) -> Path:
    folder = tmp_path / "work"
    folder.mkdir()
    (folder / "f.txt").write_text("one\ntwo\nthree\n", encoding="utf-8")
    return folder


@pytest.fixture
def dispatcher(tmp_path: Path, work: Path) -> Dispatcher:
    config = tmp_path / "raw.json"
    config.write_text(json.dumps({"agents": {"a": {"tools": {"use": TOOLS}}}}), encoding="utf-8")
    host = PluginHost()
    host.load_entry_points()
    agent = load_agent(load_config(config), host=host)
    return Dispatcher(agent.registry, agent.policy, cwd=work)


async def call(dispatcher: Dispatcher, name: str, arguments: Any) -> str:
    result = await dispatcher.dispatch(ToolCall(id="c", name=name, arguments=json.dumps(arguments)))
    assert result.status == "ok", result.text()
    return result.text()


async def test_read_file_lines(dispatcher: Dispatcher) -> None:
    text = await call(
        dispatcher, "read_file", {"files": [{"path": "f.txt", "start_line": 2.0, "max_lines": 1.0}]}
    )
    assert "lines 2-2 of 3" in text
    assert "     2\ttwo" in text


async def test_write_file_replace_lines(dispatcher: Dispatcher, work: Path) -> None:
    operation = {
        "op": "replace_lines",
        "path": "f.txt",
        "start_line": 2.0,
        "end_line": 2.0,
        "content": "TWO\n",
    }
    await call(dispatcher, "write_file", {"operations": [operation]})
    assert (work / "f.txt").read_text(encoding="utf-8") == "one\nTWO\nthree\n"


async def test_process_read_and_wait(dispatcher: Dispatcher) -> None:
    dispatcher.resources = resources = SessionResources()  # where a session keeps them
    actions = [
        {"action": "start", "name": "p", "command": "printf abcdef"},
        {"action": "wait", "name": "p", "timeout_ms": 60000.0},
        {"action": "read", "name": "p", "offset": 2.0, "max_bytes": 3.0},
        {"action": "list"},
    ]
    try:
        text = await call(dispatcher, "process", {"actions": actions})
    finally:
        await resources.aclose()
    read = text.split("[3/4] ok: read p\n", 1)[1].split("[4/4]", 1)[0]
    assert "2.0" not in read  # the offsets it reports are integers too
    assert read.startswith("bytes 2-5 of 6;"), read
    assert "\ncde\n" in read, read
