"""Plug-ins: the host that loads them, the hookspecs they implement, and running their
runtime hooks.

Public names are imported lazily (PEP 562): importing the package imports none of
its modules, so a module of it can be imported without the others.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from raw_core.plugins._host import (
        ENTRY_POINT_GROUP,
        HookRelay,
        PluginHost,
        RecordKind,
        ToolFolder,
    )

_EXPORTS: dict[str, str] = {
    "ENTRY_POINT_GROUP": "raw_core.plugins._host",
    "HookRelay": "raw_core.plugins._host",
    "PluginHost": "raw_core.plugins._host",
    "RecordKind": "raw_core.plugins._host",
    "ToolFolder": "raw_core.plugins._host",
}


def __getattr__(name: str) -> Any:
    module = _EXPORTS.get(name)
    if module is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    value = getattr(importlib.import_module(module), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted([*globals(), *_EXPORTS])


__all__ = [
    "ENTRY_POINT_GROUP",
    "HookRelay",
    "PluginHost",
    "RecordKind",
    "ToolFolder",
]
