"""``raw sessions``: list, show, resume and delete the sessions in the store; show their
panels and run a panel's action."""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

import click

from raw_core.cli._app import FiniteRange, agent_option, config_option, with_app
from raw_core.cli._blocks import block_display
from raw_core.cli._output import (
    EXIT_ERROR,
    EXIT_INTERRUPTED,
    EXIT_OK,
    emit_json,
    fail,
    usage_failed,
)
from raw_core.cli._panels import panel_full, panel_name
from raw_core.cli.run import conversation, one_turn, run_options

__all__ = ["sessions"]


def _sessions(work: Any, *, as_json: bool, config_path: Path | None = None, **options: Any) -> Any:
    """Run ``work(app)`` with the sessions the config names (none needed) and return what
    it returned."""
    found: list[Any] = []

    async def run(app: Any) -> int:
        found.append(await work(app))
        return EXIT_OK

    optional = config_path is None
    with_app(run, config_path=config_path, as_json=as_json, config_optional=optional, **options)
    return found[0]


def _full_id(
    session_id: str | None,
    *,
    as_json: bool,
    last: bool = False,
    config_path: Path | None = None,
) -> str:
    """The full id of the session ``session_id`` names (a unique prefix will do), or of
    the most recent one with ``last``, in the store of ``config_path`` (given: the
    command's ``--config``) or of the config found."""
    from raw_core.cli._session_ids import resolve_session_id

    found: str = _sessions(
        lambda app: resolve_session_id(app, session_id, last=last),
        as_json=as_json,
        config_path=config_path,
    )
    return found


@click.group()
def sessions() -> None:
    """List, show, resume and delete sessions."""


@sessions.command("list")
@click.option("--limit", type=click.IntRange(min=1), default=50, show_default=True)
@config_option
@click.option("--json", "as_json", is_flag=True, help="Print a JSON list.")
def list_sessions(limit: int, config_path: Path | None, as_json: bool) -> None:
    """The sessions, newest activity first, with their working folders and titles (a
    chat is titled by its first prompt)."""
    found = _sessions(
        lambda app: app.list_sessions(limit=limit), as_json=as_json, config_path=config_path
    )
    if as_json:
        emit_json(
            [
                {
                    "id": s.id,
                    "title": s.title,
                    "created_at": s.created_at.isoformat(),
                    "last_activity": s.last_activity.isoformat(),
                    "cwd": s.cwd,
                }
                for s in found
            ]
        )
        return
    if not found:
        click.echo("no sessions yet")
    for info in found:
        when = info.last_activity.astimezone().strftime("%Y-%m-%d %H:%M")
        click.echo(f"{info.id}  {when}  {info.cwd or '-'}  {info.title or '(untitled)'}")


def _block_text(block: Any) -> str:
    from raw_core.app import block_to_dict

    return block_display(block_to_dict(block))


def _message_lines(message: Any) -> list[str]:
    from raw_core.app import AssistantMessage, UserMessage

    if isinstance(message, UserMessage):
        return [f"you: {' '.join(_block_text(b) for b in message.content)}"]
    if isinstance(message, AssistantMessage):
        lines = [f"assistant: {message.text}"] if message.text else []
        return lines + [f"  → {call.name} {call.arguments}" for call in message.tool_calls]
    status = "ok" if message.status == "ok" else f"error [{message.error_code}]"
    lines = [f"  ← {status}"]
    for block in message.content:
        lines += [f"    {line}" for line in _block_text(block).split("\n")[:20]]
    return lines


def _request_lines(entry: dict[str, Any]) -> list[str]:
    """A request as it opened (what was asked) or ended (how, and who answered)."""
    show, answer, state = entry["show"], entry["answer"], entry["state"]
    identity = show.get("identity", "?")
    if entry["request_kind"] == "approval":
        what = f"approval of {identity}"
        if state == "pending":
            lines = [f"  ? {what} asked ({entry['request_id']})"]
            if show.get("effects") is not None:
                lines.append(f"    effects: {json.dumps(show['effects'], ensure_ascii=False)}")
            lines.append(f"    arguments: {json.dumps(show.get('arguments'), ensure_ascii=False)}")
            return lines
        said = f": {answer['message']}" if answer and answer.get("message") else ""
        who = f" by {answer['by']}" if answer else ""
        return [f"  ? {what}: {state}{who}{said}"]
    what = f"question from {identity} ({show.get('title') or show.get('panel')})"
    if state == "pending":
        return [f"  ? {what} asked ({entry['request_id']})"]
    if answer is None:
        return [f"  ? {what}: {state}"]
    values = json.dumps(answer["values"], ensure_ascii=False)
    return [f"  ? {what}: {state} by {answer['by']}", f"    {values}"]


def _item_lines(item: Any) -> list[str]:
    if item.kind == "tool_output":
        lines = ["  (as shown: the whole output)"]
        for block in item.entry.content:
            lines += [f"    {line}" for line in _block_text(block).split("\n")]
        return lines
    if item.kind == "request":
        return _request_lines(item.entry.to_dict())
    if item.kind == "panel":
        update = item.entry.to_dict()
        error = update["error"]
        if error is not None:
            return [
                f"  ▣ panel {update['panel']} update rejected: {error['code']} {error['message']}"
            ]
        return [f"  ▣ panel {panel_name(update)} {update['op']}: revision {update['revision']}"]
    return _message_lines(item.message)


@sessions.command("show")
@click.argument("session_id")
@click.option(
    "--cursor", default=None, help="Continue after this cursor (printed by the previous page)."
)
@click.option("--limit", type=click.IntRange(min=1, max=10_000), default=100, show_default=True)
@config_option
@click.option("--json", "as_json", is_flag=True, help="Print {items, next_cursor, has_more}.")
def show(
    session_id: str, cursor: str | None, limit: int, config_path: Path | None, as_json: bool
) -> None:
    """Page through a session's display history (what the user saw), oldest first.
    SESSION_ID may be a unique prefix of the id."""
    session_id = _full_id(session_id, as_json=as_json, config_path=config_path)
    page = _sessions(
        lambda app: app.page(session_id, cursor, limit=limit),
        as_json=as_json,
        config_path=config_path,
    )
    if as_json:
        emit_json(
            {
                "items": [item.to_dict() for item in page.items],
                "next_cursor": page.next_cursor,
                "has_more": page.has_more,
            }
        )
        return
    for item in page.items:
        for line in _item_lines(item):
            click.echo(line)
    if page.has_more:
        click.echo(f"(more: raw sessions show {session_id} --cursor {page.next_cursor})", err=True)


@sessions.command("panels")
@click.argument("session_id")
@config_option
@click.option("--json", "as_json", is_flag=True, help="Print a JSON list of the panels.")
def panels(session_id: str, config_path: Path | None, as_json: bool) -> None:
    """Show every panel of a session at its last revision, in full."""
    session_id = _full_id(session_id, as_json=as_json, config_path=config_path)
    found = _sessions(lambda app: app.panels(session_id), as_json=as_json, config_path=config_path)
    if as_json:
        emit_json([update.to_dict() for update in found])
        return
    if not found:
        click.echo("this session has no panels")
    for update in found:
        for line in panel_full(update.to_dict()):
            click.echo(line)


@sessions.command("action")
@click.argument("session_id")
@click.argument("panel")
@click.argument("action")
@config_option
@agent_option
@click.option(
    "--approve/--deny",
    "answer",
    default=None,
    help="Answer an approval request of a tool action without asking.",
)
@click.option(
    "--json", "as_json", is_flag=True, help="Print {kind, panel, action, prompt, result}."
)
def action(
    session_id: str,
    panel: str,
    action: str,
    config_path: Path | None,
    agent_name: str | None,
    answer: bool | None,
    as_json: bool,
) -> None:
    """Run ACTION of PANEL (its full name, <identity>:<id>) in a session: a prompt action
    prints the message it drafts; a tool action runs the tool again through the whole
    pipeline, its rules, hooks and approval included. Exits 1 when the call ended in an
    error."""
    session_id = _full_id(session_id, as_json=as_json, config_path=config_path)
    from raw_core.cli._render import TerminalFrontEnd, TerminalRenderer
    from raw_core.cli._terminal import LineReader

    interactive = sys.stdin.isatty() and sys.stderr.isatty()
    renderer = TerminalRenderer(spinner=False)
    renderer.session_id = session_id
    front_end = TerminalFrontEnd(
        renderer if not as_json else (lambda event: None),
        LineReader() if interactive else None,
        answer=answer,
    )

    found: list[Any] = []

    async def work(app: Any) -> int:
        found.append(
            await app.panel_action(session_id, panel, action, agent=agent_name, front_end=front_end)
        )
        return EXIT_OK

    with_app(work, config_path=config_path, as_json=as_json)
    done = found[0]
    if as_json:
        emit_json(done.to_dict())
    elif done.kind == "prompt":
        click.echo(done.prompt)
    failed = done.result is not None and done.result.is_error
    sys.exit(EXIT_ERROR if failed else EXIT_OK)


@sessions.command("compact")
@click.argument("session_id")
@config_option
@agent_option
@click.option(
    "--json",
    "as_json",
    is_flag=True,
    help="Print the compaction_ended event: {outcome, replaced, kept, estimated_tokens, ...}.",
)
def compact(
    session_id: str, config_path: Path | None, agent_name: str | None, as_json: bool
) -> None:
    """Compact a session now: its model summarizes the oldest part of the model context,
    which the summary replaces; the most recent messages stay as they were, and the display
    history keeps everything. Exits 0 when it compacted (or there was nothing to compact),
    1 when the model's request failed (nothing changed), 130 when Ctrl-C stopped it,
    2 for a usage or config error."""
    session_id = _full_id(session_id, as_json=as_json, config_path=config_path)
    from raw_core.cli._interrupt import CtrlC
    from raw_core.cli._render import TerminalFrontEnd
    from raw_core.errors import ProviderError

    found: list[Any] = []
    failed: list[ProviderError] = []
    events: list[Any] = []  # the compaction's events: a failed one ends with its own
    ctrl_c = CtrlC()

    async def work(app: Any) -> int:
        ctrl_c.session_id = session_id
        with ctrl_c.turn() as signal:
            try:
                found.append(
                    await app.compact_session(
                        session_id,
                        agent=agent_name,
                        signal=signal,
                        front_end=TerminalFrontEnd(events.append, None),
                    )
                )
            except ProviderError as exc:  # the compaction itself failed: exit 1, not 2
                failed.append(exc)
        return EXIT_OK

    # Any other error (config, usage, an unknown agent) exits 2, as raw run does.
    code = with_app(work, config_path=config_path, as_json=as_json, ctrl_c=ctrl_c)
    if failed:
        ended_events = [e.to_dict() for e in events if e.to_dict()["type"] == "compaction_ended"]
        if as_json and ended_events:  # the compaction_ended event (outcome failed), exit 1
            emit_json(ended_events[-1])
            sys.exit(EXIT_ERROR)
        fail(failed[0], as_json=as_json, exit_code=EXIT_ERROR)
    if not found:
        sys.exit(code)
    ended = found[0].to_dict()
    if as_json:
        emit_json(ended)
    else:
        from raw_core.cli._render import compaction_line

        click.echo(compaction_line(ended))
    if ended["outcome"] == "cancelled":  # by Ctrl-C, or by SIGTERM (its own code)
        sys.exit(ctrl_c.exit_code if ctrl_c.exit_code is not None else EXIT_INTERRUPTED)
    sys.exit(EXIT_OK)


@sessions.command("resume")
@click.argument("session_id", required=False)
@click.argument("prompt", required=False)
@click.option("--last", is_flag=True, help="Resume the session with the most recent activity.")
@run_options
def resume(
    session_id: str | None,
    prompt: str | None,
    last: bool,
    config_path: Path | None,
    agent_name: str | None,
    cwd: Path | None,
    yes: bool,
    max_output_bytes: int | None,
    as_json: bool,
) -> None:
    """Continue a session: one turn with PROMPT, or a chat when no PROMPT is given.

    SESSION_ID may be a unique prefix of the id; --last takes the most recent session
    (then the first argument, if any, is the PROMPT). The turn runs in the session's
    working directory unless --cwd says otherwise.
    """
    if last and session_id is not None and prompt is None:
        session_id, prompt = None, session_id
    session_id = _full_id(session_id, as_json=as_json, last=last, config_path=config_path)
    if prompt is None and sys.stdin.isatty():
        sys.exit(
            conversation(
                config_path=config_path,
                agent_name=agent_name,
                cwd=cwd,
                as_json=as_json,
                max_output_bytes=max_output_bytes,
                session_id=session_id,
            )
        )
    sys.exit(
        one_turn(
            prompt,
            config_path=config_path,
            agent_name=agent_name,
            cwd=cwd,
            as_json=as_json,
            max_output_bytes=max_output_bytes,
            session_id=session_id,
        )
    )


@sessions.command("delete")
@click.argument("session_id")
@click.option("-y", "--yes", "yes", is_flag=True, help="Do not ask for confirmation.")
@config_option
@click.option("--json", "as_json", is_flag=True, help="Print {deleted: id}.")
def delete(session_id: str, yes: bool, config_path: Path | None, as_json: bool) -> None:
    """Delete a session and its history (asks first unless -y)."""
    from raw_core.errors import SessionExpired

    session_id = _full_id(session_id, as_json=as_json, config_path=config_path)

    async def info_of(app: Any) -> Any:
        try:
            return await app.session_info(session_id)
        except SessionExpired:  # it cannot be opened, but it can still be deleted
            return None

    info = _sessions(info_of, as_json=as_json, config_path=config_path)
    if not yes:
        if not sys.stdin.isatty():
            usage_failed("deleting needs a confirmation: pass -y", as_json=as_json)
        what = f"({info.title or 'untitled'})" if info is not None else "(expired)"
        click.confirm(f"delete session {session_id} {what}?", abort=True, err=True)
    _sessions(lambda app: app.delete_session(session_id), as_json=as_json, config_path=config_path)
    if as_json:
        click.echo(json.dumps({"deleted": session_id}))
    else:
        click.echo(f"deleted {session_id}")
    sys.exit(EXIT_OK)


@sessions.command("prune")
@click.option(
    "--days",
    type=FiniteRange(min=0, min_open=True, max=36_500),
    default=None,
    help="Expire after this many days without activity (default: the config's"
    " sessions.expire_after_days, else 30).",
)
@config_option
@click.option("--json", "as_json", is_flag=True, help="Print {deleted: [ids]}.")
def prune(days: float | None, config_path: Path | None, as_json: bool) -> None:
    """Delete the sessions that have expired. Safe while raw runs elsewhere: a session open
    for writing is skipped."""
    deleted = _sessions(
        lambda app: app.prune(), as_json=as_json, config_path=config_path, expire_after_days=days
    )
    if as_json:
        click.echo(json.dumps({"deleted": list(deleted)}))
    else:
        click.echo(f"deleted {len(deleted)} expired session{'s' if len(deleted) != 1 else ''}")
