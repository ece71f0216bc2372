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
"""

from __future__ import annotations

import asyncio  # noqa: TID251  (the SDK's connection is asyncio: this is its edge)
import json
import logging
import os
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
    ) -> None:
        self._reader = reader
        self._writer = writer
        self._protocol = protocol
        self._limit = max_message_bytes
        self._lock = anyio.Lock()
        self.sent = 0

    async def send(self, message: dict[str, Any]) -> None:
        """Write one message as one line (``ConnectionError`` once the client is gone)."""
        data = json.dumps(message, ensure_ascii=False, separators=(",", ":")).encode() + b"\n"
        async with self._lock:
            if self._protocol.lost.is_set() or self._writer.is_closing():
                raise ConnectionError("the client closed the connection")
            await self._protocol.writable.wait()
            self._writer.write(data)
            self.sent += 1

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


async def open_stdio_transport(
    read_fd: int, write_fd: int, *, max_message_bytes: int = DEFAULT_MAX_MESSAGE_BYTES
) -> StdioTransport:
    """The transport on ``read_fd`` (the client's requests) and ``write_fd`` (raw's
    answers and updates); both are owned by the transport from here on."""
    loop = asyncio.get_running_loop()
    reader = asyncio.StreamReader(limit=max_message_bytes)
    await loop.connect_read_pipe(
        lambda: asyncio.StreamReaderProtocol(reader), os.fdopen(read_fd, "rb", buffering=0)
    )
    protocol = _WriteProtocol()
    writer, _ = await loop.connect_write_pipe(
        lambda: protocol, os.fdopen(write_fd, "wb", buffering=0)
    )
    return StdioTransport(reader, writer, protocol, max_message_bytes=max_message_bytes)
