"""builtin/todo: the task list of the current work, kept in the live side panel ``todo``.

Each call replaces the whole list. The arguments are checked as a whole before anything
changes (the schema, then :func:`validate_args`), and the list goes to the panel as one
``checklist`` block of a result block: the model reads only raw's one-line confirmation,
``panel todo updated (revision N)``, never the list itself.
"""

from __future__ import annotations

from typing import Any


def validate_args(args: Any) -> str | None:
    """Every task needs visible text, and no task may appear twice."""
    seen: set[str] = set()
    for index, item in enumerate(args["items"]):
        text = item["text"].strip()
        if not text:
            return f"items[{index}].text is blank: give every task some text"
        if text in seen:
            return f"items[{index}]: the task {text!r} appears twice; list each task once"
        seen.add(text)
    return None


async def handler(args: Any, context: Any) -> dict[str, Any]:
    """Replace the panel's checklist with the given tasks."""
    items = [{"text": item["text"].strip(), "status": item["status"]} for item in args["items"]]
    document = {"blocks": [{"type": "checklist", "items": items}]}
    return {"content": [{"type": "panel", "panel": "todo", "op": "replace", "document": document}]}
