"""The ACP agent: the protocol's methods, each through raw's session service.

Every ACP session is a raw session (one id for the CLI, the dashboard and ACP), held open
as its one writer by a task of the server from ``session/new`` or ``session/load`` until
the connection ends. ``session/prompt`` runs a turn in it, ``session/cancel`` cancels
that turn as Ctrl-C does in the terminal, ``session/load`` replays any raw session's
display history (one started with ``raw run`` too), ``session/list`` lists the store.
When the client goes away, running turns are cancelled (finished results kept,
unfinished calls recorded as cancelled) and the sessions closed, still valid.
"""

from __future__ import annotations

import contextlib
import json
import logging
import os
from collections.abc import Awaitable, Callable, Sequence
from typing import Any

import anyio
import anyio.abc
import attrs
from acp import PROTOCOL_VERSION, RequestError
from acp.schema import (
    AgentCapabilities,
    AuthenticateResponse,
    ClientCapabilities,
    Implementation,
    InitializeResponse,
    ListSessionsResponse,
    LoadSessionResponse,
    McpCapabilities,
    NewSessionResponse,
    PromptCapabilities,
    PromptResponse,
    SessionCapabilities,
    SessionInfo,
    SessionListCapabilities,
)

from raw_acp import __version__
from raw_acp.client_mcp import ClientServers, client_mcp_app
from raw_acp.frontend import AcpFrontEnd, Outbox
from raw_acp.history import replay
from raw_core import App, RawError, Session
from raw_core.errors import TurnInProgress, UsageInvalid

__all__ = ["RawAgent", "prompt_text", "request_error"]

logger = logging.getLogger("raw_acp")

_STOP_REASONS = {
    "completed": "end_turn",
    "cancelled": "cancelled",
    "max_steps": "max_turn_requests",
}


def request_error(exc: RawError) -> RequestError:
    """A raw error as a JSON-RPC error: ``-32602`` (the request cannot be done as asked),
    with raw's ``{code, message, field, ...}`` as its data."""
    return RequestError(-32602, f"{exc.code}: {exc.message}", exc.to_dict())


def prompt_text(blocks: Sequence[Any]) -> str:
    """The user's message from a prompt's content blocks: text as it is, an embedded text
    resource as its text under its URI, a resource link by name and URI."""
    parts: list[str] = []
    for block in blocks:
        kind = getattr(block, "type", None)
        if kind == "text":
            parts.append(block.text)
        elif kind == "resource_link":
            parts.append(f"[{block.name}]({block.uri})")
        elif kind == "resource":
            resource = block.resource
            text = getattr(resource, "text", None)
            if text is not None:
                parts.append(f"{resource.uri}:\n```\n{text}\n```")
            else:
                parts.append(f"[binary resource {resource.uri} omitted]")
        else:
            parts.append(f"[{kind} content omitted: raw takes text]")
    return "\n".join(parts)


@attrs.define
class _Live:
    """A session this connection holds open."""

    session: Session
    front_end: AcpFrontEnd
    closed: anyio.Event = attrs.field(factory=anyio.Event)
    idle: anyio.Event = attrs.field(factory=anyio.Event)

    def __attrs_post_init__(self) -> None:
        self.idle.set()


class RawAgent:
    """The ``acp.Agent`` that ``raw acp`` serves (see the module docstring)."""

    def __init__(
        self,
        app: App,
        group: anyio.abc.TaskGroup,
        *,
        agent: str | None = None,
        send: Callable[[dict[str, Any]], Awaitable[None]] | None = None,
    ) -> None:
        self.app = app
        self._send = send
        self.agent_name = agent
        self._group = group
        self._client: Any = None
        self.outbox: Outbox | None = None
        self.client_capabilities = ClientCapabilities()
        self._live: dict[str, _Live] = {}
        self.disconnected = False

    def on_connect(self, conn: Any) -> None:
        """Keep the client's side of the connection; start sending updates."""
        self._client = conn
        self.outbox = Outbox(conn, self._send)
        self._group.start_soon(self.outbox.run, name="raw acp updates")

    # --- the protocol's methods ----------------------------------------------------------

    async def initialize(
        self,
        protocol_version: int,
        client_capabilities: ClientCapabilities | None = None,
        client_info: Implementation | None = None,
        **kwargs: Any,
    ) -> InitializeResponse:
        """What raw supports: loading sessions, listing them, text prompts with embedded
        context, and MCP servers over stdio and HTTP when raw-mcp is installed."""
        if client_capabilities is not None:
            self.client_capabilities = client_capabilities
        mcp = ClientServers.available()
        return InitializeResponse(
            protocol_version=min(protocol_version, PROTOCOL_VERSION),
            agent_capabilities=AgentCapabilities(
                load_session=True,
                prompt_capabilities=PromptCapabilities(embedded_context=True),
                mcp_capabilities=McpCapabilities(http=mcp, sse=False),
                session_capabilities=SessionCapabilities(list=SessionListCapabilities()),
            ),
            agent_info=Implementation(name="raw", title="raw", version=__version__),
        )

    async def authenticate(self, method_id: str, **kwargs: Any) -> AuthenticateResponse:
        """raw needs no authentication of its own (the models' keys are in its config)."""
        return AuthenticateResponse()

    async def new_session(
        self, cwd: str, mcp_servers: Sequence[Any] | None = None, **kwargs: Any
    ) -> NewSessionResponse:
        """A new raw session working in ``cwd``."""
        live = await self._open(None, cwd, mcp_servers or ())
        return NewSessionResponse(session_id=live.session.id)

    async def load_session(
        self, cwd: str, session_id: str, mcp_servers: Sequence[Any] | None = None, **kwargs: Any
    ) -> LoadSessionResponse:
        """Resume raw session ``session_id`` in ``cwd`` and replay what it showed."""
        live = self._live.get(session_id)
        if live is None:
            live = await self._open(session_id, cwd, mcp_servers or ())
        assert self.outbox is not None
        await replay(self.app, live.session.id, self.outbox, live.front_end)
        await self.outbox.drain()
        return LoadSessionResponse()

    async def list_sessions(
        self, cwd: str | None = None, cursor: str | None = None, **kwargs: Any
    ) -> ListSessionsResponse:
        """raw's sessions, most recent first (those of ``cwd`` when it is given)."""
        try:
            found = await self.app.list_sessions()
        except RawError as exc:
            raise request_error(exc) from None
        sessions = [
            SessionInfo(
                session_id=info.id,
                cwd=info.cwd or "/",
                title=info.title or None,
                updated_at=info.last_activity.isoformat(),
            )
            for info in found
            if cwd is None or info.cwd == cwd
        ]
        return ListSessionsResponse(sessions=sessions)

    async def prompt(self, session_id: str, prompt: Sequence[Any], **kwargs: Any) -> PromptResponse:
        """One turn; its text, calls and plans stream as updates before the answer."""
        live = self._live.get(session_id)
        if live is None:
            raise RequestError.invalid_params(
                {
                    "sessionId": session_id,
                    "message": "no such session on this connection:"
                    " open it with session/new or session/load",
                }
            )
        assert self.outbox is not None
        if not live.idle.is_set():
            busy = TurnInProgress(f"session {session_id} is running a turn", session_id=session_id)
            raise request_error(busy)
        text = prompt_text(prompt)
        if not text.strip():  # as the terminal refuses it: no turn, nothing changes
            raise request_error(UsageInvalid("the prompt is empty", field="prompt"))
        if self.disconnected:  # read after the end of input: the turn is not started
            return PromptResponse(stop_reason="cancelled")
        idle = live.idle = anyio.Event()
        try:
            # An untitled session is titled by the first prompt the hooks let through.
            ended = await live.session.run_turn(text)
        except RawError as exc:  # a turn another front end runs, a store that failed
            raise request_error(exc) from None
        finally:
            idle.set()
            await self.outbox.drain()  # every update of the turn goes before its answer
        if ended.reason == "error":
            error = ended.error or {}
            raise RequestError(
                -32603, f"{error.get('code', 'error')}: {error.get('message', '')}", error
            )
        return PromptResponse(stop_reason=_STOP_REASONS[ended.reason])  # type: ignore[arg-type]

    async def cancel(self, session_id: str, **kwargs: Any) -> None:
        """Cancel the session's running turn, as Ctrl-C does in the terminal."""
        self.app.cancel(session_id, "cancelled by the ACP client")

    # --- sessions held open --------------------------------------------------------------

    async def _open(self, session_id: str | None, cwd: str, mcp_servers: Sequence[Any]) -> _Live:
        if not os.path.isabs(cwd):
            raise RequestError.invalid_params(
                {"cwd": cwd, "message": "cwd must be an absolute path"}
            )
        if not await anyio.Path(cwd).is_dir():  # refused before anything is made
            missing = not await anyio.Path(cwd).exists()
            raise RequestError.invalid_params(
                {
                    "cwd": cwd,
                    "message": f"cwd {json.dumps(cwd, ensure_ascii=False)} "
                    + ("does not exist" if missing else "is not a directory"),
                }
            )
        servers = ClientServers.parse(mcp_servers, self.app.config)
        assert self.outbox is not None
        elicitation = self.client_capabilities.elicitation
        front_end = AcpFrontEnd(
            self.outbox,
            self._client,
            cwd=cwd,
            can_elicit=elicitation is not None and elicitation.form is not None,
        )
        try:
            live: _Live = await self._group.start(
                self._hold, session_id, cwd, front_end, servers, name="raw acp session"
            )
        except RawError as exc:
            raise request_error(exc) from None
        return live

    async def _hold(
        self,
        session_id: str | None,
        cwd: str,
        front_end: AcpFrontEnd,
        servers: ClientServers,
        *,
        task_status: anyio.abc.TaskStatus[_Live],
    ) -> None:
        """Hold one session open until the connection ends."""
        started = False
        try:
            async with contextlib.AsyncExitStack() as stack:
                app, agent = await stack.enter_async_context(
                    client_mcp_app(self.app, servers, self.agent_name)
                )
                session = await stack.enter_async_context(
                    app.open_session(session_id, agent=agent, front_end=front_end, cwd=cwd)
                )
                front_end.session_id = session.id
                front_end.identities = {
                    definition.name: definition.identity
                    for definition in session.agent.definitions()
                }
                live = _Live(session=session, front_end=front_end)
                self._live[session.id] = live
                started = True
                task_status.started(live)
                try:
                    await live.closed.wait()
                finally:
                    self._live.pop(session.id, None)
        except RawError:
            if not started:
                raise
            logger.exception("closing an ACP session failed")

    def disconnect(self) -> None:
        """The input has ended: cancel the running turns (each answers its prompt
        ``cancelled``); the other requests read before the end are still answered."""
        self.disconnected = True
        for live in list(self._live.values()):
            if not live.idle.is_set():
                live.session.cancel("the ACP client disconnected")

    async def shutdown(self) -> None:
        """The client is gone: cancel running turns, let them record how they ended, and
        close every session (each stays valid in the store)."""
        for live in list(self._live.values()):
            live.session.cancel("the ACP client disconnected")
        with anyio.move_on_after(10):
            for live in list(self._live.values()):
                await live.idle.wait()
        for live in list(self._live.values()):
            live.closed.set()
        if self.outbox is not None:
            with anyio.move_on_after(10):  # what is queued goes out before the wire closes
                await self.outbox.drain()
            self.outbox.close()
