"""``raw models``: list the models a config defines, and check that one answers.

``raw models list`` shows each model's provider, model name, address and whether its
credential is available — never the credential itself. ``raw models check NAME`` makes the
model's provider, sends one tiny streamed request and says what worked: the credential, the
connection, streamed text, usage and the stop reason. Exit codes: 0 the model answered, 1
the request failed, 2 a config error (unknown model or provider, missing credential).
"""

from __future__ import annotations

import sys
import time
from pathlib import Path
from typing import Any

import click

from raw_core.cli._config import config_option, load_cli_config
from raw_core.cli._output import EXIT_ERROR, EXIT_OK, emit_json, fail
from raw_core.errors import ConfigInvalid, ProviderUnavailable, RawError

__all__ = ["models"]

CHECK_SYSTEM = "You are a connectivity check. Answer with the single word: ok"
CHECK_PROMPT = "Reply with the single word ok."


@click.group()
def models() -> None:
    """List the models of a config and check that they answer."""


def _host(as_json: bool) -> Any:
    from raw_core.plugins import PluginHost

    host = PluginHost()
    try:
        host.load_entry_points()
        host.providers()
    except RawError as exc:
        fail(exc, as_json=as_json)
    return host


def _credential(config: Any, model: Any) -> dict[str, Any]:
    from raw_core.models import credential_status

    status = credential_status(model, vars=config.vars, base_dir=config.directory)
    return {"source": status.source, "state": status.state}


@models.command("list")
@config_option
@click.option("--json", "as_json", is_flag=True, help="Print a JSON list, one entry per model.")
def list_models(config_path: Path | None, as_json: bool) -> None:
    """List the models the config defines: provider, model, address, credential."""
    config = load_cli_config(config_path, as_json=as_json)
    providers = _host(as_json).providers()
    rows = [
        {
            "name": name,
            "provider": model.provider,
            "provider_installed": model.provider in providers,
            "model": model.model,
            "base_url": model.base_url,
            "api": model.api,
            "vision": model.vision,
            "credential": _credential(config, model),
        }
        for name, model in sorted(config.models.items())
    ]
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
    type=click.FloatRange(min=0, min_open=True),
    default=60.0,
    show_default=True,
    help="Seconds to wait for the whole answer.",
)
@click.option("--json", "as_json", is_flag=True, help="Print the outcome as JSON.")
def check(name: str, config_path: Path | None, timeout: float, as_json: bool) -> None:
    """Send one tiny request to model NAME and say what works and what does not.

    Exits 0 when the model answered, 1 when the request failed, 2 on a config error.
    """
    import anyio

    from raw_core.models import make_provider
    from raw_core.variables import VarService

    config = load_cli_config(config_path, as_json=as_json)
    model = config.models.get(name)
    if model is None:
        known = ", ".join(sorted(config.models)) or "none"
        fail(
            ConfigInvalid(
                f"no model named {name!r}; the config defines: {known}", field="$.models"
            ),
            as_json=as_json,
        )
    host = _host(as_json)
    variables = VarService(config.vars, (), base_dir=config.directory)
    try:
        provider = make_provider(host, model, name=name, resolve_var=variables.read_defined)
    except RawError as exc:
        fail(exc, as_json=as_json)
    outcome = anyio.run(_probe, provider, timeout)
    credential = _credential(config, model)
    report = {
        "name": name,
        "provider": model.provider,
        "model": model.model,
        "base_url": model.base_url,
        "api": model.api,
        "credential": credential,
        **outcome,
    }
    if as_json:
        emit_json(report)
    else:
        _print_report(report)
    sys.exit(EXIT_OK if outcome["ok"] else EXIT_ERROR)


async def _probe(provider: Any, seconds: float) -> dict[str, Any]:
    import anyio

    from raw_core.provider import (
        ModelRequest,
        StopEvent,
        TextDelta,
        UsageEvent,
        prompt_cache_key,
    )
    from raw_core.store.messages import UserMessage

    request = ModelRequest(
        system=CHECK_SYSTEM,
        tools=(),
        messages=(UserMessage.from_text(CHECK_PROMPT),),
        cache_key=prompt_cache_key(CHECK_SYSTEM, ()),
    )
    text: list[str] = []
    usage: dict[str, int] | None = None
    stop: str | None = None
    error: dict[str, Any] | None = None
    started = time.monotonic()
    first: float | None = None
    stream = provider.stream(request)
    try:
        with anyio.fail_after(seconds):
            async for event in stream:
                if first is None:
                    first = time.monotonic() - started
                if isinstance(event, TextDelta):
                    text.append(event.text)
                elif isinstance(event, UsageEvent):
                    usage = {
                        "input_tokens": event.input_tokens,
                        "output_tokens": event.output_tokens,
                        "cache_read_tokens": event.cache_read_tokens,
                        "cache_write_tokens": event.cache_write_tokens,
                    }
                elif isinstance(event, StopEvent):
                    stop = event.reason
    except TimeoutError:
        failure = ProviderUnavailable(
            f"no complete answer within {seconds:g} s", provider=provider.name
        )
        error = failure.to_dict()
    except RawError as exc:
        error = exc.to_dict()
    except Exception as exc:  # a provider that raises something else: its type only
        error = {"code": "provider_error", "message": f"the provider failed: {type(exc).__name__}"}
    finally:
        with anyio.CancelScope(shield=True):
            end = getattr(stream, "aclose", None)
            if end is not None:
                await end()
            close = getattr(provider, "aclose", None)
            if close is not None:
                await close()
    if error is None and stop is None:
        error = {"code": "provider_error", "message": "the stream ended without a stop reason"}
    return {
        "ok": error is None,
        "text": "".join(text),
        "fragments": len(text),
        "stop_reason": stop,
        "usage": usage,
        "first_event_seconds": round(first, 3) if first is not None else None,
        "seconds": round(time.monotonic() - started, 3),
        "error": error,
    }


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
