"""``raw tools call``: run one call through the whole dispatch pipeline."""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

import click

from raw_core.cli._app import agent_option, config_option, max_output_bytes_option, with_app
from raw_core.cli._blocks import block_display
from raw_core.cli._output import EXIT_ERROR, EXIT_OK, emit_json
from raw_core.cli._panels import panel_full

__all__ = ["call"]


@click.command("call")
@click.argument("identity")
@click.argument("args_json")
@config_option
@agent_option
@click.option(
    "--cwd",
    type=click.Path(exists=True, file_okay=False, path_type=Path),
    default=None,
    help="The session's working directory (default: the current directory).",
)
@click.option(
    "--approve/--deny",
    "answer",
    default=None,
    help="Answer an approval request for this one call without asking.",
)
@max_output_bytes_option
@click.option(
    "--json", "as_json", is_flag=True, help="Print {status, code, content, effects, panels}."
)
def call(
    identity: str,
    args_json: str,
    config_path: Path | None,
    agent_name: str | None,
    cwd: Path | None,
    answer: bool | None,
    max_output_bytes: int | None,
    as_json: bool,
) -> None:
    """Run IDENTITY with ARGS_JSON through the seven dispatch steps, once.

    An ask rule asks on the terminal; with --approve or --deny it takes that answer; with
    neither and no terminal it ends as approval_unavailable. The panels the call updated
    are drawn on stderr (--json: a "panels" list of every update). Exits 0 for a
    successful result, 1 for an error result, 2 for a config or usage error.
    """
    from raw_core.cli._render import TerminalFrontEnd
    from raw_core.cli._terminal import LineReader

    interactive = sys.stdin.isatty() and sys.stderr.isatty()
    # One call, no turn: there are no events to render, only the result below.
    front_end = TerminalFrontEnd(
        lambda event: None, LineReader() if interactive else None, answer=answer
    )
    found: list[Any] = []

    async def work(app: Any) -> int:
        found.append(
            await app.call_tool(
                identity,
                args_json,
                agent=agent_name,
                front_end=front_end,
                cwd=cwd,
                max_output_bytes=max_output_bytes,
            )
        )
        return EXIT_OK

    with_app(work, config_path=config_path, as_json=as_json)
    result = found[0]
    if as_json:
        emit_json(result.to_dict())
    else:
        if result.effects is not None:
            click.echo("effects: " + json.dumps(result.effects, ensure_ascii=False), err=True)
        from raw_core.app import block_to_dict

        for block in result.full_content:
            click.echo(block_display(block_to_dict(block)))
        last = {(u.identity, u.panel): u for u in result.panels if u.accepted}
        for update in last.values():
            for line in panel_full(update.to_dict()):
                click.echo(line, err=True)
    sys.exit(EXIT_ERROR if result.is_error else EXIT_OK)
