"""Paths inside a JSON Schema: the JSON path an error names (``$.properties.x``) and the
part a local ``$ref`` (a JSON pointer, ``#/definitions/x``) names."""

from __future__ import annotations

import json
from typing import Any, Final

__all__ = ["NOWHERE", "child", "resolve_pointer"]


def child(path: str, key: str | int) -> str:
    """The JSON path of ``key`` (a member's name or an item's index) under ``path``."""
    if isinstance(key, int):
        return f"{path}[{key}]"
    if key.isidentifier():
        return f"{path}.{key}"
    return f"{path}[{json.dumps(key)}]"


NOWHERE: Final = object()
"""What :func:`resolve_pointer` returns for a reference that names nothing."""


def resolve_pointer(root: Any, ref: str) -> Any:
    """The part of ``root`` the local reference ``ref`` (``#`` or ``#/a/b``) names, or
    :data:`NOWHERE`."""
    if ref == "#":
        return root
    if not ref.startswith("#/"):
        return NOWHERE
    node = root
    for raw in ref[2:].split("/"):
        part = raw.replace("~1", "/").replace("~0", "~")
        if isinstance(node, dict) and part in node:
            node = node[part]
        elif isinstance(node, list) and part.isdigit() and int(part) < len(node):
            node = node[int(part)]
        else:
            return NOWHERE
    return node
