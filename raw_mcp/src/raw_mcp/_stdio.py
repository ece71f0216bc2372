"""The stdio transport: a server raw starts as a child process, in a process group of its
own, and stops with that whole group.

raw starts the server itself (rather than through the SDK's stdio client) for three
things a session needs: the child's process id and group (stopping a server stops every
process it started — the group is killed at the end whatever the server did), the last
lines the server wrote to stderr (they explain a server that would not start), and one
bounded shutdown: stdin closed, a short grace, then SIGTERM and SIGKILL to the group.

Messages are newline-delimited JSON-RPC, read and written with the SDK's message types.
This module is imported only when a stdio server starts (it imports the SDK).
"""

from __future__ import annotations

import os
import signal
import tempfile
from collections.abc import AsyncIterator, Mapping, Sequence
from contextlib import asynccontextmanager
from pathlib import Path
from typing import IO, Any, Final

import anyio
import anyio.abc
import mcp_types
from anyio.streams.buffered import BufferedByteReceiveStream
from mcp.shared.message import SessionMessage

__all__ = ["INHERITED_ENV", "StdioProcess", "stdio_transport"]

INHERITED_ENV: Final = (
    "HOME",
    "LANG",
    "LC_ALL",
    "LOGNAME",
    "PATH",
    "SHELL",
    "TERM",
    "TMPDIR",
    "USER",
)
"""What a server gets of raw's own environment; everything else comes from its ``env``."""

MAX_LINE_BYTES: Final = 64 * 1024 * 1024
"""The longest message raw reads from a server (images travel base64-encoded)."""
STDIN_GRACE: Final = 1.0
"""Seconds a server has to exit once its stdin is closed, before SIGTERM."""
TERM_GRACE: Final = 1.0
"""Seconds after SIGTERM before SIGKILL."""
STDERR_TAIL: Final = 2000


class StdioProcess:
    """What raw knows of a started stdio server: its pid and what it wrote to stderr."""

    def __init__(self, process: anyio.abc.Process, stderr: IO[bytes]) -> None:
        self.process = process
        self._stderr = stderr
        self._kept: str | None = None

    @property
    def pid(self) -> int:
        """The server's process id (also its process group's id)."""
        return self.process.pid

    def stderr_tail(self) -> str:
        """The last lines the server wrote to stderr (at most about 2000 characters)."""
        if self._kept is not None:
            return self._kept
        try:
            self._stderr.flush()
            size = self._stderr.seek(0, os.SEEK_END)
            self._stderr.seek(max(size - STDERR_TAIL, 0))
            text = self._stderr.read().decode("utf-8", "replace")
        except (OSError, ValueError):
            return ""
        return text.strip()

    def keep_tail(self) -> None:
        """Read the tail once more and keep it: the file is about to be closed."""
        self._kept = self.stderr_tail()


def server_environment(extra: Mapping[str, str]) -> dict[str, str]:
    """The server's environment: :data:`INHERITED_ENV` from raw's, then ``extra``."""
    env = {key: os.environ[key] for key in INHERITED_ENV if key in os.environ}
    env.update(extra)
    return env


def _signal_group(pid: int, signum: int) -> None:
    try:
        os.killpg(pid, signum)
    except (ProcessLookupError, PermissionError):
        pass


async def _exited(process: anyio.abc.Process, seconds: float) -> bool:
    with anyio.move_on_after(seconds):
        await process.wait()
        return True
    return False


async def _stop(process: anyio.abc.Process) -> None:
    """Close stdin, wait a moment, then SIGTERM and SIGKILL the whole group; the group is
    killed at the end even when the server exited by itself (its children may not have)."""
    if process.stdin is not None:
        try:
            await process.stdin.aclose()
        except (OSError, anyio.BrokenResourceError, anyio.ClosedResourceError):
            pass
    if not await _exited(process, STDIN_GRACE):
        _signal_group(process.pid, signal.SIGTERM)
        if not await _exited(process, TERM_GRACE):
            _signal_group(process.pid, signal.SIGKILL)
            await _exited(process, TERM_GRACE)
    _signal_group(process.pid, signal.SIGKILL)


def _parse(line: bytes) -> SessionMessage | Exception:
    try:
        return SessionMessage(mcp_types.jsonrpc_message_adapter.validate_json(line))
    except ValueError as exc:
        return exc


@asynccontextmanager
async def stdio_transport(
    command: Sequence[str],
    *,
    env: Mapping[str, str],
    cwd: Path | None,
    started: list[StdioProcess],
) -> AsyncIterator[tuple[Any, Any]]:
    """Start ``command`` and yield the transport's ``(read_stream, write_stream)``; the
    started process is appended to ``started`` as soon as it runs. Raises ``OSError`` when
    the command cannot be started."""
    stderr = tempfile.TemporaryFile()  # noqa: SIM115 - closed in the finally below
    try:
        process = await anyio.open_process(
            list(command),
            env=server_environment(env),
            cwd=cwd,
            stderr=stderr,
            start_new_session=True,
        )
    except BaseException:
        stderr.close()
        raise
    record = StdioProcess(process, stderr)
    started.append(record)
    to_session, read_stream = anyio.create_memory_object_stream[SessionMessage | Exception](16)
    write_stream, from_session = anyio.create_memory_object_stream[SessionMessage](16)

    async def read() -> None:
        assert process.stdout is not None
        lines = BufferedByteReceiveStream(process.stdout)
        async with to_session:
            try:
                while True:
                    line = await lines.receive_until(b"\n", MAX_LINE_BYTES)
                    if line.strip():
                        await to_session.send(_parse(line))
            except (
                anyio.EndOfStream,
                anyio.IncompleteRead,
                anyio.DelimiterNotFound,
                anyio.ClosedResourceError,
                anyio.BrokenResourceError,
                OSError,
            ):
                return

    async def write() -> None:
        assert process.stdin is not None
        async with from_session:
            try:
                async for message in from_session:
                    text = message.message.model_dump_json(by_alias=True, exclude_unset=True)
                    await process.stdin.send(text.encode("utf-8") + b"\n")
            except (anyio.ClosedResourceError, anyio.BrokenResourceError, OSError):
                await to_session.aclose()

    try:
        async with anyio.create_task_group() as group:
            group.start_soon(read)
            group.start_soon(write)
            try:
                yield read_stream, write_stream
            finally:
                with anyio.CancelScope(shield=True):
                    await write_stream.aclose()
                    await read_stream.aclose()
                    await _stop(process)
                group.cancel_scope.cancel()
    finally:
        with anyio.CancelScope(shield=True):
            _signal_group(process.pid, signal.SIGKILL)
            await process.aclose()
        record.keep_tail()
        stderr.close()
