"""How the terminal shows panels (``raw.panel/2``): a document's blocks as lines, a
``chat`` panel inline in the transcript, a ``sidebar`` panel as a small titled box, and a
panel in full (``raw sessions panels``). Panels arrive in their JSON form
(``PanelUpdate.to_dict()``). The terminal draws no diagram: a ``mermaid`` block shows its
source."""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any

__all__ = ["block_lines", "document_lines", "panel_box", "panel_full", "panel_name"]

_MARKS = {"done": "[x]", "in_progress": "[~]", "pending": "[ ]"}
COMPACT_LINES = 8
"""Lines of a sidebar panel's document shown in its box; the rest is counted."""
_WIDTH = 100


def panel_name(update: Mapping[str, Any]) -> str:
    """``<identity>:<panel id>``, the name actions and other front ends use."""
    return f"{update['identity']}:{update['panel']}"


def _title(update: Mapping[str, Any]) -> str:
    declaration = update.get("declaration") or {}
    return str(declaration.get("title") or update["panel"])


def block_lines(block: Mapping[str, Any]) -> list[str]:
    """The lines one block of the catalog reads as on a terminal."""
    kind = block.get("type")
    if kind == "text":
        return str(block["text"]).split("\n")
    if kind == "checklist":
        lines = [str(block["title"])] if block.get("title") else []
        lines += [f"{_MARKS.get(i['status'], '[?]')} {i['text']}" for i in block["items"]]
        return lines or ["(no items)"]
    if kind == "mermaid":
        head = [str(block["title"])] if block.get("title") else []
        return [*head, "mermaid diagram (source):", *str(block["source"]).split("\n")]
    if kind == "form":
        lines = [f"form: {block.get('title') or 'a request for input'}"]
        for field in block["fields"]:
            options = field.get("options")
            choices = f" ({', '.join(o['label'] for o in options)})" if options else ""
            lines.append(f"  {field['label']} [{field['type']}]{choices}")
        return lines
    return [json.dumps(block, ensure_ascii=False)]


def document_lines(document: Any) -> list[str]:
    """Every line of a document, block after block."""
    if not isinstance(document, Mapping):
        return ["(closed)"]
    lines: list[str] = []
    for block in document.get("blocks", []):
        lines += block_lines(block)
    return lines or ["(empty)"]


def _cut(line: str) -> str:
    return line if len(line) <= _WIDTH else line[: _WIDTH - 1] + "…"


def panel_box(update: Mapping[str, Any], *, session_id: str | None = None) -> list[str]:
    """A sidebar panel's change, compactly: a titled box with the first lines."""
    head = f"┌ {_title(update)} · revision {update['revision']} ({panel_name(update)})"
    if update["document"] is None:
        return [head, "└ closed"]
    lines = document_lines(update["document"])
    shown = [f"│ {_cut(line)}" for line in lines[:COMPACT_LINES]]
    if len(lines) > COMPACT_LINES:
        where = f": raw sessions panels {session_id}" if session_id else ""
        shown.append(f"│ … {len(lines) - COMPACT_LINES} more lines{where}")
    return [head, *shown, "└"]


def panel_full(update: Mapping[str, Any]) -> list[str]:
    """A panel in full: its title, name, revision and every line of its document (a chat
    panel inline in the transcript reads the same)."""
    state = "closed" if update["document"] is None else f"revision {update['revision']}"
    lines = [f"▣ {_title(update)} ({panel_name(update)}), {state}"]
    if update["document"] is not None:
        lines += [f"  {line}" for line in document_lines(update["document"])]
    return lines
