"""What the benchmarks share: the no-op tool with a batch-shaped schema, the call its
model sends, rule sets that really apply to it, timing in alternating rounds, and the
record of a target (a ratio of two figures measured in one run, and its limit)."""

from __future__ import annotations

import json
import os
import time
from collections.abc import Awaitable, Callable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {
        "commands": {
            "type": "array",
            "maxItems": 16,
            "items": {
                "type": "object",
                "properties": {"command": {"type": "string"}},
                "required": ["command"],
                "additionalProperties": False,
            },
        }
    },
    "required": ["commands"],
    "additionalProperties": False,
}
ARGUMENTS = '{"commands": [{"command": "ls -la"}, {"command": "git status"}]}'
"""The model's JSON text of every benchmark call: two commands, 62 bytes."""

HANDLER = (
    "RESULT = {'content': [{'type': 'text', 'text': 'ok'}]}\n"
    "async def handler(args, context):\n    return RESULT\n"
)


def write_noop_tool(root: Path, schema: Mapping[str, Any] = SCHEMA) -> None:
    """``tools/noop/``: an async no-op tool (``agent/noop``) whose result is one text block."""
    folder = root / "tools" / "noop"
    folder.mkdir(parents=True, exist_ok=True)
    manifest = {
        "api_version": 2,
        "id": "noop",
        "version": "1.0.0",
        "name": "noop",
        "description": "Does nothing.",
        "input_schema": schema,
        "entry": "./tool.py",
        "condition_sources": ["arguments"],
    }
    (folder / "tool.json").write_text(json.dumps(manifest))
    (folder / "tool.py").write_text(HANDLER)


def conditional_rules(count: int) -> list[dict[str, Any]]:
    """``count`` conditional asks on ``agent/noop``, each an RE2 predicate on
    ``commands[*].command`` that the benchmark call does not match."""
    return [
        {
            "match": "agent/noop",
            "effect": "ask",
            "when": {
                "source": "arguments",
                "any": "commands[*].command",
                "regex": f"(^|[;&|])\\s*(sudo\\s+)?forbidden_{index}(\\s|$)",
            },
        }
        for index in range(count)
    ]


def unconditional_rules(count: int) -> list[dict[str, Any]]:
    """``count`` unconditional rules whose globs all match ``agent/noop`` (allow and ask
    in turn, the last an allow)."""
    globs: list[Any] = ["agent/noop", "agent/*", "*", ["other/x", "agent/no*"]]
    found = [
        {"match": globs[index % 4], "effect": "ask" if index % 2 else "allow"}
        for index in range(count)
    ]
    found[-1]["effect"] = "allow"
    return found


async def alternating(
    variants: Mapping[str, Callable[[], Awaitable[float]]], rounds: int
) -> dict[str, float]:
    """Run every variant once per round, each round in the other order; the best
    (lowest) figure of each."""
    best = dict.fromkeys(variants, float("inf"))
    names = list(variants)
    for index in range(rounds):
        for name in names if index % 2 == 0 else reversed(names):
            best[name] = min(best[name], await variants[name]())
    return best


clock = time.process_time
"""The clock of the raw figures: this process's CPU time, so that the other work of a
loaded machine (time this process spends waiting for a core) does not count. The figures
are CPU-bound: nothing they time waits for I/O."""


def per_call(function: Callable[[], object], calls: int) -> float:
    """Seconds per call of a synchronous ``function``, over ``calls`` calls."""
    started = clock()
    for _ in range(calls):
        function()
    return (clock() - started) / calls


@dataclass(frozen=True)
class Target:
    """One target of the benchmark set: ``figure`` / ``reference`` at most ``limit``.
    ``item`` names what it is about (``rules``, ``dispatch``, ``startup``, ...)."""

    item: str
    what: str
    figure: float
    reference: float
    limit: float
    unit: str = "µs"
    reference_what: str = ""

    @property
    def ratio(self) -> float:
        return self.figure / self.reference

    @property
    def holds(self) -> bool:
        """Whether the ratio is within the limit (never for a figure below zero: a
        difference the machine's noise made negative measures nothing)."""
        return self.figure >= 0 and self.reference > 0 and self.ratio <= self.limit

    def row(self) -> str:
        verdict = "holds" if self.holds else "NOT MET"
        limit = f"≤ {self.limit:g}" if self.limit >= 1 else f"≤ 1/{1 / self.limit:g}"
        return (
            f"| {self.item} | {self.what} | {self.figure:,.1f} {self.unit} |"
            f" {self.reference_what} {self.reference:,.1f} {self.unit} |"
            f" {self.ratio:.2f} | {limit} | {verdict} |"
        )


TABLE_HEAD = (
    "| about | figure | raw | reference | ratio | target | |\n"
    "| --- | --- | --- | --- | --- | --- | --- |"
)


TARGETS_FILE = "RAW_BENCH_TARGETS"
"""The environment variable ``run_all.py`` sets: a file each script appends its targets to."""


def print_targets(targets: list[Target]) -> None:
    """Print the targets as a table, and hand them to ``run_all.py`` when it runs us."""
    print(TABLE_HEAD)
    for target in targets:
        print(target.row())
    path = os.environ.get(TARGETS_FILE)
    if path:
        with open(path, "a", encoding="utf-8") as out:
            for target in targets:
                out.write(json.dumps(target.__dict__) + "\n")
