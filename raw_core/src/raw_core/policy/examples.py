"""Rule examples: values a conditional rule's ``when`` must match, and ones it must not.

A rule may carry ``examples: {"match": [...], "not_match": [...]}`` — argument objects,
or effects objects for ``source: effects``. Each is run through the rule's predicate with
the same evaluator a call meets (:class:`~raw_core.policy.predicate.BoundPredicate`, on
its compiled path and regex; no tool's schema is needed to read a value). When the rules
are bound a failing example is ``config_invalid`` naming the rule and the example, so a
rule that stops meaning what its author wrote stops the load; ``raw policy test`` lists
every example with its outcome.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Any, Final, Literal

import attrs

from raw_core.config import Rule
from raw_core.errors import ConfigInvalid
from raw_core.frozen import thaw
from raw_core.policy.predicate import BoundPredicate, PreparedPredicate

__all__ = ["ExampleResult", "check_examples", "raise_failed", "run_examples"]

_QUOTE: Final = 120


@attrs.frozen(kw_only=True)
class ExampleResult:
    """One example run: rule ``rule`` (at ``field``), ``kind`` (``match`` or
    ``not_match``) number ``index``, whether it ``passed``, and why (the predicate's
    explanation)."""

    rule: int
    field: str
    kind: Literal["match", "not_match"]
    index: int
    value: Any
    passed: bool
    why: str

    @property
    def value_text(self) -> str:
        """The example as compact JSON (cut to a readable length)."""
        text = json.dumps(thaw(self.value), ensure_ascii=False, separators=(", ", ": "))
        return text if len(text) <= _QUOTE else text[: _QUOTE - 3] + "..."

    def to_dict(self) -> dict[str, Any]:
        """``{rule, field, kind, index, example, passed, why}``."""
        return {
            "rule": self.rule,
            "field": self.field,
            "kind": self.kind,
            "index": self.index,
            "example": thaw(self.value),
            "passed": self.passed,
            "why": self.why,
        }


def run_examples(
    rule: Rule, prepared: PreparedPredicate, *, index: int, field: str
) -> list[ExampleResult]:
    """Run rule ``index``'s examples (``field`` is the rule's JSON path) through its
    prepared predicate."""
    if rule.examples is None:
        return []
    predicate = BoundPredicate(prepared, "examples")
    results: list[ExampleResult] = []
    cases: tuple[tuple[Literal["match", "not_match"], Sequence[Any]], ...] = (
        ("match", rule.examples.match),
        ("not_match", rule.examples.not_match),
    )
    for kind, values in cases:
        for number, value in enumerate(values):
            outcome = predicate.explain(value)
            results.append(
                ExampleResult(
                    rule=index,
                    field=f"{field}.examples.{kind}[{number}]",
                    kind=kind,
                    index=number,
                    value=value,
                    passed=outcome.matched == (kind == "match"),
                    why=outcome.why,
                )
            )
    return results


def raise_failed(rule: Rule, results: Sequence[ExampleResult], label: str) -> None:
    """``config_invalid`` for the first failing example of ``rule`` (``label`` names the
    rule as messages do), naming the rule and the example."""
    for result in results:
        if result.passed:
            continue
        should = "should match" if result.kind == "match" else "should not match"
        error = ConfigInvalid(
            f"{label}: example {result.kind}[{result.index}] {result.value_text} {should} its"
            f" when, but {'it does not' if result.kind == 'match' else 'it does'}:"
            f" {result.why}",
            field=result.field,
            rule=result.rule,
        )
        error.context["example"] = thaw(result.value)
        raise error


def check_examples(
    rules: Sequence[Rule], prepared: dict[int, PreparedPredicate], *, field: str
) -> list[ExampleResult]:
    """Every example of ``rules`` (``prepared``: each conditional rule's predicate by
    index), in rule order."""
    results: list[ExampleResult] = []
    for index, rule in enumerate(rules):
        predicate = prepared.get(index)
        if predicate is not None:
            results.extend(run_examples(rule, predicate, index=index, field=f"{field}[{index}]"))
    return results
