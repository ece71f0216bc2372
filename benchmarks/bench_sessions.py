"""Many sessions in one process: turns per second, and how long the event loop stalls.

200 sessions run at once through the session service (``raw_core.App``), all in one
process and one real SQLite store: each opens its own session and runs one 10-step turn
(nine requests that each ask for one call of an async no-op tool, then a text answer),
with a scripted model per session (a provider plug-in registered on the host, so the app
builds one for each session as it would a real model). Every message is committed and
each turn ends with the WAL synced, as in a real turn. One warm-up session runs first and
is not counted: what a process does once (importing the loop and the dispatcher, loading
the tool) is not a stall of the sessions measured.

Two figures say how well the sessions share the event loop:

* **blocked**: the longest single callback the event loop ran (each step of a task, from
  one ``await`` that suspends to the next, is one callback): while it runs, nothing else in
  the process moves. Timed around each of asyncio's handles, as its debug mode does.
* **late**: a heartbeat task sleeps 1 ms at a time and records how late it wakes. That
  includes waiting its turn behind every other task that was ready at the same moment (the
  200 sessions start together), so it is the responsiveness a front end in the same
  process sees, not a single blocking call.

Prints turns per second, the longest block, the heartbeat's median, 99th percentile and
maximum lateness, and the slowest turn.

Run: ``uv run python benchmarks/bench_sessions.py [--sessions N] [--steps N] [--runs N]``.
"""

from __future__ import annotations

import argparse
import asyncio.events  # noqa: TID251 - timing the event loop's own callbacks, nothing else
import gc
import json
import statistics
import tempfile
import time
from pathlib import Path
from typing import Any

import anyio

from raw_core import App, PluginHost, ProviderRecord, Reply, ScriptedProvider, hookimpl

HEARTBEAT = 0.001


class CallbackTimer:
    """Times every callback the asyncio event loop runs, while active; keeps the longest,
    and apart from it the longest during which CPython's cyclic garbage collector did not
    run (a full collection stops every thread, whatever the code was doing)."""

    def __init__(self) -> None:
        self.longest = 0.0
        self.longest_without_gc = 0.0
        self.longest_gc = 0.0
        self.active = False
        self._collections = 0
        self._gc_started = 0.0
        self._original = asyncio.events.Handle._run

    def _on_gc(self, phase: str, info: dict[str, Any]) -> None:
        if phase == "start":
            self._collections += 1
            self._gc_started = time.perf_counter()
        elif self.active:
            self.longest_gc = max(self.longest_gc, time.perf_counter() - self._gc_started)

    def __enter__(self) -> CallbackTimer:
        timer, original = self, self._original

        def timed(handle: asyncio.events.Handle) -> None:
            if not timer.active:
                original(handle)
                return
            collections, started = timer._collections, time.perf_counter()
            try:
                original(handle)
            finally:
                took = time.perf_counter() - started
                timer.longest = max(timer.longest, took)
                if timer._collections == collections:
                    timer.longest_without_gc = max(timer.longest_without_gc, took)

        asyncio.events.Handle._run = timed  # type: ignore[method-assign, assignment]
        gc.callbacks.append(self._on_gc)
        return self

    def __exit__(self, *exc: object) -> None:
        asyncio.events.Handle._run = self._original  # type: ignore[method-assign]
        gc.callbacks.remove(self._on_gc)


class ScriptedModels:
    """A provider plug-in: each session's model is a fresh script of ``steps`` requests."""

    def __init__(self, steps: int) -> None:
        self.steps = steps

    def make(self, model: Any, api_key: str | None = None) -> ScriptedProvider:
        calls = [Reply(tool_calls=(("noop", {"n": i}),)) for i in range(self.steps - 1)]
        return ScriptedProvider([*calls, Reply(text="done")])

    @hookimpl
    def raw_register_providers(self) -> list[ProviderRecord]:
        return [ProviderRecord(name="scripted", factory=self.make)]


def write_project(root: Path) -> Path:
    folder = root / "tools" / "noop"
    folder.mkdir(parents=True)
    (folder / "tool.json").write_text(
        json.dumps(
            {
                "api_version": 2,
                "id": "noop",
                "version": "1.0.0",
                "name": "noop",
                "description": "Does nothing.",
                "entry": "./tool.py",
                "input_schema": {"type": "object", "properties": {"n": {"type": "integer"}}},
            }
        )
    )
    (folder / "tool.py").write_text(
        "async def handler(args, context):\n"
        "    return {'content': [{'type': 'text', 'text': 'ok'}]}\n"
    )
    config = root / "raw.json"
    config.write_text(
        json.dumps(
            {
                "models": {"m": {"provider": "scripted", "model": "script"}},
                "agents": {
                    "bench": {"model": "m", "max_steps": 100, "tools": {"use": ["agent/noop"]}}
                },
            }
        )
    )
    return config


async def one_run(sessions: int, steps: int, root: Path, timer: CallbackTimer) -> dict[str, Any]:
    config = write_project(root)
    host = PluginHost()
    host.register(ScriptedModels(steps), name="bench")
    lateness: list[float] = []
    turn_seconds: list[float] = []
    async with App.open(config, host=host, store_dir=root / "sessions") as app:
        # Before the clock: open the store, and run one session, so that what a process
        # does once (importing the loop and the dispatcher, loading the tool) is not
        # counted as a stall of the sessions measured.
        async with app.open_session(title="warm-up", cwd=root) as warm_up:
            await warm_up.run_turn("go")
        done = anyio.Event()

        async def heartbeat() -> None:
            while not done.is_set():
                before = time.perf_counter()
                await anyio.sleep(HEARTBEAT)
                lateness.append(time.perf_counter() - before - HEARTBEAT)

        async def session(index: int) -> None:
            started = time.perf_counter()
            async with app.open_session(title=f"s{index}", cwd=root) as opened:
                ended = await opened.run_turn("go")
            assert ended.reason == "completed", ended
            assert ended.steps == steps, ended
            turn_seconds.append(time.perf_counter() - started)

        async with anyio.create_task_group() as beat:
            beat.start_soon(heartbeat)
            timer.active = True
            began = time.perf_counter()
            async with anyio.create_task_group() as group:
                for index in range(sessions):
                    group.start_soon(session, index)
            elapsed = time.perf_counter() - began
            timer.active = False
            done.set()
    return {
        "turns_per_second": sessions / elapsed,
        "blocked_ms": timer.longest * 1000,
        "blocked_without_gc_ms": timer.longest_without_gc * 1000,
        "gc_ms": timer.longest_gc * 1000,
        "elapsed": elapsed,
        "late_median_ms": statistics.median(lateness) * 1000,
        "late_p99_ms": statistics.quantiles(lateness, n=100)[98] * 1000,
        "late_max_ms": max(lateness) * 1000,
        "slowest_turn_s": max(turn_seconds),
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--sessions", type=int, default=200)
    parser.add_argument("--steps", type=int, default=10)
    parser.add_argument("--runs", type=int, default=3)
    options = parser.parse_args()
    results = []
    for _ in range(options.runs):
        with tempfile.TemporaryDirectory() as tmp, CallbackTimer() as timer:
            results.append(anyio.run(one_run, options.sessions, options.steps, Path(tmp), timer))
    print(
        f"{options.sessions} sessions at once, one {options.steps}-step turn each,"
        f" {options.runs} runs (one process, one SQLite store)"
    )
    print(
        "run  turns/s  blocked max ms  (no GC in it)  longest GC ms"
        "  late: median ms  p99 ms  max ms  slowest turn s"
    )
    for number, r in enumerate(results, 1):
        print(
            f"{number:>3}  {r['turns_per_second']:7.1f}  {r['blocked_ms']:14.2f}"
            f"  {r['blocked_without_gc_ms']:13.2f}  {r['gc_ms']:13.2f}"
            f"  {r['late_median_ms']:15.3f}  {r['late_p99_ms']:6.2f}  {r['late_max_ms']:6.2f}"
            f"  {r['slowest_turn_s']:14.2f}"
        )
    worst = max(r["blocked_ms"] for r in results)
    own = max(r["blocked_without_gc_ms"] for r in results)
    print(f"longest the event loop was blocked, over all runs: {worst:.2f} ms")
    print(f"longest block with no garbage collection in it: {own:.2f} ms")


if __name__ == "__main__":
    main()
