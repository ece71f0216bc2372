"""Time limits in the pipeline: a batch stopped at the handler's limit keeps the rows that
finished (spec 001, "Batch rules": a timeout stops the running entry and skips the rest)."""

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

pytestmark = pytest.mark.anyio

WAIT = 10.0  # seconds: a generous bound for waits on events


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


ASYNC_BATCH = """
import anyio

async def handler(args, context):
    batch = context.progress.start(["first", "second", "third"])
    batch.ok("first", "done")
    await anyio.sleep_forever()
"""

SYNC_BATCH = """
import threading
GATE = threading.Event()

def handler(args, context):
    batch = context.progress.start(["first", "second", "third"])
    batch.error("first", "file_not_found", "no such file")
    GATE.wait(30)
    batch.ok("second", "late")
    return batch
"""

PLAIN = """
import anyio

async def handler(args, context):
    await anyio.sleep_forever()
"""


def dispatcher_for(
    tmp_path: Path, make_tool: Any, tools: dict[str, str], **options: Any
) -> Dispatcher:
    for name, code in tools.items():
        make_tool(name, root=tmp_path / "tools", code=code)
    path = tmp_path / "raw.json"
    use = [f"agent/{name}" for name in tools]
    path.write_text(json.dumps({"agents": {"a": {"tools": {"use": use}}}}), encoding="utf-8")
    agent = load_agent(load_config(path), host=PluginHost())
    return Dispatcher(agent.registry, cwd=str(tmp_path), **options)


def globals_of(dispatcher: Dispatcher, name: str) -> dict[str, Any]:
    """The module globals of a loaded tool (its events and records)."""
    globals_: dict[str, Any] = dispatcher.registry.by_name(name).handler.__globals__
    return globals_


def call(name: str, call_id: str = "call-1") -> ToolCall:
    return ToolCall(id=call_id, name=name, arguments="{}")


# --- a batch past the handler's limit keeps its rows -------------------------------------


async def test_an_async_batch_past_the_limit_reports_its_rows(
    tmp_path: Path, make_tool: Any
) -> None:
    dispatcher = dispatcher_for(tmp_path, make_tool, {"batch": ASYNC_BATCH}, handler_timeout=0.5)
    result = await dispatcher.dispatch(call("batch"))
    text = result.text()
    assert result.status == "error"
    assert result.code == "timeout"
    assert result.message == "the call did not finish within 0.5 s"
    assert text.startswith("error [timeout]: the call did not finish within 0.5 s;")
    assert "[1/3] ok: first\ndone\n" in text
    assert "[2/3] error (timeout): second\n" in text
    assert "the call reached its time limit of 0.5 s while this entry ran" in text
    assert "[3/3] skipped: third\nnot run: the call reached its time limit during entry 2" in text


async def test_a_sync_batch_past_the_limit_reports_the_rows_recorded_by_then(
    tmp_path: Path, make_tool: Any
) -> None:
    dispatcher = dispatcher_for(tmp_path, make_tool, {"batch": SYNC_BATCH}, handler_timeout=0.5)
    gate = globals_of(dispatcher, "batch")["GATE"]
    try:
        result = await dispatcher.dispatch(call("batch"))
    finally:
        gate.set()  # let the abandoned worker thread end
    text = result.text()
    assert result.code == "timeout"
    assert "[1/3] error (file_not_found): first\nno such file\n" in text
    assert "[2/3] error (timeout): second\n" in text
    assert "[3/3] skipped: third\n" in text
    assert "late" not in text  # what the abandoned thread records later is not reported


async def test_the_rows_of_a_stopped_batch_share_the_output_cap(
    tmp_path: Path, make_tool: Any
) -> None:
    code = ASYNC_BATCH.replace('batch.ok("first", "done")', 'batch.ok("first", "x" * 5000)')
    dispatcher = dispatcher_for(
        tmp_path, make_tool, {"batch": code}, handler_timeout=0.5, max_output_bytes=1000
    )
    result = await dispatcher.dispatch(call("batch"))
    text = result.text()
    assert result.truncated
    assert len(text.encode("utf-8")) <= 1000 + 64  # a batch's one overrun: the cut marker
    assert "more bytes of this entry truncated" in text
    assert "[3/3] skipped: third" in text
    full = "".join(block["text"] for block in result.full_content)
    assert "x" * 5000 in full


async def test_a_handler_that_announces_no_rows_still_ends_as_a_plain_timeout(
    tmp_path: Path, make_tool: Any
) -> None:
    dispatcher = dispatcher_for(tmp_path, make_tool, {"plain": PLAIN}, handler_timeout=0.5)
    result = await dispatcher.dispatch(call("plain"))
    assert result.code == "timeout"
    assert result.text() == "error [timeout]: the call did not finish within 0.5 s"
