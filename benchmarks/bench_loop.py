"""A whole turn through raw's agent loop — store included — beside two peers' loops.

Each step: the model asks for one call of an async no-op tool; after N steps it answers
with text. raw: ScriptedProvider, the real dispatcher, a real SQLite session store (every
message committed, the WAL synced at the end of the turn); creating and opening the
session is timed apart (once per session, not per turn). Peers: pydantic-ai's agent loop
with its ``FunctionModel``, and the OpenAI Agents SDK's ``Runner`` with a fake ``Model``
(tracing off), the same no-op tool. Prints µs per tool call at 50 steps with raw's share,
and the total time of a turn at 10, 50 and 200 steps (raw's must grow linearly).

Run: ``uv run --group bench python benchmarks/bench_loop.py``. With ``--breakdown`` it
prints instead where raw's time per step goes in a 50-step turn: the commits, the request
and its stream, the dispatch pipeline and the end-of-turn sync are each timed (the timers
add about a microsecond to each phase they wrap); the loop's own bookkeeping is the rest.
"""

from __future__ import annotations

import importlib
import inspect
import json
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import anyio

from raw_core.agent import Agent, load_agent
from raw_core.config import load_config
from raw_core.plugins import PluginHost
from raw_core.providers.scripted import Reply, ScriptedProvider
from raw_core.runtime import Runtime
from raw_core.sessions.sqlite import SqliteBackend

sys.path.insert(0, str(Path(__file__).parent))
_peers = importlib.import_module("bench_dispatch")  # the peers' loops, shared with it
bench_pydantic_ai = _peers.bench_pydantic_ai
bench_openai_agents = _peers.bench_openai_agents

STEPS = (10, 50, 200)
REPEAT = 3


def make_agent(root: Path, steps: int) -> Agent:
    folder = root / "tools" / "noop"
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "tool.json").write_text(
        json.dumps(
            {
                "api_version": 2,
                "id": "noop",
                "version": "1.0.0",
                "name": "noop",
                "description": "Does nothing.",
                "entry": "./tool.py",
                "input_schema": {
                    "type": "object",
                    "properties": {"command": {"type": "string"}},
                    "additionalProperties": False,
                },
            }
        )
    )
    (folder / "tool.py").write_text(
        "RESULT = {'content': [{'type': 'text', 'text': 'ok'}]}\n"
        "async def handler(args, context):\n    return RESULT\n"
    )
    (root / "raw.json").write_text(
        json.dumps({"agents": {"a": {"max_steps": steps + 1, "tools": {"use": ["agent/noop"]}}}})
    )
    return load_agent(load_config(root / "raw.json"), host=PluginHost())


async def raw_turn(steps: int) -> tuple[float, float]:
    """Seconds for one turn of ``steps`` tool-call steps plus the final answer, in a new
    session of a new SQLite backend, and seconds to create and open that session."""
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        agent = make_agent(root, steps)
        script = [
            Reply(tool_calls=(("noop", {"command": "ls"}),), chunk=1 << 20) for _ in range(steps)
        ]
        provider = ScriptedProvider([*script, Reply(text="done")])
        async with await SqliteBackend.open(root / "state") as backend:
            runtime = Runtime(backend)
            opening = time.perf_counter()
            async with runtime.open_session(agent, provider) as session:
                started = time.perf_counter()
                end = await session.run_turn("go")
                elapsed = time.perf_counter() - started
    assert end.reason == "completed", end
    return elapsed, started - opening


async def bench_raw(steps: int) -> tuple[float, float]:
    """The best of ``REPEAT`` turns (see :func:`raw_turn`) and the best time to create and
    open the session (once per session, not per turn: a peer's ``run`` has no such step,
    and pays its own setup on every turn)."""
    runs = [await raw_turn(steps) for _ in range(REPEAT)]
    return min(turn for turn, _ in runs), min(opened for _, opened in runs)


async def main() -> None:
    totals: dict[str, dict[int, float]] = {"raw": {}, "pydantic-ai": {}, "OpenAI Agents SDK": {}}
    opening: list[float] = []
    for steps in STEPS:
        totals["raw"][steps], opened = await bench_raw(steps)
        opening.append(opened)
        totals["pydantic-ai"][steps] = await bench_pydantic_ai(steps, REPEAT) * steps
        totals["OpenAI Agents SDK"][steps] = await bench_openai_agents(steps, REPEAT) * steps
    ours = totals["raw"][50] / 50
    print("per tool call in a 50-step turn:")
    for name, by_steps in totals.items():
        per_call = by_steps[50] / 50
        share = "" if name == "raw" else f"  (raw is 1/{per_call / ours:.0f} of it)"
        print(f"  {name:<20} {per_call * 1e6:9.1f} µs{share}")
    print(f"  (raw: creating and opening the session, once: {min(opening) * 1e3:.2f} ms)")
    print("total time of one turn:")
    print(f"  {'':<20}" + "".join(f"{s:>10} steps" for s in STEPS))
    for name, by_steps in totals.items():
        print(f"  {name:<20}" + "".join(f"{by_steps[s] * 1e3:13.1f} ms" for s in STEPS))


def _timed(owner: type, name: str, spent: dict[str, int], label: str) -> None:
    """Wrap the method ``owner.name`` so that its time adds up under ``label``."""
    method = getattr(owner, name)
    if inspect.iscoroutinefunction(method):

        async def timed_async(*args: Any, **kwargs: Any) -> Any:
            started = time.perf_counter_ns()
            try:
                return await method(*args, **kwargs)
            finally:
                spent[label] += time.perf_counter_ns() - started

        setattr(owner, name, timed_async)
    else:

        def timed(*args: Any, **kwargs: Any) -> Any:
            started = time.perf_counter_ns()
            try:
                return method(*args, **kwargs)
            finally:
                spent[label] += time.perf_counter_ns() - started

        setattr(owner, name, timed)


async def breakdown(turns: int = 30, steps: int = 50) -> None:
    from raw_core.dispatch import Dispatcher
    from raw_core.runtime.loop import Session
    from raw_core.sessions.sqlite.backend import SqliteWriter

    spent: dict[str, int] = dict.fromkeys(
        ("the two commits", "the request and its stream", "dispatch", "end-of-turn sync"), 0
    )
    _timed(SqliteWriter, "append", spent, "the two commits")
    _timed(Session, "_request", spent, "the request and its stream")
    _timed(Dispatcher, "dispatch", spent, "dispatch")
    _timed(SqliteWriter, "end_turn", spent, "end-of-turn sync")
    total = 0.0
    for _ in range(turns):
        elapsed, _opened = await raw_turn(steps)
        total += elapsed
    scale = 1e-3 / (turns * steps)  # ns over all turns -> µs per step
    print(f"raw, µs per step of a {steps}-step turn (mean of {turns} turns):")
    for label, nanoseconds in spent.items():
        print(f"  {label:<28} {nanoseconds * scale:7.1f}")
    rest = total * 1e9 * scale - sum(spent.values()) * scale
    print(f"  {'the loop itself (the rest)':<28} {rest:7.1f}")
    print(f"  {'total':<28} {total * 1e9 * scale:7.1f}")


if __name__ == "__main__":
    anyio.run(breakdown if "--breakdown" in sys.argv[1:] else main)
