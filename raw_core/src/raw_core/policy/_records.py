"""The records policy answers with: a call's :class:`Decision`, the
:class:`Explanation` of one (each rule's :class:`RuleExplanation`), and a rule's
:class:`LintFinding`. They hold data only; :mod:`raw_core.policy._engine` makes them."""

from __future__ import annotations

from typing import Any, Final, Literal

import attrs

from raw_core.config import Effect, Match

__all__ = [
    "ALLOW",
    "Decision",
    "Explanation",
    "LintFinding",
    "RuleExplanation",
    "match_json",
    "rules_named",
]

_WHERE: Final = {
    "agent": "tools.rules",
    "project": "the project floor",
    "user": "the user floor",
    "managed": "the managed floor",
    "config": "the config's floor",
}


@attrs.frozen(kw_only=True)
class Decision:
    """The verdict for one call and the index of the rule that decided it (``None``: no
    rule matched, so the call is allowed), in the rules of ``layer``: ``agent`` (its
    ``tools.rules``) or a floor (``project``, ``user``, ``managed``, ``config``)."""

    verdict: Effect
    rule: int | None
    layer: str = "agent"

    @property
    def where(self) -> str:
        """The rules that decided, as messages name them: ``tools.rules``, ``the user
        floor``..."""
        return rules_named(self.layer)


def rules_named(layer: str) -> str:
    """A layer's rules as messages name them: ``tools.rules`` (the agent's), ``the user
    floor``, ``the config's floor`` (the top-level rules of a config without layers)..."""
    return _WHERE.get(layer, f"the {layer} floor")


ALLOW: Final = Decision(verdict="allow", rule=None)


@attrs.frozen(kw_only=True)
class RuleExplanation:
    """One rule, as :meth:`Policy.explain` saw it for one call."""

    index: int
    match: Match
    effect: Effect
    matched: bool
    why: str

    @property
    def match_text(self) -> str:
        """``match`` as text: the glob, or the globs joined by ``, ``."""
        return self.match if isinstance(self.match, str) else ", ".join(self.match)

    def to_dict(self) -> dict[str, Any]:
        """``{index, match, effect, matched, why}`` (``match`` a string or a list)."""
        return {
            "index": self.index,
            "match": match_json(self.match),
            "effect": self.effect,
            "matched": self.matched,
            "why": self.why,
        }


@attrs.frozen(kw_only=True)
class Explanation:
    """Every rule matched or not, and why; the verdict and the rule that decided it."""

    identity: str
    exposed: bool
    rules: tuple[RuleExplanation, ...]
    verdict: Effect
    decided_by: int | None
    layer: str = "agent"
    """Whose rules decided: ``agent``, or a floor's layer (``decided_by`` indexes them)."""
    layers: tuple[Any, ...] = ()
    """With floors, each layer's view (:class:`raw_core.policy.floors.LayerExplanation`),
    the agent's first; empty without floors."""

    def to_dict(self) -> dict[str, Any]:
        """``{identity, exposed, rules, verdict, decided_by}``, and with floors ``layer``
        and ``layers``."""
        found: dict[str, Any] = {
            "identity": self.identity,
            "exposed": self.exposed,
            "rules": [rule.to_dict() for rule in self.rules],
            "verdict": self.verdict,
            "decided_by": self.decided_by,
        }
        if self.layers:
            found["layer"] = self.layer
            found["layers"] = [layer.to_dict() for layer in self.layers]
        return found


@attrs.frozen(kw_only=True)
class LintFinding:
    """A rule that cannot do what it seems to.

    ``kind`` is ``matches_nothing`` (its glob matches no selected tool) or
    ``never_decides`` (every selected tool it matches is also matched by a later
    unconditional rule, which always decides first; ``shadowed_by`` lists those rules) or
    ``floor_overrides`` (for every selected tool it matches, a floor gives every call a
    stricter verdict than its effect; ``layers`` names those floors).
    """

    kind: Literal["matches_nothing", "never_decides", "floor_overrides"]
    rule: int
    match: Match
    effect: Effect
    message: str
    tools: tuple[str, ...] = ()
    shadowed_by: tuple[int, ...] = ()
    layers: tuple[str, ...] = ()

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready form."""
        return {
            "kind": self.kind,
            "rule": self.rule,
            "match": match_json(self.match),
            "effect": self.effect,
            "message": self.message,
            "tools": list(self.tools),
            "shadowed_by": list(self.shadowed_by),
            "layers": list(self.layers),
        }


def match_json(match: Match) -> str | list[str]:
    """``match`` as JSON: the glob, or the list of globs."""
    return match if isinstance(match, str) else list(match)
