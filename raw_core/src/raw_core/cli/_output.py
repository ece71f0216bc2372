"""Printing results and errors the same way in every command."""

from __future__ import annotations

import json
import sys
from typing import Any, NoReturn

import click

from raw_core.errors import ConfigInvalid, ConfigNotFound, RawError

__all__ = ["EXIT_ERROR", "EXIT_INTERRUPTED", "EXIT_OK", "EXIT_USAGE", "emit_json", "fail"]

EXIT_OK = 0
EXIT_ERROR = 1
EXIT_USAGE = 2
EXIT_INTERRUPTED = 130  # ended by Ctrl-C (SIGINT), as the shell reports it: 128 + 2


def emit_json(value: Any) -> None:
    """Print ``value`` as indented JSON on stdout."""
    click.echo(json.dumps(value, indent=2, ensure_ascii=False))


def describe(error: RawError) -> str:
    """``code: message (at field)`` for humans; a config error also names the file it is
    in, ``(in PATH)``, as ``raw config validate`` does, unless its message already does."""
    text = str(error)
    where = _config_file(error)
    if where is not None and where not in text:
        text += f" (in {where})"
    return text


def _config_file(error: RawError) -> str | None:
    """The config file (layer) a config error is in, when it says."""
    where = error.context.get("path")
    if isinstance(error, ConfigInvalid | ConfigNotFound) and isinstance(where, str):
        return where
    return None


def fail(error: RawError, *, as_json: bool, exit_code: int = EXIT_USAGE) -> NoReturn:
    """Report ``error`` and exit: JSON ``{"error": {code, message, field?, path?}}`` on
    stdout (``path``: the file a config error is in), or a line on stderr."""
    if as_json:
        payload = {"code": error.code, "message": error.message}
        if error.field is not None:
            payload["field"] = error.field
        where = _config_file(error)
        if where is not None:
            payload["path"] = where  # which of the config's files (layers) it is in
        emit_json({"error": payload})
    else:
        from raw_core.cli._hints import hint

        click.echo(f"raw: {describe(error)}", err=True)
        advice = hint(error)
        if advice is not None:
            click.echo(f"  hint: {advice}", err=True)
    sys.exit(exit_code)
