"""Floors decided with the agent's rules in one pass give the verdicts of layer by layer.

When every layer's conditional rules on a tool read one path, a call none of them matches
is decided by one joined RE2 pass and a verdict fixed at bind time. The reference here
asks each layer's own policy and keeps the strictest (the first of agent, then the floors
in order, on a tie); the floored policy must agree on many random rule sets and calls,
and the random sets must really take the one-pass route.
"""

from __future__ import annotations

import random
from typing import Any

from raw_core.config import Floor, Rule
from raw_core.policy import Policy, bind_floors
from tests.raw_core.policy.layered import TOOLS, random_rules, strictest

PATTERNS = ("a", "^b", "(?i)AB", "c$", r"\Qa)|(b", "(?P<x>ba)", "(?P<x>c.)", "")
WORDS = ("a", "b", "ab", "AB", "c", "ba", "a)|(b", "ca", "")


def _text(rng: random.Random) -> str:
    return "".join(rng.choice(WORDS) for _ in range(rng.randint(0, 3)))


def _call(rng: random.Random) -> dict[str, Any]:
    arguments: dict[str, Any] = {
        "commands": [{"command": _text(rng)} for _ in range(rng.randint(0, 3))]
    }
    if rng.random() < 0.5:
        arguments["name"] = _text(rng)
    return arguments


def test_floors_in_one_pass_agree_with_layer_by_layer() -> None:
    rng = random.Random(20261201)
    one_pass = 0
    for _ in range(300):
        agent = Policy.bind(random_rules(rng, 30, PATTERNS), TOOLS)
        floors = [
            Floor(layer=layer, rules=random_rules(rng, 4, PATTERNS))  # type: ignore[arg-type]
            for layer in rng.sample(["project", "user", "managed"], rng.randint(1, 3))
        ]
        floored = bind_floors(agent, floors, TOOLS)
        if isinstance(floored, Policy):
            continue
        layers = [floored.agent, *(policy for _floor, policy in floored.floors)]
        one_pass += sum("_guarded" in d.__qualname__ for d in floored._deciders.values())
        for _ in range(20):
            arguments = _call(rng)
            for identity in ("t/a", "t/b"):
                assert floored.decide(identity, arguments) == strictest(
                    layers, identity, arguments
                ), (agent.rules, floors, arguments)
    assert one_pass > 100  # the random sets do take the one-pass route


def test_a_tool_no_floor_can_tighten_is_decided_by_the_agent_alone() -> None:
    agent = Policy.bind([Rule(match="t/*", effect="allow")], TOOLS)
    floored = bind_floors(
        agent, [Floor(layer="user", rules=(Rule(match="t/a", effect="deny"),))], TOOLS
    )
    assert not isinstance(floored, Policy)
    assert floored._deciders["t/b"] == agent.decider("t/b")
    assert floored.decide("t/a", {}).layer == "user"
