"""Paths inside a JSON Schema: the JSON path an error names (``$.properties.x``) and the
part a local ``$ref`` (a JSON pointer, ``#/definitions/x``) names."""

from __future__ import annotations

import json
from typing import Any, Final
from urllib.parse import unquote

__all__ = ["NOWHERE", "child", "pointer_parts", "resolve_pointer"]


def child(path: str, key: str | int) -> str:
    """The JSON path of ``key`` (a member's name or an item's index) under ``path``."""
    if isinstance(key, int):
        return f"{path}[{key}]"
    if key.isidentifier():
        return f"{path}.{key}"
    return f"{path}[{json.dumps(key)}]"


NOWHERE: Final = object()
"""What :func:`resolve_pointer` returns for a reference that names nothing."""


def pointer_parts(ref: str) -> list[str] | None:
    """The member names and indexes a local reference (``#`` or ``#/a/b``, a URI fragment:
    percent-encoded, ``~1`` for ``/`` and ``~0`` for ``~``) steps through, read as the
    validator reads them (fastjsonschema decodes the whole fragment, then splits it);
    None for one that is not a local pointer."""
    if ref == "#":
        return []
    if not ref.startswith("#/"):
        return None
    return [raw.replace("~1", "/").replace("~0", "~") for raw in unquote(ref[2:]).split("/")]


def resolve_pointer(root: Any, ref: str) -> Any:
    """The part of ``root`` the local reference ``ref`` (``#`` or ``#/a/b``) names, or
    :data:`NOWHERE`."""
    parts = pointer_parts(ref)
    if parts is None:
        return NOWHERE
    node = root
    for part in parts:
        if isinstance(node, dict) and part in node:
            node = node[part]
        elif isinstance(node, list) and part.isdigit() and int(part) < len(node):
            node = node[int(part)]
        else:
            return NOWHERE
    return node
