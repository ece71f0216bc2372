"""Sessions at depth: resuming one, a call after resuming, and a page of its display items.

Sessions of 1,000 and 100,000 messages (user and assistant text messages of 60-85
bytes each as stored, in turns of two) in a real SQLite store, and one of 100,000 compacted
down to its last 1,000 (a summary in place of the rest):

* **resume**: opening the session through the runtime until it is ready to take the next
  turn, before any request is built (the writer's lock, the model context read, the tool
  definitions), the median of 5; and the Python memory it allocated at its peak
  (``tracemalloc``, in a run of its own);
* **per call after resume**: a 20-step turn of one no-op call a step in the resumed
  session, per step, beside the same turn in a fresh session (best of 3);
* **page**: one page of 100 display items from the start through the backend, beside
  plain ``sqlite3`` reading the same rows and ``json.loads`` of each body (median of 200).

Run: ``uv run python benchmarks/bench_resume.py``.
"""

from __future__ import annotations

import gc
import json
import sqlite3
import statistics
import sys
import tempfile
import time
import tracemalloc
from pathlib import Path
from typing import Any

import anyio

sys.path.insert(0, str(Path(__file__).parent.parent))  # the repository: benchmarks.*

from benchmarks._common import Target, print_targets, write_noop_tool
from raw_core.agent import Agent, load_agent
from raw_core.config import load_config
from raw_core.plugins import PluginHost
from raw_core.providers.scripted import Reply, ScriptedProvider
from raw_core.runtime import Runtime
from raw_core.sessions.messages import AssistantMessage, UserMessage
from raw_core.sessions.sqlite import SessionStore, SqliteBackend
from raw_core.sessions.sqlite._rows import PAGE_OLDEST_FIRST
from raw_core.sessions.sqlite._schema import seq_range

SHALLOW, DEEP, KEPT = 1_000, 100_000, 1_000
STEPS = 20
PAGE = 100


def _agent(root: Path) -> Agent:
    write_noop_tool(root, {"type": "object", "properties": {"command": {"type": "string"}}})
    (root / "raw.json").write_text(
        json.dumps({"agents": {"a": {"max_steps": STEPS + 1, "tools": {"use": ["agent/noop"]}}}})
    )
    return load_agent(load_config(root / "raw.json"), host=PluginHost())


def _build(store: SessionStore, count: int, *, compact_to: int | None = None) -> str:
    session = store.create(title=f"{count} messages", cwd=str(Path.cwd()))
    with store.open_writer(session.id) as writer:
        for start in range(0, count, 10_000):
            batch: list[Any] = []
            for index in range(start, min(count, start + 10_000), 2):
                batch.append(UserMessage.from_text(f"question {index}: what does it do?"))
                batch.append(AssistantMessage(text=f"answer {index}: it does its work."))
            writer.append(batch)
        if compact_to is not None:
            summary = UserMessage.from_text("summary of the earlier conversation")
            writer.compact(summary, replace_first=count - compact_to)
        writer.end_turn()
    return session.id


def _provider() -> ScriptedProvider:
    step = Reply(tool_calls=(("noop", {"command": "ls"}),), chunk=1 << 20)
    return ScriptedProvider([step] * STEPS + [Reply(text="done")])


async def _resume(runtime: Runtime, agent: Agent, session_id: str) -> float:
    started = time.perf_counter()
    async with runtime.open_session(agent, _provider(), session_id=session_id):
        ready = time.perf_counter() - started
    return ready


async def _resume_memory(runtime: Runtime, agent: Agent, session_id: str) -> float:
    tracemalloc.start()
    try:
        async with runtime.open_session(agent, _provider(), session_id=session_id):
            _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    return peak / 2**20


async def _per_step(runtime: Runtime, agent: Agent, session_id: str | None) -> float:
    gc.collect()  # what building and resuming the deep sessions left is not this turn's
    async with runtime.open_session(agent, _provider(), session_id=session_id) as session:
        started = time.perf_counter()
        end = await session.run_turn("go")
        elapsed = time.perf_counter() - started
    assert end.reason == "completed", end
    return elapsed / STEPS


def _plain_page(path: Path, session_id: str) -> float:
    """The same page with plain sqlite3: the session's key, its rows, each body parsed."""
    connection = sqlite3.connect(path)
    try:
        timings = []
        for _ in range(200):
            started = time.perf_counter()
            key = connection.execute(
                "SELECT key FROM sessions WHERE id = ?", (session_id,)
            ).fetchone()[0]
            low, high = seq_range(key)
            rows = connection.execute(PAGE_OLDEST_FIRST, (low, high, PAGE + 1)).fetchall()
            for row in rows[:PAGE]:
                json.loads(row[4])
            timings.append(time.perf_counter() - started)
        return statistics.median(timings)
    finally:
        connection.close()


async def measure() -> dict[str, float]:
    """Seconds (and MiB for memory) of every figure."""
    found: dict[str, float] = {}
    with tempfile.TemporaryDirectory() as temp:
        root = Path(temp)
        agent = _agent(root / "project")
        with SessionStore.open(root / "state") as store:
            ids = {
                "1,000 messages": _build(store, SHALLOW),
                "100,000 messages": _build(store, DEEP),
                "100,000 compacted to 1,000": _build(store, DEEP, compact_to=KEPT),
            }
        async with await SqliteBackend.open(root / "state") as backend:
            runtime = Runtime(backend)
            for name, session_id in ids.items():
                await _resume(runtime, agent, session_id)  # warm: the file's pages cached
                found[f"resume: {name}"] = statistics.median(
                    [await _resume(runtime, agent, session_id) for _ in range(5)]
                )
                found[f"resume memory MiB: {name}"] = await _resume_memory(
                    runtime, agent, session_id
                )
            fresh = [await _per_step(runtime, agent, None) for _ in range(3)]
            found["per call: fresh session"] = min(fresh)
            for name in ("1,000 messages", "100,000 compacted to 1,000"):
                found[f"per call after resume: {name}"] = min(
                    [await _per_step(runtime, agent, ids[name]) for _ in range(3)]
                )
            session_id = ids["1,000 messages"]
            timings = []
            for _ in range(200):
                started = time.perf_counter()
                page = await backend.page(session_id, limit=PAGE)
                timings.append(time.perf_counter() - started)
                assert len(page.items) == PAGE
            found["page of 100: backend"] = statistics.median(timings)
            found["page of 100: sqlite3 + json.loads"] = _plain_page(backend.store.path, session_id)
    return found


def targets(found: dict[str, float]) -> list[Target]:
    """The targets of sessions at depth."""
    return [
        Target(
            item="depth",
            what="resume a 100,000-message session",
            figure=found["resume: 100,000 messages"] * 1e3,
            reference=found["resume: 1,000 messages"] * 1e3,
            reference_what="1,000 messages:",
            limit=10.0,
            unit="ms",
        ),
        Target(
            item="depth",
            what="per call after resuming a session compacted to 1,000",
            figure=found["per call after resume: 100,000 compacted to 1,000"] * 1e6,
            reference=found["per call: fresh session"] * 1e6,
            reference_what="a fresh session:",
            limit=1.5,
        ),
        Target(
            item="depth",
            what="a page of 100 display items",
            figure=found["page of 100: backend"] * 1e6,
            reference=found["page of 100: sqlite3 + json.loads"] * 1e6,
            reference_what="sqlite3 + json.loads:",
            limit=2.0,
        ),
    ]


def report(found: dict[str, float]) -> None:
    for name, value in found.items():
        if "MiB" in name:
            print(f"  {name:<58} {value:10.1f} MiB")
        elif name.startswith("resume"):
            print(f"  {name:<58} {value * 1e3:10.2f} ms")
        else:
            print(f"  {name:<58} {value * 1e6:10.1f} µs")
    print()
    print_targets(targets(found))


async def main() -> None:
    report(await measure())


if __name__ == "__main__":
    anyio.run(main)
