"""What builtin/bash's intended effects cost: µs to read one command line with
tree-sitter-bash into its programs and written files.

Typical commands (one simple command, a 5-stage pipeline, a 4 KiB script), then the worst
cases the limits allow: the most syntax nodes one command may have walked, text that
tree-sitter's error recovery takes long over (stopped at the parse deadline), and calls of
16 commands that use up a whole call's budget. Each figure is
the best of 5 rounds (after a warm-up round) of N reads, divided by N; the parse-only
column is tree-sitter alone on the same bytes, without a deadline. Run:
``uv run python benchmarks/bench_bash_effects.py``.
"""

from __future__ import annotations

import random
import time
from collections.abc import Callable
from pathlib import Path
from types import SimpleNamespace

import tree_sitter
import tree_sitter_bash

from raw_builtin_tools.toolkit import MAX_COMMAND_BYTES, MAX_COMMAND_NODES, parse_command
from raw_core.tools.loader import ToolLoader

BASH = Path(__file__).parents[1] / "raw_builtin_tools/src/raw_builtin_tools/tools/bash"
ROUNDS = 5


def best_us(work: Callable[[], object], count: int) -> float:
    work()
    best = float("inf")
    for _ in range(ROUNDS):
        start = time.perf_counter()
        for _ in range(count):
            work()
        best = min(best, (time.perf_counter() - start) / count)
    return best * 1e6


def script_of(size: int) -> str:
    lines: list[str] = []
    index = 0
    while sum(len(line) + 1 for line in lines) < size:
        lines.append(
            f'if [ -f "build/{index}.o" ]; then rm -f "build/{index}.o" && echo removed'
            f" >> log.txt; fi"
        )
        index += 1
    return "\n".join(lines)[:size].rsplit("\n", 1)[0]


def main() -> None:
    parser = tree_sitter.Parser(tree_sitter.Language(tree_sitter_bash.language()))
    tokens = ["(", ")", "{", "}", ";;", "fi", "then", "|", "&", " ", "x", "$(", '"', "\n"]
    tokens += ["]]", "[[", "done"]
    garbage = "".join(random.Random(3).choice(tokens) for _ in range(40_000))[:32_000]
    cases = [
        ("one simple command", "ls -la src", 5000),
        ("a 5-stage pipeline", "cat app.log | grep -v DEBUG | sort | uniq -c | head -n 20", 2000),
        ("a 4 KiB script", script_of(4096), 100),
        (f"worst: {MAX_COMMAND_NODES:,} nodes", "x;" * (MAX_COMMAND_NODES // 4 - 1), 10),
        ("worst: 32 KB of tokens that do not parse", garbage, 10),
    ]
    print("| command | bytes | µs per command | tree-sitter parse alone (µs) | flags |")
    print("| --- | --- | --- | --- | --- |")
    for label, text, count in cases:
        data = text.encode()
        parsed = parse_command(text, "/work")
        total = best_us(lambda text=text: parse_command(text, "/work"), count)  # type: ignore[misc]
        alone = best_us(lambda data=data: parser.parse(data), count)  # type: ignore[misc]
        flags = ", ".join(parsed.flags) or "none"
        print(f"| {label} | {len(data):,} | {total:,.1f} | {alone:,.1f} | {flags} |")

    tool = ToolLoader().load(BASH, identity="builtin/bash")
    assert tool.describe_effects is not None
    describe = tool.describe_effects
    context = SimpleNamespace(cwd="/work")
    typical = {"commands": [{"command": "pytest -q tests > report.txt 2>&1"}] * 3}
    budget = {"commands": [{"command": "x;" * (MAX_COMMAND_NODES // 4 - 1)}] * 16}
    large = {"commands": [{"command": "echo " + "a" * (MAX_COMMAND_BYTES - 100)}] * 16}
    slow = {"commands": [{"command": garbage}] * 16}
    print()
    print("| call of builtin/bash | µs per call |")
    print("| --- | --- |")
    for label, arguments, count in [
        ("3 typical commands", typical, 2000),
        (
            f"16 commands of {MAX_COMMAND_NODES:,} nodes each (past the call's node budget)",
            budget,
            3,
        ),
        ("16 commands of 64 KiB each (past the call's byte budget)", large, 10),
        ("16 commands of the 32 KB of tokens (past the call's parse time)", slow, 3),
    ]:
        elapsed = best_us(lambda a=arguments: describe(a, context), count)  # type: ignore[misc]
        print(f"| {label} | {elapsed:,.1f} |")


if __name__ == "__main__":
    main()
