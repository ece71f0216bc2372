"""Policy: an agent's rules (allow/ask/deny, last match wins) bound to its tools, and the
RE2 predicates they use.

Public names are imported lazily (PEP 562): importing the package imports none of
its modules, so a module of it can be imported without the others.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from raw_core.policy._engine import (
        Decision,
        Explanation,
        LintFinding,
        Policy,
        RuleExplanation,
    )

_EXPORTS: dict[str, str] = {
    "Decision": "raw_core.policy._engine",
    "Explanation": "raw_core.policy._engine",
    "LintFinding": "raw_core.policy._engine",
    "Policy": "raw_core.policy._engine",
    "RuleExplanation": "raw_core.policy._engine",
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
    "Decision",
    "Explanation",
    "LintFinding",
    "Policy",
    "RuleExplanation",
]
