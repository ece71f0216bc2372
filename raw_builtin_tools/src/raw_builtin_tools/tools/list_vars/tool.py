"""builtin/list_vars: the agent's selected variables' names and descriptions, never values."""

from __future__ import annotations

from typing import Any


def handler(args: Any, context: Any) -> dict[str, Any]:
    """One line per selected variable, in the agent's vars.use order."""
    entries = context.vars.listing() if context.vars is not None else []
    if not entries:
        text = "No variables are available."
    else:
        text = "\n".join(f"{name}: {description}" for name, description in entries)
    return {"content": [{"type": "text", "text": text}]}
