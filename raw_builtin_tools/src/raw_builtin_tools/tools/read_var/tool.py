"""builtin/read_var: one selected variable's value, delivered without being stored.

The handler reads the value (so a missing or unreadable variable is this call's error) but
returns a placeholder block naming the variable: the agent loop stores the placeholder and
puts the value in only when it builds a request, so the value never reaches the session
store, logs or display history.
"""

from __future__ import annotations

from typing import Any

from raw_core import VarService


def handler(args: Any, context: Any) -> dict[str, Any]:
    """Check the variable can be read; answer with its placeholder.

    Without the agent's variables (a dispatcher given none) no name is selected: an empty
    :class:`raw_core.VarService` refuses it with raw_core's own ``var_not_selected``.
    """
    name = args["name"]
    variables = context.vars if context.vars is not None else VarService({}, ())
    variables.read(name)
    return {"content": [{"type": "var", "name": name}]}
