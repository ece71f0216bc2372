"""Dispatch: the seven steps every tool call goes through, and the records a call travels
with.

Public names are imported lazily (PEP 562): importing the package imports none of
its modules, so a module of it can be imported without the others.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from raw_core._lazy import lazy_exports

if TYPE_CHECKING:
    from raw_core.dispatch._pipeline import (
        DEFAULT_EFFECTS_TIMEOUT,
        DEFAULT_HANDLER_TIMEOUT,
        DEFAULT_MAX_ARGUMENT_BYTES,
        Dispatcher,
        PolicyDecision,
        PolicyView,
        PreparedCall,
    )
    from raw_core.dispatch.finished import CallOutcome, ToolCallFinished

_EXPORTS: dict[str, str] = {
    "CallOutcome": "raw_core.dispatch.finished",
    "DEFAULT_EFFECTS_TIMEOUT": "raw_core.dispatch._pipeline",
    "DEFAULT_HANDLER_TIMEOUT": "raw_core.dispatch._pipeline",
    "DEFAULT_MAX_ARGUMENT_BYTES": "raw_core.dispatch._pipeline",
    "Dispatcher": "raw_core.dispatch._pipeline",
    "PolicyDecision": "raw_core.dispatch._pipeline",
    "PolicyView": "raw_core.dispatch._pipeline",
    "PreparedCall": "raw_core.dispatch._pipeline",
    "ToolCallFinished": "raw_core.dispatch.finished",
}


# Hidden from the type checker, which would otherwise take any name as existing here: the
# imports above give every public name its real type, and a misspelt one stays an error.
if not TYPE_CHECKING:
    __getattr__, __dir__ = lazy_exports(globals(), _EXPORTS)


__all__ = [
    "DEFAULT_EFFECTS_TIMEOUT",
    "DEFAULT_HANDLER_TIMEOUT",
    "DEFAULT_MAX_ARGUMENT_BYTES",
    "CallOutcome",
    "Dispatcher",
    "PolicyDecision",
    "PolicyView",
    "PreparedCall",
    "ToolCallFinished",
]
