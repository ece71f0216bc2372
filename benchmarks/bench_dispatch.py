"""Per-call cost of raw's dispatch pipeline: its building blocks, rule sets that really
apply to the called tool, and the peers' cost of a call — inside a step and a whole step.

raw: one async no-op tool with a batch-shaped schema (``_common.SCHEMA``), arguments as
the model's JSON text (62 bytes, two commands), every step of the pipeline running.

* **Building blocks**, each timed alone in the same run: strict JSON parse, schema
  validation, one handler call, result normalisation (the blocks and their cap). The bare
  dispatch (no rules, no hooks) is a ratio to their sum. Beside them, what the handler's
  time limit costs by itself: entering and leaving one anyio cancel scope (the primitive
  raw's time limit and cancellation stand on), with a deadline and without one. A call
  whose handler answers at once enters the scope without a deadline (its timer is set
  only once the handler waits), so the report can say how much of the ratio is anyio's.
* **Rules**: 5, 50 and 200 rules whose globs all match the called tool — conditional (RE2
  predicates on ``commands[*].command`` that the call does not match) and unconditional.
  Each is timed as a verdict (``Policy.decide`` alone) and as a whole dispatch.
* **Peers** (with ``--group bench``): what one more call costs inside a step of 16 calls
  (a turn with one 16-call step minus one with a 1-call step, over 15), and what a whole
  step of one call costs (a 20-step turn over 20), for pydantic-ai and the OpenAI Agents
  SDK with fair fakes (``_peers``). raw's like-for-like figure for a call inside a step is
  its dispatch with 50 conditional rules.

Everything raw is timed in alternating rounds (each round in the other order), the best
round of each. Run: ``uv run --group bench python benchmarks/bench_dispatch.py``.
"""

from __future__ import annotations

import functools
import json
import os
import sys
import tempfile
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

import anyio

sys.path.insert(0, str(Path(__file__).parent.parent))  # the repository: benchmarks.*

from benchmarks._common import (
    ARGUMENTS,
    Target,
    alternating,
    clock,
    conditional_rules,
    per_call,
    print_targets,
    unconditional_rules,
    write_noop_tool,
)
from raw_core import hookimpl
from raw_core._json import loads_strict
from raw_core.agent import load_agent
from raw_core.config import load_config
from raw_core.dispatch import DEFAULT_HANDLER_TIMEOUT, DEFAULT_MAX_ARGUMENT_BYTES, Dispatcher
from raw_core.dispatch._values import result_of
from raw_core.plugins import PluginHost
from raw_core.tools.calls import CallInfo, ToolCall, Verdict
from raw_core.tools.results import DEFAULT_MAX_OUTPUT_BYTES

CALLS = 1000
ROUNDS = int(os.environ.get("BENCH_ROUNDS", "25"))
SIZES = (5, 50, 200)
CALL = ToolCall(id="c", name="noop", arguments=ARGUMENTS)


OLD_REFERENCE = "50 rules (5 conditional) + 1 check hook"
"""The figure this benchmark printed before it measured rules that apply to the called
tool: 45 unconditional rules for other tools (dropped when the policy binds), 5
conditional ones on it, and one plug-in check hook (so the arguments' fingerprint is
taken around it). Kept so that revisions compare (``compare_revisions.py``)."""


class CheckHook:
    @hookimpl
    def raw_tool_check(self, call: CallInfo, verdict: Verdict) -> Verdict | None:
        return None


def project(root: Path) -> list[str]:
    """The tool and one agent per rule set; returns the agents' names."""
    write_noop_tool(root)
    old_rules = [{"match": f"other/tool_{i}", "effect": "deny"} for i in range(45)]
    agents: dict[str, Any] = {
        "no rules": {"tools": {"use": ["agent/noop"]}},
        OLD_REFERENCE: {
            "tools": {"use": ["agent/noop"], "rules": old_rules + conditional_rules(5)}
        },
    }
    for size in SIZES:
        for kind, rules in (
            ("conditional", conditional_rules(size)),
            ("unconditional", unconditional_rules(size)),
        ):
            agents[f"{size} {kind}"] = {"tools": {"use": ["agent/noop"], "rules": rules}}
    (root / "raw.json").write_text(json.dumps({"agents": agents}))
    return list(agents)


def _dispatch_timer(dispatcher: Dispatcher) -> Callable[[], Awaitable[float]]:
    async def timed() -> float:
        started = clock()
        for _ in range(CALLS):
            await dispatcher.dispatch(CALL)
        return (clock() - started) / CALLS

    return timed


async def _scope_alone() -> float:
    """Seconds to enter and leave one anyio cancel scope with the handler's deadline (what
    a call whose handler waits enters)."""
    started = clock()
    for _ in range(CALLS):
        # The scope's own cost is what is measured: nothing runs inside it.
        with anyio.CancelScope(deadline=anyio.current_time() + DEFAULT_HANDLER_TIMEOUT):  # noqa: ASYNC100
            pass
    return (clock() - started) / CALLS


async def _plain_scope_alone() -> float:
    """Seconds to enter and leave one anyio cancel scope without a deadline (what a call
    whose handler answers at once enters: its timer is set only when the handler waits)."""
    started = clock()
    for _ in range(CALLS):
        with anyio.CancelScope():  # noqa: ASYNC100
            pass
    return (clock() - started) / CALLS


def _sync_timer(function: Callable[[], object]) -> Callable[[], Awaitable[float]]:
    async def timed() -> float:
        return per_call(function, CALLS)

    return timed


async def measure_raw(rounds: int = ROUNDS) -> dict[str, float]:
    """Seconds per call of every raw figure, best of ``rounds`` alternating rounds."""
    with tempfile.TemporaryDirectory() as temp:
        root = Path(temp)
        names = project(root)
        config = load_config(root / "raw.json")
        agents = {name: load_agent(config, name, host=PluginHost()) for name in names}
        dispatchers = {
            name: agent.dispatcher(host=None, cwd=root) for name, agent in agents.items()
        }
        for dispatcher in dispatchers.values():
            for _ in range(300):
                result = await dispatcher.dispatch(CALL)
            assert result.status == "ok", result.text()
        tool = dispatchers["no rules"].registry.by_name("noop")
        value = loads_strict(ARGUMENTS, max_bytes=DEFAULT_MAX_ARGUMENT_BYTES)
        returned = await tool.handler(value, None)

        def handler_call() -> None:
            coroutine = tool.handler(value, None)
            try:
                coroutine.send(None)
            except StopIteration:
                pass

        def normalise() -> None:  # the pipeline's own step: blocks, their cap, the result
            result_of(returned, None, DEFAULT_MAX_OUTPUT_BYTES)

        variants: dict[str, Callable[[], Awaitable[float]]] = {
            "block: strict JSON parse": _sync_timer(
                lambda: loads_strict(ARGUMENTS, max_bytes=DEFAULT_MAX_ARGUMENT_BYTES)
            ),
            "block: schema validation": _sync_timer(lambda: tool.input_validator.validate(value)),
            "block: one handler call": _sync_timer(handler_call),
            "block: result normalisation": _sync_timer(normalise),
            "floor: anyio cancel scope with a deadline": _scope_alone,
            "floor: anyio cancel scope, no deadline": _plain_scope_alone,
        }
        for name, agent in agents.items():
            if name not in ("no rules", OLD_REFERENCE):
                variants[f"verdict: {name}"] = _sync_timer(
                    functools.partial(agent.policy.decide, "agent/noop", value)
                )
        for name, dispatcher in dispatchers.items():
            variants[f"dispatch: {name}"] = _dispatch_timer(dispatcher)
        best = await alternating(variants, rounds)
    best["blocks: sum"] = sum(v for k, v in best.items() if k.startswith("block: "))
    return best


async def measure_peers() -> dict[str, float]:
    """Seconds: each peer's extra call inside a 16-call step, and a whole 1-call step."""
    from benchmarks._peers import PEERS

    found: dict[str, float] = {}
    for name, turn in PEERS.items():
        one = await turn(1, 1)
        sixteen = await turn(1, 16)
        found[f"{name}: an extra call inside a 16-call step"] = (sixteen - one) / 15
        found[f"{name}: a whole step (20-step turn / 20)"] = await turn(20, 1) / 20
    return found


def targets(raw: dict[str, float]) -> list[Target]:
    """The targets of the rules' verdicts and of the bare dispatch, from one run."""
    us = 1e6
    return [
        Target(
            item="rules",
            what="verdict, 50 conditional rules on the called tool",
            figure=raw["verdict: 50 conditional"] * us,
            reference=raw["verdict: 5 conditional"] * us,
            reference_what="5 conditional:",
            limit=1.5,
        ),
        Target(
            item="dispatch",
            what="dispatch, no rules, no hooks",
            figure=raw["dispatch: no rules"] * us,
            reference=raw["blocks: sum"] * us,
            reference_what="its building blocks:",
            limit=2.0,
        ),
    ]


def report(raw: dict[str, float], peers: dict[str, float] | None) -> None:
    seconds = raw[f"dispatch: {OLD_REFERENCE}"]
    print(f"raw dispatch, {OLD_REFERENCE}: {seconds * 1e6:.1f} µs/call (the old reference)")
    print("raw, µs per call (CPU time, best of alternating rounds):")
    for name, seconds in raw.items():
        print(f"  {name:<42} {seconds * 1e6:9.2f}")
    if peers is not None:
        ours = raw["dispatch: 50 conditional"]
        print("peers, µs per call (best of 3 turns after a warm-up):")
        for name, seconds in peers.items():
            print(f"  {name:<58} {seconds * 1e6:9.1f}  (raw's dispatch is 1/{seconds / ours:.0f})")
    blocks, scope = raw["blocks: sum"], raw["floor: anyio cancel scope, no deadline"]
    print(
        "the blocks and the one anyio cancel scope (no deadline) a call of a handler that"
        f" answers at once enters: {(blocks + scope) * 1e6:.1f} µs"
        f" = {(blocks + scope) / blocks:.2f}x the blocks (the scope alone"
        f" {scope / blocks:.2f}x); raw's own steps:"
        f" {(raw['dispatch: no rules'] - blocks - scope) * 1e6:.1f} µs"
    )
    print()
    print_targets(targets(raw))


async def main() -> None:
    from benchmarks._peers import available

    raw = await measure_raw()
    missing = available()
    if missing:
        print(f"(peers skipped: {missing})")
    report(raw, None if missing else await measure_peers())


if __name__ == "__main__":
    anyio.run(main)
