"""Predicate paths: their syntax (``files[*].path``), and what a schema says may stand at
one — the check, at load time, that a rule's path leads to a string field of the tool's
schema, so a predicate that could never match is a config error."""

from __future__ import annotations

from collections.abc import Iterator, Mapping, Sequence
from typing import Any, Final, Literal

__all__ = ["PathStep", "PredicateError", "SchemaPaths", "format_path", "parse_path"]

PathStep = str | None
"""A name step (the property name) or ``None`` for a ``[*]`` step."""

_ALL_TYPES: Final = frozenset({"string", "integer", "number", "boolean", "null", "object", "array"})
_STRING_OK: Final = frozenset({"string", "null"})


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


class SchemaPaths:
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
