"""One configured MCP server for one session: started once, its tools listed in full,
called with a time limit, restarted once after it fails, stopped with its process group.

The connection runs in a task of its own (in the source's task group) that owns the SDK's
client from start to stop, and catches everything that ends it: a server that crashes or
hangs ends that task, never the session that uses it. Calls come from the dispatcher's
tasks and wait for their answer, a time limit, a cancellation or the connection's end —
whichever is first — so a dead server can never stall a turn.
"""

from __future__ import annotations

import logging
from collections.abc import AsyncIterator, Callable, Mapping
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any, Final

import anyio
import anyio.abc
import anyio.lowlevel
import attrs

from raw_core.errors import HandlerError, McpServerFailed, RawError, Timeout
from raw_mcp.config import HttpServer, ServerConfig, StdioServer

__all__ = ["MAX_PAGES", "ServerConnection"]

MAX_PAGES: Final = 1000
"""The most pages of a tool list raw reads (a server whose cursor never ends fails)."""
_log = logging.getLogger(__name__)

Listing = dict[str, dict[str, Any]]
"""A server's tools in their JSON form, by MCP name, in the server's order."""


@attrs.define
class _Run:
    """One start of the server: its events, its client, and what ended it."""

    stop: anyio.Event = attrs.Factory(anyio.Event)
    ready: anyio.Event = attrs.Factory(anyio.Event)
    gone: anyio.Event = attrs.Factory(anyio.Event)
    scope: anyio.CancelScope = attrs.Factory(anyio.CancelScope)
    client: Any = None
    error: str | None = None
    processes: list[Any] = attrs.Factory(list)


class ServerConnection:
    """The session's connection to one MCP server (see the module's docstring).

    ``values`` are the resolved secret values (``env.NAME`` / ``headers.NAME`` → value);
    they go to the server and nowhere else. ``on_list_changed`` is called (with no
    arguments) after the server announced a new tool list and raw read it.
    """

    def __init__(
        self,
        config: ServerConfig,
        *,
        values: Mapping[str, str],
        cwd: Path | None,
        group: anyio.abc.TaskGroup,
        on_list_changed: Callable[[], None] | None = None,
    ) -> None:
        self.config = config
        self._values = dict(values)
        self._cwd = cwd
        self._group = group
        self._on_list_changed = on_list_changed
        self._run: _Run | None = None
        self._lock = anyio.Lock()
        self._broken = False  # the last run failed: the next call restarts the server once
        self._failed: str | None = None  # a restart failed too: no more restarts
        self.tools: Listing = {}
        self.server_version = "0.0.0"

    @property
    def name(self) -> str:
        return self.config.name

    @property
    def client(self) -> Any:
        """The SDK's ``mcp.Client`` of the running server (None when it is not running)."""
        return self._run.client if self._run is not None else None

    @property
    def pid(self) -> int | None:
        """The process id of a running stdio server (None for HTTP or when not running)."""
        run = self._run
        if run is None or not run.processes or run.gone.is_set():
            return None
        pid: int = run.processes[-1].pid
        return pid

    def _fail(self, what: str, run: _Run | None = None) -> McpServerFailed:
        tail = ""
        if run is not None and run.processes:
            stderr = run.processes[-1].stderr_tail()
            if stderr:
                tail = f"; its stderr ended with: {stderr[-600:]}"
        return McpServerFailed(f"MCP server {self.name!r} {what}{tail}", server=self.name)

    # --- starting and stopping -----------------------------------------------------------

    async def start(self) -> None:
        """Start the server and read its tool list; ``mcp_server_failed`` when it does not
        start, does not answer within ``start_timeout_ms``, or cannot list its tools."""
        run = _Run()
        self._run = run
        self._group.start_soon(self._serve, run, name=f"raw MCP server {self.name}")
        limit = self.config.start_timeout_ms / 1000
        with anyio.move_on_after(limit) as waited:
            await run.ready.wait()
        if waited.cancelled_caught:
            await self._end(run)
            raise self._fail(f"did not start and list its tools within {limit:g} s", run)
        if run.error is not None:
            await self._end(run)
            raise self._fail(run.error, run)

    async def _serve(self, run: _Run) -> None:
        """The connection's task: connect, list, wait for stop; never raises."""
        with run.scope:
            try:
                async with self._client(run) as client:
                    self.tools = await self._list(client)
                    info = getattr(client, "server_info", None)
                    version = getattr(info, "version", None)
                    if isinstance(version, str):
                        self.server_version = version
                    run.client = client
                    run.ready.set()
                    await run.stop.wait()
            except Exception as exc:  # the server's failure, whatever it is, ends this run only
                run.error = _describe(exc)
                _log.info("MCP server %s ended: %s", self.name, run.error)
            finally:
                run.client = None
                run.ready.set()
                run.gone.set()

    @asynccontextmanager
    async def _client(self, run: _Run) -> AsyncIterator[Any]:
        import mcp

        transport = self.config.transport
        handler = self._message_handler(run)
        if isinstance(transport, StdioServer):
            from raw_mcp._stdio import stdio_transport

            env = {k.removeprefix("env."): v for k, v in self._values.items()}
            stream = stdio_transport(
                transport.command, env=env, cwd=self._cwd, started=run.processes
            )
            async with mcp.Client(stream, cache=None, message_handler=handler) as client:
                yield client
            return
        assert isinstance(transport, HttpServer)
        import httpx2
        from mcp.client.streamable_http import streamable_http_client

        headers = {k.removeprefix("headers."): v for k, v in self._values.items()}
        timeout = httpx2.Timeout(30.0, read=300.0)
        async with httpx2.AsyncClient(headers=headers, timeout=timeout) as http:
            stream = streamable_http_client(transport.url, http_client=http)
            async with mcp.Client(stream, cache=None, message_handler=handler) as client:
                yield client

    def _message_handler(self, run: _Run) -> Any:
        async def handle(message: Any) -> None:
            method = getattr(message, "method", None)
            if method == "notifications/tools/list_changed" and run.client is not None:
                self._group.start_soon(self._relist, run)
            await anyio.lowlevel.checkpoint()

        return handle

    async def _relist(self, run: _Run) -> None:
        """Read the tool list again after the server announced a change (best effort)."""
        try:
            with anyio.fail_after(self.config.timeout_ms / 1000):
                if run.client is None:
                    return
                self.tools = await self._list(run.client)
        except Exception as exc:
            _log.warning("MCP server %s: reading its changed tool list failed: %r", self.name, exc)
            return
        if self._on_list_changed is not None:
            self._on_list_changed()

    async def _list(self, client: Any) -> Listing:
        """Every page of the server's tool list, in order."""
        tools: Listing = {}
        cursor: str | None = None
        seen: set[str] = set()
        for _ in range(MAX_PAGES):
            page = await client.list_tools(cursor=cursor)
            for tool in page.tools:
                tools.setdefault(
                    tool.name, tool.model_dump(mode="json", by_alias=True, exclude_none=True)
                )
            cursor = page.next_cursor
            if cursor is None:
                return tools
            if cursor in seen:
                raise RuntimeError(f"its tool list repeats the page cursor {cursor!r}")
            seen.add(cursor)
        raise RuntimeError(f"its tool list has more than {MAX_PAGES} pages")

    async def _end(self, run: _Run) -> None:
        """Stop ``run`` and wait until its process group is gone (bounded)."""
        run.stop.set()
        with anyio.move_on_after(10, shield=True):
            await run.gone.wait()
        if not run.gone.is_set():
            run.scope.cancel()
            with anyio.move_on_after(5, shield=True):
                await run.gone.wait()

    async def stop(self) -> None:
        """Stop the server (for good: at the session's end)."""
        run, self._run = self._run, None
        if run is not None:
            await self._end(run)

    # --- calls ---------------------------------------------------------------------------

    async def _live(self) -> _Run:
        """The running connection; after a failure, the server is started again, once."""
        async with self._lock:
            run = self._run
            if run is not None and run.client is not None and not self._broken:
                if not (run.processes and run.processes[-1].process.returncode is not None):
                    return run
                self._broken = True  # the process exited between two calls
            if self._failed is not None:
                raise McpServerFailed(
                    f"MCP server {self.name!r} failed and could not be restarted: {self._failed}",
                    server=self.name,
                )
            if run is not None:
                await self._end(run)
            try:
                await self.start()
            except McpServerFailed as exc:
                self._failed = exc.message
                raise
            self._broken = False
            assert self._run is not None
            return self._run

    async def call(
        self,
        tool: str,
        arguments: Mapping[str, Any],
        *,
        check: Callable[[Listing], None] | None = None,
    ) -> dict[str, Any]:
        """Call ``tool``; its result's JSON form. A server error, a server that dies or
        one that runs past ``timeout_ms`` is a raw error (the next call restarts it).
        ``check(tools)`` sees the server's current tool list (after a restart, the new
        one) before anything is sent, and may refuse the call by raising."""
        from mcp import MCPError
        from mcp_types import CONNECTION_CLOSED, REQUEST_TIMEOUT

        run = await self._live()
        if check is not None:
            check(self.tools)
        limit = self.config.timeout_ms / 1000
        error: Exception | None = None
        try:
            # The SDK ends a pending request with CONNECTION_CLOSED when the server's
            # stream ends, and with REQUEST_TIMEOUT (after sending the protocol's cancel)
            # at ``limit``: a dead or hung server cannot hold the call.
            result = await run.client.call_tool(tool, dict(arguments), read_timeout_seconds=limit)
        except Exception as exc:
            error = exc
        else:
            return dict(result.model_dump(mode="json", by_alias=True, exclude_none=True))
        if isinstance(error, MCPError) and error.code == REQUEST_TIMEOUT:
            self._broken = True
            raise Timeout(
                f"mcp/{self.name}/{tool}: the server did not answer within {limit:g} s"
                " (timeout_ms); the call was cancelled, and the next call restarts the server",
                server=self.name,
            )
        if isinstance(error, MCPError) and error.code != CONNECTION_CLOSED:
            raise HandlerError(
                f"mcp/{self.name}/{tool}: the server answered with MCP error {error.code}:"
                f" {error.message}",
                server=self.name,
            )
        if isinstance(error, RawError):
            raise error
        self._broken = True
        what = (
            "closed the connection during the call"
            if error is None or isinstance(error, MCPError)
            else f"failed during the call: {_describe(error)}"
        )
        raise self._fail(f"{what}; the next call starts it again", run)


def _describe(exc: BaseException) -> str:
    """A short, secret-free account of why a connection ended."""
    if isinstance(exc, BaseExceptionGroup):
        inner = [e for e in exc.exceptions if not isinstance(e, anyio.get_cancelled_exc_class())]
        if inner:
            return _describe(inner[0])
    if isinstance(exc, FileNotFoundError):
        return f"could not be started: no such program {exc.filename!r}"
    if isinstance(exc, PermissionError):
        return f"could not be started: permission denied ({exc.filename!r})"
    if isinstance(exc, OSError):
        return f"could not be started: {exc.strerror or exc}"
    code = getattr(exc, "code", None)
    message = getattr(exc, "message", None)
    if code == -32000:  # CONNECTION_CLOSED: the server went away before it answered
        return "closed the connection before it answered (it may have exited)"
    if isinstance(code, int) and isinstance(message, str):
        return f"answered with MCP error {code}: {message}"
    text = str(exc).strip() or type(exc).__name__
    return f"failed: {type(exc).__name__}: {text}"[:600]
