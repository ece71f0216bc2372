"""Policy: an agent's rules (allow/ask/deny, last match wins) bound to its tools, and the
globs and RE2 predicates they (and command hooks' subscriptions) use.

Public names are imported lazily (PEP 562): importing the package imports none of
its modules, so a module of it can be imported without the others.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from raw_core._lazy import lazy_exports

if TYPE_CHECKING:
    from raw_core.policy._engine import Policy
    from raw_core.policy._glob import Glob
    from raw_core.policy._records import Decision, Explanation, LintFinding, RuleExplanation
    from raw_core.policy.examples import ExampleResult
    from raw_core.policy.floors import FlooredPolicy, LayerExplanation, bind_floors

_EXPORTS: dict[str, str] = {
    "Decision": "raw_core.policy._records",
    "ExampleResult": "raw_core.policy.examples",
    "Explanation": "raw_core.policy._records",
    "FlooredPolicy": "raw_core.policy.floors",
    "Glob": "raw_core.policy._glob",
    "LayerExplanation": "raw_core.policy.floors",
    "LintFinding": "raw_core.policy._records",
    "Policy": "raw_core.policy._engine",
    "RuleExplanation": "raw_core.policy._records",
    "bind_floors": "raw_core.policy.floors",
}


# Hidden from the type checker, which would otherwise take any name as existing here: the
# imports above give every public name its real type, and a misspelt one stays an error.
if not TYPE_CHECKING:
    __getattr__, __dir__ = lazy_exports(globals(), _EXPORTS)


__all__ = [
    "Decision",
    "ExampleResult",
    "Explanation",
    "FlooredPolicy",
    "Glob",
    "LayerExplanation",
    "LintFinding",
    "Policy",
    "RuleExplanation",
    "bind_floors",
]
