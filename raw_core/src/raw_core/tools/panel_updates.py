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

from raw_core._convert import json_kind, json_text
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
    """The checked JSON text of ``document`` (a fresh copy) once ``patch`` is applied.

    Each operation is checked against the document as the ones before it left it, so that
    a refusal names the operation (``$.patch[i]``), its path, and what it expected beside
    what the document holds, in JSON."""
    for index, step in enumerate(patch):
        reason = _step_problem(step, document)
        if reason is None:
            try:
                document = jsonpatch.JsonPatch([step]).apply(document, in_place=True)
            except _PATCH_FAILURES:
                reason = "it does not fit the document"
        if reason is not None:
            raise PanelInvalid(
                f"patch operation {index}{_named(step)} cannot be applied: {reason}",
                field=f"$.patch[{index}]",
            )
    return checked_text(document)


_OPS: Final = ("add", "remove", "replace", "move", "copy", "test")
_MISSING: Final = object()


def _named(step: Mapping[str, Any]) -> str:
    """`` (replace at "/blocks/0")``: the operation and its path, when they are sound."""
    path = step.get("path")
    if step["op"] in _OPS and isinstance(path, str):
        return f" ({step['op']} at {json_text(path)})"
    return ""


def _step_problem(step: Mapping[str, Any], document: Any) -> str | None:
    """Why one RFC 6902 operation cannot be applied to ``document``, or None."""
    op = step["op"]
    if op not in _OPS:
        return f'"op" must be one of {json.dumps(list(_OPS))}, found {json_text(op)}'
    keys = ("path", "from") if op in ("move", "copy") else ("path",)
    for key in keys:
        pointer = step.get(key)
        if key not in step:
            return f'{_article(op)} {op} operation needs "{key}", a JSON Pointer ("" or "/...")'
        if not isinstance(pointer, str) or (pointer and not pointer.startswith("/")):
            return f'"{key}" must be a JSON Pointer ("" or "/..."), found {json_text(pointer)}'
    if op in ("add", "replace", "test") and "value" not in step:
        return f'{_article(op)} {op} operation needs a "value"'
    path: str = step["path"]
    if op == "remove" and not path:
        return "the document itself cannot be removed (close the panel instead)"
    if op in ("move", "copy"):
        source: str = step["from"]
        if _resolved(document, source) is _MISSING:
            return f"nothing at {json_text(source)} to {op}"
        if op == "move" and path.startswith(f"{source}/"):
            return f"{json_text(source)} cannot move into itself"
    if op in ("remove", "replace", "test"):
        found = _resolved(document, path)
        if found is _MISSING:
            return f"nothing at {json_text(path)}"
        if op == "test" and found != step["value"]:
            return f"expected {json_text(step['value'])}, found {json_text(found)}"
        return None
    return _add_problem(document, path)


def _add_problem(document: Any, path: str) -> str | None:
    """Why a value cannot be added at ``path``: a missing or scalar parent, or an array
    index past its end."""
    if not path:
        return None
    parent_path, _, token = path.rpartition("/")
    parent = _resolved(document, parent_path)
    where = json_text(parent_path) if parent_path else "the document"
    if parent is _MISSING:
        return f"nothing at {where} to add into"
    if isinstance(parent, list):
        index = _index(token)
        if token != "-" and (index is None or index > len(parent)):
            return (
                f"{where} is an array of {len(parent)} item{'' if len(parent) == 1 else 's'}:"
                f" an index from 0 to"
                f' {len(parent)}, or "-" for its end, found {json_text(token)}'
            )
        return None
    if not isinstance(parent, dict):
        return f"{where} holds {json_kind(parent)}, not an object or an array"
    return None


def _article(op: str) -> str:
    return "an" if op[0] in "aeiou" else "a"


def _index(token: str) -> int | None:
    """An array index as RFC 6901 writes it (digits, no leading zero), or None."""
    if token.isascii() and token.isdigit() and (token == "0" or not token.startswith("0")):
        return int(token)
    return None


def _resolved(document: Any, pointer: str) -> Any:
    """The value at JSON Pointer ``pointer``, or :data:`_MISSING`."""
    if not pointer:
        return document
    value = document
    for raw in pointer[1:].split("/"):
        token = raw.replace("~1", "/").replace("~0", "~")
        if isinstance(value, dict):
            if token not in value:
                return _MISSING
            value = value[token]
        elif isinstance(value, list):
            index = _index(token)
            if index is None or index >= len(value):
                return _MISSING
            value = value[index]
        else:
            return _MISSING
    return value
