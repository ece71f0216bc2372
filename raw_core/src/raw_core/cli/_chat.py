"""``raw chat`` (and ``raw sessions resume`` without a prompt): prompt, turn, repeat.

A new chat's session is made when the first prompt is sent, so a chat left without a
prompt keeps nothing; the session is titled by its first prompt the hooks let through. A
resumed one first shows its last few exchanges. A line starting with ``/`` is a command of
the chat (:data:`HELP`). Ctrl-C cancels a running turn; at an idle prompt the first Ctrl-C
says a second one quits (exit 130); Ctrl-D on an empty line quits (exit 0).
"""

from __future__ import annotations

import os
import sys
from contextlib import AsyncExitStack
from pathlib import Path
from typing import Any

import click

from raw_core.cli._output import EXIT_INTERRUPTED, EXIT_OK

__all__ = ["HELP", "conversation"]

HELP = """\
/help      this list
/sessions  the most recent sessions (raw sessions resume ID picks one up)
/tools     the tools the agent sees
/compact   summarize the oldest part of this conversation now
/quit      end the chat (so does Ctrl-D)
Enter sends the prompt; Esc then Enter starts a new line; Up recalls earlier prompts.
Ctrl-C cancels a running turn; at the prompt, press it twice to quit."""

RECENT_EXCHANGES = 3


def _interactive() -> bool:
    return sys.stdin.isatty() and sys.stderr.isatty()


def conversation(
    *,
    config_path: Path | None,
    agent_name: str | None,
    cwd: Path | None,
    as_json: bool,
    max_output_bytes: int | None = None,
    session_id: str | None = None,
    provider: Any = None,
    store_dir: Path | None = None,
) -> int:
    """Run the chat; its exit code (0, or 130 when Ctrl-C ended it)."""
    from raw_core.cli._app import with_app
    from raw_core.cli._chat_input import ChatInput
    from raw_core.cli._interrupt import CtrlC
    from raw_core.cli._render import JsonRenderer, TerminalFrontEnd, TerminalRenderer
    from raw_core.cli._terminal import LineReader
    from raw_core.errors import RawError

    reader = LineReader()
    interactive = _interactive()
    renderer = JsonRenderer() if as_json else TerminalRenderer()
    front_end = TerminalFrontEnd(renderer, reader if interactive else None)
    # A dumb terminal cannot edit a line: it gets the plain prompt, as a pipe does.
    editing = interactive and sys.stdout.isatty() and os.environ.get("TERM") != "dumb"
    prompts = ChatInput(reader, terminal=editing)
    ctrl_c = CtrlC()
    renderer.on_closed = ctrl_c.output_closed

    async def work(app: Any) -> int:
        async with AsyncExitStack() as stack:
            session: Any = None

            async def open_session() -> Any:
                opened = await stack.enter_async_context(
                    app.open_session(
                        session_id,
                        agent=agent_name,
                        front_end=front_end,
                        cwd=cwd,
                        max_output_bytes=max_output_bytes,
                    )
                )
                ctrl_c.session_id = opened.id
                return opened

            if session_id is not None:
                session = await open_session()
                await _show_recent(app, session.id)
                for update in session.panels:
                    if not update.closed:
                        await front_end.show_panel(update)
            if not as_json:
                folder = (
                    (await app.session_info(session.id)).cwd
                    if session is not None
                    else str((cwd or Path(".")).resolve())
                )
                _banner(app, agent_name, folder)
            armed = False  # a first Ctrl-C at the prompt was pressed
            while True:
                try:
                    line = (
                        await ctrl_c.at_prompt(prompts.read)
                        if interactive
                        else await prompts.read()
                    )
                except KeyboardInterrupt:
                    if armed:
                        return EXIT_INTERRUPTED
                    armed = True
                    click.echo("(press Ctrl-C again to quit, or Ctrl-D)", err=True)
                    continue
                armed = False
                if line is None:
                    break
                text = line.strip()
                if not text:
                    continue
                if text.startswith("/"):
                    try:
                        if not await _command(text, app, agent_name, session):
                            break
                    except RawError as exc:
                        click.echo(f"raw: {exc}", err=True)
                    continue
                if session is None:  # titled by the first prompt the hooks let through
                    session = await open_session()
                with ctrl_c.turn() as signal:
                    await session.run_turn(line, signal=signal)
                if ctrl_c.ending:  # SIGTERM, or the reader of stdout went away
                    break
            if session is not None and not as_json and not renderer.closed:
                click.echo(f"session {session.id}", err=True)
        return EXIT_OK

    return with_app(
        work,
        config_path=config_path,
        as_json=as_json,
        ctrl_c=ctrl_c,
        provider=provider,
        store_dir=store_dir,
    )


def _banner(app: Any, agent_name: str | None, folder: str | None) -> None:
    from raw_core.cli._banner import banner
    from raw_core.errors import RawError

    config = app.config
    try:
        agent, agent_config = config.resolve_agent(agent_name)
    except RawError:
        agent, agent_config = agent_name or "?", None
    model = agent_config.model if agent_config is not None else None
    files = [f"{layer.path} ({layer.kind})" for layer in app.files]
    from raw_core.cli._style import Painter

    Painter(sys.stderr).line(banner(files, agent=agent, model=model, cwd=folder), "banner")


async def _show_recent(app: Any, session_id: str) -> None:
    """The session's last few exchanges (the user's prompts and the assistant's text)."""
    from raw_core.app import AssistantMessage, UserMessage

    page = await app.page(session_id, limit=200, newest_first=True)
    shown: list[str] = []
    prompts = 0
    for item in page.items:
        message = getattr(item, "message", None)
        if isinstance(message, AssistantMessage) and message.text:
            shown.append(f"assistant: {_clip(message.text)}")
        elif isinstance(message, UserMessage):
            text = " ".join(getattr(b, "text", "") for b in message.content)
            shown.append(f"you: {_clip(text)}")
            prompts += 1
            if prompts == RECENT_EXCHANGES:
                break
    if shown:
        click.echo("(the last exchanges of this session)", err=True)
        for line in reversed(shown):
            click.echo(line, err=True)


def _clip(text: str, lines: int = 6) -> str:
    parts = text.rstrip("\n").split("\n")
    if len(parts) <= lines:
        return "\n".join(parts)
    return "\n".join(parts[:lines]) + f"\n… ({len(parts) - lines} more lines)"


async def _command(text: str, app: Any, agent_name: str | None, session: Any) -> bool:
    """Run a chat command; False when it ends the chat."""
    name = text.split()[0]
    if name in ("/quit", "/exit"):
        return False
    if name == "/help":
        click.echo(HELP, err=True)
    elif name == "/sessions":
        for info in await app.list_sessions(limit=10):
            when = info.last_activity.astimezone().strftime("%Y-%m-%d %H:%M")
            click.echo(f"{info.id}  {when}  {info.cwd}  {info.title or '(untitled)'}", err=True)
    elif name == "/tools":
        listing = await app.list_tools(agent_name)
        for tool in listing.definitions:
            summary = (tool.description or "").strip().split("\n")[0]
            click.echo(f"{tool.name}  {summary[:100]}", err=True)
    elif name == "/compact":
        if session is None:
            click.echo("(nothing to compact yet)", err=True)
        else:  # its events are rendered as a turn's compaction is: nothing to add here
            await app.compact_session(session.id)
    else:
        from raw_core.errors import UsageInvalid

        raise UsageInvalid(f"unknown command {name}; /help lists the commands")
    return True
