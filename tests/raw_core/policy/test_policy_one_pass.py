"""Conditional rules on one path are decided in one pass: the same verdicts as rule by rule.

The reference evaluator here walks every rule in config order, matching its glob and
running its own bound predicate, and keeps the last match; the policy must agree with it
(and with its own ``explain``) on many random rule sets and calls, including patterns RE2
will not join (a repeated group name, ``\\Q`` quotes) and inline flags that must stay with
their own pattern.
"""

from __future__ import annotations

import random
from typing import Any

import pytest

from raw_core._re2 import PatternError, compile_any
from raw_core.config import Predicate, Rule
from raw_core.policy import Policy
from raw_core.policy.predicate import ToolShape, bind_predicate, join_predicates

STRING = {"type": "string"}
SCHEMA = {
    "type": "object",
    "properties": {
        "commands": {
            "type": "array",
            "items": {"type": "object", "properties": {"command": STRING, "cwd": STRING}},
        },
        "name": STRING,
        "tags": {"type": "array", "items": STRING},
    },
}
EFFECTS = {
    "type": "object",
    "properties": {
        "files": {"type": "array", "items": {"type": "object", "properties": {"path": STRING}}}
    },
}
TOOL = ToolShape.from_schemas(
    "agent/t",
    input_schema=SCHEMA,
    effects_schema=EFFECTS,
    condition_sources=("arguments", "effects"),
)
OTHER = ToolShape.from_schemas("agent/u", input_schema=SCHEMA)
PATHS = (
    ("arguments", "commands[*].command"),
    ("arguments", "commands[*].cwd"),
    ("arguments", "name"),
    ("arguments", "tags[*]"),
    ("effects", "files[*].path"),
)
PATTERNS = (
    "a",
    "^a",
    "b$",
    "(?i)AB",
    "ab|c",
    "^$",
    "",
    r"\bcd\b",
    "[ab]{2}",
    "(?P<x>ba)",
    "(?P<x>c.)",
    r"\Qa)|(b",
    r"\Qd\E",
    r"a\z",
    "(?s)a.b",
    "\\n",
    "^(a|b)+$",
    "é",
    "x*",
)
WORDS = ("a", "b", "ab", "c", "cd", "ba", "A B", "Ab", "d", "a)|(b", "a\nb", "é", "", " cd ")


def _rules(rng: random.Random) -> list[Rule]:
    found: list[Rule] = []
    for _ in range(rng.randint(0, 40)):
        match = rng.choice(["agent/t", "agent/*", "agent/u", "*"])
        effect = rng.choice(["allow", "ask", "deny"])
        when = None
        if rng.random() < 0.8:
            source, path = rng.choice(PATHS)
            if source == "effects":
                match = "agent/t"
            when = Predicate(source=source, any=path, regex=rng.choice(PATTERNS))  # type: ignore[arg-type]
            effect = "ask"  # a condition only asks
        found.append(Rule(match=match, effect=effect, when=when))  # type: ignore[arg-type]
    return found


def _text(rng: random.Random) -> str:
    return "".join(rng.choice(WORDS) for _ in range(rng.randint(0, 3)))


def _call(rng: random.Random) -> tuple[dict[str, Any], dict[str, Any]]:
    arguments: dict[str, Any] = {
        "commands": [{"command": _text(rng), "cwd": _text(rng)} for _ in range(rng.randint(0, 3))],
        "tags": [_text(rng) for _ in range(rng.randint(0, 3))],
    }
    if rng.random() < 0.7:
        arguments["name"] = _text(rng)
    effects = {"files": [{"path": _text(rng)} for _ in range(rng.randint(0, 3))]}
    return arguments, effects


def _reference(policy: Policy, identity: str, arguments: Any, effects: Any) -> int | None:
    """The index of the last rule that matches, rule by rule (None: no rule matches)."""
    decided: int | None = None
    for index in policy.matching_rules(identity):
        predicate = policy.predicate(index, identity)
        if predicate is None or predicate.matches_call(arguments, effects):
            decided = index
    return decided


def test_one_pass_agrees_with_rule_by_rule_on_random_rule_sets() -> None:
    rng = random.Random(20261201)
    joined_groups = 0
    for _ in range(400):
        rules = _rules(rng)
        policy = Policy.bind(rules, [TOOL, OTHER])
        joined_groups += sum(len(chain.guards) for chain in policy._chains.values())
        for _ in range(25):
            arguments, effects = _call(rng)
            for identity in ("agent/t", "agent/u"):
                call_effects = effects if identity == "agent/t" else None
                decision = policy.decide(identity, arguments, call_effects)
                expected = _reference(policy, identity, arguments, call_effects)
                assert decision.rule == expected, (rules, arguments, effects)
                verdict = "allow" if expected is None else rules[expected].effect
                assert decision.verdict == verdict
                assert policy.explain(identity, arguments, call_effects).decided_by == expected
    assert joined_groups > 400  # the random sets do exercise the joined pass


def test_fifty_conditional_rules_on_one_path_take_one_joined_test() -> None:
    rules = [
        Rule(
            match="agent/t",
            effect="ask",
            when=Predicate(
                source="arguments", any="commands[*].command", regex=f"forbidden_{i}\\b"
            ),
        )
        for i in range(50)
    ]
    policy = Policy.bind(rules, [TOOL])
    chain = policy._chains["agent/t"]
    assert len(chain.guards) == 1
    assert all(step.guard == 0 for step in chain.steps)
    calls = {"commands": [{"command": "ls"}, {"command": "x; forbidden_7 now"}]}
    assert policy.decide("agent/t", calls).rule == 7
    assert policy.decide("agent/t", {"commands": [{"command": "forbidden_70"}]}).rule is None


def test_an_inline_flag_stays_with_its_own_pattern() -> None:
    joined = compile_any(["(?i)abc", "xyz"])
    assert joined.test("ABC")
    assert not joined.test("XYZ")


def test_patterns_that_cannot_be_joined_are_refused_not_misread() -> None:
    # Joined as text, the quote would swallow the next part: "b" would no longer match.
    with pytest.raises(PatternError):
        compile_any([r"\Qa", r"\Qb\E"])
    named = compile_any(["(?P<x>a)", "(?P<x>b)"])  # RE2 takes a name twice: no captures
    assert named.test("a")
    assert named.test("b")


def test_join_splits_until_re2_accepts_and_leaves_single_predicates_alone() -> None:
    regexes = ["(?P<x>a)", "b", "(?P<x>c)", "d", r"\Qe"]
    predicates = [
        bind_predicate(Predicate(source="arguments", any="name", regex=r), TOOL) for r in regexes
    ]
    joined = join_predicates(predicates)
    covered = sorted(i for _accessor, indexes in joined for i in indexes)
    assert len(covered) == len(set(covered))
    for accessor, indexes in joined:
        assert len(indexes) >= 2
        for text in ("a", "b", "c", "d", "e", "z"):
            expected = any(predicates[i].matches({"name": text}) for i in indexes)
            assert accessor({"name": text}) is expected
