"""Finding a schema that would never finish validating: a loop of references that never
steps into the value.

A ``$ref`` may point back up the schema (a tree whose ``children`` are trees): each step
of that recursion goes one level into the value, which is finite, so it ends. But a
``$ref`` that reaches itself again through schemas applied to the *same* value (another
``$ref``, ``allOf``, ``anyOf``, ``oneOf``, ``not``, ``if``/``then``/``else``, a schema of
``dependencies``) recurses without end: fastjsonschema's generated validator would raise
``RecursionError`` on every call. :func:`endless_reference` finds such a loop when the
tool loads, so it is ``manifest_invalid`` there.

Only what validation runs counts, as fastjsonschema runs it (draft-07): the schemas
reachable from the root (a definition nothing refers to never runs), a ``$ref``'s target
and not its siblings (draft-07 ignores them), ``then`` and ``else`` only beside an
``if``.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any, Final

from raw_core.tools._schema_pointers import child as _child
from raw_core.tools._schema_pointers import pointer_parts, resolve_pointer

__all__ = ["endless_reference"]

# Keywords whose subschemas apply to the value itself (not to a part of it).
_IN_PLACE_LIST: Final = ("allOf", "anyOf", "oneOf")
# Keywords whose subschemas apply to a part of the value.
_INTO_ONE: Final = ("additionalItems", "additionalProperties", "contains", "propertyNames")
_INTO_MAP: Final = ("properties", "patternProperties")

_Edge = tuple[Any, str]  # the schema validation goes on with, and the path that names it


def _pointer_path(base: str, ref: str) -> str:
    """The JSON path of the schema the local pointer ``ref`` names, under ``base``."""
    path = base
    for part in pointer_parts(ref) or ():
        path = _child(path, int(part) if part.isdigit() else part)
    return path


def _in_place(node: dict[str, Any], path: str) -> Iterator[_Edge]:
    """The subschemas validation applies to the same value as ``node`` (which has no
    ``$ref``), with their paths."""
    if "not" in node:
        yield node["not"], _child(path, "not")
    if "if" in node:
        for key in ("if", "then", "else"):
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


def _into(node: dict[str, Any], path: str) -> Iterator[_Edge]:
    """The subschemas validation applies to parts of the value, with their paths."""
    for key in _INTO_ONE:
        if key in node:
            yield node[key], _child(path, key)
    items = node.get("items")
    if isinstance(items, list):
        for index, item in enumerate(items):
            yield item, _child(_child(path, "items"), index)
    elif items is not None:
        yield items, _child(path, "items")
    for key in _INTO_MAP:
        members = node.get(key)
        if isinstance(members, dict):
            for name, item in members.items():
                yield item, _child(_child(path, key), name)


def _edges(root: Any, base: str, node: dict[str, Any], path: str) -> Iterator[_Edge]:
    """Where validating ``node`` goes next on the same value: its ``$ref``'s target (named
    by the reference's own path), which in draft-07 overrides its siblings, or else its
    in-place subschemas."""
    ref = node.get("$ref")
    if isinstance(ref, str):
        yield resolve_pointer(root, ref), _child(path, "$ref")
        return
    yield from _in_place(node, path)


def _reachable(root: Any, base: str) -> dict[int, tuple[dict[str, Any], str]]:
    """Every (object) schema validation can run, by id, with its path."""
    found: dict[int, tuple[dict[str, Any], str]] = {}
    stack: list[_Edge] = [(root, base)]
    while stack:
        node, path = stack.pop()
        if not isinstance(node, dict) or id(node) in found:
            continue
        found[id(node)] = (node, path)
        ref = node.get("$ref")
        if isinstance(ref, str):
            stack.append((resolve_pointer(root, ref), _pointer_path(base, ref)))
            continue  # draft-07: a $ref's siblings never run
        stack.extend(_in_place(node, path))
        stack.extend(_into(node, path))
    return found


def endless_reference(schema: Any, path: str = "$") -> str | None:
    """The path of a ``$ref`` in ``schema`` (a prepared, draft-07 schema whose references
    all resolve) that leads back to where it is without stepping into the value, or
    None."""
    reachable = _reachable(schema, path)
    done: set[int] = set()  # schemas from which no endless loop starts
    for start, where in reachable.values():
        if id(start) in done:
            continue
        # Depth first along the in-place edges, keeping the schemas on the current path.
        on_path = {id(start)}
        stack = [(start, _edges(schema, path, start, where))]
        while stack:
            node, edges = stack[-1]
            for child, edge in edges:
                if not isinstance(child, dict) or id(child) in done:
                    continue
                if id(child) in on_path:
                    return edge
                on_path.add(id(child))
                known = reachable.get(id(child))
                stack.append((child, _edges(schema, path, child, known[1] if known else edge)))
                break
            else:
                stack.pop()
                on_path.discard(id(node))
                done.add(id(node))
    return None
