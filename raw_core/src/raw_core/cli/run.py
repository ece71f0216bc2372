"""``raw run`` (one turn) and ``raw chat`` (a conversation), rendering the loop's events.

Approval: on a terminal an ask shows the intended effects apart from the arguments and
asks yes/no; with no terminal an ask ends as ``approval_unavailable``. ``-y`` answers the
confirmations raw itself asks (none in a turn) and never an ask rule. Ctrl-C in ``chat``
cancels the running turn cleanly (finished results are kept); a second Ctrl-C, or one at
the prompt, quits.
"""

from __future__ import annotations

import signal
import sys
from collections.abc import AsyncIterator, Awaitable, Callable
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import click

from raw_core.cli._config import config_option, load_cli_agent
from raw_core.cli._output import EXIT_ERROR, EXIT_OK, fail
from raw_core.errors import ConfigInvalid, RawError

__all__ = ["chat", "open_cli_session", "run", "run_options"]


def _interactive() -> bool:
    return sys.stdin.isatty() and sys.stderr.isatty()


@asynccontextmanager
async def open_cli_session(
    config: Any,
    host: Any,
    agent: Any,
    *,
    session_id: str | None,
    cwd: Path | None,
    title: str,
    reader: Any,
    provider: Any = None,
    store_dir: Path | None = None,
) -> AsyncIterator[Any]:
    """Open (or resume) a session of ``agent`` with its configured model."""
    from raw_core.cli._render import terminal_approval
    from raw_core.loop import Runtime
    from raw_core.models import make_provider
    from raw_core.store import SessionStore

    if provider is None:
        model_name = agent.config.model
        if model_name is None:
            raise ConfigInvalid(
                f"agent {agent.name!r} has no model: set agents.{agent.name}.model to one of"
                " models",
                field=f"$.agents.{agent.name}.model",
            )
        provider = make_provider(
            host, config.models[model_name], name=model_name, resolve_var=agent.vars.read_defined
        )
    approval = terminal_approval(reader) if reader is not None else None
    try:
        with SessionStore.open(
            store_dir, expire_after_days=config.sessions.expire_after_days
        ) as store:
            runtime = Runtime(store, host=host)
            async with runtime.open_session(
                agent, provider, session_id=session_id, title=title, cwd=cwd, approval=approval
            ) as session:
                yield session
    finally:
        close = getattr(provider, "aclose", None)  # providers holding HTTP clients
        if close is not None:
            await close()


def run_options(function: Callable[..., Any]) -> Callable[..., Any]:
    """The options ``run``, ``chat`` and ``sessions resume`` share."""
    for option in reversed(
        [
            config_option,
            click.option(
                "--agent",
                "agent_name",
                default=None,
                help="The agent (default: the only one, or default_agent).",
            ),
            click.option(
                "--cwd",
                type=click.Path(file_okay=False, path_type=Path),
                default=None,
                help="The working directory tools see (default: the current one).",
            ),
            click.option(
                "-y",
                "--yes",
                "yes",
                is_flag=True,
                help="Answer yes to raw's own confirmations; never to an ask rule.",
            ),
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


def _run_sync(main: Callable[[], Awaitable[int]], as_json: bool) -> int:
    import anyio

    try:
        return anyio.run(main)
    except RawError as exc:
        fail(exc, as_json=as_json)


def one_turn(
    prompt: str | None,
    *,
    config_path: Path | None,
    agent_name: str | None,
    cwd: Path | None,
    as_json: bool,
    session_id: str | None = None,
    provider: Any = None,
    store_dir: Path | None = None,
) -> int:
    """Run one turn and render it; the exit code (0 completed, 1 otherwise)."""
    from raw_core.cli._terminal import LineReader

    if prompt is None:
        if sys.stdin.isatty():
            raise click.UsageError("give a PROMPT, or pipe one on standard input")
        prompt = sys.stdin.read()
    # Arguments and stdin bytes that are not UTF-8 arrive as lone surrogates: read them as
    # U+FFFD, since a prompt is stored and sent as UTF-8.
    prompt = prompt.encode("utf-8", "surrogateescape").decode("utf-8", "replace")
    if not prompt.strip():
        raise click.UsageError("the prompt is empty")
    config, host, agent = load_cli_agent(config_path, agent_name, as_json=as_json)
    reader = LineReader() if _interactive() else None
    renderer = _renderer(as_json)

    async def main() -> int:
        async with open_cli_session(
            config,
            host,
            agent,
            session_id=session_id,
            cwd=cwd,
            title=prompt.strip()[:80],
            reader=reader,
            provider=provider,
            store_dir=store_dir,
        ) as session:
            ended = await session.run_turn(prompt, on_event=renderer)
            if not as_json:
                click.echo(f"session {session.id}", err=True)
        return EXIT_OK if ended.reason == "completed" else EXIT_ERROR

    return _run_sync(main, as_json)


@click.command("run")
@click.argument("prompt", required=False)
@run_options
def run(
    prompt: str | None,
    config_path: Path | None,
    agent_name: str | None,
    cwd: Path | None,
    yes: bool,
    as_json: bool,
) -> None:
    """Run one turn of the agent with PROMPT (read from standard input when absent).

    Streams the answer to stdout and each tool call, with its intended effects and result,
    to stderr. Exits 0 when the turn completed, 1 when it ended otherwise (an error,
    max_steps, cancelled), 2 for a usage or config error.
    """
    sys.exit(
        one_turn(prompt, config_path=config_path, agent_name=agent_name, cwd=cwd, as_json=as_json)
    )


def conversation(
    *,
    config_path: Path | None,
    agent_name: str | None,
    cwd: Path | None,
    as_json: bool,
    session_id: str | None = None,
    provider: Any = None,
    store_dir: Path | None = None,
) -> int:
    """The chat loop: prompt, turn, repeat; Ctrl-C cancels a turn, a second one quits."""
    import anyio

    from raw_core.cli._terminal import LineReader

    config, host, agent = load_cli_agent(config_path, agent_name, as_json=as_json)
    reader = LineReader()
    renderer = _renderer(as_json)

    async def main() -> int:
        async with open_cli_session(
            config,
            host,
            agent,
            session_id=session_id,
            cwd=cwd,
            title="chat",
            reader=reader if _interactive() else None,
            provider=provider,
            store_dir=store_dir,
        ) as session:
            click.echo(
                f"session {session.id} — Ctrl-C cancels a turn, Ctrl-D or a second Ctrl-C quits",
                err=True,
            )
            state = {"turn": False, "cancelled": False}
            async with anyio.create_task_group() as group:

                async def interrupts() -> None:
                    with anyio.open_signal_receiver(signal.SIGINT) as signals:
                        async for _ in signals:
                            if state["turn"] and not state["cancelled"]:
                                state["cancelled"] = True
                                session.cancel("cancelled with Ctrl-C")
                                click.echo("\n(cancelling the turn; Ctrl-C again quits)", err=True)
                            else:
                                group.cancel_scope.cancel()
                                return

                group.start_soon(interrupts)
                while True:
                    line = await reader.readline("\nyou> ")
                    if line is None:
                        break
                    if not line.strip():
                        continue
                    state.update(turn=True, cancelled=False)
                    await session.run_turn(line, on_event=renderer)
                    state["turn"] = False
                group.cancel_scope.cancel()
        return EXIT_OK

    return _run_sync(main, as_json)


@click.command("chat")
@run_options
def chat(
    config_path: Path | None, agent_name: str | None, cwd: Path | None, yes: bool, as_json: bool
) -> None:
    """Talk with the agent: one turn per line you type.

    Ctrl-C cancels the running turn (the session stays valid and can be resumed);
    a second Ctrl-C, or Ctrl-D at the prompt, quits.
    """
    sys.exit(conversation(config_path=config_path, agent_name=agent_name, cwd=cwd, as_json=as_json))
