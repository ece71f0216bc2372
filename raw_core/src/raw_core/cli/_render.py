"""Rendering a turn on a terminal (or as JSON lines), and asking for approval there.

The CLI renders events from the agent loop; it never runs the loop itself (spec 004,
"Terminal UI"). Assistant text goes to stdout as it streams; tool calls, their intended
effects and their results go to stderr, so ``raw run "..." > answer.txt`` keeps only the
answer. With ``--json`` every event is one JSON line on stdout, panel updates included
(``panel_updated``).

When the reader of stdout goes away (``raw run --json | head -1``), a renderer draws
nothing more and calls its ``on_closed`` (the command then ends the turn and exits 141).

Panels are drawn on stderr when a tool changes them: a ``chat`` panel inline in the
transcript, in full; a ``sidebar`` panel as a small titled box with its first lines
(``raw sessions panels ID`` shows it in full). A diagram shows its source.
"""

from __future__ import annotations

import json
import sys
from collections.abc import Callable
from typing import Any, TextIO

import click

from raw_core.cli._approval import show_request
from raw_core.cli._blocks import block_display
from raw_core.cli._output import stdout_gone
from raw_core.cli._panels import panel_box, panel_full
from raw_core.cli._style import Painter, colour_wanted

__all__ = [
    "JsonRenderer",
    "TerminalFrontEnd",
    "TerminalRenderer",
    "compaction_line",
    "context_line",
    "fold",
    "show_request",
]


def _short(value: Any, limit: int = 160) -> str:
    text = json.dumps(value, ensure_ascii=False)
    return text if len(text) <= limit else text[: limit - 3] + "..."


class _Output:
    """What the two renderers share: stdout, and what happens when its reader goes away."""

    out: TextIO

    def __init__(self) -> None:
        self.closed = False  # the reader of stdout went away: nothing more is drawn
        self.on_closed: Callable[[], None] | None = None

    def _write_out(self, text: str) -> None:
        try:
            self.out.write(text)
            self.out.flush()
        except BrokenPipeError:
            self._close()

    def _close(self) -> None:
        self.closed = True
        if self.out is sys.stdout:
            stdout_gone()
        if self.on_closed is not None:
            self.on_closed()


class TerminalRenderer(_Output):
    """Human output: streamed text on stdout; calls, effects and results on stderr."""

    def __init__(
        self, out: TextIO | None = None, err: TextIO | None = None, *, spinner: bool | None = None
    ) -> None:
        super().__init__()
        self.out = out or sys.stdout
        self.err = err or sys.stderr
        self._in_text = False
        self._in_turn = False  # between turn_started and turn_ended
        use_spinner = spinner if spinner is not None else self.err.isatty()
        self._status: Any = None
        if use_spinner:
            from rich.console import Console

            # No colour (raw --no-color, NO_COLOR, TERM=dumb): a spinner in plain text.
            plain = not colour_wanted(self.err)
            console = Console(file=self.err, color_system=None if plain else "auto")
            self._status = console.status("waiting for the model…")
        self._spinning = False
        self.session_id: str | None = None
        self._usage: dict[str, Any] | None = None  # the turn's last usage event
        self._spent = [0, 0]  # the turn's tokens in and out, over all its requests
        self._paint = Painter(self.err)

    def show_panel(self, update: Any) -> None:
        """Draw an accepted panel update: inline in full (``chat``) or as a box."""
        if self.closed:
            return
        data = update.to_dict()
        self._spin(False)
        self._end_text()
        placement = (data.get("declaration") or {}).get("placement")
        lines = (
            panel_full(data) if placement == "chat" else panel_box(data, session_id=self.session_id)
        )
        self.err.write("".join(f"{line}\n" for line in lines))
        self.err.flush()

    def _spin(self, on: bool) -> None:
        if self._status is None or on == self._spinning:
            return
        if on:
            self._status.start()
        else:
            self._status.stop()
        self._spinning = on

    def _end_text(self) -> None:
        if self._in_text:
            self._in_text = False
            self._write_out("\n")

    def _close(self) -> None:
        self._spin(False)
        super()._close()

    def __call__(self, event: Any) -> None:
        if self.closed:
            return
        data = event.to_dict()
        kind = data["type"]
        if kind in ("turn_started", "tool_call_finished"):
            if kind == "turn_started":
                self.session_id = data["session_id"]
                self._in_turn = True
            if kind == "tool_call_finished":
                self._result(data)
            self._spin(True)
        elif kind == "text_delta":
            self._spin(False)
            self._in_text = True
            self._write_out(data["text"])
        elif kind == "assistant_committed":
            self._spin(False)
            self._end_text()
        elif kind == "tool_call_started":
            self._spin(False)
            self._paint.line(f"→ {data['name']} {_arguments_line(data['arguments'])}", "call")
            self.err.flush()
        elif kind == "runtime_changed":
            who = data.get("identities") or {}

            def named(names: list[str]) -> str:
                return ", ".join(f"{n} ({who[n]})" if n in who else n for n in names) or "none"

            self._paint.line(
                f"(tools changed since this session last ran: added {named(data['added'])},"
                f" removed {named(data['removed'])}, changed {named(data['changed'])})",
                "note",
            )
        elif kind == "usage":
            self._usage = data
            self._spent[0] += data.get("input_tokens") or 0
            self._spent[1] += data.get("output_tokens") or 0
        elif kind in ("compaction_started", "compaction_ended"):
            self._spin(False)
            self._end_text()
            self._paint.line(f"({compaction_line(data)})", "note")
            self.err.flush()
            # In a turn, its request follows; a chat's /compact goes back to the prompt.
            self._spin(kind == "compaction_ended" and self._in_turn)
        elif kind == "turn_ended":
            self._in_turn = False
            self._spin(False)
            self._end_text()
            if self._usage is not None:
                spent = f"this turn: {self._spent[0]:,} tokens in, {self._spent[1]:,} out"
                self._paint.line(f"({spent}; {context_line(self._usage)})", "note")
                self._usage = None
            self._spent = [0, 0]
            if data["reason"] != "completed":
                error = data.get("error") or {}
                detail = f": {error.get('code')}: {error.get('message')}" if error else ""
                self._paint.line(
                    f"turn ended: {data['reason']} after {data['steps']} request(s){detail}",
                    "error",
                )
            self.err.flush()

    def _result(self, data: dict[str, Any]) -> None:
        self._spin(False)
        ok = data["status"] == "ok"
        code = f" [{data['code']}]" if data["code"] else ""
        self._paint.line(f"{'✓' if ok else '✗'} {data['name']}{code}", "ok" if ok else "error")
        if data["effects"] is not None:
            self._paint.line(f"  effects: {_short(data['effects'], 400)}", "effects")
        lines: list[str] = []
        for block in data["full_content"]:
            lines += block_display(block).rstrip("\n").split("\n")
        head, hidden, tail = fold(lines)
        for line in head:
            self._paint.line(f"  │ {line}", "output")
        if hidden:
            self._paint.line(
                f"  … {hidden:,} more lines (raw sessions show has them all) …", "fold"
            )
        for line in tail:
            self._paint.line(f"  │ {line}", "output")
        if data.get("truncated"):  # not a reworded error, nor a call the model never sees
            self._paint.line("  (the model was given a shortened result)", "note")
        self.err.flush()


FOLD_HEAD = 8
FOLD_TAIL = 4


def fold(lines: list[str]) -> tuple[list[str], int, list[str]]:
    """Long output as its first lines, how many were left out, and its last lines (the
    whole output stays in the session: ``raw sessions show``)."""
    if len(lines) <= FOLD_HEAD + FOLD_TAIL + 1:
        return lines, 0, []
    return lines[:FOLD_HEAD], len(lines) - FOLD_HEAD - FOLD_TAIL, lines[-FOLD_TAIL:]


def context_line(usage: dict[str, Any]) -> str:
    """The context's size after a turn: the provider's figure for the last request, raw's
    estimate of it, and the window when the model declares one."""
    line = (
        f"context: {usage['input_tokens']:,} tokens as the provider counted them,"
        f" {usage.get('estimated_input_tokens') or 0:,} as raw estimated"
    )
    window = usage.get("context_window")
    if window:
        line += f", of a {window:,}-token window ({100 * usage['input_tokens'] // window}%)"
    return line


def compaction_line(data: dict[str, Any]) -> str:
    """A compaction's start or end, in one line."""
    if data["type"] == "compaction_started":
        window = data.get("context_window")
        of = f" of a {window:,}-token window" if window else ""
        return (
            f"compacting the conversation: about {data['estimated_tokens']:,} tokens{of};"
            f" summarizing its oldest {data['messages']} message(s)"
        )
    outcome = data["outcome"]
    if outcome == "completed":
        reminders = data.get("reminders") or 0
        panels = f", {reminders} panel reminder(s) added" if reminders else ""
        return (
            f"compacted: {data['replaced']} message(s) replaced by a summary,"
            f" {data['kept']} kept; about {data['estimated_tokens']:,} tokens now{panels}"
        )
    if outcome == "nothing_to_compact":
        return "nothing to compact"
    error = data.get("error") or {}
    detail = f": {error.get('code')}: {error.get('message')}" if outcome == "failed" else ""
    return f"compaction {outcome}{detail}; nothing changed"


def _arguments_line(arguments: str, limit: int = 160) -> str:
    """The model's arguments on one line: as compact JSON, or quoted as text when they are
    not JSON or nest too deep to encode again (the call's result says what was wrong)."""
    try:
        text = json.dumps(json.loads(arguments), ensure_ascii=False)
    except (ValueError, RecursionError):
        text = json.dumps(arguments, ensure_ascii=False)
    return text if len(text) <= limit else text[: limit - 3] + "..."


class JsonRenderer(_Output):
    """One JSON object per event, on stdout."""

    def __init__(self, out: TextIO | None = None) -> None:
        super().__init__()
        self.out = out or sys.stdout

    def __call__(self, event: Any) -> None:
        if not self.closed:
            self._write_out(json.dumps(event.to_dict(), ensure_ascii=False) + "\n")


class TerminalFrontEnd:
    """The terminal as a front end of the session service: events go to ``renderer``; an
    approval and a tool's question (an interaction request's form,
    :mod:`raw_core.cli._form`) are asked on the terminal through ``reader`` (a
    :class:`~raw_core.cli._terminal.LineReader`), or not at all when ``reader`` is None
    (a question then ends as ``interaction_unavailable``). ``answer``
    (``--approve``/``--deny``) answers every approval without asking. Declining, the
    person may type a message instead of "n": the model reads it."""

    name = "terminal"

    def __init__(self, renderer: Any, reader: Any, *, answer: bool | None = None) -> None:
        self._renderer = renderer
        self._reader = reader
        self._answer = answer
        self.can_approve = answer is not None or reader is not None
        self.can_interact = reader is not None

    def on_event(self, event: Any) -> None:
        """Render the event."""
        self._renderer(event)

    async def approve(self, request: Any) -> Any:
        """The fixed answer, or show the request and ask: yes, no, or a message that
        declines the call and reaches the model."""
        if self._answer is not None:
            return self._answer
        if self._reader is None:
            return False
        show_request(request)
        click.echo("(y runs it; n or Enter declines; any other text declines with it as", err=True)
        click.echo(" the reason the model reads)", err=True)
        line = await self._reader.readline("Run it? [y/N]: ")
        choice = (line or "").strip()
        if choice.lower() in ("y", "yes"):
            return True
        if choice.lower() in ("", "n", "no"):
            return False
        from raw_core import ApprovalAnswer

        return ApprovalAnswer(approved=False, by=self.name, message=choice)

    async def interact(self, request: Any) -> Any:
        """Ask the request's form on the terminal; the values, or None when cancelled."""
        if self._reader is None:
            return None
        from raw_core.cli._form import ask_form

        declaration = request.declaration
        title = declaration.title if declaration is not None else request.panel
        return await ask_form(
            self._reader, request.document, title=title, identity=request.identity
        )

    async def show_panel(self, update: Any) -> None:
        """Draw the update, when the renderer draws panels (``--json`` prints the
        ``panel_updated`` events instead)."""
        draw = getattr(self._renderer, "show_panel", None)
        if draw is not None:
            draw(update)
