"""The reference command line, ``raw``.

Exit codes (design.md): 0 success; 1 the checked thing or the call ended in an error; 2 a
usage or config error; 130 ended by Ctrl-C; 141 the reader of stdout went away; 143 ended
by SIGTERM. No traceback reaches the user for bad input:
every :class:`~raw_core.errors.RawError` is printed as ``code: message`` (or as JSON with
``--json``).
"""

from __future__ import annotations

import io
import sys
from typing import Any

import click

from raw_core import __version__
from raw_core.cli._lazy_group import LazyGroup
from raw_core.cli._output import EXIT_INTERRUPTED

__all__ = ["cli", "main"]


# Each command is imported when it runs (or when ``--help`` lists them): a command pays for
# its own module alone.
_COMMANDS = {
    "chat": "raw_core.cli.run:chat",
    "config": "raw_core.cli.config:config",
    "demo": "raw_core.cli.demo:demo",
    "hooks": "raw_core.cli.hooks:hooks",
    "models": "raw_core.cli.models:models",
    "pkg": "raw_core.cli.pkg:pkg",
    "policy": "raw_core.cli.policy:policy",
    "run": "raw_core.cli.run:run",
    "sessions": "raw_core.cli.sessions:sessions",
    "tools": "raw_core.cli.tools:tools",
}


class _Raw(LazyGroup):
    """The ``raw`` group: a Ctrl-C that reaches a command as ``KeyboardInterrupt`` (outside
    the commands that receive it as an event) exits 130, as the shell reports SIGINT,
    rather than click's "Aborted!" and 1.

    The plug-ins' commands (``raw_register_commands``, such as raw-acp's ``raw acp``) are
    added the first time a name raw does not have is asked for, or the commands are
    listed: a built-in command never loads the plug-ins for it, and a plug-in cannot
    replace one."""

    _plugins_added = False

    def _add_plugin_commands(self) -> None:
        if self._plugins_added:
            return
        self._plugins_added = True
        from raw_core import PluginHost
        from raw_core.errors import RawError

        host = PluginHost()
        try:
            host.load_entry_points()
        except RawError:
            return  # the command that needs the plug-ins reports it
        offered = click.Group()
        host.hook.raw_register_commands(cli=offered)
        for name, command in offered.commands.items():
            if not self.has_command(name):
                self.add_command(command, name)

    def get_command(self, ctx: click.Context, cmd_name: str) -> click.Command | None:
        command = super().get_command(ctx, cmd_name)
        if command is None:
            self._add_plugin_commands()
            command = super().get_command(ctx, cmd_name)
        return command

    def list_commands(self, ctx: click.Context) -> list[str]:
        self._add_plugin_commands()
        return super().list_commands(ctx)

    def make_context(self, *args: Any, **kwargs: Any) -> click.Context:
        try:  # ``raw --help`` and ``raw --version`` print here
            return super().make_context(*args, **kwargs)
        except BrokenPipeError:
            from raw_core.cli._output import EXIT_PIPE, stdout_gone

            stdout_gone()
            raise click.exceptions.Exit(EXIT_PIPE) from None

    def invoke(self, ctx: click.Context) -> Any:
        try:
            return super().invoke(ctx)
        except KeyboardInterrupt:
            click.echo(err=True)  # ends the terminal's ^C line
            ctx.exit(EXIT_INTERRUPTED)
        except BrokenPipeError:  # the reader of stdout went away: quietly, as SIGPIPE would
            from raw_core.cli._output import EXIT_PIPE, stdout_gone

            stdout_gone()
            ctx.exit(EXIT_PIPE)


@click.group(
    cls=_Raw,
    lazy=_COMMANDS,
    invoke_without_command=True,
    context_settings={"help_option_names": ["-h", "--help"]},
)
@click.version_option(__version__, "--version", prog_name="raw", message="%(prog)s %(version)s")
@click.option("--no-color", is_flag=True, help="No colour, even on a terminal (so does NO_COLOR).")
@click.pass_context
def cli(ctx: click.Context, no_color: bool) -> None:
    """raw: the tool contract of a local coding agent. On a terminal, `raw` alone starts a
    chat (`raw chat`)."""
    if no_color:
        from raw_core.cli._style import disable_colour

        disable_colour()
    if ctx.invoked_subcommand is None:
        if sys.stdin.isatty() and sys.stdout.isatty():
            from raw_core.cli.run import chat

            ctx.invoke(chat)
        else:
            click.echo(ctx.get_help())


def main() -> None:
    """Console-script entry point."""
    # Outside text (a model's reply, its arguments) may hold a lone surrogate, which UTF-8
    # cannot encode: write it as its \\uXXXX escape (inside a JSON string, that is the same
    # character) instead of failing mid-turn.
    for stream in (sys.stdout, sys.stderr):
        if isinstance(stream, io.TextIOWrapper):
            stream.reconfigure(errors="backslashreplace")
    try:
        code = cli.main(prog_name="raw", standalone_mode=False)
    except click.UsageError as exc:
        _usage_failed(exc)
    except click.ClickException as exc:  # a bad file argument, for one
        _usage_failed(exc, exit_code=exc.exit_code)
    except click.Abort as exc:  # Ctrl-C or Ctrl-D in one of click's own prompts
        click.echo(err=True)
        sys.exit(EXIT_INTERRUPTED if isinstance(exc.__context__, KeyboardInterrupt) else 1)
    except Exception as exc:  # a fault no command caught: one line, never a traceback
        _crashed(exc)
    sys.exit(code if isinstance(code, int) else 0)


def _wants_json() -> bool:
    """Whether the command line asks for JSON (``--json`` before any ``--``)."""
    words = sys.argv[1:]
    return "--json" in (words[: words.index("--")] if "--" in words else words)


def _crashed(error: Exception) -> None:
    """A fault of raw's own or of a plug-in that no command turned into a
    :class:`~raw_core.errors.RawError`: ``internal_error``, exit 1, as one line (or
    ``{"error": ...}`` with ``--json``); ``RAW_DEBUG=1`` prints the traceback first."""
    import os
    import traceback

    from raw_core.cli._output import fail
    from raw_core.errors import InternalError

    if os.environ.get("RAW_DEBUG", "") not in ("", "0"):
        traceback.print_exception(error)
    report = InternalError(f"raw failed: {type(error).__name__}: {error} (RAW_DEBUG=1 shows where)")
    try:
        fail(report, as_json=_wants_json(), exit_code=1)
    except BrokenPipeError:
        from raw_core.cli._output import EXIT_PIPE, stdout_gone

        stdout_gone()
        sys.exit(EXIT_PIPE)


def _usage_failed(error: click.ClickException, *, exit_code: int = 2) -> None:
    """Report a usage error as every other error is reported: ``raw: usage_invalid: ...``
    and what to do, exit 2 (or the exception's own code); in the JSON form when the command
    line asks for JSON (``--json`` before any ``--``)."""
    from raw_core.cli._output import fail
    from raw_core.errors import UsageInvalid

    context = getattr(error, "ctx", None)
    command = context.command_path if context is not None else "raw"
    try:
        fail(
            UsageInvalid(error.format_message()),
            as_json=_wants_json(),
            exit_code=exit_code,
            command=command,
        )
    except BrokenPipeError:  # the reader of stdout went away: quietly, as SIGPIPE would
        from raw_core.cli._output import EXIT_PIPE, stdout_gone

        stdout_gone()
        sys.exit(EXIT_PIPE)
