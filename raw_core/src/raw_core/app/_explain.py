"""``explain``: how an agent's rules and the plug-ins' check hooks decide one call, and
which of its command hooks would run for it."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import attrs

from raw_core.agent import Agent
from raw_core.dispatch import Dispatcher
from raw_core.frozen import thaw
from raw_core.hooks import SubscriptionExplanation
from raw_core.plugins import PluginHost
from raw_core.plugins.hooks import HookAnswer, explain_check_hooks
from raw_core.policy import LayerExplanation, RuleExplanation
from raw_core.tools.calls import ToolCall, Verdict

__all__ = ["Explanation", "explain_call"]


@attrs.frozen(kw_only=True)
class Explanation:
    """One call explained.

    ``effects`` are the intended effects the tool declares (``None`` when it declares
    none). ``rules`` lists every rule, matched or not and why; ``verdict`` and
    ``decided_by`` are what the rules decide: with floors, the strictest layer's verdict,
    ``layer`` the layer that decided (``agent``, or a floor's) and ``layers`` each layer's
    rules and verdict (empty without floors). ``hooks`` is each check hook's answer (none
    are asked when the rules deny, as in a call); ``final_verdict`` and ``final_reason``
    are what the call would meet after the hooks. ``command_hooks`` says, for each
    command hook of tool events and each of its events, whether it would run for this call
    and why (subscriptions evaluated; nothing is run). A PreToolUse hook does not run
    when the rules deny.
    """

    identity: str
    exposed: bool
    effects: Any
    rules: tuple[RuleExplanation, ...]
    verdict: str
    decided_by: int | None
    hooks: tuple[HookAnswer, ...]
    final_verdict: str
    final_reason: str | None
    command_hooks: tuple[SubscriptionExplanation, ...] = ()
    layer: str = "agent"
    layers: tuple[LayerExplanation, ...] = ()

    def to_dict(self) -> dict[str, Any]:
        """The JSON form ``raw policy explain --json`` prints."""
        return {
            "identity": self.identity,
            "exposed": self.exposed,
            "effects": self.effects,
            "rules": [rule.to_dict() for rule in self.rules],
            "verdict": self.verdict,
            "decided_by": self.decided_by,
            "layer": self.layer,
            "layers": [layer.to_dict() for layer in self.layers],
            "hooks": [hook.to_dict() for hook in self.hooks],
            "final_verdict": self.final_verdict,
            "final_reason": self.final_reason,
            "command_hooks": [hook.to_dict() for hook in self.command_hooks],
        }


async def explain_call(
    dispatcher: Dispatcher,
    agent: Agent,
    identity: str,
    arguments: str | Mapping[str, Any],
    *,
    host: PluginHost | None,
) -> Explanation:
    """Prepare the call as dispatch does (steps 1-3 through ``dispatcher``), then explain
    steps 4 and 5. Raises ``tool_unknown``, ``invalid_arguments`` or ``effects_invalid``."""
    tool = agent.registry.by_identity(identity)
    call = (
        ToolCall(id="explain", name=tool.name, arguments=arguments)
        if isinstance(arguments, str)
        else ToolCall.with_arguments(id="explain", name=tool.name, arguments=arguments)
    )
    prepared = await dispatcher.prepare(tool, call)
    by_rules = agent.policy.explain(identity, prepared.arguments, prepared.effects)
    hooks: list[HookAnswer] = []
    final = Verdict(decision=by_rules.verdict)
    if host is not None and by_rules.verdict != "deny":
        hooks, final = await explain_check_hooks(
            host, prepared.info, final, limit=dispatcher.hook_timeout
        )
    subscribed = agent.hooks.explain(identity, prepared.arguments, prepared.effects)
    if by_rules.verdict == "deny":
        subscribed = tuple(
            attrs.evolve(s, runs=False, why=f"{s.why}; but the rules deny the call first")
            if s.runs
            else s
            for s in subscribed
        )
    return Explanation(
        identity=identity,
        exposed=by_rules.exposed,
        effects=thaw(prepared.effects),
        rules=by_rules.rules,
        verdict=by_rules.verdict,
        decided_by=by_rules.decided_by,
        layer=by_rules.layer,
        layers=tuple(by_rules.layers),
        hooks=tuple(hooks),
        final_verdict=final.decision,
        final_reason=final.reason,
        command_hooks=subscribed,
    )
