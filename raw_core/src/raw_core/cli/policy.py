"""``raw policy``: explain how an agent's rules (and the floors) decide one call, lint the
rules, and run the rules' examples.

Exit codes:

* ``explain``: 0 the call was explained; 1 the tool's ``describe_effects`` failed or
  returned effects its ``effects_schema`` refuses (``effects_invalid``); 2 a config or usage
  error, including ``ARGS_JSON`` that is not strict JSON or that the tool refuses
  (``invalid_arguments``) and an identity the agent does not select (``tool_unknown``).
* ``lint``: 0 no findings; 1 findings; 2 a config or usage error.
* ``test``: 0 every example passed (or there are none); 1 an example failed; 2 a config
  or usage error.
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
    """Explain, lint and test an agent's tools.rules and the floors."""


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
    _rule_lines(explanation.rules)
    for layer in explanation.layers[1:]:
        click.echo(f"{layer.layer} floor ({layer.path or 'given by the app'}):")
        _rule_lines(layer.rules)
    if explanation.layers:
        click.echo("layers:")
        for layer in explanation.layers:
            decided = "decides" if layer.layer == explanation.layer else ""
            click.echo(
                f"  {layer.layer:<8} {layer.verdict:<5}  {_rule_text(layer.decided_by):<16}"
                f"{decided}".rstrip()
            )
    decided = _rule_text(explanation.decided_by)
    if explanation.layers and explanation.decided_by is not None:
        decided += (
            " of tools.rules"
            if explanation.layer == "agent"
            else (f" of the {explanation.layer} floor")
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
        width = max(len(sub.hook) for sub in explanation.command_hooks)
        for sub in explanation.command_hooks:
            mark = "runs" if sub.runs else "skipped"
            click.echo(f"  {sub.event:<11} {sub.hook:<{width}}  {mark:<9}  {sub.why}")


def _rule_text(index: int | None) -> str:
    return f"rule {index}" if index is not None else "no rule matched"


def _rule_lines(rules: Any) -> None:
    width = max((len(rule.match_text) for rule in rules), default=0)
    for rule in rules:
        mark = "matched    " if rule.matched else "not matched"
        match = rule.match_text
        click.echo(f"  [{rule.index}] {rule.effect:<5} {match:<{width}}  {mark}  {rule.why}")


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
    """Find rules that match no selected tool, can never decide, or that a floor makes
    dead (a floor gives every call of the tools they match a stricter verdict).

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
            layer = rules.hidden_layer(identity) or "agent"
            where = "" if layer == "agent" else f" of the {layer} floor"
            click.echo(f"note: {identity} is not exposed (rule {rule}{where} denies every call)")
        count = len(findings)
        rules_count = len(rules.rules)
        if count:
            click.echo(f"{count} finding{'s' if count > 1 else ''} in {rules_count} rules")
        else:
            click.echo(f"no findings in {rules_count} rules")
    sys.exit(EXIT_ERROR if findings else EXIT_OK)


@policy.command("test")
@_CONFIG
@click.option("--json", "as_json", is_flag=True, help="Print the outcomes as JSON.")
def test(config_path: Path | None, as_json: bool) -> None:
    """Run every rule example (examples.match and examples.not_match) of every agent and
    of each floor, and print a table of the outcomes.

    No tool is loaded: an example is read through its rule's when as compiled. Exits 0
    when every example passes, 1 when one fails, 2 on a config or usage error.
    """
    found: list[Any] = []

    async def work(app: Any) -> int:
        found.append(app.rule_examples())
        return EXIT_OK

    with_app(work, config_path=config_path, as_json=as_json)
    runs = found[0]
    failed = [run for run in runs if not run.result.passed]
    if as_json:
        emit_json({"ok": not failed, "examples": [run.to_dict() for run in runs]})
        sys.exit(EXIT_ERROR if failed else EXIT_OK)
    if not runs:
        click.echo("no rule has examples")
        sys.exit(EXIT_OK)
    rows = [
        (
            "pass" if run.result.passed else "FAIL",
            run.agent if run.layer == "agent" else f"{run.layer} floor",
            run.result.field.rsplit(".examples.", 1)[0],
            f"{run.result.kind}[{run.result.index}]",
            run.result.value_text,
        )
        for run in runs
    ]
    header = ("result", "rules of", "rule", "example", "value")
    widths = [max(len(str(row[i])) for row in [header, *rows]) for i in range(4)]
    click.echo("  ".join(f"{cell:<{widths[i]}}" for i, cell in enumerate(header[:4])) + "  value")
    for run, row in zip(runs, rows, strict=True):
        cells = "  ".join(f"{cell:<{widths[i]}}" for i, cell in enumerate(row[:4]))
        click.echo(f"{cells}  {row[4]}")
        if not run.result.passed:
            click.echo(f"  {run.result.why} ({run.path})")
    passed = len(runs) - len(failed)
    click.echo(
        f"{len(runs)} example{'s' if len(runs) > 1 else ''}: {passed} passed, {len(failed)} failed"
    )
    sys.exit(EXIT_ERROR if failed else EXIT_OK)
