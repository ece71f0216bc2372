"""Ctrl-C in the commands that run turns (``raw run``, ``raw chat``, ``raw sessions resume``).

The first Ctrl-C while a turn runs cancels that turn cleanly: finished results are kept
and unfinished calls are recorded as ``cancelled``. A Ctrl-C while no turn runs, or a
second one while a cancelled turn is still ending, stops the command: the work under way
is cancelled and the session closed (except at a chat's idle prompt on a terminal,
:meth:`CtrlC.at_prompt`, where the chat asks for a second press); should that not end
within a few seconds (a handler that swallows its cancellation), the process exits at
once — what the session committed is kept, and resuming it records the unfinished calls
as cancelled. Ctrl-C is received as an
event on the loop (never as a ``KeyboardInterrupt`` in the middle of the code) from before
the app opens until after it has closed, so the command always returns control promptly
and with no traceback, and exits 130 (the shell's code for SIGINT) when Ctrl-C ended it.

Two other ends are handled the same way, except that the command ends once the turn has
(it does not return to a chat's prompt): SIGTERM (exit 143, the shell's code for it), and
the reader of stdout going away (``raw run --json | head -1``; exit 141, as for SIGPIPE).
A second SIGTERM while the turn ends stops the command, as a second Ctrl-C does.
"""

from __future__ import annotations

import os
import signal
import sys
import threading
from collections.abc import AsyncIterator, Awaitable, Callable, Iterator
from contextlib import asynccontextmanager, contextmanager
from typing import Any, TypeVar

import anyio
import click

from raw_core import CancellationSignal
from raw_core.cli._output import EXIT_INTERRUPTED, EXIT_PIPE, EXIT_TERMINATED

__all__ = ["CtrlC"]

T = TypeVar("T")

CANCEL_REASON = "cancelled with Ctrl-C"
TERMINATED_REASON = "ended by SIGTERM"
PIPE_REASON = "the reader of raw's output went away"
STOP_GRACE = 3.0  # seconds a stopped command may take to wind down before it exits at once


class CtrlC:
    """What Ctrl-C does while :meth:`watch` is open; see the module docstring."""

    def __init__(self) -> None:
        self.count = 0  # how many times Ctrl-C was pressed
        self.stopped = False  # whether a Ctrl-C stopped the whole block
        self.session_id: str | None = None  # printed when the process has to exit at once
        self._turn: CancellationSignal | None = None
        self._prompt: anyio.CancelScope | None = None  # an idle prompt's read
        self._scope: anyio.CancelScope | None = None
        self._deadline: threading.Timer | None = None
        self.exit_code: int | None = None  # set when SIGTERM or a closed stdout ends it

    @property
    def ending(self) -> bool:
        """Whether the command is to end once the running turn has (SIGTERM, or stdout
        closed): a chat does not go back to its prompt."""
        return self.exit_code is not None

    @property
    def pressed(self) -> bool:
        """Whether Ctrl-C was pressed at all."""
        return self.count > 0

    @contextmanager
    def turn(self) -> Iterator[CancellationSignal]:
        """A signal for one turn (pass it to ``run_turn``): the next Ctrl-C cancels it."""
        turn = CancellationSignal()
        self._turn = turn
        try:
            yield turn
        finally:
            self._turn = None

    async def at_prompt(self, read: Callable[[], Awaitable[T]]) -> T:
        """``read()`` at an idle prompt: a Ctrl-C received while it waits (a terminal
        that sends SIGINT, where no line editor reads the key) ends the read with
        ``KeyboardInterrupt``, as a line editor's Ctrl-C does, instead of stopping the
        command; the caller decides what a press means there."""
        with anyio.CancelScope() as scope:
            self._prompt = scope
            try:
                return await read()
            finally:
                self._prompt = None
        raise KeyboardInterrupt

    @asynccontextmanager
    async def watch(self) -> AsyncIterator[None]:
        """Receive Ctrl-C for the block; when one stops it, the block ends quietly (its
        cancellation is caught here) and :attr:`stopped` is set."""
        failure: BaseException | None = None
        async with anyio.create_task_group() as group:
            await group.start(self._receive)
            try:
                with anyio.CancelScope() as self._scope:
                    yield
            except anyio.get_cancelled_exc_class():
                raise
            except BaseException as exc:  # raised below as itself, not in a group
                failure = exc
            finally:
                # Presses while the block winds down are received (and change nothing)
                # until here, so none of them interrupts the cleanup.
                group.cancel_scope.cancel()
                if self._deadline is not None:
                    self._deadline.cancel()
        if failure is not None:
            raise failure

    async def _receive(self, *, task_status: Any = anyio.TASK_STATUS_IGNORED) -> None:
        with anyio.open_signal_receiver(signal.SIGINT, signal.SIGTERM) as received:
            task_status.started()
            async for signum in received:
                if signum == signal.SIGTERM:
                    self.end(EXIT_TERMINATED, TERMINATED_REASON)
                else:
                    self._pressed()

    def output_closed(self) -> None:
        """The reader of stdout went away: end the command, exit 141, print nothing more."""
        self.end(EXIT_PIPE, PIPE_REASON)

    def end(self, code: int, reason: str) -> None:
        """End the command with exit ``code``: cancel the running turn (the command ends
        once it has), or stop the command when no turn runs or when it is ending already."""
        already = self.exit_code is not None
        if not already:
            self.exit_code = code
        turn = self._turn
        if turn is not None and not turn.cancelled and not already:
            turn.cancel(reason)
            return
        self._stop()

    def _pressed(self) -> None:
        self.count += 1
        turn = self._turn
        if turn is not None and not turn.cancelled:
            turn.cancel(CANCEL_REASON)
            click.echo("\n(cancelling the turn; Ctrl-C again quits)", err=True)
            return
        if self._prompt is not None and not self.stopped:
            self._prompt.cancel()
            return
        self._stop()

    def _stop(self) -> None:
        """Stop the whole block; exit at once should it not wind down in time."""
        if self._scope is not None and not self.stopped:
            self.stopped = True
            self._scope.cancel()
            self._deadline = threading.Timer(STOP_GRACE, self._exit_now)
            self._deadline.daemon = True
            self._deadline.start()

    def _exit_now(self) -> None:
        """The stopped command did not wind down in time: exit without waiting for it."""
        line = "\nraw: stopped without waiting for the work under way to end"
        if self.session_id is not None:
            line += f"; session {self.session_id}"
        # Straight to the file descriptor, and nothing flushed: the main thread may hold a
        # stream's lock, and this thread must not wait for it.
        os.write(sys.stderr.fileno(), (line + "\n").encode())
        os._exit(self.exit_code if self.exit_code is not None else EXIT_INTERRUPTED)
