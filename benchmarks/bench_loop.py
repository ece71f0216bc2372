"""A whole turn through raw's agent loop — store included — beside two peers' loops.

Each step: the model asks for calls of an async no-op tool; after N steps it answers with
text. raw: ScriptedProvider, the real dispatcher, a real SQLite session store (every
message committed, the WAL synced at the end of the turn); creating and opening the
session is timed apart (once per session, not per turn). Peers (``_peers``): pydantic-ai's
agent loop with an ``async def`` ``FunctionModel`` that reports usage, and the OpenAI
Agents SDK's ``Runner`` with a fake ``Model`` (tracing off), the same no-op tool, nothing
stored. Each figure is the best of three turns after a warm-up.

Prints µs per tool call at 50 steps (one call a step) with raw's share; what one more
call costs inside a step of 16 calls (a one-step turn of 16 calls minus one of 1 call,
over 15, in CPU time: the best of 9 such short turns each); and the total time of a turn
at 10, 50 and 200 steps (raw's must grow linearly).

Run: ``uv run --group bench python benchmarks/bench_loop.py``. With ``--breakdown`` it
prints instead where raw's time per step goes in a 50-step turn: the commits, the request
and its stream, the dispatch pipeline and the end-of-turn sync are each timed (the timers
add about a microsecond to each phase they wrap); the loop's own bookkeeping is the rest.
"""

from __future__ import annotations

import inspect
import json
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import anyio

sys.path.insert(0, str(Path(__file__).parent.parent))  # the repository: benchmarks.*

from benchmarks._common import Target, print_targets
from benchmarks._peers import PEERS, available
from raw_core.agent import Agent, load_agent
from raw_core.config import load_config
from raw_core.plugins import PluginHost
from raw_core.providers.scripted import Reply, ScriptedProvider
from raw_core.runtime import Runtime
from raw_core.sessions.sqlite import SqliteBackend

STEPS = (10, 50, 200)
REPEAT = 3
WIDE = 16
WIDE_REPEAT = 3


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


async def raw_turn(
    steps: int, calls: int = 1, clock: Callable[[], float] = time.perf_counter
) -> tuple[float, float]:
    """Seconds for one turn of ``steps`` steps of ``calls`` calls each plus the final
    answer, in a new session of a new SQLite backend, and seconds to create and open
    that session."""
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        agent = make_agent(root, steps)
        step = tuple(("noop", {"command": "ls"}) for _ in range(calls))
        script = [Reply(tool_calls=step, chunk=1 << 20) for _ in range(steps)]
        provider = ScriptedProvider([*script, Reply(text="done")])
        async with await SqliteBackend.open(root / "state") as backend:
            runtime = Runtime(backend)
            opening = clock()
            async with runtime.open_session(agent, provider) as session:
                started = clock()
                end = await session.run_turn("go")
                elapsed = clock() - started
    assert end.reason == "completed", end
    return elapsed, started - opening


async def bench_raw(
    steps: int, calls: int = 1, clock: Callable[[], float] = time.perf_counter, repeat: int = REPEAT
) -> tuple[float, float]:
    """The best of ``REPEAT`` turns after a warm-up (see :func:`raw_turn`) and the best
    time to create and open the session (once per session, not per turn: a peer's
    ``run`` has no such step, and pays its own setup on every turn)."""
    await raw_turn(steps, calls, clock)
    runs = [await raw_turn(steps, calls, clock) for _ in range(repeat)]
    return min(turn for turn, _ in runs), min(opened for _, opened in runs)


async def measure() -> dict[str, Any]:
    """Seconds: per turn at each of ``STEPS`` for raw and each peer, and the one- and
    16-call one-step turns."""
    names = ["raw", *PEERS]
    totals: dict[str, dict[int, float]] = {name: {} for name in names}
    wide: dict[str, tuple[float, float]] = {}
    opening: list[float] = []
    for steps in STEPS:
        totals["raw"][steps], opened = await bench_raw(steps)
        opening.append(opened)
        for name, turn in PEERS.items():
            totals[name][steps] = await turn(steps, 1, REPEAT)
    # One-step turns are short: CPU time, more rounds (all of it runs in this process).
    cpu, rounds = time.process_time, 3 * WIDE_REPEAT
    one = await bench_raw(1, 1, cpu, rounds)
    many = await bench_raw(1, WIDE, cpu, rounds)
    wide["raw"] = (one[0], many[0])
    for name, turn in PEERS.items():
        wide[name] = (await turn(1, 1, rounds, cpu), await turn(1, WIDE, rounds, cpu))
    return {"totals": totals, "wide": wide, "opening": min(opening)}


def targets(found: dict[str, Any]) -> list[Target]:
    """The targets against the peers: the 50-step loop against each, and an extra call in
    a 16-call step against pydantic-ai's."""
    totals, wide = found["totals"], found["wide"]
    ours = totals["raw"][50] / 50 * 1e6
    extra = {name: (many - one) / (WIDE - 1) * 1e6 for name, (one, many) in wide.items()}
    found_targets = [
        Target(
            item="peers",
            what="loop, per call of a 50-step turn (store included)",
            figure=ours,
            reference=totals[name][50] / 50 * 1e6,
            reference_what=f"{name}:",
            limit=1 / 25,
        )
        for name in PEERS
    ]
    found_targets.append(
        Target(
            item="peers",
            what=f"an extra call inside a {WIDE}-call step",
            figure=extra["raw"],
            reference=extra["pydantic-ai"],
            reference_what="pydantic-ai:",
            limit=1 / 3,
        )
    )
    return found_targets


def report(found: dict[str, Any]) -> None:
    totals, wide = found["totals"], found["wide"]
    ours = totals["raw"][50] / 50
    print("per tool call in a 50-step turn (one call a step):")
    for name, by_steps in totals.items():
        per_call = by_steps[50] / 50
        share = "" if name == "raw" else f"  (raw is 1/{per_call / ours:.0f} of it)"
        print(f"  {name:<20} {per_call * 1e6:9.1f} µs{share}")
    print(f"  (raw: creating and opening the session, once: {found['opening'] * 1e3:.2f} ms)")
    print(
        f"an extra call inside a {WIDE}-call step"
        f" (a one-step turn of {WIDE} calls minus one of 1, / {WIDE - 1}):"
    )
    raw_extra = (wide["raw"][1] - wide["raw"][0]) / (WIDE - 1)
    for name, (one, many) in wide.items():
        extra = (many - one) / (WIDE - 1)
        share = "" if name == "raw" else f"  (raw is 1/{extra / raw_extra:.1f} of it)"
        print(f"  {name:<20} {extra * 1e6:9.1f} µs{share}")
    print("total time of one turn:")
    print(f"  {'':<20}" + "".join(f"{s:>10} steps" for s in STEPS))
    for name, by_steps in totals.items():
        print(f"  {name:<20}" + "".join(f"{by_steps[s] * 1e3:13.1f} ms" for s in STEPS))
    print()
    print_targets(targets(found))


async def main() -> None:
    missing = available()
    if missing:
        print(f"skipped: {missing}")
        return
    report(await measure())


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
