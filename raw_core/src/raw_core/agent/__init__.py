"""Agents: one agent of a config resolved into its tools, bound policy, skills and
variables.

Public names are imported lazily (PEP 562): importing the package imports none of
its modules, so a module of it can be imported without the others.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from raw_core._lazy import lazy_exports

if TYPE_CHECKING:
    from raw_core.agent._agent import (
        Agent,
        load_agent,
        open_agent,
    )
    from raw_core.agent.problems import agent_problems

_EXPORTS: dict[str, str] = {
    "Agent": "raw_core.agent._agent",
    "load_agent": "raw_core.agent._agent",
    "open_agent": "raw_core.agent._agent",
    "agent_problems": "raw_core.agent.problems",
}


# Hidden from the type checker, which would otherwise take any name as existing here: the
# imports above give every public name its real type, and a misspelt one stays an error.
if not TYPE_CHECKING:
    __getattr__, __dir__ = lazy_exports(globals(), _EXPORTS)


__all__ = [
    "Agent",
    "agent_problems",
    "load_agent",
    "open_agent",
]
