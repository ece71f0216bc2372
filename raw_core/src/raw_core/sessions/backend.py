"""The session backend: the storage edge of the runtime, as a protocol.

Every front end reads and writes sessions through the session service (:mod:`raw_core.app`),
and the service stores them through one :class:`SessionBackend`. SQLite
(:class:`raw_core.sessions.sqlite.SqliteBackend`) is the default implementation; another one (a
PostgreSQL backend, say) is registered by a plug-in through ``raw_register_session_backends``
and must pass the same contract tests (``tests/contracts/backend_contract.py``).

What a backend promises:

* **Two streams per session.** The *display history* holds what the user saw, append-only
  and paged with opaque cursors: messages, and display-only entries (a call's uncapped
  output, a request (approval or interaction) as it opened and as it ended, a panel update). The
  *model context* is what the next request sends: the messages (and model-only messages)
  from the compaction boundary on, after the compaction summary. Display-only entries
  never enter the model context; model-only messages never appear in the display history.
* **One writer per session**, across processes: :meth:`SessionBackend.open_writer` holds
  the session until its block ends; a second writer waits up to ``wait`` seconds and then
  gets ``session_locked``. Readers never wait for a writer and never see half an append.
* **Nothing that can wait long blocks the event loop**: lock waits, syncs to disk, page
  reads and loading a deep session run off it. A short commit may run inline where that is
  measured to be cheaper.
* **Pending requests are records**: an approval or an interaction that waits for an
  answer is a :class:`PendingRequest` with an id, a deadline and a state, stored with its
  session; any front end answers it by id (:meth:`SessionBackend.answer_request`), the first
  answer wins, and the writer waiting for it sees it (:meth:`SessionBackend.wait_for_answer`),
  also from another process.
* **Sessions expire** after ``expire_after_days`` without conversation activity (an
  append or a compaction; reading, listing and state changes never renew one). An expired
  session is not listed; reading it or opening it for writing raises ``session_expired``
  naming when it expired (so nothing revives it); the backend's first write (creating a
  session or opening a writer, also a refused one) deletes the expired sessions' data,
  skipping any held by a writer. A backend takes "now" from the ``clock`` it is opened
  with, when given (the contract tests move one).
* **Old data is never converted**: a backend whose layout changes stores new sessions
  apart and leaves the old data untouched.

The records it stores are defined in :mod:`raw_core.sessions.records` and re-exported here.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Mapping, Sequence
from contextlib import AbstractAsyncContextManager
from datetime import datetime
from typing import TYPE_CHECKING, Any, Protocol, runtime_checkable

import attrs

from raw_core.sessions.records import (
    MAX_TITLE_CHARS,
    MAX_TOOL_OUTPUT_BYTES,
    REQUEST_STATES,
    ApprovalAnswer,
    DisplayEntry,
    DisplayItem,
    DisplayPage,
    InteractionAnswer,
    ModelOnly,
    PanelKey,
    PanelSource,
    PanelUpdate,
    PendingRequest,
    RequestAnswer,
    RequestEntry,
    RequestKind,
    RequestState,
    SessionInfo,
    SessionState,
    ToolOutput,
    document_json,
    new_request_id,
    prompt_title,
    title_text,
)

if TYPE_CHECKING:
    from raw_core.sessions.messages import Message

__all__ = [
    "MAX_TITLE_CHARS",
    "MAX_TOOL_OUTPUT_BYTES",
    "REQUEST_STATES",
    "ApprovalAnswer",
    "DisplayEntry",
    "DisplayItem",
    "DisplayPage",
    "InteractionAnswer",
    "ModelOnly",
    "PanelKey",
    "PanelSource",
    "PanelUpdate",
    "PendingRequest",
    "RequestAnswer",
    "RequestEntry",
    "RequestKind",
    "RequestState",
    "SessionBackend",
    "SessionBackendRecord",
    "SessionInfo",
    "SessionState",
    "SessionWriter",
    "ToolOutput",
    "document_json",
    "new_request_id",
    "prompt_title",
    "title_text",
]

# --- the protocols -----------------------------------------------------------------------


@runtime_checkable
class SessionWriter(Protocol):
    """The one writer of a session, for the block of :meth:`SessionBackend.open_writer`."""

    @property
    def session_id(self) -> str:
        """The session's id."""
        ...

    async def append(self, entries: Sequence[Any]) -> None:
        """Append ``entries`` in one transaction: all of them or none, for readers and
        after a crash. Messages go to both streams, :class:`ModelOnly` messages to the
        model context only, :class:`ToolOutput`, :class:`RequestEntry` and
        :class:`PanelUpdate` to the display history only. Nothing to append is a no-op."""
        ...

    async def compact(self, summary: Message, *, replace_first: int) -> None:
        """Replace the first ``replace_first`` messages of the model context with
        ``summary`` (the compaction boundary); the display history keeps everything."""
        ...

    async def read_context(self) -> tuple[Message, ...]:
        """The model context, summary first."""
        ...

    async def state(self) -> SessionState:
        """The session's typed state."""
        ...

    async def set_state(self, state: SessionState) -> None:
        """Replace the session's state (title and cwd included); not conversation
        activity, so expiry is unaffected."""
        ...

    async def add_request(self, request: PendingRequest) -> None:
        """Store a new pending request of this session."""
        ...

    async def close_request(
        self, request_id: str, state: RequestState, answer: RequestAnswer | None = None
    ) -> PendingRequest:
        """End a pending request from the writer's side (answered by its own front end,
        expired, cancelled, or interrupted when the session is opened again) and return it
        as stored. When another front end answered
        first, that answer stands and is returned."""
        ...

    async def end_turn(self) -> None:
        """Mark a completed turn: make every commit so far durable (a power loss keeps
        it). Runs off the event loop when it waits for the disk."""
        ...


@runtime_checkable
class SessionBackend(Protocol):
    """Where sessions live. One backend serves any number of sessions at once."""

    @property
    def name(self) -> str:
        """The backend's registered name (``"sqlite"``, ...)."""
        ...

    async def create(self, *, title: str = "", cwd: str | None = None) -> SessionInfo:
        """A new, empty session with a fresh stable id (the backend's first write deletes
        the expired sessions first); ``title`` is stored as :func:`title_text` makes it."""
        ...

    async def info(self, session_id: str) -> SessionInfo:
        """One session; ``session_not_found`` when there is none, ``session_expired``
        when it expired (as for every read of one session below)."""
        ...

    async def list_sessions(self, *, limit: int | None = None) -> tuple[SessionInfo, ...]:
        """Sessions that have not expired, most recent activity first (listing does not
        renew them)."""
        ...

    async def page(
        self,
        session_id: str,
        cursor: str | None = None,
        *,
        limit: int = 100,
        newest_first: bool = False,
    ) -> DisplayPage:
        """Up to ``limit`` display items after ``cursor`` (``None``: from the start, or
        from the end when ``newest_first``); ``invalid_cursor`` for a cursor this backend
        did not issue for this session and order."""
        ...

    async def tail_cursor(self, session_id: str) -> str:
        """An oldest-first cursor after the last item: pages from it hold only what is
        appended later."""
        ...

    async def wait_for_items(
        self, session_id: str, cursor: str, *, limit: int = 100
    ) -> DisplayPage:
        """The page after ``cursor`` (oldest first) as soon as it holds an item; it waits
        as long as it takes, so bound it with ``anyio.move_on_after``. Sees appends of
        writers in other processes too."""
        ...

    async def read_context(self, session_id: str) -> tuple[Message, ...]:
        """The session's model context, summary first."""
        ...

    async def state(self, session_id: str) -> SessionState:
        """The session's typed state."""
        ...

    def open_writer(
        self, session_id: str, *, wait: float | None = None
    ) -> AbstractAsyncContextManager[SessionWriter]:
        """``async with backend.open_writer(id) as writer:`` — the session's one writer
        for the block; ``session_locked`` after waiting ``wait`` seconds for another,
        ``session_expired`` for an expired session (the backend's first write deletes the
        expired sessions)."""
        ...

    async def delete(self, session_id: str, *, wait: float | None = None) -> None:
        """Delete a session and everything it holds (its requests too); an expired one
        too."""
        ...

    async def prune(self, now: datetime | None = None) -> tuple[str, ...]:
        """Delete the sessions that expired; skip one that is being written."""
        ...

    async def get_request(self, request_id: str) -> PendingRequest:
        """One request; ``request_not_found`` when there is none."""
        ...

    async def list_requests(
        self, session_id: str, *, pending_only: bool = True
    ) -> tuple[PendingRequest, ...]:
        """A session's requests, oldest first (only the pending ones by default)."""
        ...

    async def answer_request(self, request_id: str, answer: RequestAnswer) -> PendingRequest:
        """Answer a pending request (any front end, any process): the first answer wins;
        a request no longer pending is ``request_not_pending`` naming its state. The
        answer's type must fit the request's kind (``ValueError`` else; the session service
        validates an interaction's values against its form first)."""
        ...

    async def cancel_request(self, request_id: str, *, by: str) -> PendingRequest:
        """Cancel a pending interaction request (any front end, any process; ``by`` names
        it): it ends ``cancelled``, and the call waiting on it ends ``cancelled``. The first
        end wins: a request no longer pending is ``request_not_pending`` naming its state;
        ``request_not_found`` when there is none. An approval request is ``ValueError``: it
        is declined with an :class:`ApprovalAnswer` saying ``approved=False`` instead."""
        ...

    async def wait_for_answer(self, request_id: str) -> PendingRequest:
        """The request once it is no longer pending (answered in any process, expired or
        cancelled); it waits as long as it takes, so bound it with ``anyio.move_on_after``."""
        ...

    async def aclose(self) -> None:
        """Release what the backend holds (connections, threads)."""
        ...


@attrs.frozen(kw_only=True)
class SessionBackendRecord:
    """A session backend a plug-in ships (``raw_register_session_backends``), or raw's own
    SQLite one.

    ``sessions.backend`` in the config names it by ``name`` (``{"type": "<name>", ...}``);
    ``validate_config(options, field)`` checks the section's other keys and raises
    ``config_invalid`` naming the field below ``field``; ``factory(options=...,
    expire_after_days=..., resolve_var=...)`` opens the backend, where
    ``resolve_var(name)`` reads a config variable (a connection string given as
    ``{"var": "NAME"}``, say). A factory should take further keyword arguments
    (``**kwargs``) and ignore them, so later ones do not break it.

    ``variables(options, field)`` names the config variables valid options read, as
    ``{field path: variable name}``: raw checks each against ``vars`` when it loads the
    config (``config_invalid`` at that path), as it checks a model's ``api_key``.
    """

    name: str
    factory: Callable[..., Awaitable[SessionBackend]]
    validate_config: Callable[[Mapping[str, Any], str], None] | None = None
    variables: Callable[[Mapping[str, Any], str], Mapping[str, str]] | None = None
