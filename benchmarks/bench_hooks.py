"""The cost of command hooks on a tool call.

Four agents over one async no-op tool with a batch-shaped schema, each call its arguments
as the model's JSON text, every dispatch step running:

1. no hooks;
2. one PreToolUse hook subscribed by ``match`` to other tools only (its glob never matches);
3. one PreToolUse hook subscribed to the tool with a ``when`` that does not match the call
   (one RE2 predicate on ``commands[*].command``, two commands per call);
4. one PreToolUse hook that runs: a process start (``/bin/sh -c 'exit 0'``), its payload on
   stdin, its answer read.

1-3 are timed in CPU time, in alternating rounds in the same run, each round in the other order (the
best round of each), and 2 and 3 are printed as a ratio to 1 and as what they add in µs.
Target: at most 1.1x. They are timed twice: with no rules (the bare call, where a hook's
one predicate weighs most) and with ``bench_dispatch.py``'s reference policy (50 rules, 5
conditional).

What the subscribed hook adds is also timed directly: ``HookSet.for_call`` at PreToolUse
and PostToolUse (as the dispatcher asks) with the call's frozen arguments, for 3 beside 2
(a hook on other tools: the same lookups, no predicate), in alternating rounds. Target: at
most 1.2 µs, so that the ratio holds at 1.1x even on a 12 µs dispatch.

Run: ``uv run python benchmarks/bench_hooks.py``.
"""

from __future__ import annotations

import json
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import anyio

sys.path.insert(0, str(Path(__file__).parent.parent))  # the repository: benchmarks.*

from benchmarks._common import (
    ARGUMENTS,
    Target,
    conditional_rules,
    print_targets,
    write_noop_tool,
)
from raw_core.agent import load_agent
from raw_core.config import load_config
from raw_core.dispatch import Dispatcher
from raw_core.frozen import freeze
from raw_core.hooks import HookSet
from raw_core.plugins import PluginHost
from raw_core.tools.calls import ToolCall

CALLS = 2000
ROUNDS = 25
RUNNING_CALLS = 200
LOOKUPS = 100_000
EXTRA_BUDGET_US = 1.2

CALL = ToolCall(id="c", name="noop", arguments=ARGUMENTS)
HOOKS: dict[str, dict[str, Any]] = {
    "other-tools": {"match": "other/*"},
    "not-this-call": {
        "match": "agent/noop",
        "when": {"source": "arguments", "any": "commands[*].command", "regex": r"\bgit\s+push\b"},
    },
    "runs": {"match": "agent/noop"},
}


def rules() -> list[dict[str, Any]]:
    """``bench_dispatch.py``'s 50 rules: 45 for other tools, 5 conditional asks."""
    others = [{"match": f"other/tool_{index}", "effect": "deny"} for index in range(45)]
    return others + conditional_rules(5)


def project(root: Path) -> None:
    write_noop_tool(root)
    agents: dict[str, Any] = {
        "none": {"tools": {"use": ["agent/noop"]}},
        "none+rules": {"tools": {"use": ["agent/noop"], "rules": rules()}},
    }
    for name, subscription in HOOKS.items():
        folder = root / "hooks" / name
        folder.mkdir(parents=True)
        hook = {
            "protocol_version": 2,
            "id": name,
            "version": "1.0.0",
            "description": "A benchmark hook.",
            "events": ["PreToolUse"],
            "command": ["/bin/sh", "-c", "exit 0"],
            **subscription,
        }
        (folder / "hook.json").write_text(json.dumps(hook))
        agents[name] = {"tools": {"use": ["agent/noop"]}, "hooks": {"use": [f"agent/{name}"]}}
        agents[f"{name}+rules"] = {
            "tools": {"use": ["agent/noop"], "rules": rules()},
            "hooks": {"use": [f"agent/{name}"]},
        }
    (root / "raw.json").write_text(json.dumps({"agents": agents}))


async def per_call(
    dispatcher: Dispatcher, calls: int, clock: Callable[[], float] = time.process_time
) -> float:
    """Seconds per call: CPU time by default (nothing waits but the hook that runs, which
    is timed on the wall clock: its process start is not this process's CPU)."""
    started = clock()
    for _ in range(calls):
        await dispatcher.dispatch(CALL)
    return (clock() - started) / calls


def lookup_cost(hooks: HookSet, arguments: Any) -> float:
    """CPU seconds per call of the dispatcher's two ``for_call`` questions."""
    for_call = hooks.for_call
    started = time.process_time()
    for _ in range(LOOKUPS):
        for_call("PreToolUse", "agent/noop", arguments, None)
        for_call("PostToolUse", "agent/noop", arguments, None)
    return (time.process_time() - started) / LOOKUPS


def lookup_extra(subscribed: HookSet, other: HookSet) -> float:
    """Seconds ``subscribed``'s lookups take beyond ``other``'s (best rounds, alternating)."""
    arguments = freeze(json.loads(CALL.arguments))
    assert subscribed.for_call("PreToolUse", "agent/noop", arguments, None) == ()
    best = {"subscribed": float("inf"), "other": float("inf")}
    for index in range(ROUNDS):
        order = (("subscribed", subscribed), ("other", other))
        for name, hooks in order if index % 2 else reversed(order):
            best[name] = min(best[name], lookup_cost(hooks, arguments))
    return best["subscribed"] - best["other"]


async def main() -> None:
    with tempfile.TemporaryDirectory() as temp:
        root = Path(temp)
        project(root)
        config = load_config(root / "raw.json")
        dispatchers = {
            name: load_agent(config, name, host=PluginHost()).dispatcher(host=None, cwd=root)
            for name in config.agents
        }
        for name, dispatcher in dispatchers.items():
            result = await dispatcher.dispatch(CALL)
            assert result.status == "ok", (name, result.text())
        measured = [f"{name}{rules}" for rules in ("", "+rules") for name in MEASURED]
        best = dict.fromkeys(measured, float("inf"))
        for index in range(ROUNDS):  # alternating, each round in the other order
            for name in measured if index % 2 else reversed(measured):
                best[name] = min(best[name], await per_call(dispatchers[name], CALLS))
        running = await per_call(dispatchers["runs"], RUNNING_CALLS, time.perf_counter)
        host = PluginHost()
        extra = lookup_extra(
            load_agent(config, "not-this-call", host=host).hooks,
            load_agent(config, "other-tools", host=host).hooks,
        )
    print(f"{CALLS} calls per round, best of {ROUNDS} alternating rounds")
    print("| agent | µs per call | ratio to no hooks | µs added |")
    print("| --- | --- | --- | --- |")
    for rules, label in (("", "no rules"), ("+rules", "50 rules")):
        base = best[f"none{rules}"]
        for name in MEASURED:
            value = best[f"{name}{rules}"]
            print(
                f"| {LABELS[name]}, {label} | {value * 1e6:.1f} | {value / base:.2f}"
                f" | {(value - base) * 1e6:+.1f} |"
            )
    base = best["none"]
    print(
        f"| one hook that runs (a process start), no rules, {RUNNING_CALLS} calls"
        f" | {running * 1e6:.0f} | {running / base:.0f} | |"
    )
    print()
    print(
        f"HookSet.for_call at PreToolUse + PostToolUse, {LOOKUPS:,} calls per round, best of"
        f" {ROUNDS}: the subscribed hook whose when does not match adds {extra * 1e6:.2f} µs"
        " per call to a hook on other tools"
    )
    print()
    print_targets(
        [
            Target(
                item="hooks",
                what=f"a subscribed hook whose when does not match, {label}",
                figure=best[f"not-this-call{rules}"] * 1e6,
                reference=best[f"none{rules}"] * 1e6,
                reference_what="no hooks:",
                limit=1.1,
            )
            for rules, label in (("", "no rules"), ("+rules", "50 rules"))
        ]
        + [
            Target(
                item="hooks",
                what="what a subscribed hook whose when does not match adds (HookSet.for_call)",
                figure=extra * 1e6,
                reference=EXTRA_BUDGET_US,
                reference_what="the budget:",
                limit=1.0,
            )
        ]
    )


MEASURED = ("none", "other-tools", "not-this-call")
LABELS = {
    "none": "no hooks",
    "other-tools": "one hook, its match selects other tools",
    "not-this-call": "one hook, subscribed, its when does not match the call",
}


if __name__ == "__main__":
    anyio.run(main)
