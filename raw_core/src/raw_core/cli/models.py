"""``raw models``: list the models a config defines, and check that one answers.

``raw models list`` shows each model's provider, model name, address and whether its
credential is available — never the credential itself. ``raw models check NAME`` makes the
model's provider, sends one tiny streamed request and says what worked: the credential, the
connection, streamed text, usage and the stop reason. Exit codes: 0 the model answered, 1
the request failed, 2 a config error (unknown model or provider, missing credential).
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

import click

from raw_core.cli._app import FiniteRange, config_option, with_app
from raw_core.cli._output import EXIT_ERROR, EXIT_OK, emit_json

__all__ = ["models"]


@click.group()
def models() -> None:
    """List the models of a config and check that they answer."""


def _with(work: Any, config_path: Path | None, as_json: bool) -> Any:
    found: list[Any] = []

    async def run(app: Any) -> int:
        found.append(await work(app))
        return EXIT_OK

    with_app(run, config_path=config_path, as_json=as_json)
    return found[0]


@models.command("list")
@config_option
@click.option("--json", "as_json", is_flag=True, help="Print a JSON list, one entry per model.")
def list_models(config_path: Path | None, as_json: bool) -> None:
    """List the models the config defines: provider, model, address, credential."""

    async def describe(app: Any) -> Any:
        return app.describe_models()

    rows = _with(describe, config_path, as_json)
    if as_json:
        emit_json(rows)
        return
    if not rows:
        click.echo("the config defines no models")
        return
    table = [["NAME", "PROVIDER", "MODEL", "BASE_URL", "CREDENTIAL"]]
    for row in rows:
        provider = row["provider"] + ("" if row["provider_installed"] else " (not installed)")
        credential = row["credential"]
        described = (
            "none"
            if credential["source"] is None
            else f"{credential['source']} ({credential['state']})"
        )
        table.append([row["name"], provider, row["model"], row["base_url"] or "-", described])
    widths = [max(len(line[i]) for line in table) for i in range(len(table[0]) - 1)]
    for line in table:
        cells = [cell.ljust(width) for cell, width in zip(line, widths, strict=False)]
        click.echo("  ".join([*cells, line[-1]]).rstrip())


@models.command("check")
@click.argument("name")
@config_option
@click.option(
    "--timeout",
    type=FiniteRange(min=0, min_open=True),
    default=60.0,
    show_default=True,
    help="Seconds to wait for the whole answer.",
)
@click.option("--json", "as_json", is_flag=True, help="Print the outcome as JSON.")
def check(name: str, config_path: Path | None, timeout: float, as_json: bool) -> None:
    """Send one tiny request to model NAME and say what works and what does not.

    Exits 0 when the model answered, 1 when the request failed, 2 on a config error.
    """

    async def probe(app: Any) -> Any:
        described = next((row for row in app.describe_models() if row["name"] == name), None)
        checked = await app.check_model(name, seconds=timeout)
        return described, checked

    described, checked = _with(probe, config_path, as_json)
    outcome = checked.to_dict()
    report = {
        "name": name,
        "provider": described["provider"],
        "model": described["model"],
        "base_url": described["base_url"],
        "api": described["api"],
        "credential": described["credential"],
        **outcome,
    }
    if as_json:
        emit_json(report)
    else:
        _print_report(report)
    sys.exit(EXIT_OK if outcome["ok"] else EXIT_ERROR)


def _print_report(report: dict[str, Any]) -> None:
    where = f" at {report['base_url']}" if report["base_url"] else ""
    api = f" ({report['api']} API)" if report["api"] else ""
    click.echo(
        f"model       {report['name']}: {report['model']} via {report['provider']}{where}{api}"
    )
    credential = report["credential"]
    if credential["source"] is None:
        click.echo("credential  none configured")
    else:
        click.echo(f"credential  {credential['source']}: {credential['state']}")
    error = report["error"]
    if error is not None:
        status = f" (HTTP {error['status']})" if error.get("status") else ""
        click.echo(f"FAIL        request: {error['code']}{status}: {error['message']}")
        if error["code"] == "auth_failed":
            click.echo("            the service refused the credential")
        elif error["code"] == "provider_unavailable":
            click.echo("            the service could not be reached or is overloaded")
        return
    click.echo(
        f"ok          connection and credential: the request was accepted"
        f" (first event after {report['first_event_seconds']} s)"
    )
    if report["fragments"]:
        click.echo(
            f"ok          streamed text: {report['text']!r} in {report['fragments']} fragment(s)"
        )
    else:
        click.echo("warning     the answer had no text")
    usage = report["usage"]
    if usage is None:
        click.echo("warning     the service reported no token usage")
    else:
        click.echo(
            f"ok          usage: {usage['input_tokens']} tokens in, {usage['output_tokens']} out"
            f" ({usage['cache_read_tokens']} read from the prompt cache)"
        )
    click.echo(f"ok          stop reason: {report['stop_reason']} after {report['seconds']} s")
