"""Predicates ``{source, any, regex}``: bound to a tool's schema at load time, then evaluated.

One evaluator serves rules (``tools.rules[].when``) and hook subscriptions. Binding happens
in two steps, so that every mistake is found when the config is loaded:

1. :func:`prepare_predicate` checks what needs no tool: ``regex`` compiles with RE2
   (unanchored; a backreference or look-around is refused with RE2's message) and ``any``
   is a well-formed path — property names joined by ``.``, with ``[*]`` for each array step
   (``files[*].path``, ``commands[*].command``, ``matrix[*][*]``).
2. :meth:`PreparedPredicate.bind` checks it against one tool: ``source`` is one of the
   tool's ``condition_sources``, and the path resolves to a string field of that source's
   schema (``input_schema`` for ``arguments``, ``effects_schema`` for ``effects``).

How a path resolves in a schema (draft-07 form, as :func:`raw_core.tools._schema.prepare_schema`
returns it):

* a name step must be listed in ``properties``; a ``[*]`` step goes into ``items`` (one
  schema, or every schema of a tuple ``items`` and ``additionalItems``).
  ``patternProperties`` and ``additionalProperties`` declare no named field.
* ``$ref`` (local JSON pointers) is followed; as in draft-07 its siblings are ignored.
* ``allOf``: every branch applies at once, so what the branches declare about the field is
  combined (its possible types are intersected).
* ``anyOf``, ``oneOf``, ``then``/``else`` of an ``if``, and schema-valued
  ``dependencies`` are alternatives. An alternative that does not mention the field lets it
  hold anything, unless it forbids unknown fields (``"additionalProperties": false``); the
  same goes for items past a tuple's ``items`` without ``additionalItems: false``.
* The path resolves when every alternative either declares the field as a string or
  forbids it, and at least one declares it: ``"type": "string"``, or ``["string", "null"]``
  (``null``, like an absent field, never matches), or ``const``/``enum`` values that are all
  strings. An untyped field (``{}``), a field typed ``["string", "integer"]``, or an
  ``anyOf`` with an integer branch is refused.

Evaluation never parses: a bound predicate holds one function generated for its path
(:mod:`raw_core.policy._accessors`).
Any element matching means a match; an absent field, a value of another type, or a
container of the wrong kind simply does not match. Evaluation never raises on JSON
values, whatever their shape, and strings holding lone surrogates (which ``json.loads``
lets through) are searched with each surrogate read as U+FFFD.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import TYPE_CHECKING, Any, Final, Literal

import attrs

from raw_core._re2 import CompiledPattern, PatternError, compile_any, compile_pattern
from raw_core.config import Predicate
from raw_core.policy._accessors import (
    MISSING,
    chain_accessor,
    compile_accessor,
    compile_strings,
    is_array,
)
from raw_core.policy._paths import (
    PathStep,
    PredicateError,
    SchemaPaths,
    format_path,
    parse_path,
)
from raw_core.tools._schema import prepare_schema

if TYPE_CHECKING:
    from raw_core.tools.loader import LoadedTool

__all__ = [
    "BoundPredicate",
    "PredicateError",
    "PredicateExplanation",
    "PreparedPredicate",
    "ToolShape",
    "bind_predicate",
    "chain_accessor",
    "compile_accessor",
    "compile_strings",
    "format_path",
    "join_predicates",
    "parse_path",
    "prepare_predicate",
]

Source = Literal["arguments", "effects"]
_SCHEMA_NAMES: Final = {"arguments": "input_schema", "effects": "effects_schema"}
_QUOTE_LIMIT: Final = 80


# --- what binding needs to know about a tool -----------------------------------------


@attrs.frozen(kw_only=True)
class ToolShape:
    """What binding needs of a tool: its identity, ``condition_sources`` and schemas.

    ``schemas`` maps a source (``arguments``, ``effects``) to its schema in draft-07 form.
    """

    identity: str
    condition_sources: tuple[str, ...]
    schemas: Mapping[str, Mapping[str, Any]]

    @classmethod
    def of(cls, tool: LoadedTool) -> ToolShape:
        """The shape of a loaded tool (its schemas as compiled)."""
        schemas: dict[str, Mapping[str, Any]] = {"arguments": tool.input_validator.schema}
        if tool.effects_validator is not None:
            schemas["effects"] = tool.effects_validator.schema
        return cls(
            identity=tool.identity,
            condition_sources=tuple(tool.manifest.condition_sources),
            schemas=schemas,
        )

    @classmethod
    def from_schemas(
        cls,
        identity: str,
        *,
        input_schema: Mapping[str, Any],
        effects_schema: Mapping[str, Any] | None = None,
        condition_sources: Sequence[str] = ("arguments",),
    ) -> ToolShape:
        """A shape from schemas as a manifest writes them (draft-07 or 2020-12)."""
        schemas: dict[str, Mapping[str, Any]] = {"arguments": prepare_schema(input_schema)}
        if effects_schema is not None:
            schemas["effects"] = prepare_schema(effects_schema)
        return cls(identity=identity, condition_sources=tuple(condition_sources), schemas=schemas)


def _walk(value: Any, steps: tuple[PathStep, ...]) -> list[tuple[str, Any]]:
    """Every value present at ``steps``, with its concrete path (``files[1].path``)."""
    frontier: list[tuple[str, Any]] = [("", value)]
    for step in steps:
        following: list[tuple[str, Any]] = []
        for where, node in frontier:
            if step is None:
                if is_array(node):
                    following.extend((f"{where}[{i}]", item) for i, item in enumerate(node))
            elif isinstance(node, Mapping):
                child = node.get(step, MISSING)
                if child is not MISSING:
                    following.append((f"{where}.{step}" if where else step, child))
        frontier = following
    return frontier


def _quote(text: str) -> str:
    if len(text) > _QUOTE_LIMIT:
        return repr(text[:_QUOTE_LIMIT]) + f"... ({len(text)} characters)"
    return repr(text)


@attrs.frozen(kw_only=True)
class PredicateExplanation:
    """Why a predicate matched a value or not, for people (``raw policy explain``)."""

    matched: bool
    why: str
    path: str | None = None
    """The concrete path of the first matching string (``commands[1].command``)."""


class PreparedPredicate:
    """A predicate whose regex and path are checked, ready to bind to tools."""

    __slots__ = ("pattern", "predicate", "steps")

    def __init__(
        self, predicate: Predicate, pattern: CompiledPattern, steps: tuple[PathStep, ...]
    ) -> None:
        self.predicate = predicate
        self.pattern = pattern
        self.steps = steps

    def bind(self, tool: ToolShape) -> BoundPredicate:
        """Bind to ``tool``; raise :class:`PredicateError` when ``source`` or ``any`` does not
        fit it."""
        source = self.predicate.source
        if source not in tool.condition_sources:
            declared = ", ".join(repr(s) for s in tool.condition_sources) or "none"
            raise PredicateError(
                f"source {source!r} is not one of the condition_sources of {tool.identity}"
                f" (declared: {declared})",
                key="source",
            )
        schema = tool.schemas.get(source)
        if schema is None:  # pragma: no cover - the manifest requires effects_schema
            raise PredicateError(
                f"{tool.identity} declares no {_SCHEMA_NAMES[source]}", key="source"
            )
        try:
            SchemaPaths(schema).check_string(self.steps)
        except PredicateError as exc:
            raise PredicateError(
                f"{self.predicate.any!r} does not resolve to a string field in the"
                f" {_SCHEMA_NAMES[source]} of {tool.identity}: {exc.message}",
                key="any",
            ) from None
        return BoundPredicate(self, tool.identity)


class BoundPredicate:
    """A predicate bound to one tool: evaluation walks precompiled steps, parses nothing."""

    __slots__ = ("accessor", "pattern", "predicate", "source", "steps", "tool")

    def __init__(self, prepared: PreparedPredicate, tool: str) -> None:
        self.predicate = prepared.predicate
        self.source: Source = prepared.predicate.source
        self.steps = prepared.steps
        self.pattern = prepared.pattern
        self.tool = tool
        pattern = prepared.pattern
        self.accessor = compile_accessor(prepared.steps, pattern.test, pattern.required)
        """The precompiled function behind :meth:`matches` (for callers in a hot loop)."""

    def __repr__(self) -> str:
        p = self.predicate
        return f"BoundPredicate({self.tool}: {p.source} {p.any} ~ {p.regex!r})"

    def matches(self, value: Any) -> bool:
        """Whether any string at the path of ``value`` (the source's value) matches."""
        return self.accessor(value)

    def matches_call(self, arguments: Any, effects: Any = None) -> bool:
        """Whether the predicate matches a call, reading ``arguments`` or ``effects``."""
        return self.accessor(arguments if self.source == "arguments" else effects)

    def explain(self, value: Any) -> PredicateExplanation:
        """Like :meth:`matches`, saying which string matched or why none did."""
        p = self.predicate
        regex = f"/{p.regex}/"
        if value is None and self.source == "effects":
            return PredicateExplanation(matched=False, why="the call has no effects")
        found = _walk(value, self.steps)
        test = self.pattern.test
        strings = 0
        for where, item in found:
            if not isinstance(item, str):
                continue
            strings += 1
            if test(item):
                return PredicateExplanation(
                    matched=True,
                    why=f"{self.source} {where} = {_quote(item)} matches {regex}",
                    path=where,
                )
        if not found:
            return PredicateExplanation(
                matched=False, why=f"{self.source} has no value at {p.any} (absent: no match)"
            )
        others = len(found) - strings
        where = f"{self.source} {p.any}"
        if strings == 0:
            why = f"no string at {where}: no match"
        elif strings == 1:
            why = f"the 1 string at {where} does not match {regex}"
        else:
            why = f"none of the {strings} strings at {where} matches {regex}"
        if others:
            why += f" ({others} non-string value{'s' if others > 1 else ''} ignored)"
        return PredicateExplanation(matched=False, why=why)


def join_predicates(
    predicates: Sequence[BoundPredicate],
) -> list[tuple[Callable[[Any], bool], tuple[int, ...]]]:
    """Accessors that each answer for several predicates in one pass: whether any of them
    matches the value.

    ``predicates`` read one source at one path; each accessor walks the path once and runs
    one RE2 search per string for all the predicates it covers (their patterns joined by
    :func:`raw_core._re2.compile_any`), so it is true exactly when one of them would be.
    Returns ``(accessor, indexes into predicates)`` pairs; patterns RE2 will not join are
    split in halves until they do, and a predicate left alone is not covered (its own
    accessor is as fast).
    """
    if not predicates:
        return []
    steps = predicates[0].steps
    if any(p.steps != steps for p in predicates):
        raise ValueError("joined predicates must read one path")
    joined: list[tuple[Callable[[Any], bool], tuple[int, ...]]] = []
    pending: list[tuple[int, ...]] = [tuple(range(len(predicates)))]
    while pending:
        indexes = pending.pop()
        if len(indexes) < 2:
            continue
        try:
            pattern = compile_any([predicates[i].predicate.regex for i in indexes])
        except PatternError:
            middle = len(indexes) // 2
            pending += [indexes[middle:], indexes[:middle]]
            continue
        joined.append((compile_accessor(steps, pattern.test, pattern.required), indexes))
    return joined


def prepare_predicate(predicate: Predicate) -> PreparedPredicate:
    """Compile ``regex`` (RE2) and parse ``any``; raise :class:`PredicateError`."""
    try:
        pattern = compile_pattern(predicate.regex)
    except PatternError as exc:
        raise PredicateError(f"RE2 rejects {predicate.regex!r}: {exc}", key="regex") from None
    return PreparedPredicate(predicate, pattern, parse_path(predicate.any))


def bind_predicate(predicate: Predicate, tool: ToolShape) -> BoundPredicate:
    """Prepare ``predicate`` and bind it to ``tool`` in one step."""
    return prepare_predicate(predicate).bind(tool)
