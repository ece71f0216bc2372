"""The stdio wire of ``raw acp``: newline-delimited JSON-RPC on two file descriptors.

The protocol's SDK reads stdin itself, but it lets a malformed line pass in silence,
reads a line of any length into memory, and ends the connection on a message that is
valid JSON but no JSON-RPC object. raw gives the SDK a message transport of its own
instead, which answers what the SDK would drop, as JSON-RPC says:

* a line that is not JSON: ``-32700`` (parse error, ``id`` null); the connection goes on;
* JSON that is not a JSON-RPC 2.0 request, notification or response (an array, a number,
  a wrong ``jsonrpc``, a ``method`` that is no string, an ``id`` that is neither string nor
  integer): ``-32600`` (invalid request), with its ``id`` when it had a usable one;
* a line longer than ``max_message_bytes``: ``-32600`` naming the limit; the line is
  skipped up to its newline without being held in memory, and the connection goes on.

The SDK's connection is asyncio code, so this module is the one place raw_acp speaks
asyncio: it runs on anyio's asyncio backend. Writes are serialized and wait while the
pipe is full, so a client that reads slowly slows raw down instead of filling memory.

Either end may also be a regular file (``raw acp < requests.jsonl > answers.jsonl``),
which asyncio's pipe transports refuse: a file read is copied into a pipe by a thread
(which waits while the pipe is full, so the file is never held in memory whole), a file
written is written directly. The transport counts the requests it has read and not yet
answered, so that at the end of input raw can answer them before it closes.
"""

from __future__ import annotations

import asyncio  # noqa: TID251  (the SDK's connection is asyncio: this is its edge)
import json
import logging
import os
import stat
import threading
from typing import Any, Final

import anyio

__all__ = ["DEFAULT_MAX_MESSAGE_BYTES", "StdioTransport", "open_stdio_transport"]

DEFAULT_MAX_MESSAGE_BYTES: Final = 16 * 1024 * 1024
"""The longest line (one JSON-RPC message) raw reads: 16 MiB."""

_MAX_DEPTH: Final = 64

logger = logging.getLogger("raw_acp")


def _error(code: int, message: str, request_id: Any = None, data: Any = None) -> dict[str, Any]:
    error: dict[str, Any] = {"code": code, "message": message}
    if data is not None:
        error["data"] = data
    return {"jsonrpc": "2.0", "id": request_id, "error": error}


def _no_constant(name: str) -> Any:
    raise ValueError(f"{name} is not JSON")


def _depth(value: Any) -> int:
    """How deeply ``value`` nests (iteratively: a deep message cannot blow the stack)."""
    deepest = 0
    stack: list[tuple[Any, int]] = [(value, 1)]
    while stack:
        item, level = stack.pop()
        if isinstance(item, dict | list):
            deepest = max(deepest, level)
            if deepest > _MAX_DEPTH:
                return deepest
            children = item.values() if isinstance(item, dict) else item
            stack.extend((child, level + 1) for child in children)
    return deepest


def _is_id(value: Any) -> bool:
    return value is None or isinstance(value, str) or type(value) is int


def check_message(line: bytes) -> tuple[dict[str, Any] | None, dict[str, Any] | None]:
    """``(message, None)`` for a well-formed JSON-RPC message, else ``(None, error)``: the
    error response to send back."""
    try:
        message = json.loads(line, parse_constant=_no_constant)
    except (ValueError, RecursionError) as exc:  # also a >4300-digit integer
        return None, _error(-32700, "Parse error", data={"details": str(exc)[:200]})
    if not isinstance(message, dict):
        return None, _error(-32600, "Invalid request", data={"details": "expected an object"})
    request_id = message.get("id")
    usable_id = request_id if _is_id(request_id) else None
    if message.get("jsonrpc") != "2.0":
        return None, _error(
            -32600, "Invalid request", usable_id, {"details": 'expected "jsonrpc": "2.0"'}
        )
    if not _is_id(request_id):
        return None, _error(
            -32600, "Invalid request", None, {"details": "id must be a string or an integer"}
        )
    if _depth(message) > _MAX_DEPTH:
        return None, _error(
            -32600, "Invalid request", usable_id, {"details": f"nested deeper than {_MAX_DEPTH}"}
        )
    if "method" in message:
        if not isinstance(message["method"], str):
            return None, _error(
                -32600, "Invalid request", usable_id, {"details": "method must be a string"}
            )
        params = message.get("params")
        if params is not None and not isinstance(params, dict | list):
            return None, _error(
                -32600, "Invalid request", usable_id, {"details": "params must be a structure"}
            )
        return message, None
    if "id" in message and ("result" in message or "error" in message):
        return message, None
    return None, _error(
        -32600, "Invalid request", usable_id, {"details": "expected a method, or a result"}
    )


class _WriteProtocol(asyncio.BaseProtocol):
    """Flow control of the output pipe: writes wait while it is full."""

    def __init__(self) -> None:
        self.writable = anyio.Event()
        self.writable.set()
        self.lost = anyio.Event()

    def pause_writing(self) -> None:
        self.writable = anyio.Event()

    def resume_writing(self) -> None:
        self.writable.set()

    def connection_lost(self, exc: Exception | None) -> None:
        self.lost.set()
        self.writable.set()


class StdioTransport:
    """The SDK's message transport on raw's side of the pipes (see the module docstring)."""

    def __init__(
        self,
        reader: asyncio.StreamReader,
        writer: asyncio.WriteTransport,
        protocol: _WriteProtocol,
        *,
        max_message_bytes: int,
        read_transport: asyncio.BaseTransport | None = None,
    ) -> None:
        self._reader = reader
        self._writer = writer
        self._protocol = protocol
        self._limit = max_message_bytes
        self._lock = anyio.Lock()
        self.sent = 0
        self._unanswered: dict[Any, int] = {}
        self._answered = anyio.Event()
        self._read_transport = read_transport

    def _note_answer(self, message: dict[str, Any]) -> None:
        request_id = message.get("id")
        if "method" in message or request_id not in self._unanswered:
            return
        self._unanswered[request_id] -= 1
        if not self._unanswered[request_id]:
            del self._unanswered[request_id]
        self._answered.set()
        self._answered = anyio.Event()

    async def wait_answered(self) -> None:
        """Return once every request read so far has been answered, or the client's
        end of the output is gone (nothing more can be answered)."""
        while self._unanswered and not self._protocol.lost.is_set():
            with anyio.move_on_after(0.5):  # also notice a connection lost meanwhile
                await self._answered.wait()

    async def send(self, message: dict[str, Any]) -> None:
        """Write one message as one line (``ConnectionError`` once the client is gone)."""
        data = json.dumps(message, ensure_ascii=False, separators=(",", ":")).encode() + b"\n"
        async with self._lock:
            if self._protocol.lost.is_set() or self._writer.is_closing():
                raise ConnectionError("the client closed the connection")
            await self._protocol.writable.wait()
            self._writer.write(data)
            self.sent += 1
            self._note_answer(message)

    async def receive(self) -> dict[str, Any] | None:
        """The next well-formed message; ``None`` at the end of input."""
        while True:
            line = await self._line()
            if line is None:
                return None
            if not line.strip():
                continue
            message, error = check_message(line)
            if message is not None:
                if "method" in message and "id" in message:
                    request_id = message["id"]
                    self._unanswered[request_id] = self._unanswered.get(request_id, 0) + 1
                return message
            assert error is not None
            logger.warning("answered a malformed message: %s", error["error"]["message"])
            try:
                await self.send(error)
            except ConnectionError:
                return None

    async def _line(self) -> bytes | None:
        try:
            return await self._reader.readuntil(b"\n")
        except asyncio.IncompleteReadError as exc:
            return exc.partial or None
        except asyncio.LimitOverrunError:
            await self._skip_line()
            await self.send(
                _error(
                    -32600,
                    "Invalid request",
                    data={"details": f"a message is longer than {self._limit} bytes"},
                )
            )
            return b""

    async def _skip_line(self) -> None:
        """Drop input up to the next newline, a buffer at a time."""
        while True:
            try:
                await self._reader.readuntil(b"\n")
                return
            except asyncio.LimitOverrunError as exc:
                await self._reader.readexactly(exc.consumed)
            except asyncio.IncompleteReadError:
                return

    async def close(self) -> None:
        self._writer.close()
        if self._read_transport is not None:
            self._read_transport.close()


class _FileWriter(asyncio.WriteTransport):
    """Writes to a regular file, which never waits on a reader: each write is done
    at once and whole."""

    def __init__(self, file: Any, protocol: _WriteProtocol) -> None:
        super().__init__()
        self._file = file
        self._protocol = protocol
        self._closing = False

    def write(self, data: bytes | bytearray | memoryview) -> None:
        view = memoryview(data)
        try:
            while view:
                view = view[os.write(self._file.fileno(), view) :]
        except OSError as exc:  # a full disk, a file closed under raw
            logger.error("cannot write the answers: %s", exc)
            self.close()

    def is_closing(self) -> bool:
        return self._closing

    def close(self) -> None:
        if not self._closing:
            self._closing = True
            self._file.close()
            self._protocol.connection_lost(None)


def _copy_into_pipe(source: int) -> int:
    """A pipe's read end that carries what regular file ``source`` holds, copied by a
    daemon thread; ``source`` is closed once it is copied or the pipe's reader is gone."""
    read_end, write_end = os.pipe()

    def copy() -> None:
        try:
            while chunk := os.read(source, 65536):
                view = memoryview(chunk)
                while view:
                    view = view[os.write(write_end, view) :]
        except OSError:  # the reader closed its end: nothing more is wanted
            pass
        finally:
            os.close(source)
            os.close(write_end)

    threading.Thread(target=copy, name="raw acp input", daemon=True).start()
    return read_end


def _is_file(fd: int) -> bool:
    return stat.S_ISREG(os.fstat(fd).st_mode)


async def open_stdio_transport(
    read_fd: int, write_fd: int, *, max_message_bytes: int = DEFAULT_MAX_MESSAGE_BYTES
) -> StdioTransport:
    """The transport on ``read_fd`` (the client's requests) and ``write_fd`` (raw's
    answers and updates); both are owned by the transport from here on."""
    loop = asyncio.get_running_loop()
    reader = asyncio.StreamReader(limit=max_message_bytes)
    if _is_file(read_fd):
        read_fd = _copy_into_pipe(read_fd)
    read_transport, _ = await loop.connect_read_pipe(
        lambda: asyncio.StreamReaderProtocol(reader), os.fdopen(read_fd, "rb", buffering=0)
    )
    protocol = _WriteProtocol()
    writer: asyncio.WriteTransport
    if _is_file(write_fd):
        writer = _FileWriter(os.fdopen(write_fd, "wb", buffering=0), protocol)
    else:
        writer, _ = await loop.connect_write_pipe(
            lambda: protocol, os.fdopen(write_fd, "wb", buffering=0)
        )
    return StdioTransport(
        reader,
        writer,
        protocol,
        max_message_bytes=max_message_bytes,
        read_transport=read_transport,
    )
