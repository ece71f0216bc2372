"""What a panel update must be before a board takes it: the shape of its body, its
document checked against the block catalog and the size limit, and a patch applied.

Pure functions, shared by a result's panel blocks and ``context.panels.update``; the board
(:mod:`raw_core.tools.panels`) keeps the revisions. Each raises ``panel_invalid`` naming the
field.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any, Final

import jsonpatch
import jsonpointer

from raw_core.errors import PanelInvalid
from raw_core.sessions.records import document_json
from raw_core.tools.panel_blocks import check_document

__all__ = ["checked_body", "checked_text", "patched_text", "split_name", "text_size"]

_BODY_KEYS: Final = {
    "replace": ({"op", "document"}, frozenset[str]()),
    "patch": ({"op", "patch"}, frozenset({"revision"})),
    "close": ({"op"}, frozenset[str]()),
}
_PATCH_FAILURES: Final = (
    jsonpatch.JsonPatchException,
    jsonpointer.JsonPointerException,
    TypeError,
    KeyError,
    IndexError,
    ValueError,
    AttributeError,
)


def split_name(name: str) -> tuple[str | None, str]:
    """``(identity, panel id)`` of a panel name: ``"todo"`` -> ``(None, "todo")``,
    ``"builtin/todo:todo"`` -> ``("builtin/todo", "todo")`` (identities hold no ``:``)."""
    owner, colon, panel = name.rpartition(":")
    return (owner, panel) if colon else (None, name)


def text_size(text: str) -> int:
    """UTF-8 bytes of ``text``."""
    return len(text) if text.isascii() else len(text.encode("utf-8"))


def checked_text(document: Any) -> str:
    """A document's JSON text, once it is checked against the catalog and the size limit."""
    try:
        text = document_json(document)
    except (TypeError, ValueError, RecursionError) as exc:
        raise PanelInvalid(f"the document is not JSON: {exc}", field="$.document") from None
    check_document(json.loads(text), size=text_size(text))
    return text


def checked_body(body: Any) -> dict[str, Any]:
    """``body`` with its keys checked and its values detached: a ``replace`` carries the
    document's checked JSON text as ``document_text``; ``panel_invalid`` otherwise."""
    if not isinstance(body, Mapping):
        raise PanelInvalid(
            f'an update is an object {{"op", ...}}, found {type(body).__name__}', field="$"
        )
    op = body.get("op")
    if op not in _BODY_KEYS:
        found = json.dumps(op, default=repr) if op is not None else "none"
        raise PanelInvalid(
            f'"op" must be "replace", "patch" or "close", found {found}', field="$.op"
        )
    required, optional = _BODY_KEYS[op]
    missing = sorted(required - set(body))
    unknown = sorted(str(key) for key in set(body) - required - optional)
    if missing or unknown:
        parts = [f"missing {json.dumps(missing)}"] if missing else []
        parts += [f"unknown {json.dumps(unknown)}"] if unknown else []
        raise PanelInvalid(
            f"a {op} update has the keys {json.dumps(sorted(required | optional))};"
            f" found {', '.join(parts)}",
            field="$",
        )
    if op == "replace":
        return {"op": op, "document_text": checked_text(body["document"])}
    if op == "close":
        return {"op": op}
    try:
        patch = json.loads(document_json(body["patch"]))
    except (TypeError, ValueError, RecursionError) as exc:
        raise PanelInvalid(f"the patch is not JSON: {exc}", field="$.patch") from None
    if not isinstance(patch, list) or not all(
        isinstance(step, dict) and isinstance(step.get("op"), str) for step in patch
    ):
        raise PanelInvalid(
            'a patch is an RFC 6902 JSON Patch: a list of {"op", "path", ...}',
            field="$.patch",
        )
    revision = body.get("revision")
    if revision is not None and (type(revision) is not int or revision < 1):
        raise PanelInvalid("revision must be a positive integer", field="$.revision")
    return {"op": op, "patch": patch, "revision": revision}


def patched_text(document: Any, patch: list[Any]) -> str:
    """The checked JSON text of ``document`` (a fresh copy) once ``patch`` is applied."""
    try:
        patched = jsonpatch.apply_patch(document, patch, in_place=True)
    except _PATCH_FAILURES as exc:
        raise PanelInvalid(f"the patch cannot be applied: {exc}", field="$.patch") from None
    return checked_text(patched)
