"""Policy verdicts and predicate evaluation: RE2 beside Python's ``re``.

Prints:

1. the verdict for one call of ``builtin/bash`` against 50 rules of which 5 conditional
   (bound once, as ``load_agent`` does), beside a direct walk of all 50 rules that matches
   every glob and evaluates every predicate on each call (same RE2 patterns);
2. one predicate (``commands[*].command`` against spec 001's rm rule) on a 16-entry batch;
3. the same predicate on one argument of 64 KiB to 4 MiB, so that linear growth shows;
4. the same predicate evaluated with Python's ``re`` beside RE2, and a pathological
   pattern, ``(a+)+$`` on ``'a' * n + '!'``, where ``re`` doubles with every character (the
   ``re`` runs stop once one search takes over a second);
5. what floors add per verdict: the same 50 agent rules with a user floor (two rules) and a
   managed floor (two rules) composed on top, as a ratio to the verdict without floors,
   both timed in the same run, interleaved.

Run with ``uv run python benchmarks/bench_policy.py``.
"""

from __future__ import annotations

import re
import sys
import time
import timeit
from collections.abc import Callable
from functools import partial
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).parent.parent))  # the repository: benchmarks.*

from benchmarks._common import Target, print_targets
from raw_core._re2 import compile_pattern
from raw_core.config import Floor, Predicate, Rule
from raw_core.policy import Decision, Policy, bind_floors
from raw_core.policy._glob import Glob
from raw_core.policy.predicate import ToolShape, bind_predicate, compile_accessor, parse_path

RM = r"(^|[;&|()\n])\s*(sudo\s+)?(/usr/bin/|/bin/)?rm(\s|$)"
BASH_SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {
        "commands": {
            "type": "array",
            "items": {
                "type": "object",
                "properties": {"command": {"type": "string"}, "timeout_ms": {"type": "integer"}},
                "required": ["command"],
            },
        }
    },
    "required": ["commands"],
}
CONDITIONS = (RM, r"^git\s+push\b", r"curl[^|]*\|\s*(ba)?sh", r"\bchmod\s+777\b", r">\s*/etc/")


def per_call(function: Callable[[], object]) -> float:
    """Seconds per call: the best of three runs of an auto-ranged loop."""
    timer = timeit.Timer(function)
    number, _ = timer.autorange()
    return min(timer.repeat(repeat=3, number=number)) / number


def _re_test(pattern: str) -> Callable[[str], bool]:
    """The same yes/no test as RE2's, with Python's backtracking ``re``."""
    search = re.compile(pattern).search
    return lambda text: search(text) is not None


def once(function: Callable[[], object]) -> float:
    start = time.perf_counter()
    function()
    return time.perf_counter() - start


def rules_50() -> list[Rule]:
    rules: list[Rule] = []
    for index in range(45):
        kind = index % 3
        if kind == 0:
            rules.append(Rule(match=f"mcp/server{index}/*", effect="deny"))
        elif kind == 1:
            rules.append(Rule(match=f"builtin/tool_{index:02d}", effect="ask"))
        else:
            rules.append(Rule(match=f"local/*_{index}", effect="allow"))
    rules[20] = Rule(match="builtin/*", effect="allow")  # the one unconditional rule for bash
    for regex in CONDITIONS:
        when = Predicate(source="arguments", any="commands[*].command", regex=regex)
        rules.append(Rule(match="builtin/bash", effect="ask", when=when))
    return rules


def direct_walk(rules: list[Rule], identity: str, arguments: Any) -> Decision:
    """No precomputation: every rule, every glob and every predicate on every call (the
    same RE2 patterns, from compile_pattern's cache)."""
    decision = Decision(verdict="allow", rule=None)
    for index, rule in enumerate(rules):
        if not any(Glob(glob).matches(identity) for glob in rule.globs):
            continue
        if rule.when is not None:
            test = compile_pattern(rule.when.regex).test
            texts = [c.get("command") for c in arguments.get("commands", [])]
            if not any(isinstance(t, str) and test(t) for t in texts):
                continue
        decision = Decision(verdict=rule.effect, rule=index)
    return decision


def batch(size: int, text: str = "ls -la src/ && grep -rn 'TODO' --include='*.py' .") -> Any:
    return {"commands": [{"command": text} for _ in range(size)]}


def section_verdicts() -> None:
    rules = rules_50()
    shapes = [ToolShape.from_schemas("builtin/bash", input_schema=BASH_SCHEMA)] + [
        ToolShape.from_schemas(f"builtin/tool_{i:02d}", input_schema=BASH_SCHEMA) for i in range(20)
    ]
    start = time.perf_counter()
    policy = Policy.bind(rules, shapes)
    bind_ms = (time.perf_counter() - start) * 1e3
    print("1. verdict for one call of builtin/bash: 50 rules, 5 conditional")
    print(f"   bind 50 rules to 21 tools (once, at load): {bind_ms:.2f} ms")
    cases = [
        ("1 command, no condition matches (walks 5 conditions + 1 rule)", batch(1)),
        ("16 commands, no condition matches", batch(16)),
        ("1 command, the last rule matches (rm -rf build)", batch(1, "rm -rf build")),
    ]
    print(f"   {'call':<62} {'Policy.decide':>14} {'direct walk':>12}")
    for label, arguments in cases:
        decided = policy.decide("builtin/bash", arguments)
        assert decided == direct_walk(rules, "builtin/bash", arguments), label
        fast = per_call(partial(policy.decide, "builtin/bash", arguments)) * 1e6
        slow = per_call(partial(direct_walk, rules, "builtin/bash", arguments)) * 1e6
        print(f"   {label:<62} {fast:>11.2f} µs {slow:>9.2f} µs  -> {decided.verdict}")
    other = per_call(lambda: policy.decide("builtin/tool_07", batch(1))) * 1e6
    print(f"   {'another tool (its chain: one unconditional rule)':<62} {other:>11.2f} µs")


def section_predicates() -> None:
    shape = ToolShape.from_schemas("builtin/bash", input_schema=BASH_SCHEMA)
    bound = bind_predicate(
        Predicate(source="arguments", any="commands[*].command", regex=RM), shape
    )
    with_re = compile_accessor(parse_path("commands[*].command"), _re_test(RM))
    print()
    print("2. predicate commands[*].command ~ rm rule, 16-entry batch")
    for label, value in [
        ("16 entries, none matches", batch(16)),
        (
            "16 entries, the last matches",
            {"commands": batch(15)["commands"] + [{"command": "rm x"}]},
        ),
    ]:
        assert bound.matches(value) == with_re(value)
        re2_us = per_call(partial(bound.matches, value)) * 1e6
        re_us = per_call(partial(with_re, value)) * 1e6
        print(f"   {label:<32} RE2 {re2_us:8.2f} µs   re {re_us:8.2f} µs")

    print()
    print("3. the same predicate on one large argument (no match: the whole text is scanned)")
    print(f"   {'size':>8} {'RE2':>12} {'RE2 µs/KiB':>11} {'re':>12} {'re µs/KiB':>10}")
    line = "echo building the project; make -j4 all 2>&1 | tee build.log\n"
    for kib in (64, 256, 1024, 4096):
        text = (line * (kib * 1024 // len(line) + 1))[: kib * 1024]
        value = {"commands": [{"command": text}]}
        assert not bound.matches(value)
        assert not with_re(value)
        re2_s = per_call(partial(bound.matches, value))
        re_s = per_call(partial(with_re, value))
        print(
            f"   {kib:>5} KiB {re2_s * 1e3:>9.3f} ms {re2_s * 1e6 / kib:>11.3f}"
            f" {re_s * 1e3:>9.3f} ms {re_s * 1e6 / kib:>10.3f}"
        )


def section_pathological() -> None:
    pattern = r"(a+)+$"
    shape = ToolShape.from_schemas("builtin/bash", input_schema=BASH_SCHEMA)
    bound = bind_predicate(
        Predicate(source="arguments", any="commands[*].command", regex=pattern), shape
    )
    compiled = re.compile(pattern)
    print()
    print(f"4. pathological pattern {pattern} on 'a' * n + '!' (no match)")
    print(f"   {'n':>7} {'RE2':>12} {'re':>12}")
    slowest = 0.0
    for n in (10, 14, 18, 20, 22, 24, 25, 1000, 1_000_000):
        text = "a" * n + "!"
        re2_s = per_call(partial(bound.matches, {"commands": [{"command": text}]}))
        if slowest < 1.0:
            slowest = once(partial(compiled.search, text))
            re_text = f"{slowest * 1e3:>9.1f} ms"
        else:
            re_text = "  not run (doubles with each 'a')"
        print(f"   {n:>7} {re2_s * 1e6:>9.2f} µs {re_text}")


def cpu_per_call(function: Callable[[], object]) -> float:
    """CPU seconds per call (``time.process_time``: the machine's other work does not
    count): the best of five runs of an auto-ranged loop."""
    timer = timeit.Timer(function, timer=time.process_time)
    number, _ = timer.autorange()
    return min(timer.repeat(repeat=5, number=max(number, 2000))) / max(number, 2000)


def _floors() -> list[Floor]:
    """A user floor that asks before rm in bash and denies one tool; a managed floor that
    denies every MCP tool and a family of built-ins."""
    rm = Predicate(source="arguments", any="commands[*].command", regex=RM)
    user = (
        Rule(match="builtin/bash", effect="ask", when=rm),
        Rule(match="builtin/tool_07", effect="deny"),
    )
    managed = (Rule(match="mcp/*", effect="deny"), Rule(match="builtin/tool_1?", effect="deny"))
    return [Floor(layer="user", rules=user), Floor(layer="managed", rules=managed)]


def section_floors() -> None:
    rules = rules_50()
    shapes = [ToolShape.from_schemas("builtin/bash", input_schema=BASH_SCHEMA)] + [
        ToolShape.from_schemas(f"builtin/tool_{i:02d}", input_schema=BASH_SCHEMA) for i in range(20)
    ]
    floors = _floors()
    plain = Policy.bind(rules, shapes)
    floored = bind_floors(Policy.bind(rules, shapes), floors, shapes)
    # The same rules in one list: the same predicates to evaluate, without the layering.
    merged = Policy.bind(rules + [r for floor in floors for r in floor.rules], shapes)
    print()
    print("5. floors: 50 agent rules alone; with a user floor and a managed floor (2 rules")
    print("   each) composed on top; and the same 54 rules in one list (same predicates, one")
    print("   layer). Ratios: floored / alone, and floored / one list.")
    head = f"   {'call':<46} {'alone':>9} {'one list':>9} {'floored':>9}"
    print(f"{head} {'/alone':>7} {'/list':>6}")
    cases = [
        ("bash, 1 command, nothing matches", "builtin/bash", batch(1)),
        ("bash, 16 commands, nothing matches", "builtin/bash", batch(16)),
        ("bash, rm -rf build (agent and user floor ask)", "builtin/bash", batch(1, "rm -rf build")),
        ("tool_03, no floor rule matches it", "builtin/tool_03", batch(1)),
    ]
    targets: list[Target] = []
    for label, identity, arguments in cases:
        expected = plain.decide(identity, arguments).verdict
        assert floored.decide(identity, arguments).verdict == expected, label
        timings: dict[str, list[float]] = {"alone": [], "list": [], "floored": []}
        for _ in range(5):  # interleaved, so that all three see the same machine
            timings["alone"].append(cpu_per_call(partial(plain.decide, identity, arguments)))
            timings["list"].append(cpu_per_call(partial(merged.decide, identity, arguments)))
            timings["floored"].append(cpu_per_call(partial(floored.decide, identity, arguments)))
        a, m, f = (min(timings[k]) * 1e6 for k in ("alone", "list", "floored"))
        print(
            f"   {label:<46} {a:>6.2f} µs {m:>6.2f} µs {f:>6.2f} µs {f / a:>6.2f}x {f / m:>5.2f}x"
        )
        targets.append(
            Target(
                item="floors",
                what=f"a verdict with a user and a managed floor: {label}",
                figure=f,
                reference=a,
                reference_what="the agent's rules alone:",
                limit=1.2,
            )
        )
    denied = cpu_per_call(partial(floored.decide, "builtin/tool_12", batch(1))) * 1e6
    print(f"   {'tool_12 (hidden by the managed floor)':<46} {'':>9} {'':>9} {denied:>6.2f} µs")
    print()
    print_targets(targets)


def main() -> None:
    print(f"Python {sys.version.split()[0]}")
    section_verdicts()
    section_predicates()
    section_pathological()
    section_floors()


if __name__ == "__main__":
    main()
