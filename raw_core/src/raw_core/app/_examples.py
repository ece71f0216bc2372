"""``raw policy test``: every rule example of a config's agents and floors, run.

Examples need no tool: each is read through its rule's predicate as compiled (path and
regex), so every agent's rules are tested without loading its tools, and a failing example
is listed with the others instead of stopping at the first (as loading does).
"""

from __future__ import annotations

from typing import Any

import attrs

from raw_core.config import Config, Rule
from raw_core.errors import ConfigInvalid
from raw_core.policy.examples import ExampleResult, run_examples
from raw_core.policy.predicate import PredicateError, prepare_predicate

__all__ = ["ExampleRun", "run_config_examples"]


@attrs.frozen(kw_only=True)
class ExampleRun:
    """One example of one rule: whose rules (``layer``: ``agent`` with ``agent`` its name,
    or a floor's layer), the file (``path``), and its outcome."""

    layer: str
    agent: str | None
    path: str | None
    result: ExampleResult

    def to_dict(self) -> dict[str, Any]:
        """``{layer, agent, path, rule, field, kind, index, example, passed, why}``."""
        return {"layer": self.layer, "agent": self.agent, "path": self.path} | (
            self.result.to_dict()
        )


def _run(
    rules: tuple[Rule, ...], field: str, *, layer: str, agent: str | None, path: str | None
) -> list[ExampleRun]:
    runs: list[ExampleRun] = []
    for index, rule in enumerate(rules):
        if rule.when is None or rule.examples is None:
            continue
        try:
            prepared = prepare_predicate(rule.when)
        except PredicateError as exc:
            raise ConfigInvalid(
                f"rule {index} (match {rule.match_text}, effect {rule.effect!r}):"
                f" when.{exc.key}: {exc.message}",
                field=f"{field}[{index}].when.{exc.key}",
                rule=index,
                path=path,
            ) from None
        runs.extend(
            ExampleRun(layer=layer, agent=agent, path=path, result=result)
            for result in run_examples(rule, prepared, index=index, field=f"{field}[{index}]")
        )
    return runs


def run_config_examples(config: Config) -> tuple[ExampleRun, ...]:
    """Every example of every agent's ``tools.rules``, then of each floor, in order."""
    where = str(config.path) if config.path is not None else None
    runs: list[ExampleRun] = []
    for name, agent in config.agents.items():
        runs += _run(
            agent.tools.rules,
            f"$.agents.{name}.tools.rules",
            layer="agent",
            agent=name,
            path=where,
        )
    for floor in config.floors:
        runs += _run(
            floor.rules,
            floor.field,
            layer=floor.layer,
            agent=None,
            path=str(floor.path) if floor.path is not None else None,
        )
    return tuple(runs)
