"""``raw run`` (one turn) and ``raw chat`` (a conversation), rendering the loop's events.

Approval: on a terminal an ask shows the intended effects apart from the arguments and
asks yes/no; with no terminal an ask ends as ``approval_unavailable``. ``-y`` answers the
confirmations raw itself asks (none in a turn) and never an ask rule. Ctrl-C cancels the
running turn cleanly (finished results are kept); a second Ctrl-C, or one while no turn
runs, quits (:mod:`raw_core.cli._interrupt`). A command that Ctrl-C ended exits 130.
"""

from __future__ import annotations

import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import click

from raw_core.cli._app import agent_option, config_option, max_output_bytes_option, with_app
from raw_core.cli._chat import conversation
from raw_core.cli._output import EXIT_ERROR, EXIT_INTERRUPTED, EXIT_OK, usage_failed

__all__ = ["chat", "conversation", "run", "run_options"]


def _interactive() -> bool:
    return sys.stdin.isatty() and sys.stderr.isatty()


def run_options(function: Callable[..., Any]) -> Callable[..., Any]:
    """The options ``run``, ``chat`` and ``sessions resume`` share."""
    for option in reversed(
        [
            config_option,
            agent_option,
            click.option(
                "--cwd",
                type=click.Path(exists=True, file_okay=False, path_type=Path),
                default=None,
                help="The working directory tools see (default: the session's own, else"
                " the current one).",
            ),
            click.option(
                "-y",
                "--yes",
                "yes",
                is_flag=True,
                help="Answer yes to raw's own confirmations; never to an ask rule.",
            ),
            max_output_bytes_option,
            click.option(
                "--json", "as_json", is_flag=True, help="Print every event as a JSON line."
            ),
        ]
    ):
        function = option(function)
    return function


def _renderer(as_json: bool) -> Any:
    from raw_core.cli._render import JsonRenderer, TerminalRenderer

    return JsonRenderer() if as_json else TerminalRenderer()


async def _show_panels(session: Any, front_end: Any) -> None:
    """A resumed session's open panels, each at its last revision, before its turn."""
    for update in session.panels:
        if not update.closed:
            await front_end.show_panel(update)


def one_turn(
    prompt: str | None,
    *,
    config_path: Path | None,
    agent_name: str | None,
    cwd: Path | None,
    as_json: bool,
    max_output_bytes: int | None = None,
    session_id: str | None = None,
    provider: Any = None,
    store_dir: Path | None = None,
    opened: list[str] | None = None,
) -> int:
    """Run one turn and render it; the exit code (0 completed, 130 ended by Ctrl-C, 1
    otherwise). The session id is printed (on stderr) however the turn ended, and
    appended to ``opened`` when given."""
    from raw_core.cli._interrupt import CtrlC
    from raw_core.cli._render import TerminalFrontEnd
    from raw_core.cli._terminal import LineReader

    if prompt is None:
        if sys.stdin.isatty():
            usage_failed("give a PROMPT, or pipe one on standard input", as_json=as_json)
        prompt = sys.stdin.read()
    # Arguments and stdin bytes that are not UTF-8 arrive as lone surrogates: read them as
    # U+FFFD, since a prompt is stored and sent as UTF-8.
    prompt = prompt.encode("utf-8", "surrogateescape").decode("utf-8", "replace")
    if not prompt.strip():
        usage_failed("the prompt is empty", as_json=as_json)
    text = prompt
    renderer = _renderer(as_json)
    front_end = TerminalFrontEnd(renderer, LineReader() if _interactive() else None)
    ctrl_c = CtrlC()
    renderer.on_closed = ctrl_c.output_closed

    async def work(app: Any) -> int:
        async with app.open_session(
            session_id,
            agent=agent_name,
            front_end=front_end,
            cwd=cwd,
            max_output_bytes=max_output_bytes,
        ) as session:
            ctrl_c.session_id = session.id
            if opened is not None:
                opened.append(session.id)
            await _show_panels(session, front_end)
            try:
                with ctrl_c.turn() as signal:
                    ended = await session.run_turn(text, signal=signal)
            finally:  # also when a second Ctrl-C stopped the turn
                if not as_json and not renderer.closed:
                    click.echo(f"session {session.id}", err=True)
        if ctrl_c.exit_code is not None:  # SIGTERM, or the reader of stdout went away
            return ctrl_c.exit_code
        if ended.reason == "completed":
            return EXIT_OK
        return EXIT_INTERRUPTED if ctrl_c.pressed else EXIT_ERROR

    return with_app(
        work,
        config_path=config_path,
        as_json=as_json,
        ctrl_c=ctrl_c,
        provider=provider,
        store_dir=store_dir,
    )


@click.command("run")
@click.argument("prompt", required=False)
@run_options
def run(
    prompt: str | None,
    config_path: Path | None,
    agent_name: str | None,
    cwd: Path | None,
    yes: bool,
    max_output_bytes: int | None,
    as_json: bool,
) -> None:
    """Run one turn of the agent with PROMPT (read from standard input when absent).

    Streams the answer to stdout and each tool call, with its intended effects and result,
    to stderr. Ctrl-C cancels the turn. Exits 0 when the turn completed, 130 when Ctrl-C
    ended it, 1 when it ended otherwise (an error, max_steps, cancelled), 2 for a usage or
    config error.
    """
    sys.exit(
        one_turn(
            prompt,
            config_path=config_path,
            agent_name=agent_name,
            cwd=cwd,
            as_json=as_json,
            max_output_bytes=max_output_bytes,
        )
    )


@click.command("chat")
@run_options
def chat(
    config_path: Path | None,
    agent_name: str | None,
    cwd: Path | None,
    yes: bool,
    max_output_bytes: int | None,
    as_json: bool,
) -> None:
    """Talk with the agent: one turn per prompt you send (/help lists the chat's commands).

    On a terminal the prompt has line editing and a history kept across chats; Esc then
    Enter starts a new line. The session is made when the first prompt is sent and is
    titled by the first prompt the hooks let through. Ctrl-C cancels the running turn (the
    session stays valid and can be resumed); at the prompt, a second Ctrl-C quits (exit
    130); Ctrl-D at the prompt quits (exit 0).
    """
    sys.exit(
        conversation(
            config_path=config_path,
            agent_name=agent_name,
            cwd=cwd,
            as_json=as_json,
            max_output_bytes=max_output_bytes,
        )
    )
