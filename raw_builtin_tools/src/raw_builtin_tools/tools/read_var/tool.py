"""builtin/read_var: one selected variable's value, delivered without being stored.

The handler reads the value (so a missing or unreadable variable is this call's error) but
returns a placeholder block naming the variable: the agent loop stores the placeholder and
puts the value in only when it builds a request, so the value never reaches the session
store, logs or display history.
"""

from __future__ import annotations

from typing import Any

from raw_core.errors import VarNotSelected


def handler(args: Any, context: Any) -> dict[str, Any]:
    """Check the variable can be read; answer with its placeholder."""
    name = args["name"]
    if context.vars is None:
        raise VarNotSelected(f"no variables are available; cannot read {name!r}", var=name)
    context.vars.read(name)
    return {"content": [{"type": "var", "name": name}]}
