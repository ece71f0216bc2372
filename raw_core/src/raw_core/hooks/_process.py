"""Run one hook command: its own process group, the payload on stdin, bounded output, a
deadline that kills the whole group.

The command starts in a new session (``start_new_session=True``), so its process group id
is its pid and every process it starts without leaving the group is killed at once with
``SIGKILL`` to the group — when the deadline passes, when the caller is cancelled, and also
when the command exits on its own (a background process it left would otherwise outlive it
and hold its output pipes open). The payload is written while the output is read, so a
hook that never reads its input, or prints before it reads, cannot block on a full pipe.
Each output stream keeps its first ``limit`` bytes and counts the rest.
"""

from __future__ import annotations

import os
import signal
import subprocess
from collections.abc import Mapping, Sequence
from typing import Final, Literal

import anyio
import attrs
from anyio.abc import ByteReceiveStream, ByteSendStream

__all__ = ["MAX_STREAM_BYTES", "Finished", "run_process"]

MAX_STREAM_BYTES: Final = 1024 * 1024
"""What is kept of a hook's stdout and of its stderr."""
DRAIN_SECONDS: Final = 2.0
"""How long the output may take to reach its end once the group is killed."""
REAP_SECONDS: Final = 5.0

Status = Literal["exited", "timeout", "not_started"]


@attrs.define
class _Capture:
    limit: int
    data: bytearray = attrs.field(factory=bytearray)
    dropped: int = 0

    async def drain(self, stream: ByteReceiveStream | None) -> None:
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


@attrs.frozen(kw_only=True)
class Finished:
    """How a hook command ended: ``exited`` (``returncode``: its status, or minus the
    signal that killed it), ``timeout`` (killed at the deadline) or ``not_started``
    (``error`` says why). ``stdout``/``stderr`` are the kept bytes; ``*_dropped`` how many
    more there were."""

    status: Status
    returncode: int | None = None
    stdout: bytes = b""
    stderr: bytes = b""
    stdout_dropped: int = 0
    stderr_dropped: int = 0
    error: str | None = None


def _kill_group(pgid: int) -> None:
    try:
        os.killpg(pgid, signal.SIGKILL)
    except (ProcessLookupError, PermissionError):
        pass


async def _feed(stream: ByteSendStream | None, data: bytes) -> None:
    if stream is None:
        return
    try:
        await stream.send(data)
    except (anyio.BrokenResourceError, anyio.ClosedResourceError, OSError):
        pass  # the hook exited or closed its input without reading all of it
    finally:
        try:
            await stream.aclose()
        except (anyio.BrokenResourceError, anyio.ClosedResourceError, OSError):
            pass


async def run_process(
    argv: Sequence[str],
    *,
    stdin: bytes,
    cwd: str,
    env: Mapping[str, str],
    timeout: float,  # noqa: ASYNC109 - the deadline is the hook's, reported as its outcome
    limit: int = MAX_STREAM_BYTES,
) -> Finished:
    """Run ``argv`` in ``cwd`` with ``env``, ``stdin`` as its input; stop it after
    ``timeout`` seconds. Cancelling the caller kills the process group and re-raises."""
    try:
        # Shielded: the hook may already run (and start children) before this await
        # returns, so a cancellation here would leave a group nobody kills. A pending
        # cancellation is delivered at the first await below, where the group is killed.
        with anyio.CancelScope(shield=True):
            process = await anyio.open_process(
                list(argv),
                stdin=subprocess.PIPE,
                stdout=subprocess.PIPE,
                stderr=subprocess.PIPE,
                cwd=cwd,
                env=dict(env),
                start_new_session=True,
            )
    except OSError as exc:
        return Finished(status="not_started", error=exc.strerror or type(exc).__name__)
    except Exception as exc:
        # (a string the system cannot take, say): never an error of raw's own.
        return Finished(status="not_started", error=f"{type(exc).__name__}: {exc}")
    stdout, stderr = _Capture(limit), _Capture(limit)
    status: Status = "timeout"
    try:
        async with anyio.create_task_group() as group:
            group.start_soon(_feed, process.stdin, stdin)
            group.start_soon(stdout.drain, process.stdout)
            group.start_soon(stderr.drain, process.stderr)
            with anyio.move_on_after(timeout):
                await process.wait()
                status = "exited"
            _kill_group(process.pid)
            group.cancel_scope.deadline = anyio.current_time() + DRAIN_SECONDS
    finally:
        _kill_group(process.pid)
        with anyio.CancelScope(shield=True), anyio.move_on_after(REAP_SECONDS):
            await process.aclose()
    return Finished(
        status=status,
        returncode=process.returncode if status == "exited" else None,
        stdout=bytes(stdout.data),
        stderr=bytes(stderr.data),
        stdout_dropped=stdout.dropped,
        stderr_dropped=stderr.dropped,
    )
