"""An MCP tool result as raw's content blocks.

Works on the result's JSON form (what the server sent, as a dict), so it needs no SDK:

* ``text`` → a text block;
* ``image`` → an image block when raw takes its type (PNG, JPEG, GIF, WebP), else a line
  saying what was left out;
* ``resource`` (an embedded resource) → its text, headed by its URI; a binary resource is an
  image block when it is an image raw takes, else a line naming it and its size;
* ``resource_link`` → a line naming the link; ``audio`` → a line saying it was left out;
* ``structuredContent`` → a JSON block, unless a text block already holds the same JSON
  value (servers are asked to send both, and the model need not read it twice).

A content item of any type whose ``_meta`` holds :data:`PANEL_META` (``"raw.panel/2"``)
is a panel update instead: it becomes the result block ``{"type": "panel", ...}`` that a
local tool returns (the ``_meta`` value is that block, its ``type`` left out or not), so the
dispatcher takes it out of the result and applies it to the tool's declared panel as it
does for every tool. The item itself (its text, for clients that do not know raw) never
reaches the model.

``isError: true`` makes the result a tool error (``tool_error``) with the same blocks.
"""

from __future__ import annotations

import base64
import binascii
import json
from collections.abc import Mapping, Sequence
from typing import Any, Final

from raw_core.tools.results import IMAGE_MIME_TYPES

__all__ = ["PANEL_META", "result_content"]

PANEL_META: Final = "raw.panel/2"
"""The ``_meta`` key of an MCP content item that carries a panel update."""


def _decoded_size(data: str) -> int | None:
    try:
        return len(base64.b64decode(data, validate=True))
    except (binascii.Error, ValueError):
        return None


def _describe(kind: str, item: Mapping[str, Any]) -> str:
    mime = item.get("mimeType")
    return f"{kind} ({mime})" if isinstance(mime, str) and mime else kind


def _image(media_type: Any, data: Any, what: str) -> dict[str, Any]:
    if media_type in IMAGE_MIME_TYPES and isinstance(data, str):
        return {"type": "image", "media_type": media_type, "data": data}
    return {"type": "text", "text": f"[{what}: raw shows no image of this type]"}


def _resource(resource: Any) -> dict[str, Any]:
    if not isinstance(resource, Mapping):
        return {"type": "text", "text": "[an embedded resource without contents]"}
    uri = resource.get("uri", "")
    head = f"[resource {uri}" + (
        f" ({resource['mimeType']})]" if isinstance(resource.get("mimeType"), str) else "]"
    )
    text = resource.get("text")
    if isinstance(text, str):
        return {"type": "text", "text": f"{head}\n{text}"}
    blob = resource.get("blob")
    if isinstance(blob, str):
        if resource.get("mimeType") in IMAGE_MIME_TYPES:
            return _image(resource.get("mimeType"), blob, head)
        size = _decoded_size(blob)
        shown = f"{size} bytes of" if size is not None else "undecodable"
        return {"type": "text", "text": f"{head} {shown} binary data, not shown"}
    return {"type": "text", "text": f"{head} without text or data"}


def _panel(update: Any) -> dict[str, Any]:
    """The panel result block of a ``_meta`` panel update. A value that is not an object
    names no panel: the dispatcher rejects it as ``panel_invalid``, as it would a local
    tool's block."""
    if not isinstance(update, Mapping):
        return {"type": "panel", "panel": None}
    return {**{k: v for k, v in update.items() if k != "type"}, "type": "panel"}


def _block(item: Any) -> dict[str, Any]:
    if not isinstance(item, Mapping):
        return {"type": "text", "text": "[a content item that is not an object]"}
    meta = item.get("_meta")
    if isinstance(meta, Mapping) and PANEL_META in meta:
        return _panel(meta[PANEL_META])
    kind = item.get("type")
    if kind == "text":
        text = item.get("text")
        return {"type": "text", "text": text if isinstance(text, str) else ""}
    if kind == "image":
        return _image(item.get("mimeType"), item.get("data"), _describe("image", item))
    if kind == "resource":
        return _resource(item.get("resource"))
    if kind == "resource_link":
        name, uri = item.get("name", ""), item.get("uri", "")
        described = item.get("description")
        tail = f": {described}" if isinstance(described, str) and described else ""
        return {"type": "text", "text": f"[{_describe('resource link', item)} {name} {uri}{tail}]"}
    if kind == "audio":
        return {"type": "text", "text": f"[{_describe('audio', item)}: raw shows no audio]"}
    shown = json.dumps(kind) if isinstance(kind, str) else "unknown"
    return {"type": "text", "text": f"[a content item of type {shown}, not shown]"}


def _holds(blocks: Sequence[Mapping[str, Any]], value: Any) -> bool:
    """Whether a text block of ``blocks`` is the JSON text of ``value``."""
    for block in blocks:
        if block["type"] != "text":
            continue
        text = block["text"].strip()
        if not text.startswith(("{", "[")):
            continue
        try:
            if json.loads(text) == value:
                return True
        except ValueError:
            continue
    return False


def result_content(result: Mapping[str, Any]) -> dict[str, Any]:
    """The handler result (``{"content": [...], "is_error"?}``) of an MCP
    ``CallToolResult`` in its JSON form."""
    items = result.get("content")
    blocks = [_block(item) for item in items] if isinstance(items, list) else []
    structured = result.get("structuredContent")
    if structured is not None and not _holds(blocks, structured):
        blocks.append({"type": "json", "json": structured})
    if not blocks:
        blocks.append({"type": "text", "text": ""})
    answer: dict[str, Any] = {"content": blocks}
    if result.get("isError") is True:
        answer["is_error"] = True
    return answer
