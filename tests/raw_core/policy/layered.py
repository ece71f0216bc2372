"""What the generated floors tests share: two tools with a batch-shaped schema, and the
reference verdict a floored policy must give — each layer decided alone with
``Policy.decide``, the strictest wins (the first layer on a tie)."""

from __future__ import annotations

from typing import Any

from raw_core.config import Effect
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
