"""Rows and records: ids, cursors, and the stored forms of entries, state and requests.

The bodies are the JSON forms raw's SQLite store writes (``raw_core.sessions.messages`` for
messages, ``raw_core.sessions.sqlite.entries`` for display-only entries), with the same
format numbers, so a row reads the same whichever store holds it. A row of a newer format
or kind is ``store_too_new``; one that cannot be read is ``store_corrupt``.
"""

from __future__ import annotations

import json
import re
import secrets
import time
from collections.abc import Callable
from datetime import UTC, datetime, timedelta
from typing import Any, Final

from psycopg.rows import TupleRow

from raw_core.errors import (
    RequestNotFound,
    RequestNotPending,
    SessionExpired,
    SessionNotFound,
    StoreCorrupt,
    StoreTooNew,
)
from raw_core.sessions.backend import (
    PendingRequest,
    SessionInfo,
    SessionState,
)
from raw_core.sessions.cursors import CursorFormat
from raw_core.sessions.messages import (
    MESSAGE_FORMAT,
    AssistantMessage,
    Message,
    ToolResultMessage,
    UserMessage,
    loads_message,
)
from raw_core.sessions.sqlite.entries import (
    ENTRY_FORMAT,
    decode_request_columns,
    dumps_json,
    encode_entry,
    loads_panel,
    loads_request,
    loads_tool_output,
)
from raw_store_postgres._errors import BACKEND
from raw_store_postgres._schema import (
    KIND_MESSAGE,
    KIND_PANEL,
    KIND_REQUEST,
    KIND_TOOL_OUTPUT,
    Connection,
)

__all__ = [
    "CURSORS",
    "Clock",
    "Connection",
    "Expiry",
    "decode_entry",
    "decode_message",
    "encode_entry",
    "info_from_row",
    "is_request_id",
    "is_session_id",
    "new_session_id",
    "not_found",
    "not_pending",
    "request_from_row",
    "request_not_found",
    "state_from_row",
    "state_text",
]

Clock = Callable[[], datetime]
"""The current time as an aware datetime."""

_SESSION_ID = re.compile(r"[0-9a-f]{32}")
_REQUEST_ID = re.compile(r"req_[0-9a-f]{32}")
_MESSAGES = (UserMessage, AssistantMessage, ToolResultMessage)


def new_session_id() -> str:
    """A fresh id of the form raw's SQLite store uses: creation time in milliseconds (12 hex
    digits), then 80 random bits, so ids sort by creation and never collide."""
    return f"{time.time_ns() // 1_000_000:012x}{secrets.token_hex(10)}"


def is_session_id(value: str) -> bool:
    return _SESSION_ID.fullmatch(value) is not None


def is_request_id(value: str) -> bool:
    return _REQUEST_ID.fullmatch(value) is not None


def _shown(value: str) -> str:
    return value if len(value) <= 80 else value[:77] + "..."


def not_found(session_id: str) -> SessionNotFound:
    shown = _shown(session_id)
    return SessionNotFound(
        f"no session has the id {shown!r} (it may have expired and been pruned)",
        session_id=shown,
    )


def request_not_found(request_id: str) -> RequestNotFound:
    shown = _shown(request_id)
    return RequestNotFound(
        f"no pending request has the id {shown!r} (its session may have been deleted)",
        request_id=shown,
    )


def not_pending(request: PendingRequest) -> RequestNotPending:
    why = (
        "its deadline passed before the answer came"
        if request.state == "expired"
        else "the first answer (or its end) stands"
    )
    return RequestNotPending(
        f"expected a pending request, found request {request.id} {request.state}: {why}",
        request_id=request.id,
        state=request.state,
    )


def utc(moment: datetime) -> datetime:
    """``moment`` in UTC (the server hands times back in its own time zone)."""
    return moment.astimezone(UTC)


class Expiry:
    """How long a session lasts without conversation activity, and the clock that says
    what time it is."""

    def __init__(self, after: timedelta, clock: Clock | None = None) -> None:
        self.after = after
        self._clock = clock

    def now(self) -> datetime:
        return utc(self._clock()) if self._clock is not None else datetime.now(UTC)

    def cutoff(self, now: datetime | None = None) -> datetime:
        """The oldest last activity of a session that has not expired at ``now``."""
        return (self.now() if now is None else utc(now)) - self.after

    def check(self, session_id: str, last_activity: datetime) -> None:
        """``session_expired`` when the session has expired by now."""
        if last_activity < self.cutoff():
            when = utc(last_activity + self.after)
            days = self.after.total_seconds() / 86400
            raise SessionExpired(
                f"session {session_id} expired at {when:%Y-%m-%d %H:%M:%S} UTC, {days:g} days"
                " after its last activity: an expired session cannot be opened or resumed,"
                " and its data is deleted the next time the store is opened for writing",
                session_id=session_id,
                expired_at=when.isoformat(),
            )


# --- cursors -------------------------------------------------------------------------------

CURSORS: Final = CursorFormat("pg1", 2**62)
"""This backend's cursors (:mod:`raw_core.sessions.cursors` is the codec): ``pg1``, a
position past every entry of a session at 2**62."""


# --- entries -------------------------------------------------------------------------------


def _too_new(session_id: str, what: str, found: str, reads: str) -> StoreTooNew:
    return StoreTooNew(
        f"{what} of session {session_id} has {found}, written by a newer raw "
        f"(this raw reads {reads})",
        backend=BACKEND,
        session_id=session_id,
    )


def _unreadable(session_id: str, what: str, exc: Exception) -> StoreCorrupt:
    return StoreCorrupt(
        f"{what} of session {session_id} cannot be read: {exc}",
        backend=BACKEND,
        session_id=session_id,
    )


def decode_message(session_id: str, seq: int, fmt: int | None, body: str | None) -> Message:
    """A stored message."""
    if fmt is not None and fmt > MESSAGE_FORMAT:
        raise _too_new(session_id, f"message {seq}", f"format {fmt}", f"format {MESSAGE_FORMAT}")
    try:
        if fmt != MESSAGE_FORMAT or body is None:
            raise ValueError(f"format {fmt!r} with {'no' if body is None else 'a'} body")
        return loads_message(body)
    except ValueError as exc:
        raise _unreadable(session_id, f"message {seq}", exc) from exc


_LOADERS: Final[dict[int, Callable[[str], Any]]] = {
    KIND_TOOL_OUTPUT: loads_tool_output,
    KIND_REQUEST: loads_request,
    KIND_PANEL: loads_panel,
}


def decode_entry(session_id: str, seq: int, kind: int, fmt: int, body: str) -> Any:
    """A stored display row: a message, a tool output, a request or a panel update."""
    if kind == KIND_MESSAGE:
        return decode_message(session_id, seq, fmt, body)
    loader = _LOADERS.get(kind)
    if loader is None:
        if kind > KIND_PANEL:
            raise _too_new(session_id, f"entry {seq}", f"kind {kind}", f"up to {KIND_PANEL}")
        raise _unreadable(session_id, f"entry {seq}", ValueError(f"kind {kind} in a page"))
    if fmt > ENTRY_FORMAT:
        raise _too_new(session_id, f"entry {seq}", f"format {fmt}", f"format {ENTRY_FORMAT}")
    try:
        if fmt != ENTRY_FORMAT:
            raise ValueError(f"format {fmt!r}")
        return loader(body)
    except ValueError as exc:
        raise _unreadable(session_id, f"entry {seq}", exc) from exc


# --- sessions and their state ----------------------------------------------------------------

INFO_COLUMNS: Final = "id, title, created_at, last_activity, cwd"


def info_from_row(row: TupleRow) -> SessionInfo:
    return SessionInfo(
        id=row[0], title=row[1], created_at=utc(row[2]), last_activity=utc(row[3]), cwd=row[4]
    )


def _corrupt_state(session_id: str, problem: str) -> StoreCorrupt:
    return StoreCorrupt(
        f"the state of session {session_id} cannot be read: {problem}",
        backend=BACKEND,
        session_id=session_id,
    )


def _string_map(value: Any, key: str, session_id: str) -> dict[str, str]:
    if not isinstance(value, dict) or not all(
        isinstance(k, str) and isinstance(v, str) for k, v in value.items()
    ):
        raise _corrupt_state(session_id, f"expected {key} to map names to strings")
    return value


def _panel_keys(value: Any, session_id: str) -> tuple[tuple[str, str], ...]:
    if not isinstance(value, list) or not all(
        isinstance(p, list) and len(p) == 2 and all(isinstance(x, str) for x in p) for p in value
    ):
        raise _corrupt_state(session_id, "expected panels to be a list of [identity, panel id]")
    return tuple((identity, panel) for identity, panel in value)


def state_from_row(title: str, cwd: str | None, text: str, session_id: str) -> SessionState:
    """The typed state of a sessions row (the keys raw's SQLite store uses: ``tools``,
    ``cache_key``, ``skills_seen`` and ``panels``, ``[[identity, panel id], ...]``)."""
    try:
        data = json.loads(text)
    except ValueError as exc:
        raise _corrupt_state(session_id, str(exc)) from exc
    if not isinstance(data, dict):
        raise _corrupt_state(session_id, f"expected an object, found {type(data).__name__}")
    tools = data.get("tools")
    cache_key = data.get("cache_key")
    if cache_key is not None and not isinstance(cache_key, str):
        raise _corrupt_state(session_id, "expected cache_key to be a string")
    return SessionState(
        title=title,
        cwd=cwd,
        tool_digests=None if tools is None else _string_map(tools, "tools", session_id),
        cache_key=cache_key,
        skills_seen=_string_map(data.get("skills_seen", {}), "skills_seen", session_id),
        panels=_panel_keys(data.get("panels", []), session_id),
    )


def state_text(state: SessionState) -> str:
    """The JSON object of a typed state (its title and cwd have columns of their own)."""
    data: dict[str, Any] = {}
    if state.tool_digests is not None:
        data["tools"] = dict(state.tool_digests)
    if state.cache_key is not None:
        data["cache_key"] = state.cache_key
    if state.skills_seen:
        data["skills_seen"] = dict(state.skills_seen)
    if state.panels:
        data["panels"] = [list(key) for key in state.panels]
    return dumps_json(data)


# --- requests ------------------------------------------------------------------------------

REQUEST_COLUMNS: Final = (
    "r.id, s.id, r.kind, r.tool_call_id, r.show, r.created_at, r.deadline, r.state,"
    " r.answer, r.answered_at"
)


def request_from_row(row: TupleRow) -> PendingRequest:
    rid, sid, kind, call_id, show, created_at, deadline, state, answer, answered_at = row
    try:
        shown, decoded = decode_request_columns(kind, show, state, answer)
    except ValueError as exc:
        raise StoreCorrupt(
            f"request {rid} of session {sid} cannot be read: {exc}",
            backend=BACKEND,
            session_id=sid,
        ) from exc
    return PendingRequest(
        id=rid,
        session_id=sid,
        kind=kind,
        tool_call_id=call_id,
        show=shown,
        created_at=utc(created_at),
        deadline=None if deadline is None else utc(deadline),
        state=state,
        answer=decoded,
        answered_at=None if answered_at is None else utc(answered_at),
    )
