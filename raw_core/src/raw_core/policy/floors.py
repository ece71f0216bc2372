"""Floors: the top-level ``rules`` of the user's and the managed config (and a project's),
composed with an agent's ``tools.rules``.

Each floor is bound to the agent's tools as its own :class:`~raw_core.policy.Policy`
(last match wins inside it; no matching rule: no opinion). The verdict of a call is the
strictest of the agent's and every floor's (deny > ask > allow), so a floor only ever
tightens: an ``allow`` in an agent never overrides a floor's ``ask`` or ``deny``. On a tie
the first of agent, project, user, managed is named as the one that decided. A tool any
layer hides (its last matching rule there is an unconditional deny) is hidden.

Built on the evaluator's public API (``decider``, ``text_decider``, ``conditions``,
``otherwise``, ``explain``, ``hidden``, ``matching_rules``) and on the predicates' joining
(``join_predicates``, ``compile_strings``), so it composes with however a policy evaluates
its own rules.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping, Sequence
from typing import TYPE_CHECKING, Any, Final

import attrs

from raw_core.config import Effect, Floor
from raw_core.errors import ConfigInvalid, ToolNotExposed, ToolUnknown
from raw_core.policy._engine import Decision, Explanation, LintFinding, Policy, RuleExplanation
from raw_core.policy._records import rules_named
from raw_core.policy.examples import ExampleResult
from raw_core.policy.predicate import ToolShape, compile_strings, join_predicates

if TYPE_CHECKING:
    from raw_core.tools.loader import LoadedTool

__all__ = ["FlooredPolicy", "LayerExplanation", "bind_floors"]

_RANK: Final[Mapping[str, int]] = {"allow": 0, "ask": 1, "deny": 2}
_EFFECTS: Final[tuple[Effect, ...]] = ("allow", "ask", "deny")


@attrs.frozen(kw_only=True)
class LayerExplanation:
    """One layer's view of a call: its rules matched or not, its own verdict and rule."""

    layer: str
    path: str | None
    rules: tuple[RuleExplanation, ...]
    verdict: Effect
    decided_by: int | None

    def to_dict(self) -> dict[str, Any]:
        """``{layer, path, rules, verdict, decided_by}``."""
        return {
            "layer": self.layer,
            "path": self.path,
            "rules": [rule.to_dict() for rule in self.rules],
            "verdict": self.verdict,
            "decided_by": self.decided_by,
        }


def _strictest(
    own: Callable[[Any, Any], Decision],
    floors: tuple[tuple[Callable[[Any, Any], Decision], int], ...],
) -> Callable[[Any, Any], Decision]:
    """One tool's decide: the agent's verdict, then each floor that could tighten it."""

    def decide(arguments: Any, effects: Any) -> Decision:
        decision = own(arguments, effects)
        rank = _RANK[decision.verdict]
        for floor, most in floors:
            if most <= rank:
                continue
            found = floor(arguments, effects)
            stricter = _RANK[found.verdict]
            if stricter > rank:
                decision, rank = found, stricter
        return decision

    return decide


def _guarded(
    identity: str,
    agent: Policy,
    floors: Sequence[tuple[Policy, int]],
) -> Callable[[Any, Any], Decision] | None:
    """One tool's decide with one pass for every layer, when every layer's conditional
    rules on the tool read the same source and path and RE2 joins all their patterns: a
    call none of them matches gets, at once, the strictest of each layer's verdict for
    such a call (:meth:`~raw_core.policy.Policy.otherwise`). Any other call has its
    strings at that path read once, and each layer decides from them
    (:meth:`~raw_core.policy.Policy.text_decider`), the floors as in :func:`_strictest`.
    ``None`` when the rules do not allow it."""
    layers = [agent, *(policy for policy, _most in floors)]
    predicates = [p for policy in layers for p in policy.conditions(identity)]
    if len(predicates) < 2 or len({(p.source, p.steps) for p in predicates}) != 1:
        return None
    joined = join_predicates(predicates)
    if sum(len(indexes) for _accessor, indexes in joined) != len(predicates):
        return None  # some pattern RE2 would not join: no single pass covers every layer
    # Every layer's conditions read the one path checked above, so each has a text decider.
    own = agent.text_decider(identity)
    tighten: list[tuple[Callable[[Sequence[str]], Decision], int]] = []
    for policy, most in floors:
        decider = policy.text_decider(identity)
        if decider is not None:
            tighten.append((decider, most))
    if own is None or len(tighten) != len(floors):  # pragma: no cover
        return None
    otherwise = agent.otherwise(identity)
    for policy in layers[1:]:
        found = policy.otherwise(identity)
        if _RANK[found.verdict] > _RANK[otherwise.verdict]:
            otherwise = found
    tests = tuple(accessor for accessor, _indexes in joined)
    strings = compile_strings(predicates[0].steps)
    on_effects = predicates[0].source == "effects"

    def decide(arguments: Any, effects: Any) -> Decision:
        value = effects if on_effects else arguments
        for test in tests:
            if test(value):
                break
        else:
            return otherwise
        texts = strings(value)
        decision = own(texts)
        rank = _RANK[decision.verdict]
        for floor, most in tighten:
            if most <= rank:
                continue
            found = floor(texts)
            stricter = _RANK[found.verdict]
            if stricter > rank:
                decision, rank = found, stricter
        return decision

    return decide


def _label(floor: Floor) -> str:
    where = f" ({floor.path})" if floor.path is not None else ""
    return f"{rules_named(floor.layer)}{where}"


class FlooredPolicy:
    """An agent's policy with its floors. Build one with :func:`bind_floors`; it answers
    what a :class:`~raw_core.policy.Policy` answers."""

    __slots__ = ("_agent", "_deciders", "_floors", "_hidden")

    def __init__(self, agent: Policy, floors: Sequence[tuple[Floor, Policy]]) -> None:
        self._agent = agent
        self._floors = tuple(floors)
        # Per tool, one bound decide: the agent's own where no floor has a rule stricter
        # than allow for the tool (a floor costs its tools nothing else), else one that
        # asks only those floors, each with the strictest verdict it can give (its rank):
        # a floor that cannot give more than the verdict so far is not asked.
        self._deciders: dict[str, Callable[[Any, Any], Decision]] = {}
        self._hidden: dict[str, tuple[str, int]] = {}
        for identity in agent.identities:
            asked: list[tuple[Policy, int]] = []
            for _floor, policy in self._floors:
                most = max(
                    (_RANK[policy.rules[i].effect] for i in policy.matching_rules(identity)),
                    default=0,
                )
                if most:
                    asked.append((policy, most))
            own = agent.decider(identity)
            rule = agent.hidden.get(identity)
            if rule is not None:  # hidden by the agent's own rules, whatever the floors say
                self._hidden[identity] = ("agent", rule)
            if not asked:
                self._deciders[identity] = own
                continue
            layered = _strictest(own, tuple((p.decider(identity), most) for p, most in asked))
            self._deciders[identity] = _guarded(identity, agent, asked) or layered
            if rule is not None:
                continue
            for floor, policy in self._floors:
                rule = policy.hidden.get(identity)
                if rule is not None:
                    self._hidden[identity] = (floor.layer, rule)
                    break

    # --- what it is made of ------------------------------------------------------------

    @property
    def agent(self) -> Policy:
        """The agent's own rules, bound."""
        return self._agent

    @property
    def floors(self) -> tuple[tuple[Floor, Policy], ...]:
        """Each floor with its rules bound to the agent's tools, in order."""
        return self._floors

    @property
    def rules(self) -> tuple[Any, ...]:
        """The agent's rules, in config order."""
        return self._agent.rules

    @property
    def identities(self) -> tuple[str, ...]:
        """The tools the rules are bound to."""
        return self._agent.identities

    @property
    def examples(self) -> tuple[ExampleResult, ...]:
        """The agent's rule examples' outcomes (each floor's: ``floors[i][1].examples``)."""
        return self._agent.examples

    @property
    def hidden(self) -> Mapping[str, int]:
        """Hidden tools → the index of the unconditional deny that hides them, in the rules
        of :meth:`hidden_layer`."""
        return {identity: rule for identity, (_layer, rule) in self._hidden.items()}

    def hidden_layer(self, identity: str) -> str | None:
        """Whose rules hide ``identity``: ``agent`` or a floor's layer (None: exposed)."""
        found = self._hidden.get(identity)
        return found[0] if found is not None else None

    def matching_rules(self, identity: str) -> tuple[int, ...]:
        """The agent's rules whose glob matches ``identity``."""
        return self._agent.matching_rules(identity)

    def predicate(self, rule: int, identity: str) -> Any:
        """The agent's rule ``rule`` bound to ``identity``."""
        return self._agent.predicate(rule, identity)

    # --- exposure and verdicts ---------------------------------------------------------

    def is_exposed(self, identity: str) -> bool:
        """Whether the model receives the tool's schema: no layer hides it."""
        return self._agent.is_exposed(identity) and identity not in self._hidden

    def check_exposed(self, identity: str) -> None:
        """Dispatch step 1: ``tool_not_exposed`` when a layer hides the tool."""
        self._agent.check_exposed(identity)
        found = self._hidden.get(identity)
        if found is not None:
            layer, rule = found
            floor = next(f for f, _p in self._floors if f.layer == layer)
            raise ToolNotExposed(
                f"{identity} is denied by {_label(floor)} and is not offered to the model",
                tool=identity,
                rule=rule,
                layer=layer,
            )

    def decide(self, identity: str, arguments: Any, effects: Any = None) -> Decision:
        """The strictest of the agent's verdict and each floor's (see the module
        docstring)."""
        try:
            decider = self._deciders[identity]
        except KeyError:
            raise ToolUnknown(f"{identity} is not a selected tool", tool=identity) from None
        return decider(arguments, effects)

    def explain(self, identity: str, arguments: Any, effects: Any = None) -> Explanation:
        """The agent's rules and each floor's, matched or not and why; each layer's
        verdict, the strictest one, and which layer decided."""
        own = self._agent.explain(identity, arguments, effects)
        layers = [
            LayerExplanation(
                layer="agent",
                path=None,
                rules=own.rules,
                verdict=own.verdict,
                decided_by=own.decided_by,
            )
        ]
        for floor, policy in self._floors:
            seen = policy.explain(identity, arguments, effects)
            layers.append(
                LayerExplanation(
                    layer=floor.layer,
                    path=str(floor.path) if floor.path is not None else None,
                    rules=seen.rules,
                    verdict=seen.verdict,
                    decided_by=seen.decided_by,
                )
            )
        decided = layers[0]
        for layer in layers[1:]:
            if _RANK[layer.verdict] > _RANK[decided.verdict]:
                decided = layer
        return Explanation(
            identity=identity,
            exposed=self.is_exposed(identity),
            rules=own.rules,
            verdict=decided.verdict,
            decided_by=decided.decided_by,
            layer=decided.layer,
            layers=tuple(layers),
        )

    # --- lint --------------------------------------------------------------------------

    def _guarantee(self, identity: str) -> tuple[int, Floor | None, int | None]:
        """The least verdict the floors give every call of ``identity`` (its rank), the
        floor that gives it and the rule: a floor's last matching unconditional rule,
        lowered to ask by a later conditional rule (which only asks)."""
        best: tuple[int, Floor | None, int | None] = (0, None, None)
        for floor, policy in self._floors:
            later_ask = False
            for index in reversed(policy.matching_rules(identity)):
                rule = policy.rules[index]
                if rule.when is not None:
                    later_ask = True
                    continue
                rank = _RANK[rule.effect]
                if later_ask:
                    rank = min(rank, 1)
                if rank > best[0]:
                    best = (rank, floor, index)
                break
        return best

    def lint(self) -> tuple[LintFinding, ...]:
        """The agent's own findings, and its rules a floor makes dead: for every selected
        tool the rule matches, a floor gives every call a stricter verdict than the rule's
        effect, so the rule never takes effect (``floor_overrides``)."""
        findings = list(self._agent.lint())
        if not self._floors:
            return tuple(findings)
        for index, rule in enumerate(self._agent.rules):
            tools = tuple(i for i in self.identities if index in self._agent.matching_rules(i))
            if not tools:
                continue
            reasons: list[str] = []
            layers: list[str] = []
            for identity in tools:
                rank, floor, at = self._guarantee(identity)
                if floor is None or rank <= _RANK[rule.effect]:
                    break
                verb = "denies" if rank == 2 else "asks before"
                reasons.append(f"{_label(floor)} {verb} every call of {identity} (its rule {at})")
                if floor.layer not in layers:
                    layers.append(floor.layer)
            else:
                findings.append(
                    LintFinding(
                        kind="floor_overrides",
                        rule=index,
                        match=rule.match,
                        effect=rule.effect,
                        message=f"rule {index} (match {rule.match_text}, effect"
                        f" {rule.effect!r}) never takes effect: {'; '.join(reasons)}",
                        tools=tools,
                        layers=tuple(layers),
                    )
                )
        findings.sort(key=lambda finding: finding.rule)
        return tuple(findings)


def bind_floors(
    agent: Policy,
    floors: Sequence[Floor],
    tools: Iterable[ToolShape | LoadedTool],
) -> Policy | FlooredPolicy:
    """The agent's bound rules composed with ``floors`` bound to the same tools (the agent's
    policy itself when there are none). A floor rule that cannot be bound, or whose example
    fails, is ``config_invalid`` naming the floor's file (``path``) and the rule's field."""
    if not floors:
        return agent
    shapes = [t if isinstance(t, ToolShape) else ToolShape.of(t) for t in tools]
    bound: list[tuple[Floor, Policy]] = []
    for floor in floors:
        try:
            policy = Policy.bind(floor.rules, shapes, field=floor.field, layer=floor.layer)
        except ConfigInvalid as exc:
            context = {k: v for k, v in exc.context.items() if k != "field"}
            context["path"] = str(floor.path) if floor.path is not None else None
            context["layer"] = floor.layer
            if "problems" in context:
                context["problems"] = [
                    {"path": p["path"], "message": f"{_label(floor)}: {p['message']}"}
                    for p in context["problems"]
                ]
            raise ConfigInvalid(
                f"{_label(floor)}: {exc.message}", field=exc.field, **context
            ) from None
        bound.append((floor, policy))
    return FlooredPolicy(agent, bound)
