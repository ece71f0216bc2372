"""Agents: one agent of a config resolved into its tools, bound policy, skills and
variables.

Public names are imported lazily (PEP 562): importing the package imports none of
its modules, so a module of it can be imported without the others.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from raw_core.agent._agent import (
        Agent,
        load_agent,
        open_agent,
    )

_EXPORTS: dict[str, str] = {
    "Agent": "raw_core.agent._agent",
    "load_agent": "raw_core.agent._agent",
    "open_agent": "raw_core.agent._agent",
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
    "Agent",
    "load_agent",
    "open_agent",
]
