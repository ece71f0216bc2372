"""Time limits in the pipeline: a batch stopped at the handler's limit keeps the rows that
finished (spec 001, "Batch rules": a timeout stops the running entry and skips the rest),
and effect descriptors are bounded (spec 000: "Effect descriptors must be synchronous and
bounded"): a descriptor of a tool outside raw runs off the event loop under a deadline."""

from __future__ import annotations

import json
import threading
from pathlib import Path
from typing import Any

import anyio
import pytest

from raw_core import ToolFolder, hookimpl
from raw_core.agent import load_agent
from raw_core.config import load_config
from raw_core.dispatch import Dispatcher
from raw_core.errors import EffectsInvalid
from raw_core.frozen import thaw
from raw_core.plugins import PluginHost
from raw_core.tools.calls import CancellationSignal, ToolCall
from raw_core.tools.loader import ToolLoader

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

SLOW_EFFECTS = """
import threading
GATE = threading.Event()
ENTERED = threading.Event()
LEFT = threading.Event()
RAN = []

def describe_effects(args, context):
    ENTERED.set()
    GATE.wait(5)
    LEFT.set()
    return {"files": []}

async def handler(args, context):
    RAN.append(context.tool_call_id)
    return {"content": [{"type": "text", "text": "ran"}]}
"""

QUICK_EFFECTS = """
def describe_effects(args, context):
    return {"files": []}

async def handler(args, context):
    return {"content": [{"type": "text", "text": "ran"}]}
"""

QUICK = """
async def handler(args, context):
    return {"content": [{"type": "text", "text": "quick"}]}
"""

EFFECTS = {
    "type": "object",
    "properties": {"files": {"type": "array"}},
    "required": ["files"],
}


def dispatcher_for(
    tmp_path: Path, make_tool: Any, tools: dict[str, str], **options: Any
) -> Dispatcher:
    for name, code in tools.items():
        has_effects = "def describe_effects" in code
        make_tool(
            name,
            root=tmp_path / "tools",
            code=code,
            effects_schema=EFFECTS if has_effects else None,
        )
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
    assert len(text.encode("utf-8")) <= 1000  # markers included
    assert "more bytes of this row cut" in text
    assert "[3/3] skipped: third" in text
    full = result.full_text()
    assert "x" * 5000 in full


async def test_a_handler_that_announces_no_rows_still_ends_as_a_plain_timeout(
    tmp_path: Path, make_tool: Any
) -> None:
    dispatcher = dispatcher_for(tmp_path, make_tool, {"plain": PLAIN}, handler_timeout=0.5)
    result = await dispatcher.dispatch(call("plain"))
    assert result.code == "timeout"
    assert result.text() == "error [timeout]: the call did not finish within 0.5 s"


# --- effect descriptors are bounded ------------------------------------------------------


async def test_a_slow_descriptor_stops_the_call_before_the_handler(
    tmp_path: Path, make_tool: Any
) -> None:
    dispatcher = dispatcher_for(tmp_path, make_tool, {"slow": SLOW_EFFECTS}, effects_timeout=0.2)
    module = globals_of(dispatcher, "slow")
    try:
        result = await dispatcher.dispatch(call("slow"))
        assert not module["LEFT"].is_set()  # it was stopped waiting, not waited for
    finally:
        module["GATE"].set()
    assert result.code == "effects_invalid"
    assert result.message is not None
    assert "did not return within its deadline of 0.2 s" in result.message
    assert module["RAN"] == []


async def test_a_slow_descriptor_does_not_stall_other_calls(tmp_path: Path, make_tool: Any) -> None:
    dispatcher = dispatcher_for(
        tmp_path, make_tool, {"slow": SLOW_EFFECTS, "quick": QUICK}, effects_timeout=WAIT
    )
    module = globals_of(dispatcher, "slow")
    results: dict[str, Any] = {}
    blocked_while_quick_ran: list[bool] = []

    async def slow() -> None:
        results["slow"] = await dispatcher.dispatch(call("slow", "call-slow"))

    try:
        async with anyio.create_task_group() as group:
            group.start_soon(slow)
            assert await anyio.to_thread.run_sync(module["ENTERED"].wait, WAIT)
            results["quick"] = await dispatcher.dispatch(call("quick", "call-quick"))
            blocked_while_quick_ran.append(not module["LEFT"].is_set())
            module["GATE"].set()
    finally:
        module["GATE"].set()
    assert blocked_while_quick_ran == [True]
    assert results["quick"].text() == "quick"
    assert results["slow"].text() == "ran"  # released in time, it goes on as usual
    assert module["RAN"] == ["call-slow"]


async def test_a_descriptor_that_exits_or_is_cancelled_stops_only_its_call(
    tmp_path: Path, make_tool: Any
) -> None:
    exiting = QUICK_EFFECTS.replace('    return {"files": []}', "    raise SystemExit(3)")
    dispatcher = dispatcher_for(
        tmp_path, make_tool, {"slow": SLOW_EFFECTS, "exiting": exiting}, effects_timeout=WAIT
    )
    result = await dispatcher.dispatch(call("exiting"))
    assert result.code == "effects_invalid"
    assert result.message == "describe_effects raised SystemExit: 3"
    module = globals_of(dispatcher, "slow")
    signal = CancellationSignal()
    results: list[Any] = []

    async def slow() -> None:
        results.append(await dispatcher.dispatch(call("slow"), signal=signal))

    try:
        async with anyio.create_task_group() as group:
            group.start_soon(slow)
            assert await anyio.to_thread.run_sync(module["ENTERED"].wait, WAIT)
            signal.cancel("the user pressed stop")
    finally:
        module["GATE"].set()
    assert results[0].code == "cancelled"
    assert module["RAN"] == []


async def test_prepare_bounds_the_descriptor_too(tmp_path: Path, make_tool: Any) -> None:
    """``raw policy explain`` prepares calls without running them: same deadline."""
    dispatcher = dispatcher_for(tmp_path, make_tool, {"slow": SLOW_EFFECTS}, effects_timeout=0.2)
    module = globals_of(dispatcher, "slow")
    tool = dispatcher.registry.by_name("slow")
    try:
        with pytest.raises(EffectsInvalid, match=r"deadline of 0\.2 s"):
            await dispatcher.prepare(tool, call("slow"))
    finally:
        module["GATE"].set()


async def test_built_in_descriptors_run_inline_and_others_in_a_daemon_thread(
    tmp_path: Path, make_tool: Any
) -> None:
    """The same descriptor shipped by the ``builtin`` plug-in runs on the event loop's
    thread, and as a local tool in a daemon thread."""
    code = QUICK_EFFECTS.replace(
        '    return {"files": []}',
        "    import threading\n"
        "    THREADS.append(threading.current_thread())\n"
        '    return {"files": []}',
    )
    code = "THREADS = []\n" + code
    shipped = make_tool("probe", root=tmp_path / "shipped", code=code, effects_schema=EFFECTS)
    make_tool("probe", root=tmp_path / "tools", code=code, effects_schema=EFFECTS)

    class Builtin:
        @hookimpl
        def raw_register_tools(self) -> list[ToolFolder]:
            return [ToolFolder(path=shipped)]

    host = PluginHost()
    host.register(Builtin(), name="builtin")
    path = tmp_path / "raw.json"
    threads: dict[str, list[threading.Thread]] = {}
    for identity in ("builtin/probe", "agent/probe"):
        path.write_text(
            json.dumps({"agents": {"a": {"tools": {"use": [identity]}}}}), encoding="utf-8"
        )
        agent = load_agent(load_config(path), host=host)
        dispatcher = Dispatcher(agent.registry, cwd=str(tmp_path))
        result = await dispatcher.dispatch(call("probe"))
        assert result.text() == "ran"
        threads[identity] = globals_of(dispatcher, "probe")["THREADS"]
    assert threads["builtin/probe"] == [threading.current_thread()]
    (thread,) = threads["agent/probe"]
    assert thread is not threading.current_thread()
    assert thread.daemon


async def test_the_inputs_of_built_in_descriptors_are_bounded_before_step_3(
    tmp_path: Path,
) -> None:
    """What docs/pipeline.md lists as the bounds of built-in descriptors: arguments over
    4 MiB or nested deeper than 64, more than 16 operations, or a patch of more than 16
    file operations are refused at step 2, so the descriptor never sees them."""
    path = tmp_path / "raw.json"
    path.write_text(
        json.dumps({"agents": {"a": {"tools": {"use": ["builtin/write_file"]}}}}),
        encoding="utf-8",
    )
    host = PluginHost()
    host.load_entry_points()
    agent = load_agent(load_config(path), host=host)
    dispatcher = Dispatcher(agent.registry, cwd=str(tmp_path))
    operation = {"op": "overwrite", "path": "a", "content": ""}
    huge = {"operations": [{"op": "overwrite", "path": "a", "content": "x" * (4 * 1024 * 1024)}]}
    deep: Any = "x"
    for _ in range(70):
        deep = [deep]
    patch = "*** Begin Patch\n"
    patch += "".join(f"*** Delete File: f{i}\n" for i in range(17)) + "*** End Patch\n"
    for arguments in (
        huge,
        {"operations": [operation], "deep": deep},
        {"operations": [operation] * 17},
        {"patch": patch},
    ):
        text = json.dumps(arguments)
        result = await dispatcher.dispatch(ToolCall(id="w", name="write_file", arguments=text))
        assert result.code == "invalid_arguments", result.text()
        assert result.effects is None
    assert not (tmp_path / "a").exists()
    within = {"operations": [{"op": "overwrite", "path": "a", "content": ""}] * 16}
    tool = dispatcher.registry.by_name("write_file")
    prepared = await dispatcher.prepare(
        tool, ToolCall(id="w", name="write_file", arguments=json.dumps(within))
    )
    assert thaw(prepared.effects) == {
        "files": [{"path": str(tmp_path / "a"), "operation": "write"}]
    }


def test_every_built_in_descriptor_is_listed_with_its_bounds() -> None:
    pipeline = (Path(__file__).parents[2] / "docs" / "pipeline.md").read_text(encoding="utf-8")
    bounds = pipeline.split("### Built-in descriptors", 1)[1].split("\n## ", 1)[0]
    host = PluginHost()
    host.load_entry_points()
    loader = ToolLoader()
    described = [
        f"builtin/{name}"
        for name, folder in host.tool_folders()["builtin"].items()
        if loader.load(folder.path, identity=f"builtin/{name}").describe_effects is not None
    ]
    assert described == ["builtin/bash", "builtin/process", "builtin/write_file"]
    for identity in described:
        assert f"`{identity}`" in bounds


# --- a batch cancelled while it runs keeps its rows too ----------------------------------

SIGNALLED_BATCH = """
import anyio
STARTED = []  # events a test waits on: set once the first entry has its row

async def handler(args, context):
    batch = context.progress.start(["first", "second", "third"])
    batch.ok("first", "done")
    for started in STARTED:
        started.set()
    await anyio.sleep_forever()
"""


async def test_a_batch_cancelled_while_it_runs_reports_its_rows(
    tmp_path: Path, make_tool: Any
) -> None:
    dispatcher = dispatcher_for(tmp_path, make_tool, {"batch": SIGNALLED_BATCH})
    started = anyio.Event()
    globals_of(dispatcher, "batch")["STARTED"].append(started)
    signal = CancellationSignal()
    results: list[Any] = []

    async def run() -> None:
        results.append(await dispatcher.dispatch(call("batch"), signal=signal))

    async with anyio.create_task_group() as group:
        group.start_soon(run)
        with anyio.fail_after(10):
            await started.wait()
        signal.cancel("cancelled by the user")
    (result,) = results
    text = result.text()
    assert result.code == "cancelled"
    assert text.startswith("error [cancelled]: the call was cancelled (cancelled by the user);")
    assert "[1/3] ok: first\ndone\n" in text
    assert "[2/3] error (cancelled): second\nstopped: the call was cancelled" in text
    assert "[3/3] skipped: third\nnot run: the call was cancelled during entry 2" in text


# --- the limit around handlers that open scopes of their own -----------------------------

# The handler's first step (up to its first wait) runs before the call's timer is set; the
# scopes it enters there must still nest inside the call's, whatever happens next.
OWN_SCOPES = """
import time
import anyio

SEEN = {}
STARTED = []

async def handler(args, context):
    SEEN["started"] = anyio.current_time()
    time.sleep(0.005)  # the first step takes time: the limit counts it
    async with anyio.create_task_group() as group:
        with anyio.move_on_after(100):
            await anyio.sleep(0)
            SEEN["deadline"] = anyio.current_effective_deadline()
            for started in STARTED:
                started.set()
            await anyio.sleep(WAIT_SECONDS)
        group.start_soon(anyio.sleep, 0)
    return {"content": [{"type": "text", "text": "finished"}]}
"""


def own_scopes(wait: float) -> str:
    """The handler above, waiting ``wait`` seconds inside its own scopes."""
    return f"WAIT_SECONDS = {wait}\n{OWN_SCOPES}"


async def test_a_handler_that_opens_its_own_scopes_finishes_within_its_limit(
    tmp_path: Path, make_tool: Any
) -> None:
    dispatcher = dispatcher_for(tmp_path, make_tool, {"scopes": own_scopes(0)}, handler_timeout=30)
    result = await dispatcher.dispatch(call("scopes"))
    assert (result.status, result.text()) == ("ok", "finished")
    seen = globals_of(dispatcher, "scopes")["SEEN"]
    # the limit was counted from before the handler started, not from its first wait
    assert seen["deadline"] <= seen["started"] + 30


async def test_a_handler_waiting_inside_its_own_scopes_is_stopped_at_the_limit(
    tmp_path: Path, make_tool: Any
) -> None:
    dispatcher = dispatcher_for(
        tmp_path, make_tool, {"scopes": own_scopes(60)}, handler_timeout=0.3
    )
    result = await dispatcher.dispatch(call("scopes"))
    assert result.code == "timeout"
    assert result.text() == "error [timeout]: the call did not finish within 0.3 s"


async def test_a_handler_waiting_inside_its_own_scopes_is_stopped_by_its_signal(
    tmp_path: Path, make_tool: Any
) -> None:
    dispatcher = dispatcher_for(tmp_path, make_tool, {"scopes": own_scopes(60)})
    started = anyio.Event()
    globals_of(dispatcher, "scopes")["STARTED"].append(started)
    signal = CancellationSignal()
    results: list[Any] = []

    async def run() -> None:
        results.append(await dispatcher.dispatch(call("scopes"), signal=signal))

    async with anyio.create_task_group() as group:
        group.start_soon(run)
        with anyio.fail_after(WAIT):
            await started.wait()
        signal.cancel("cancelled by the user")
    (result,) = results
    assert result.code == "cancelled"
    assert result.text() == "error [cancelled]: the call was cancelled (cancelled by the user)"
