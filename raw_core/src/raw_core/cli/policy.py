"""``raw policy``: explain how an agent's rules decide one call, and lint the rules.

Exit codes:

* ``explain``: 0 the call was explained; 1 the tool's ``describe_effects`` failed or
  returned effects its ``effects_schema`` refuses (``effects_invalid``); 2 a config or usage
  error, including ``ARGS_JSON`` that is not strict JSON or that the tool refuses
  (``invalid_arguments``) and an identity the agent does not select (``tool_unknown``).
* ``lint``: 0 no findings; 1 findings; 2 a config or usage error.
"""

from __future__ import annotations

import copy
import inspect
import json
import os
import sys
from pathlib import Path
from typing import TYPE_CHECKING, Any

import click

from raw_core.cli._config import config_option, load_cli_agent
from raw_core.cli._output import EXIT_ERROR, EXIT_OK, EXIT_USAGE, emit_json, fail
from raw_core.errors import EffectsInvalid, InvalidArguments, RawError

if TYPE_CHECKING:
    from raw_core.agent import Agent
    from raw_core.loader import LoadedTool

__all__ = ["policy"]

MAX_ARGS_BYTES = 4 * 1024 * 1024


class _EffectsContext:
    """What ``describe_effects(args, context)`` may read: the working directory."""

    __slots__ = ("cwd",)

    def __init__(self, cwd: str) -> None:
        self.cwd = cwd


def _load(config_path: Path | None, agent_name: str | None, *, as_json: bool) -> Agent:
    _, _, agent = load_cli_agent(config_path, agent_name, as_json=as_json)
    result: Agent = agent
    return result


def _arguments(tool: LoadedTool, text: str) -> Any:
    """Parse and validate ARGS_JSON as dispatch would: strict JSON, schema, validate_args."""
    from raw_core._json import JsonInputError, loads_strict
    from raw_core._schema import SchemaValidationError

    try:
        arguments = loads_strict(text, max_bytes=MAX_ARGS_BYTES)
    except JsonInputError as exc:
        raise InvalidArguments(f"ARGS_JSON is not strict JSON: {exc}", field="$") from None
    try:
        tool.input_validator.validate(arguments)
    except SchemaValidationError as exc:
        raise InvalidArguments(exc.message, field=exc.path, tool=tool.identity) from None
    if tool.validate_args is not None:
        try:
            problem = tool.validate_args(copy.deepcopy(arguments))
        except Exception as exc:
            raise InvalidArguments(
                f"validate_args raised {type(exc).__name__}: {exc}", tool=tool.identity
            ) from None
        if problem is not None:
            raise InvalidArguments(str(problem), tool=tool.identity)
    return arguments


def _effects(tool: LoadedTool, arguments: Any, cwd: str) -> Any:
    """The call's intended effects, validated (``None`` when the tool declares none)."""
    from raw_core._schema import SchemaValidationError

    if tool.describe_effects is None or tool.effects_validator is None:
        return None
    try:
        effects = tool.describe_effects(copy.deepcopy(arguments), _EffectsContext(cwd=cwd))
    except Exception as exc:
        raise EffectsInvalid(
            f"describe_effects raised {type(exc).__name__}: {exc}", tool=tool.identity
        ) from None
    if inspect.isawaitable(effects):
        if inspect.iscoroutine(effects):
            effects.close()
        raise EffectsInvalid(
            "describe_effects returned an awaitable; effect descriptors must be synchronous",
            tool=tool.identity,
        )
    try:
        tool.effects_validator.validate(effects)
    except SchemaValidationError as exc:
        raise EffectsInvalid(
            f"the effects do not satisfy effects_schema: {exc.message}",
            field=exc.path,
            tool=tool.identity,
        ) from None
    return effects


@click.group()
def policy() -> None:
    """Explain and lint an agent's tools.rules."""


_CONFIG = config_option
_AGENT = click.option(
    "--agent",
    "agent_name",
    default=None,
    help="The agent (default: the only one, or default_agent).",
)


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
    followed by the verdict and the rule that decided it.
    """
    agent = _load(config_path, agent_name, as_json=as_json)
    try:
        tool = agent.registry.by_identity(identity)
    except RawError as exc:
        fail(exc, as_json=as_json)
    try:
        arguments = _arguments(tool, args_json)
    except InvalidArguments as exc:
        fail(exc, as_json=as_json, exit_code=EXIT_USAGE)
    try:
        effects = _effects(tool, arguments, os.path.abspath(cwd if cwd is not None else "."))
    except EffectsInvalid as exc:
        fail(exc, as_json=as_json, exit_code=EXIT_ERROR)
    explanation = agent.policy.explain(identity, arguments, effects)
    if as_json:
        emit_json(
            {
                "identity": explanation.identity,
                "exposed": explanation.exposed,
                "effects": effects,
                "rules": [rule.to_dict() for rule in explanation.rules],
                "verdict": explanation.verdict,
                "decided_by": explanation.decided_by,
            }
        )
        return
    hidden = "" if explanation.exposed else " (not exposed: the model never sees it)"
    click.echo(f"tool: {identity}{hidden}")
    if effects is None:
        click.echo("effects: none declared")
    else:
        click.echo(f"effects: {json.dumps(effects, ensure_ascii=False)}")
    if not explanation.rules:
        click.echo("rules: none")
    else:
        click.echo("rules:")
    width = max((len(rule.match) for rule in explanation.rules), default=0)
    for rule in explanation.rules:
        mark = "matched    " if rule.matched else "not matched"
        click.echo(f"  [{rule.index}] {rule.effect:<5} {rule.match:<{width}}  {mark}  {rule.why}")
    decided = (
        f"rule {explanation.decided_by}"
        if explanation.decided_by is not None
        else "no rule matched"
    )
    click.echo(f"verdict: {explanation.verdict} ({decided})")


@policy.command("lint")
@_CONFIG
@_AGENT
@click.option("--json", "as_json", is_flag=True, help="Print the findings as JSON.")
def lint(config_path: Path | None, agent_name: str | None, as_json: bool) -> None:
    """Find rules that match no selected tool or can never decide.

    Exits 0 when there is nothing to report, 1 when there are findings, 2 on a config or
    usage error.
    """
    agent = _load(config_path, agent_name, as_json=as_json)
    findings = agent.policy.lint()
    hidden = agent.policy.hidden
    if as_json:
        emit_json(
            {
                "agent": agent.name,
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
        rules = len(agent.policy.rules)
        if count:
            click.echo(f"{count} finding{'s' if count > 1 else ''} in {rules} rules")
        else:
            click.echo(f"no findings in {rules} rules")
    sys.exit(EXIT_ERROR if findings else EXIT_OK)
