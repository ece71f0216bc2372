"""Plug-ins: the host that loads them, the hookspecs they implement, and running their
runtime hooks.

Public names are imported lazily (PEP 562): importing the package imports none of
its modules, so a module of it can be imported without the others.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from raw_core._lazy import lazy_exports

if TYPE_CHECKING:
    from raw_core.plugins._host import (
        ENTRY_POINT_GROUP,
        HookRelay,
        PluginHost,
        RecordKind,
    )
    from raw_core.tools.sources import ToolFolder

_EXPORTS: dict[str, str] = {
    "ENTRY_POINT_GROUP": "raw_core.plugins._host",
    "HookRelay": "raw_core.plugins._host",
    "PluginHost": "raw_core.plugins._host",
    "RecordKind": "raw_core.plugins._host",
    "ToolFolder": "raw_core.tools.sources",
}


# Hidden from the type checker, which would otherwise take any name as existing here: the
# imports above give every public name its real type, and a misspelt one stays an error.
if not TYPE_CHECKING:
    __getattr__, __dir__ = lazy_exports(globals(), _EXPORTS)


__all__ = [
    "ENTRY_POINT_GROUP",
    "HookRelay",
    "PluginHost",
    "RecordKind",
    "ToolFolder",
]
