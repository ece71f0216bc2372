"""``raw tools call``: run one call through the whole dispatch pipeline."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import click

from raw_core.cli._config import config_option, load_cli_agent
from raw_core.cli._output import EXIT_ERROR, EXIT_OK, emit_json
from raw_core.cli._render import terminal_approval
from raw_core.cli._terminal import LineReader

__all__ = ["call"]


@click.command("call")
@click.argument("identity")
@click.argument("args_json")
@config_option
@click.option(
    "--agent",
    "agent_name",
    default=None,
    help="The agent (default: the only one, or default_agent).",
)
@click.option(
    "--cwd",
    type=click.Path(file_okay=False, path_type=Path),
    default=None,
    help="The session's working directory (default: the current directory).",
)
@click.option(
    "--approve/--deny",
    "answer",
    default=None,
    help="Answer an approval request for this one call without asking.",
)
@click.option(
    "--max-output-bytes",
    type=click.IntRange(min=1),
    default=None,
    help="The result cap on what the model would receive (default: the agent's max_output_bytes).",
)
@click.option("--json", "as_json", is_flag=True, help="Print {status, code, content, effects}.")
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
    neither and no terminal it ends as approval_unavailable. Exits 0 for a successful
    result, 1 for an error result, 2 for a config or usage error.
    """
    import anyio

    from raw_core.calls import ApprovalRequest, ToolCall
    from raw_core.dispatch import Dispatcher
    from raw_core.errors import ToolUnknown
    from raw_core.results import ToolResult

    _, host, agent = load_cli_agent(config_path, agent_name, as_json=as_json)

    interactive = sys.stdin.isatty() and sys.stderr.isatty()

    async def ask(request: ApprovalRequest) -> bool:
        if answer is not None:
            return answer
        approved: bool = await terminal_approval(LineReader())(request)
        return approved

    dispatcher = Dispatcher(
        agent.registry,
        agent.policy,
        host=host,
        approval=ask if answer is not None or interactive else None,
        cwd=cwd,
        max_output_bytes=max_output_bytes or agent.config.max_output_bytes,
    )
    tool_name = next((t.name for t in agent.registry if t.identity == identity), None)
    if tool_name is None:
        result = ToolResult.from_error(
            ToolUnknown(f"{identity} is not selected by agent {agent.name!r}", tool=identity)
        )
    else:
        result = anyio.run(
            dispatcher.dispatch, ToolCall(id="cli-call", name=tool_name, arguments=args_json)
        )
    if as_json:
        emit_json(result.to_dict())
    else:
        if result.effects is not None:
            click.echo("effects: " + json.dumps(result.effects, ensure_ascii=False), err=True)
        for block in result.full_content:
            if block["type"] == "text":
                click.echo(block["text"])
            elif block["type"] == "json":
                click.echo(json.dumps(block["json"], indent=2, ensure_ascii=False))
            else:
                click.echo(f"[{block['media_type']} image, {len(block['data'])} base64 bytes]")
    sys.exit(EXIT_ERROR if result.is_error else EXIT_OK)
