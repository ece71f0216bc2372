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

Evaluation never parses: a bound predicate holds a chain of closures, one per path step.
Any element matching means a match; an absent field, a value of another type, or a
container of the wrong kind simply does not match. Evaluation never raises on JSON
values, whatever their shape, and strings holding lone surrogates (which ``json.loads``
lets through) are searched with each surrogate read as U+FFFD.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Mapping, Sequence
from typing import TYPE_CHECKING, Any, Final, Literal

import attrs

from raw_core._re2 import CompiledPattern, PatternError, compile_pattern
from raw_core.config import Predicate
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
    "compile_accessor",
    "format_path",
    "parse_path",
    "prepare_predicate",
]

Source = Literal["arguments", "effects"]
PathStep = str | None
"""A name step (the property name) or ``None`` for a ``[*]`` step."""

_SCHEMA_NAMES: Final = {"arguments": "input_schema", "effects": "effects_schema"}
_ALL_TYPES: Final = frozenset({"string", "integer", "number", "boolean", "null", "object", "array"})
_STRING_OK: Final = frozenset({"string", "null"})
_QUOTE_LIMIT: Final = 80


class PredicateError(ValueError):
    """A predicate cannot be prepared or bound.

    ``key`` names the predicate field at fault (``source``, ``any`` or ``regex``); the
    caller adds where the predicate lives (a rule index, a hook subscription).
    """

    def __init__(self, message: str, *, key: Literal["source", "any", "regex"]) -> None:
        super().__init__(message)
        self.message = message
        self.key = key


# --- paths ------------------------------------------------------------------------------


def parse_path(text: str) -> tuple[PathStep, ...]:
    """Parse ``any``: names joined by ``.``, each followed by any number of ``[*]``.

    Raises :class:`PredicateError` (key ``any``) saying what was expected where.
    """
    steps: list[PathStep] = []
    position = 0
    length = len(text)
    if not text:
        raise PredicateError("expected a path such as 'files[*].path', found ''", key="any")
    while True:
        start = position
        while position < length and text[position] not in ".[]":
            position += 1
        if position == start:
            found = repr(text[position]) if position < length else "the end"
            raise PredicateError(
                f"expected a property name at character {position + 1} of {text!r}, found {found}",
                key="any",
            )
        steps.append(text[start:position])
        while text.startswith("[", position):
            if not text.startswith("[*]", position):
                raise PredicateError(
                    f"only '[*]' may follow a name (character {position + 1} of {text!r});"
                    " a path steps into every element of an array, never one index",
                    key="any",
                )
            steps.append(None)
            position += 3
        if position == length:
            return tuple(steps)
        if text[position] != ".":
            raise PredicateError(
                f"expected '.' or '[*]' at character {position + 1} of {text!r},"
                f" found {text[position]!r}",
                key="any",
            )
        position += 1


def format_path(steps: Sequence[PathStep]) -> str:
    """The text of a parsed path (``parse_path`` reversed)."""
    out: list[str] = []
    for step in steps:
        if step is None:
            out.append("[*]")
        else:
            out.append(("." if out else "") + step)
    return "".join(out)


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


# --- resolving a path in a schema ------------------------------------------------------

# One alternative: the set of JSON types a value at the path may have, or None when the
# alternative does not declare the field at all.
_Alt = frozenset[str] | None
_Alts = frozenset[_Alt]
_UNDECLARED: Final[_Alts] = frozenset({None})
_ABSENT: Final[_Alts] = frozenset({frozenset()})


def _and(left: _Alt, right: _Alt) -> _Alt:
    if left is None:
        return right
    if right is None:
        return left
    return left & right


def _conjoin(left: _Alts, right: _Alts) -> _Alts:
    return frozenset(_and(a, b) for a in left for b in right)


def _json_type(value: Any) -> str:
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "boolean"
    if isinstance(value, int) or (isinstance(value, float) and value.is_integer()):
        return "integer"
    if isinstance(value, float):
        return "number"
    if isinstance(value, str):
        return "string"
    if isinstance(value, list):
        return "array"
    return "object"


def _declared_types(declared: Any) -> frozenset[str]:
    """The types a ``type`` keyword admits; ``number`` admits integers too."""
    names = [declared] if isinstance(declared, str) else declared
    if not isinstance(names, list):
        return _ALL_TYPES
    found = {name for name in names if isinstance(name, str)} & _ALL_TYPES
    if "number" in found:
        found.add("integer")
    return frozenset(found)


class _SchemaPaths:
    """Answers 'what may the value at this path be' for one schema (draft-07 form)."""

    def __init__(self, root: Mapping[str, Any]) -> None:
        self.root = root

    def deref(self, ref: str) -> Any:
        node: Any = self.root
        if ref == "#":
            return node
        for raw in ref[2:].split("/"):
            part = raw.replace("~1", "/").replace("~0", "~")
            if isinstance(node, Mapping) and part in node:
                node = node[part]
            elif isinstance(node, list) and part.isdigit() and int(part) < len(node):
                node = node[int(part)]
            else:  # pragma: no cover - prepare_schema checked every reference
                return True
        return node

    def types(self, schema: Any, guard: frozenset[str] = frozenset()) -> frozenset[str]:
        """Every JSON type a value valid against ``schema`` may have (an over-estimate)."""
        if schema is False:
            return frozenset()
        if not isinstance(schema, Mapping):
            return _ALL_TYPES
        ref = schema.get("$ref")
        if isinstance(ref, str):
            if ref in guard:
                return _ALL_TYPES
            return self.types(self.deref(ref), guard | {ref})
        result = _ALL_TYPES
        if "type" in schema:
            result &= _declared_types(schema["type"])
        if "const" in schema:
            result &= {_json_type(schema["const"])}
        enum = schema.get("enum")
        if isinstance(enum, list):
            result &= {_json_type(value) for value in enum}
        for branch in _branches(schema, "allOf"):
            result &= self.types(branch, guard)
        for keyword in ("anyOf", "oneOf"):
            if keyword in schema:
                union: frozenset[str] = frozenset()
                for branch in _branches(schema, keyword):
                    union |= self.types(branch, guard)
                result &= union
        if "then" in schema or "else" in schema:
            result &= self.types(schema.get("then", True), guard) | self.types(
                schema.get("else", True), guard
            )
        return result

    def at(self, schema: Any, steps: tuple[PathStep, ...], guard: frozenset[Any]) -> _Alts:
        """The alternatives for the value at ``steps`` below ``schema``."""
        if not steps:
            return frozenset({self.types(schema)})
        if not isinstance(schema, Mapping):
            return _UNDECLARED
        ref = schema.get("$ref")
        if isinstance(ref, str):
            key = (ref, len(steps))
            if key in guard:
                return _UNDECLARED
            return self.at(self.deref(ref), steps, guard | {key})
        step, rest = steps[0], steps[1:]
        alts = _UNDECLARED
        if step is None:
            items = schema.get("items")
            if isinstance(items, list):
                parts = [self.at(item, rest, guard) for item in items]
                extra = schema.get("additionalItems", True)
                if isinstance(extra, Mapping):
                    parts.append(self.at(extra, rest, guard))
                elif extra is not False:
                    parts.append(_UNDECLARED)  # items past the tuple may hold anything
                alts = _choose(parts)
            elif items is not None:
                alts = self.at(items, rest, guard)
        else:
            properties = schema.get("properties")
            if isinstance(properties, Mapping) and step in properties:
                alts = self.at(properties[step], rest, guard)
            elif schema.get("additionalProperties") is False and not schema.get(
                "patternProperties"
            ):
                alts = _ABSENT  # this schema lets no value have the field at all
        for branch in _branches(schema, "allOf"):
            alts = _conjoin(alts, self.at(branch, steps, guard))
        for keyword in ("anyOf", "oneOf"):
            if keyword in schema:
                alts = _conjoin(
                    alts, _choose([self.at(b, steps, guard) for b in _branches(schema, keyword)])
                )
        if "then" in schema or "else" in schema:
            outcomes = [
                self.at(schema[k], steps, guard) if k in schema else _UNDECLARED
                for k in ("then", "else")
            ]
            alts = _conjoin(alts, _choose(outcomes))
        dependencies = schema.get("dependencies")
        if isinstance(dependencies, Mapping):
            for dependency in dependencies.values():
                if isinstance(dependency, Mapping):
                    alts = _conjoin(alts, _UNDECLARED | self.at(dependency, steps, guard))
        return alts

    def expand(
        self, schema: Any, guard: frozenset[str] = frozenset()
    ) -> Iterator[Mapping[str, Any]]:
        """``schema`` and every subschema that applies at the same place."""
        if not isinstance(schema, Mapping):
            return
        ref = schema.get("$ref")
        if isinstance(ref, str):
            if ref not in guard:
                yield from self.expand(self.deref(ref), guard | {ref})
            return
        yield schema
        for keyword in ("allOf", "anyOf", "oneOf"):
            for branch in _branches(schema, keyword):
                yield from self.expand(branch, guard)
        for keyword in ("then", "else"):
            if keyword in schema:
                yield from self.expand(schema[keyword], guard)
        dependencies = schema.get("dependencies")
        if isinstance(dependencies, Mapping):
            for dependency in dependencies.values():
                yield from self.expand(dependency, guard)

    def reach(self, steps: tuple[PathStep, ...]) -> list[Any]:
        """Every schema that declares the place ``steps`` leads to (for messages)."""
        current: list[Any] = [self.root]
        for step in steps:
            following: list[Any] = []
            for node in current:
                for schema in self.expand(node):
                    if step is None:
                        items = schema.get("items")
                        if isinstance(items, list):
                            following.extend(items)
                            following.append(schema.get("additionalItems", True))
                        elif items is not None:
                            following.append(items)
                    else:
                        properties = schema.get("properties")
                        if isinstance(properties, Mapping) and step in properties:
                            following.append(properties[step])
            current = following
        return current

    def check_string(self, steps: tuple[PathStep, ...]) -> None:
        """Raise :class:`PredicateError` unless ``steps`` resolves to a string field."""
        alts = self.at(self.root, steps, frozenset())
        declared = [alt for alt in alts if alt is not None]
        if not declared:
            raise PredicateError(self._undeclared(steps), key="any")
        possible = [alt for alt in declared if alt]
        if not possible:
            if not self.reach(steps):  # forbidden by additionalProperties, never declared
                raise PredicateError(self._undeclared(steps), key="any")
            raise PredicateError(
                "the schema allows no value there (a false or contradictory schema)", key="any"
            )
        if None in alts:
            raise PredicateError(
                "the field is declared in some alternatives (anyOf, oneOf, then/else,"
                " dependencies, tuple items) but not in all, so a valid value may hold any"
                " type there: declare it as a string in every alternative, or forbid it with"
                ' "additionalProperties": false',
                key="any",
            )
        bad: set[str] = set()
        for alt in possible:
            bad |= alt - _STRING_OK if "string" in alt else alt
        if not bad:
            return
        if bad >= _ALL_TYPES - _STRING_OK:
            found = 'may hold any type (declare "type": "string")'
        elif not any("string" in alt for alt in possible):
            found = f"is declared as {_types_text(bad)}, not as a string"
        else:
            found = (
                f"may also hold {_types_text(bad)}"
                " (every alternative that declares it must type it as a string)"
            )
        raise PredicateError(f"the field {found}", key="any")

    def _undeclared(self, steps: tuple[PathStep, ...]) -> str:
        for index, step in enumerate(steps):
            if self.reach(steps[: index + 1]):
                continue
            parent = self.reach(steps[:index])
            where = "at the top level" if index == 0 else f"at {format_path(steps[:index])}"
            names = sorted(
                {
                    name
                    for node in parent
                    for schema in self.expand(node)
                    for name in (schema.get("properties") or {})
                }
            )
            is_array = any("items" in schema for node in parent for schema in self.expand(node))
            if step is None:
                detail = f"nothing {where} is declared as an array with 'items'"
                if names:
                    detail += f" (it is an object declaring: {', '.join(names)})"
                return detail
            if names:
                detail = f"no property {step!r} is declared {where} (declared: {', '.join(names)})"
            else:
                detail = f"no property {step!r} is declared {where}"
            if is_array:
                detail += f"; {format_path(steps[:index])} is an array: step into it with '[*]'"
            return detail
        return "the path does not resolve"  # pragma: no cover - reach and at agree


def _branches(schema: Mapping[str, Any], keyword: str) -> list[Any]:
    value = schema.get(keyword)
    return value if isinstance(value, list) else []


def _choose(parts: Sequence[_Alts]) -> _Alts:
    """Alternatives of which one applies (anyOf, oneOf, then/else, tuple items)."""
    result: set[_Alt] = set()
    for part in parts:
        result |= part
    return frozenset(result) if result else _UNDECLARED


def _types_text(types: set[str] | frozenset[str]) -> str:
    names = sorted(types)
    return names[0] if len(names) == 1 else ", ".join(names[:-1]) + " or " + names[-1]


# --- evaluation ------------------------------------------------------------------------

_MISSING: Final = object()

TextTest = Callable[[str], bool]
"""Whether a pattern matches anywhere in a string (``CompiledPattern.test``)."""


def _leaf(test: TextTest) -> Callable[[Any], bool]:
    def leaf(value: Any) -> bool:
        return isinstance(value, str) and test(value)

    return leaf


def _name_step(name: str, following: Callable[[Any], bool]) -> Callable[[Any], bool]:
    def test(value: Any) -> bool:
        if isinstance(value, (dict, Mapping)):  # dict first: the common case, checked fast
            child = value.get(name, _MISSING)
            return child is not _MISSING and following(child)
        return False

    return test


def _is_array(value: Any) -> bool:
    kind = type(value)
    if kind is list or kind is tuple:
        return True
    return isinstance(value, Sequence) and not isinstance(value, str | bytes | bytearray)


def _each_step(following: Callable[[Any], bool]) -> Callable[[Any], bool]:
    def test(value: Any) -> bool:
        if _is_array(value):
            for item in value:
                if following(item):
                    return True
        return False

    return test


def compile_accessor(steps: tuple[PathStep, ...], test: TextTest) -> Callable[[Any], bool]:
    """A function of a source value: does ``test`` accept any string at ``steps``?

    One closure per step, built once; evaluating it parses nothing and never raises on a
    JSON value (dicts or other mappings, lists or tuples, scalars).
    """
    accessor = _leaf(test)
    for step in reversed(steps):
        accessor = _each_step(accessor) if step is None else _name_step(step, accessor)
    return accessor


def _walk(value: Any, steps: tuple[PathStep, ...]) -> list[tuple[str, Any]]:
    """Every value present at ``steps``, with its concrete path (``files[1].path``)."""
    frontier: list[tuple[str, Any]] = [("", value)]
    for step in steps:
        following: list[tuple[str, Any]] = []
        for where, node in frontier:
            if step is None:
                if _is_array(node):
                    following.extend((f"{where}[{i}]", item) for i, item in enumerate(node))
            elif isinstance(node, Mapping):
                child = node.get(step, _MISSING)
                if child is not _MISSING:
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
            _SchemaPaths(schema).check_string(self.steps)
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
        self.accessor = compile_accessor(prepared.steps, prepared.pattern.test)
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
