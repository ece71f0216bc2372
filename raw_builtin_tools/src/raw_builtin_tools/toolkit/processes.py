"""Run one command in its own process group, with a deadline, a cancel signal and bounded
capture of its output.

The command starts in a new session (``start_new_session=True``), so its process group id is
its pid and every process it starts without leaving that group can be killed at once with
``SIGKILL`` to ``-pgid`` — and, on Linux, every process left in its session (a job-control
shell, ``set -m``, gives background jobs groups of their own). That happens when the
deadline passes, when the signal fires, when the caller is cancelled, and also when the
command exits normally: a background process it left behind (``sleep 300 &``) would
otherwise outlive the call and keep the output pipes open. A process that leaves the
session itself (``setsid``) is out of reach.

Each output stream is read to its end concurrently; the first ``limit`` bytes are kept and the
rest is counted and dropped, so a command that prints without end cannot exhaust memory or
block on a full pipe.
"""

from __future__ import annotations

import os
import signal as signals
import subprocess
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Final, Literal, Protocol

import anyio
from anyio.abc import ByteReceiveStream

__all__ = ["Capture", "Outcome", "Signal", "kill_group", "run_command"]

DRAIN_SECONDS: Final = 2.0
"""How long the output may take to reach its end once the group is killed."""

REAP_SECONDS: Final = 5.0


class Signal(Protocol):
    """What :func:`run_command` needs of a cancellation signal."""

    @property
    def cancelled(self) -> bool: ...

    async def wait(self) -> None: ...


@dataclass(slots=True)
class Capture:
    """The first ``limit`` bytes of a stream, and how many bytes after them were dropped."""

    limit: int
    data: bytearray = field(default_factory=bytearray)
    dropped: int = 0

    async def drain(self, stream: ByteReceiveStream | None) -> None:
        """Read ``stream`` to its end (or until cancelled)."""
        if stream is None:
            return
        try:
            async for chunk in stream:
                room = self.limit - len(self.data)
                if room > 0:
                    self.data += chunk[:room]
                self.dropped += max(len(chunk) - max(room, 0), 0)
        except (anyio.ClosedResourceError, anyio.BrokenResourceError):
            pass


Status = Literal["exited", "timeout", "cancelled"]


@dataclass(frozen=True, slots=True)
class Outcome:
    """How a command ended: ``exited`` on its own, ``timeout`` or ``cancelled`` (killed)."""

    status: Status
    returncode: int | None
    stdout: Capture
    stderr: Capture
    seconds: float


def _session_members(sid: int) -> list[int]:
    """Pids of the processes in session ``sid`` (Linux ``/proc``; empty elsewhere)."""
    members: list[int] = []
    try:
        entries = os.listdir("/proc")
    except OSError:
        return members
    for entry in entries:
        if not entry.isdigit():
            continue
        try:
            with open(f"/proc/{entry}/stat", "rb") as handle:
                fields = handle.read().rsplit(b")", 1)[1].split()
        except OSError:
            continue  # gone meanwhile, or not ours to read
        # after "pid (comm)": state ppid pgrp session ...
        if len(fields) > 3 and int(fields[3]) == sid:
            members.append(int(entry))
    return members


def kill_group(pgid: int) -> None:
    """``SIGKILL`` every process of group ``pgid`` and, where ``/proc`` shows them, every
    other process of the session it leads: a job control shell (``set -m``) puts background
    jobs in groups of their own, but they stay in the session. Gone processes are fine."""
    try:
        os.killpg(pgid, signals.SIGKILL)
    except (ProcessLookupError, PermissionError):
        pass
    for pid in _session_members(pgid):
        try:
            os.kill(pid, signals.SIGKILL)
        except (ProcessLookupError, PermissionError):
            pass


async def _wait(process: anyio.abc.Process, time_limit: float, signal: Signal) -> Status:
    result: Status = "timeout"
    with anyio.move_on_after(time_limit):
        async with anyio.create_task_group() as group:

            async def watch() -> None:
                nonlocal result
                await signal.wait()
                result = "cancelled"
                group.cancel_scope.cancel()

            group.start_soon(watch)
            await process.wait()
            result = "exited"
            group.cancel_scope.cancel()
    return result


async def run_command(
    argv: Sequence[str], *, cwd: str, time_limit: float, signal: Signal, limit: int
) -> Outcome:
    """Run ``argv`` in ``cwd`` with stdin from ``/dev/null``; raises :class:`OSError` when it
    cannot start. Cancelling the caller kills the process group before re-raising."""
    started = anyio.current_time()
    # Shielded: the command may already run (and start its own children) before this await
    # returns, so a cancellation here would leave a group nobody kills. A pending
    # cancellation is delivered at the first await below, where the group is killed.
    with anyio.CancelScope(shield=True):
        process = await anyio.open_process(
            list(argv),
            stdin=subprocess.DEVNULL,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            cwd=cwd,
            start_new_session=True,
        )
    stdout, stderr = Capture(limit), Capture(limit)
    status: Status = "exited"
    try:
        async with anyio.create_task_group() as readers:
            readers.start_soon(stdout.drain, process.stdout)
            readers.start_soon(stderr.drain, process.stderr)
            status = await _wait(process, time_limit, signal)
            kill_group(process.pid)
            readers.cancel_scope.deadline = anyio.current_time() + DRAIN_SECONDS
    finally:
        kill_group(process.pid)
        with anyio.CancelScope(shield=True), anyio.move_on_after(REAP_SECONDS):
            await process.aclose()
    seconds = anyio.current_time() - started
    return Outcome(
        status=status, returncode=process.returncode, stdout=stdout, stderr=stderr, seconds=seconds
    )
