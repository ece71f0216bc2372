"""A rule and where rules come from: ``tools.rules`` entries (and a config's top-level
``rules``, its floor), their predicates and examples, the floors and the layers of files.
The records only: binding and deciding live in :mod:`raw_core.policy`."""

from __future__ import annotations

import json
from collections.abc import Mapping
from pathlib import Path
from typing import Any, Literal

import attrs

from raw_core._convert import FieldValueError, json_kind
from raw_core.frozen import freeze

__all__ = [
    "ConfigLayer",
    "Effect",
    "Floor",
    "LayerKind",
    "Match",
    "Predicate",
    "Rule",
    "RuleExamples",
    "structure_match",
]

Effect = Literal["allow", "ask", "deny"]


@attrs.frozen(kw_only=True)
class Predicate:
    """``{source, any, regex}``: does any string at path ``any`` of ``source`` match?"""

    source: Literal["arguments", "effects"]
    any: str
    regex: str


Match = str | tuple[str, ...]
"""A rule's ``match``: one glob, or a non-empty list of globs (any of them matching)."""


def _examples(values: Any) -> tuple[Any, ...]:
    return tuple(freeze(value) for value in values)


def _objects(_instance: Any, attribute: attrs.Attribute[Any], values: tuple[Any, ...]) -> None:
    for index, value in enumerate(values):
        if not isinstance(value, Mapping):
            raise FieldValueError(
                attribute.name,
                f"expected argument or effects objects; item {index} is {json_kind(value)}",
            )


@attrs.frozen(kw_only=True)
class RuleExamples:
    """A conditional rule's ``examples``: source values (argument objects, or effects
    objects for ``source: effects``) that its ``when`` must match, and ones it must not.
    They are checked when the rule is bound (:meth:`raw_core.policy.Policy.bind`) and run
    by ``raw policy test``."""

    match: tuple[Any, ...] = attrs.field(default=(), converter=_examples, validator=_objects)
    not_match: tuple[Any, ...] = attrs.field(default=(), converter=_examples, validator=_objects)


@attrs.frozen(kw_only=True)
class Rule:
    """One entry of ``tools.rules`` (or of a config's top-level ``rules``, its floor): a
    glob (or a list of globs) over identities, an effect, an optional ``when`` and, with
    a ``when``, optional ``examples``."""

    match: Match
    effect: Effect
    when: Predicate | None = None
    examples: RuleExamples | None = attrs.field(default=None, hash=False)
    """Compared, not hashed (the example objects are mappings), so a rule stays usable as
    a key."""

    @property
    def globs(self) -> tuple[str, ...]:
        """The rule's globs: ``match`` as a tuple."""
        return (self.match,) if isinstance(self.match, str) else self.match

    @property
    def match_text(self) -> str:
        """``match`` as a message quotes it: ``'builtin/bash'``, or a JSON list
        ``["builtin/bash", "builtin/write_file"]``."""
        if isinstance(self.match, str):
            return repr(self.match)
        return json.dumps(list(self.match), ensure_ascii=False)

    def __attrs_post_init__(self) -> None:
        if self.when is not None and self.effect != "ask":
            raise FieldValueError(
                "when", f"'when' is only valid with effect 'ask', found effect {self.effect!r}"
            )
        if self.examples is not None and self.when is None:
            raise FieldValueError(
                "examples", "'examples' are only valid on a rule with 'when' (a conditional rule)"
            )


LayerKind = Literal["managed", "user", "project", "config"]
"""Where a config file sits among the layers: the ``managed`` config, the ``user``'s, the
``project``'s (a trusted ``./raw.json`` or ``--config FILE``), or a ``config`` used alone
(one an embedding app passes as it is)."""


@attrs.frozen(kw_only=True)
class ConfigLayer:
    """One config file in use: its layer and its path (what ``raw config validate`` and
    the terminal's banner name, and what a lookup beside the file that names something
    needs)."""

    kind: LayerKind
    path: Path | None


@attrs.frozen(kw_only=True)
class Floor:
    """A config file's top-level ``rules``: a floor under every agent's ``tools.rules``.

    The verdict of a call is the strictest of the agent's and each floor's (deny > ask >
    allow), so a floor can only tighten; :mod:`raw_core.policy.floors` composes them.
    ``field`` is the rules' JSON path in the file at ``path``."""

    layer: LayerKind
    rules: tuple[Rule, ...]
    path: Path | None = None
    field: str = "$.rules"


def structure_match(value: Any, _type: Any) -> Match:
    if isinstance(value, str):
        return value
    if not isinstance(value, list):
        raise ValueError(f"expected a glob or an array of globs, found {json_kind(value)}")
    if not value:
        raise ValueError("expected a glob or an array of globs, found an empty array")
    for index, item in enumerate(value):
        if not isinstance(item, str):
            raise ValueError(
                f"expected a glob or an array of globs; item {index} is {json_kind(item)}"
            )
    return tuple(value)
