"""Printing results and errors the same way in every command."""

from __future__ import annotations

import json
import sys
from typing import Any, NoReturn

import click

from raw_core.errors import ConfigInvalid, ConfigNotFound, RawError, UsageInvalid

__all__ = [
    "EXIT_ERROR",
    "EXIT_INTERRUPTED",
    "EXIT_OK",
    "EXIT_PIPE",
    "EXIT_TERMINATED",
    "EXIT_USAGE",
    "emit_json",
    "fail",
    "stdout_gone",
    "usage_failed",
]

EXIT_OK = 0
EXIT_ERROR = 1
EXIT_USAGE = 2
EXIT_INTERRUPTED = 130  # ended by Ctrl-C (SIGINT), as the shell reports it: 128 + 2
EXIT_PIPE = 141  # the reader of stdout went away (SIGPIPE, as the shell reports it: 128 + 13)
EXIT_TERMINATED = 143  # ended by SIGTERM, as the shell reports it: 128 + 15


def stdout_gone() -> None:
    """The reader of stdout went away (a ``BrokenPipeError``): point stdout at the null
    device, so that nothing written later, nor the interpreter's last flush, fails again."""
    import os

    try:
        null = os.open(os.devnull, os.O_WRONLY)
        os.dup2(null, sys.stdout.fileno())
        os.close(null)
    except (OSError, ValueError):  # no file descriptor to redirect: nothing more to do
        pass


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


def usage_failed(message: str, *, as_json: bool, field: str | None = None) -> NoReturn:
    """A command line the running command cannot run: ``usage_invalid``, exit 2, in the
    JSON form with ``--json``, with a hint naming the command's ``--help`` otherwise."""
    fail(UsageInvalid(message, field=field), as_json=as_json)


def fail(
    error: RawError, *, as_json: bool, exit_code: int = EXIT_USAGE, command: str | None = None
) -> NoReturn:
    """Report ``error`` and exit: JSON ``{"error": {code, message, field?, path?}}`` on
    stdout (``path``: the file a config error is in), or a line on stderr and a hint
    (``command``: the command line's command, named by a usage error's hint; by default
    the running command's, so an error raised deep in its work names its ``--help``)."""
    if command is None:
        context = click.get_current_context(silent=True)
        command = context.command_path if context is not None else None
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
        advice = hint(error, command=command)
        if advice is not None:
            click.echo(f"  hint: {advice}", err=True)
    sys.exit(exit_code)
