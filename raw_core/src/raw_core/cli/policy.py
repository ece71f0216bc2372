"""``raw policy``: explain how an agent's rules decide one call, and lint the rules.

Exit codes:

* ``explain``: 0 the call was explained; 1 the tool's ``describe_effects`` failed or
  returned effects its ``effects_schema`` refuses (``effects_invalid``); 2 a config or usage
  error, including ``ARGS_JSON`` that is not strict JSON or that the tool refuses
  (``invalid_arguments``) and an identity the agent does not select (``tool_unknown``).
* ``lint``: 0 no findings; 1 findings; 2 a config or usage error.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

import click

from raw_core.cli._app import agent_option, config_option, with_app
from raw_core.cli._output import EXIT_ERROR, EXIT_OK, EXIT_USAGE, emit_json, fail
from raw_core.errors import EffectsInvalid

__all__ = ["policy"]


@click.group()
def policy() -> None:
    """Explain and lint an agent's tools.rules."""


_CONFIG = config_option
_AGENT = agent_option


@policy.command("explain")
@click.argument("identity")
@click.argument("args_json", metavar="ARGS_JSON")
@_CONFIG
@_AGENT
@click.option(
    "--cwd",
    "cwd",
    default=None,
    type=click.Path(file_okay=False, path_type=Path),
    help="The working directory describe_effects sees (default: the current one).",
)
@click.option("--json", "as_json", is_flag=True, help="Print the explanation as JSON.")
def explain(
    identity: str,
    args_json: str,
    config_path: Path | None,
    agent_name: str | None,
    cwd: Path | None,
    as_json: bool,
) -> None:
    """Show how the rules decide one call of IDENTITY with ARGS_JSON.

    The arguments are validated as a call's would be, the tool's intended effects are
    computed when it declares them, and every rule is listed as matched or not, with why,
    followed by the verdict and the rule that decided it, the plug-ins' check hooks, and
    which command hooks would run for the call (their subscriptions evaluated; none runs).
    """
    found: list[Any] = []

    async def work(app: Any) -> int:
        try:
            found.append(await app.explain(identity, args_json, agent=agent_name, cwd=cwd))
        except EffectsInvalid as exc:  # the tool's fault, not the caller's: exit 1
            found.append(exc)
        return EXIT_OK

    with_app(work, config_path=config_path, as_json=as_json, error_exit=EXIT_USAGE)
    explanation = found[0]
    if isinstance(explanation, EffectsInvalid):
        fail(explanation, as_json=as_json, exit_code=EXIT_ERROR)
    effects = explanation.effects
    if as_json:
        emit_json(explanation.to_dict())
        return
    hidden = "" if explanation.exposed else " (not exposed: the model never sees it)"
    click.echo(f"tool: {identity}{hidden}")
    if effects is None:
        click.echo("effects: none declared")
    else:
        click.echo(f"effects: {_pretty(effects, len('effects: '))}")
    if not explanation.rules:
        click.echo("rules: none")
    else:
        click.echo("rules:")
    width = max((len(rule.match_text) for rule in explanation.rules), default=0)
    for rule in explanation.rules:
        mark = "matched    " if rule.matched else "not matched"
        match = rule.match_text
        click.echo(f"  [{rule.index}] {rule.effect:<5} {match:<{width}}  {mark}  {rule.why}")
    decided = (
        f"rule {explanation.decided_by}"
        if explanation.decided_by is not None
        else "no rule matched"
    )
    click.echo(f"verdict: {explanation.verdict} ({decided})")
    if explanation.hooks:
        click.echo("check hooks:")
        for hook in explanation.hooks:
            if hook.error is not None:
                said = f"failed: {hook.error['code']}: {hook.error['message']}"
            elif hook.decision is None:
                said = "passed"
            else:
                said = hook.decision + (f" ({hook.reason})" if hook.reason else "")
            click.echo(f"  {hook.plugin}: {said}")
    if explanation.final_verdict != explanation.verdict:
        reason = f" ({explanation.final_reason})" if explanation.final_reason else ""
        click.echo(f"after hooks: {explanation.final_verdict}{reason}")
    if explanation.command_hooks:
        click.echo("command hooks (not run here):")
        for sub in explanation.command_hooks:
            mark = "runs     " if sub.runs else "skipped  "
            click.echo(f"  {sub.event:<11} {sub.hook}  {mark}  {sub.why}")


_WIDTH = 100


def _pretty(value: Any, column: int, indent: int = 0) -> str:
    """JSON that a person can read: a value that fits on the line it starts on (at
    ``column``) stays on it; a longer object or array gets one line per member, indented
    two spaces past the line's ``indent`` (so each program of a bash command is a line)."""
    flat = json.dumps(value, ensure_ascii=False)
    if column + len(flat) <= _WIDTH or not isinstance(value, dict | list) or not value:
        return flat
    pad = " " * (indent + 2)
    if isinstance(value, dict):
        members = []
        for key, item in value.items():
            head = f"{pad}{json.dumps(key, ensure_ascii=False)}: "
            members.append(head + _pretty(item, len(head), indent + 2))
        return "{\n" + ",\n".join(members) + "\n" + " " * indent + "}"
    members = [pad + _pretty(item, len(pad), indent + 2) for item in value]
    return "[\n" + ",\n".join(members) + "\n" + " " * indent + "]"


@policy.command("lint")
@_CONFIG
@_AGENT
@click.option("--json", "as_json", is_flag=True, help="Print the findings as JSON.")
def lint(config_path: Path | None, agent_name: str | None, as_json: bool) -> None:
    """Find rules that match no selected tool or can never decide.

    Exits 0 when there is nothing to report, 1 when there are findings, 2 on a config or
    usage error.
    """
    seen: list[Any] = []

    async def work(app: Any) -> int:
        async with app.agent(agent_name) as agent:
            seen.append((agent.name, agent.policy))
        return EXIT_OK

    with_app(work, config_path=config_path, as_json=as_json)
    name, rules = seen[0]
    findings = rules.lint()
    hidden = rules.hidden
    if as_json:
        emit_json(
            {
                "agent": name,
                "findings": [finding.to_dict() for finding in findings],
                "hidden": dict(hidden),
            }
        )
    else:
        for finding in findings:
            click.echo(f"{finding.kind}: {finding.message}")
        for identity, rule in hidden.items():
            click.echo(f"note: {identity} is not exposed (rule {rule} denies every call)")
        count = len(findings)
        rules_count = len(rules.rules)
        if count:
            click.echo(f"{count} finding{'s' if count > 1 else ''} in {rules_count} rules")
        else:
            click.echo(f"no findings in {rules_count} rules")
    sys.exit(EXIT_ERROR if findings else EXIT_OK)
