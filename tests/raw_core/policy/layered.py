"""What the generated floors tests share: two tools with a batch-shaped schema, seeded
rule sets for them, and the reference verdict a floored policy must give — each layer
decided alone with ``Policy.decide``, the strictest wins (the first layer on a tie)."""

from __future__ import annotations

import random
from collections.abc import Sequence
from typing import Any

from raw_core.config import Effect, Predicate, Rule
from raw_core.policy import Decision, Policy
from raw_core.policy.predicate import ToolShape

STRING = {"type": "string"}
SCHEMA = {
    "type": "object",
    "properties": {
        "commands": {
            "type": "array",
            "items": {"type": "object", "properties": {"command": STRING}},
        },
        "name": STRING,
    },
}
TOOLS = [ToolShape.from_schemas(identity, input_schema=SCHEMA) for identity in ("t/a", "t/b")]
RANK = {"allow": 0, "ask": 1, "deny": 2}
EFFECTS: tuple[Effect, ...] = ("allow", "ask", "deny")


def strictest(layers: list[Policy], identity: str, arguments: Any) -> Decision:
    """The verdict of ``layers`` for one call, each decided alone."""
    decision = layers[0].decide(identity, arguments)
    for policy in layers[1:]:
        found = policy.decide(identity, arguments)
        if RANK[found.verdict] > RANK[decision.verdict]:
            decision = found
    return decision


def random_rules(rng: random.Random, most: int, patterns: Sequence[str]) -> tuple[Rule, ...]:
    """Up to ``most`` rules on the tools: mostly asks with a condition on
    ``commands[*].command`` (or ``name``) from ``patterns``, else unconditional ones."""
    found: list[Rule] = []
    for _ in range(rng.randint(0, most)):
        match = rng.choice(["t/a", "t/*", "t/b", "*"])
        if rng.random() < 0.8:
            path = "commands[*].command" if rng.random() < 0.9 else "name"
            when = Predicate(source="arguments", any=path, regex=rng.choice(patterns))
            found.append(Rule(match=match, effect="ask", when=when))  # a condition only asks
        else:
            effect: Effect = rng.choice(EFFECTS)
            found.append(Rule(match=match, effect=effect))
    return tuple(found)
