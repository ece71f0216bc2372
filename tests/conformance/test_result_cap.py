"""Spec 001, batch rules: one shared cap "limits what the model receives" — a hard cap.

Every built-in batch tool, at caps of 64, 1,000 and 8,192 bytes, with 1 and 16 rows: what
the model receives (markers included) is at most the cap, and the session stores that same
copy; the full output stays for the user."""

from __future__ import annotations

import json
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest

from raw_core.agent import Agent, load_agent
from raw_core.config import load_config
from raw_core.plugins import PluginHost
from raw_core.providers.scripted import Reply, ScriptedProvider
from raw_core.runtime import Runtime
from raw_core.sessions.sqlite import SqliteBackend, ToolResultMessage
from raw_core.tools.calls import ToolCall
from raw_core.tools.results import model_bytes

pytestmark = pytest.mark.anyio

CAPS = [64, 1000, 8192]
ROWS = [1, 16]
BIG = 9000  # bytes of output per row of read_file and bash: past every cap


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


@pytest.fixture
def work(tmp_path: Path) -> Path:
    folder = tmp_path / "work"
    folder.mkdir()
    for index in range(16):
        (folder / f"f{index}.txt").write_text(f"{index}:" + "x" * BIG + "\n", encoding="utf-8")
    return folder


def make_agent(tmp_path: Path, cap: int) -> Agent:
    config = tmp_path / f"raw-{cap}.json"
    tools = ["builtin/read_file", "builtin/write_file", "builtin/bash"]
    config.write_text(
        json.dumps({"agents": {"a": {"max_output_bytes": cap, "tools": {"use": tools}}}}),
        encoding="utf-8",
    )
    host = PluginHost()
    host.load_entry_points()
    return load_agent(load_config(config), host=host)


def arguments(tool: str, rows: int) -> dict[str, Any]:
    """Arguments for ``rows`` rows, each of about ``BIG`` bytes of output (or of error)."""
    if tool == "read_file":
        return {"files": [{"path": f"f{i}.txt"} for i in range(rows)]}
    if tool == "bash":
        return {"commands": [{"command": f"printf 'y%.0s' $(seq {BIG})"} for _ in range(rows)]}
    # write_file: every replace_text misses, so each row is an error naming what it looked for
    return {
        "operations": [
            {"op": "replace_text", "path": f"f{i}.txt", "old": "z" * BIG, "new": "w"}
            for i in range(rows)
        ]
    }


CASES = [
    pytest.param(tool, cap, rows, id=f"{tool}-{cap}-{rows}")
    for tool in ("read_file", "write_file", "bash")
    for cap in CAPS
    for rows in ROWS
]


@pytest.mark.parametrize(("tool", "cap", "rows"), CASES)
async def test_the_model_receives_at_most_the_cap(
    tmp_path: Path, work: Path, tool: str, cap: int, rows: int
) -> None:
    dispatcher = make_agent(tmp_path, cap).dispatcher(host=None, cwd=work)
    call = ToolCall.with_arguments(id="c1", name=tool, arguments=arguments(tool, rows))
    result = await dispatcher.dispatch(call)
    assert model_bytes(result.content) <= cap
    if model_bytes(result.full_content) > cap:  # the user still sees everything
        assert result.truncated
        assert result.content != result.full_content
    if tool != "write_file":  # its rows are short: one row of it fits 8,192 bytes
        assert result.truncated
        if cap >= 1000:
            text = result.text()
            assert "truncated" in text or "not shown" in text or "cut]" in text
            assert f"[{rows}/{rows}]" in text  # every row keeps its header


@pytest.fixture
async def backend(tmp_path: Path) -> AsyncIterator[SqliteBackend]:
    async with await SqliteBackend.open(tmp_path / "state") as opened:
        yield opened


@pytest.mark.parametrize("cap", CAPS)
async def test_the_stored_model_copy_is_the_capped_one(
    tmp_path: Path, work: Path, backend: SqliteBackend, cap: int
) -> None:
    agent = make_agent(tmp_path, cap)
    provider = ScriptedProvider(
        [Reply(tool_calls=(("bash", arguments("bash", 16)),)), Reply(text="done")]
    )
    async with Runtime(backend).open_session(agent, provider, cwd=work) as session:
        await session.run_turn("go")
        session_id = session.id
    stored = [m for m in await backend.read_context(session_id) if isinstance(m, ToolResultMessage)]
    assert len(stored) == 1
    assert model_bytes(stored[0].content) <= cap
    sent = provider.requests[1].messages[-1]
    assert sent == stored[0]  # the model was sent exactly what was stored


async def test_an_error_meets_the_cap_too(tmp_path: Path, work: Path) -> None:
    dispatcher = make_agent(tmp_path, 64).dispatcher(host=None, cwd=work)
    call = ToolCall(
        id="c1", name="read_file", arguments='{"files": [{"path": "' + "p" * 500 + '"}]}'
    )
    result = await dispatcher.dispatch(call)
    assert model_bytes(result.content) <= 64
    assert model_bytes(result.full_content) > 64


BUILT_RESULT = """
from raw_core import ToolResult
from raw_core.sessions.blocks import TextBlock

def handler(args, context):
    block = TextBlock(text="r" * 20000)
    return ToolResult(status="ok", content=(block,), full_content=(block,))
"""


@pytest.mark.parametrize("cap", CAPS)
async def test_a_result_record_the_handler_builds_meets_the_cap_too(
    tmp_path: Path, make_tool: Any, cap: int
) -> None:
    make_tool("built", root=tmp_path / "tools", code=BUILT_RESULT)
    config = tmp_path / "raw.json"
    config.write_text(
        json.dumps({"agents": {"a": {"max_output_bytes": cap, "tools": {"use": ["agent/built"]}}}})
    )
    agent = load_agent(load_config(config), host=PluginHost())
    result = await agent.dispatcher(host=None, cwd=tmp_path).dispatch(
        ToolCall(id="c1", name="built", arguments="{}")
    )
    assert result.status == "ok"
    assert model_bytes(result.content) <= cap
    assert result.truncated
    assert model_bytes(result.full_content) == 20000  # the user still sees all of it
