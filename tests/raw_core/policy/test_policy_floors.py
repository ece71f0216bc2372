"""Floors composed with an agent's rules (raw_core.policy.floors) and rule examples
(raw_core.policy.examples), on tool shapes."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from raw_core.config import Floor, Predicate, Rule, RuleExamples, parse_config
from raw_core.errors import ConfigInvalid, ToolNotExposed
from raw_core.policy import FlooredPolicy, Policy, bind_floors
from raw_core.policy.predicate import ToolShape

SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {
        "commands": {
            "type": "array",
            "items": {"type": "object", "properties": {"command": {"type": "string"}}},
        }
    },
}
SHAPES = [
    ToolShape.from_schemas("builtin/bash", input_schema=SCHEMA),
    ToolShape.from_schemas("builtin/read_file", input_schema=SCHEMA),
]
RM = Predicate(source="arguments", any="commands[*].command", regex=r"\brm\b")


def rule(match: str, effect: Any, when: Predicate | None = None) -> Rule:
    return Rule(match=match, effect=effect, when=when)


def floored(agent: list[Rule], **floors: list[Rule]) -> FlooredPolicy:
    bound = bind_floors(
        Policy.bind(agent, SHAPES),
        [
            Floor(layer=layer, rules=tuple(rules), path=Path(f"/{layer}.json"))  # type: ignore[arg-type]
            for layer, rules in floors.items()
        ],
        SHAPES,
    )
    assert isinstance(bound, FlooredPolicy)
    return bound


def call(text: str) -> dict[str, Any]:
    return {"commands": [{"command": text}]}


@pytest.mark.parametrize(
    ("agent", "user", "managed", "command", "verdict", "layer"),
    [
        pytest.param([rule("*", "allow")], [rule("builtin/bash", "ask", RM)], [], "rm x",
                     "ask", "user", id="user-ask-beats-agent-allow"),
        pytest.param([rule("*", "allow")], [rule("builtin/bash", "ask", RM)], [], "ls",
                     "allow", "agent", id="floor-without-match-has-no-say"),
        pytest.param([rule("builtin/bash", "ask")], [rule("builtin/bash", "ask")], [], "ls",
                     "ask", "agent", id="a-tie-names-the-agent"),
        pytest.param([rule("builtin/bash", "deny")], [rule("builtin/bash", "allow")], [],
                     "ls", "deny", "agent", id="a-floor-allow-never-loosens"),
        pytest.param([], [rule("builtin/bash", "ask", RM)], [rule("builtin/bash", "deny")],
                     "rm x", "deny", "managed", id="managed-deny-beats-user-ask"),
        pytest.param([rule("builtin/bash", "ask", RM)], [], [rule("*", "allow")], "rm x",
                     "ask", "agent", id="managed-allow-never-loosens"),
    ],
)  # fmt: skip
def test_the_verdict_is_the_strictest_layers(
    agent: list[Rule],
    user: list[Rule],
    managed: list[Rule],
    command: str,
    verdict: str,
    layer: str,
) -> None:
    policy = floored(agent, user=user, managed=managed)
    decision = policy.decide("builtin/bash", call(command))
    assert (decision.verdict, decision.layer) == (verdict, layer)
    explained = policy.explain("builtin/bash", call(command))
    assert (explained.verdict, explained.layer, explained.decided_by) == (
        verdict,
        layer,
        decision.rule,
    )
    assert [entry.layer for entry in explained.layers] == ["agent", "user", "managed"]


def test_a_floor_deny_hides_the_tool_and_says_which_floor() -> None:
    policy = floored([rule("*", "allow")], managed=[rule("builtin/bash", "deny")])
    assert not policy.is_exposed("builtin/bash")
    assert policy.is_exposed("builtin/read_file")
    assert policy.hidden == {"builtin/bash": 0}
    assert policy.hidden_layer("builtin/bash") == "managed"
    with pytest.raises(ToolNotExposed) as caught:
        policy.check_exposed("builtin/bash")
    assert "the managed floor (/managed.json)" in caught.value.message
    assert caught.value.context["layer"] == "managed"


@pytest.mark.parametrize(
    "floor",
    [
        pytest.param([rule("builtin/bash", "ask")], id="a-floor-on-another-tool"),
        pytest.param([rule("builtin/read_file", "ask")], id="a-floor-on-the-same-tool"),
        pytest.param([rule("*", "allow")], id="a-floor-that-only-allows"),
    ],
)
def test_a_tool_the_agents_rules_hide_is_listed_as_hidden_whatever_the_floor(
    floor: list[Rule],
) -> None:
    policy = floored([rule("builtin/read_file", "deny")], user=floor)
    assert not policy.is_exposed("builtin/read_file")
    assert policy.hidden == {"builtin/read_file": 0}
    assert policy.hidden_layer("builtin/read_file") == "agent"


def test_a_later_conditional_floor_rule_keeps_the_tool_exposed() -> None:
    policy = floored([], user=[rule("builtin/bash", "deny"), rule("builtin/bash", "ask", RM)])
    assert policy.is_exposed("builtin/bash")
    assert policy.decide("builtin/bash", call("rm x")).verdict == "ask"
    assert policy.decide("builtin/bash", call("ls")).verdict == "deny"


def test_without_floors_the_agents_policy_is_used_as_it_is() -> None:
    agent = Policy.bind([rule("*", "allow")], SHAPES)
    assert bind_floors(agent, [], SHAPES) is agent


def test_lint_reports_agent_rules_a_floor_makes_dead() -> None:
    policy = floored(
        [rule("*", "allow"), rule("builtin/bash", "allow"), rule("builtin/read_file", "allow")],
        user=[rule("builtin/bash", "deny"), rule("builtin/bash", "ask", RM)],
        managed=[rule("builtin/read_file", "deny")],
    )
    findings = {(f.kind, f.rule): f for f in policy.lint()}
    dead = findings[("floor_overrides", 0)]
    assert dead.layers == ("user", "managed")
    assert "the user floor (/user.json) asks before every call of builtin/bash" in dead.message
    assert "the managed floor (/managed.json) denies every call of builtin/read_file" in (
        dead.message
    )
    assert ("never_decides", 0) in findings  # and shadowed by rules 1 and 2 as well
    assert findings[("floor_overrides", 1)].layers == ("user",)
    assert findings[("floor_overrides", 2)].layers == ("managed",)


def test_lint_leaves_a_rule_as_strict_as_the_floor() -> None:
    policy = floored([rule("builtin/bash", "ask")], user=[rule("builtin/bash", "ask")])
    assert policy.lint() == ()


def test_a_floor_rule_that_does_not_fit_a_tool_names_the_floors_file() -> None:
    bad = Predicate(source="arguments", any="files[*].path", regex="x")
    with pytest.raises(ConfigInvalid) as caught:
        floored([], user=[rule("builtin/*", "ask", bad)])
    error = caught.value
    assert error.message.startswith("the user floor (/user.json): rule 0 ")
    assert (error.field, error.context["path"]) == ("$.rules[0].when.any", "/user.json")


WHEN = {"source": "arguments", "any": "commands[*].command", "regex": "rm"}


def examples_rule(**examples: list[Any]) -> Rule:
    return Rule(match="builtin/bash", effect="ask", when=RM, examples=RuleExamples(**examples))


def test_examples_are_checked_at_bind_whatever_tool_the_glob_matches() -> None:
    good = examples_rule(match=[call("rm -rf x")], not_match=[call("ls"), {}])
    assert {good: 1}[examples_rule(match=[call("rm -rf x")], not_match=[call("ls"), {}])] == 1
    assert [r.passed for r in Policy.bind([good], SHAPES).examples] == [True, True, True]
    lonely = Rule(match="local/none", effect="ask", when=RM, examples=good.examples)
    with pytest.raises(ConfigInvalid) as caught:
        Policy.bind(
            [lonely, examples_rule(not_match=[call("ls"), call("sudo rm y")])],
            SHAPES,
            field="$.agents.a.tools.rules",
        )
    error = caught.value
    assert error.field == "$.agents.a.tools.rules[1].examples.not_match[1]"
    assert error.context["rule"] == 1
    assert error.context["example"] == call("sudo rm y")
    assert "should not match its when, but it does: arguments commands[0].command" in (
        error.message
    )
    kept = Policy.bind([examples_rule(match=[call("ls")])], SHAPES, check_examples=False)
    assert [(r.kind, r.passed) for r in kept.examples] == [("match", False)]


@pytest.mark.parametrize(
    ("rule_json", "field", "fragment"),
    [
        pytest.param(
            {"match": "builtin/bash", "effect": "deny", "examples": {"match": [{}]}},
            "$.agents.a.tools.rules[0].examples",
            "only valid on a rule with 'when'",
            id="unconditional",
        ),
        pytest.param(
            {"match": "builtin/bash", "effect": "ask", "when": WHEN,
             "examples": {"match": ["rm x"]}},
            "$.agents.a.tools.rules[0].examples.match",
            "item 0 is a string",
            id="not-an-object",
        ),
        pytest.param(
            {"match": "builtin/bash", "effect": "ask", "when": WHEN,
             "examples": {"matches": []}},
            "$.agents.a.tools.rules[0].examples.matches",
            "unknown field",
            id="unknown-key",
        ),
    ],
)  # fmt: skip
def test_bad_examples_are_config_errors_at_their_path(
    rule_json: dict[str, Any], field: str, fragment: str
) -> None:
    text = json.dumps({"agents": {"a": {"tools": {"use": [], "rules": [rule_json]}}}})
    with pytest.raises(ConfigInvalid) as caught:
        parse_config(text)
    assert caught.value.field == field
    assert fragment in caught.value.message


def test_a_config_floor_is_named_alike_in_every_message() -> None:
    policy = floored([], config=[rule("builtin/bash", "deny"), rule("builtin/read_file", "ask")])
    with pytest.raises(ToolNotExposed) as caught:
        policy.check_exposed("builtin/bash")
    assert "the config's floor (/config.json)" in caught.value.message
    assert policy.decide("builtin/read_file", call("ls")).where == "the config's floor"
