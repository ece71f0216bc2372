"""What compaction costs raw: compacting a 10,000-message context (the model's reply apart),
and resuming a compacted 100,000-message session.

Sessions are real SQLite stores (WAL, ``synchronous=NORMAL``) written through the sync core
in batches; each message pair is one step of a tool-using turn (an assistant message with
one call of about 200 bytes of arguments, and its result of about 300 bytes).

* **compact**: ``session.compact()`` on a session opened through the runtime, with a
  scripted model whose summary arrives at once — so the figure is raw's own work: choosing
  the boundary, building the summary request (the 10,000 messages as they were sent), the
  one write (the store checks the boundary against the stored context) and measuring the
  new context. Its parts are timed apart: the boundary alone, and ``writer.compact`` alone.
  Best of 5 rounds, each on a fresh session.
* **resume**: opening a 100,000-message session through the runtime (the write lock, the
  state, the model context read and measured, the interrupted-turn check), compacted (a
  summary and the last 20 messages) and not; and ``backend.read_context`` alone. Best of 5.

Run: ``uv run python benchmarks/bench_compaction.py``.
"""

from __future__ import annotations

import json
import tempfile
import time
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

import anyio

from raw_core.agent import Agent, load_agent
from raw_core.config import load_config
from raw_core.plugins import PluginHost
from raw_core.providers.scripted import Reply, ScriptedProvider
from raw_core.runtime import Runtime
from raw_core.runtime.compaction import KEEP_SHARE, boundary
from raw_core.runtime.context import ContextMeter, fixed_bytes
from raw_core.sessions.sqlite import (
    AssistantMessage,
    SessionStore,
    SqliteBackend,
    TextBlock,
    ToolCall,
    ToolResultMessage,
    UserMessage,
)

ROUNDS = 5
BATCH = 2_000


def make_agent(root: Path) -> Agent:
    folder = root / "tools" / "echo"
    folder.mkdir(parents=True, exist_ok=True)
    schema = {"type": "object", "properties": {"text": {"type": "string"}}}
    manifest = {
        "api_version": 2,
        "id": "echo",
        "version": "1.0.0",
        "name": "echo",
        "description": "Echo the text.",
        "entry": "./tool.py",
        "input_schema": schema,
    }
    (folder / "tool.json").write_text(json.dumps(manifest))
    (folder / "tool.py").write_text(
        "async def handler(args, context):\n"
        "    return {'content': [{'type': 'text', 'text': args['text']}]}\n"
    )
    (root / "raw.json").write_text(
        json.dumps({"agents": {"a": {"tools": {"use": ["agent/echo"]}}}})
    )
    return load_agent(load_config(root / "raw.json"), host=PluginHost())


def step(n: int) -> list[Any]:
    call = ToolCall(
        id=f"call_{n}", name="echo", arguments=json.dumps({"text": f"{n} " + "x" * 190})
    )
    result = ToolResultMessage(
        tool_call_id=call.id, status="ok", content=(TextBlock(text=f"{n} " + "y" * 290),)
    )
    return [AssistantMessage(text="", tool_calls=(call,)), result]


def build(store: SessionStore, messages: int) -> str:
    """A session of ``messages`` messages: a prompt, then steps, the last one answered."""
    session = store.create("bench")
    with store.open_writer(session.id) as writer:
        writer.append([UserMessage.from_text("do it all")])
        batch: list[Any] = []
        for n in range((messages - 1) // 2):
            batch += step(n)
            if len(batch) >= BATCH:
                writer.append(batch)
                batch = []
        writer.append([*batch, AssistantMessage(text="done")])
        writer.end_turn()
    return session.id


async def best(work: Callable[[], Awaitable[float]]) -> float:
    return min([await work() for _ in range(ROUNDS)])


async def compact_figures(root: Path, agent: Agent) -> dict[str, float]:
    store_dir = root / "compact"
    with SessionStore.open(store_dir) as store:
        ids = [build(store, 10_000) for _ in range(2 * ROUNDS)]
    figures: dict[str, float] = {}
    async with await SqliteBackend.open(store_dir) as backend:
        runtime = Runtime(backend)
        fresh = iter(ids)

        async def whole() -> float:
            provider = ScriptedProvider([Reply(text="The summary.")])
            async with runtime.open_session(agent, provider, session_id=next(fresh)) as session:
                start = time.perf_counter()
                ended = await session.compact()
                took = time.perf_counter() - start
            assert ended.outcome == "completed", ended
            return took

        figures["session.compact() of 10,000 messages (model reply instant)"] = await best(whole)

        async def store_part() -> float:
            async with backend.open_writer(next(fresh)) as writer:
                context = await writer.read_context()
                replace = boundary(context, 4_000)
                assert replace is not None
                start = time.perf_counter()
                await writer.compact(UserMessage.from_text("The summary."), replace_first=replace)
                return time.perf_counter() - start

        figures["  of which writer.compact (the store's one write)"] = await best(store_part)
        async with backend.open_writer(ids[0]) as writer:
            context = await writer.read_context()

        async def boundary_part() -> float:
            meter = ContextMeter(fixed_bytes(None, ()))
            start = time.perf_counter()
            meter.reset(context)
            boundary(context, int(KEEP_SHARE * meter.estimate() / meter.rate))
            return time.perf_counter() - start

        figures["  of which measuring and choosing the boundary"] = await best(boundary_part)
    return figures


async def resume_figures(root: Path, agent: Agent) -> dict[str, float]:
    store_dir = root / "resume"
    with SessionStore.open(store_dir) as store:
        compacted = build(store, 100_000)
        whole = build(store, 100_000)
        with store.open_writer(compacted) as writer:
            context = writer.read_context()
            writer.compact(UserMessage.from_text("The summary."), replace_first=len(context) - 21)
    figures: dict[str, float] = {}
    async with await SqliteBackend.open(store_dir) as backend:
        runtime = Runtime(backend)

        def opening(session_id: str) -> Callable[[], Awaitable[float]]:
            async def work() -> float:
                start = time.perf_counter()
                async with runtime.open_session(agent, ScriptedProvider([]), session_id=session_id):
                    took = time.perf_counter() - start
                return took

            return work

        def reading(session_id: str) -> Callable[[], Awaitable[float]]:
            async def work() -> float:
                start = time.perf_counter()
                await backend.read_context(session_id)
                return time.perf_counter() - start

            return work

        figures["resume a compacted 100,000-message session (22 in the context)"] = await best(
            opening(compacted)
        )
        figures["  of which backend.read_context (compacted)"] = await best(reading(compacted))
        figures["resume the same session not compacted (100,000 in the context)"] = await best(
            opening(whole)
        )
        figures["  of which backend.read_context (not compacted)"] = await best(reading(whole))
    return figures


async def main() -> None:
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        agent = make_agent(root)
        figures = {**await compact_figures(root, agent), **await resume_figures(root, agent)}
    print("| measure | ms |")
    print("| --- | --- |")
    for name, seconds in figures.items():
        print(f"| {name} | {seconds * 1000:.2f} |")


if __name__ == "__main__":
    anyio.run(main)
