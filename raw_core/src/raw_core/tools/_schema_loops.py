"""Finding a schema that would never finish validating: a loop of references that never
steps into the value.

A ``$ref`` may point back up the schema (a tree whose ``children`` are trees): each step
of that recursion goes one level into the value, which is finite, so it ends. But a
``$ref`` that reaches itself again through schemas applied to the *same* value (another
``$ref``, ``allOf``, ``anyOf``, ``oneOf``, ``not``, ``if``/``then``/``else``, a schema of
``dependencies``) recurses without end: fastjsonschema's generated validator would raise
``RecursionError`` on every call. :func:`endless_reference` finds such a loop when the
tool loads, so it is ``manifest_invalid`` there.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any, Final

from raw_core.tools._schema_pointers import child as _child
from raw_core.tools._schema_pointers import resolve_pointer

__all__ = ["endless_reference"]

# Keywords whose subschemas apply to the value itself (not to a part of it).
_IN_PLACE_ONE: Final = ("not", "if", "then", "else")
_IN_PLACE_LIST: Final = ("allOf", "anyOf", "oneOf")
# Keywords whose subschemas apply to a part of the value.
_INTO_ONE: Final = ("additionalItems", "additionalProperties", "contains", "propertyNames")
_INTO_MAP: Final = ("properties", "patternProperties")
_DEFINITIONS: Final = ("definitions", "$defs")


def _in_place(node: dict[str, Any], path: str) -> Iterator[tuple[Any, str]]:
    """The subschemas applied to the same value as ``node``, with their paths."""
    for key in _IN_PLACE_ONE:
        if key in node:
            yield node[key], _child(path, key)
    for key in _IN_PLACE_LIST:
        for index, item in enumerate(node.get(key) or ()):
            yield item, _child(_child(path, key), index)
    dependencies = node.get("dependencies")
    if isinstance(dependencies, dict):
        for key, item in dependencies.items():
            if not isinstance(item, list):
                yield item, _child(_child(path, "dependencies"), key)


def _all_schemas(node: Any, path: str) -> Iterator[tuple[dict[str, Any], str]]:
    """Every (object) schema in ``node``, with its path."""
    if not isinstance(node, dict):
        return
    yield node, path
    for child, where in _in_place(node, path):
        yield from _all_schemas(child, where)
    for key in _INTO_ONE:
        if key in node:
            yield from _all_schemas(node[key], _child(path, key))
    items = node.get("items")
    if isinstance(items, list):
        for index, item in enumerate(items):
            yield from _all_schemas(item, _child(_child(path, "items"), index))
    elif items is not None:
        yield from _all_schemas(items, _child(path, "items"))
    for key in (*_INTO_MAP, *_DEFINITIONS):
        members = node.get(key)
        if isinstance(members, dict):
            for name, item in members.items():
                yield from _all_schemas(item, _child(_child(path, key), name))


def endless_reference(schema: Any, path: str = "$") -> str | None:
    """The path of a ``$ref`` in ``schema`` (a prepared, draft-07 schema whose references
    all resolve) that leads back to where it is without stepping into the value, or
    None."""
    schemas = list(_all_schemas(schema, path))
    where_is = {id(node): where for node, where in schemas}
    done: set[int] = set()  # schemas from which no endless loop starts
    for start, _where in schemas:
        if id(start) in done:
            continue
        # Depth first along the in-place edges, keeping the schemas on the current path.
        on_path: set[int] = set()
        stack: list[tuple[dict[str, Any], Iterator[tuple[Any, str]]]] = []
        on_path.add(id(start))
        stack.append((start, _edges(schema, start, where_is[id(start)])))
        while stack:
            node, edges = stack[-1]
            for child, edge in edges:
                if not isinstance(child, dict) or id(child) in done:
                    continue
                if id(child) in on_path:
                    return edge
                on_path.add(id(child))
                stack.append((child, _edges(schema, child, where_is.get(id(child), edge))))
                break
            else:
                stack.pop()
                on_path.discard(id(node))
                done.add(id(node))
    return None


def _edges(root: Any, node: dict[str, Any], path: str) -> Iterator[tuple[Any, str]]:
    """Where validating ``node`` goes next on the same value: its ``$ref``'s target (named
    by the reference's own path), which in draft-07 overrides its siblings, or else its
    in-place subschemas."""
    ref = node.get("$ref")
    if isinstance(ref, str):
        yield resolve_pointer(root, ref), _child(path, "$ref")
        return
    yield from _in_place(node, path)
