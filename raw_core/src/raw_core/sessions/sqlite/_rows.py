"""What reading and writing share: times, the SQL of the display range scans, and the
decoding of stored rows into records (with the errors a bad or newer row raises)."""

from __future__ import annotations

import sqlite3
import time
from collections.abc import Callable
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from raw_core.errors import SessionNotFound, StoreCorrupt, StoreTooNew
from raw_core.sessions.backend import SessionInfo
from raw_core.sessions.messages import MESSAGE_FORMAT, Message, loads_message
from raw_core.sessions.sqlite._schema import (
    CONTEXT_KINDS_END,
    KIND_MESSAGE,
    KIND_MODEL_ONLY,
    KIND_PANEL,
    KIND_REQUEST,
    KIND_TOOL_OUTPUT,
    seq_range,
)
from raw_core.sessions.sqlite.entries import (
    ENTRY_FORMAT,
    loads_panel,
    loads_request,
    loads_tool_output,
)

__all__ = [
    "INFO_COLUMNS",
    "context_rows",
    "decode_entry",
    "decode_message",
    "from_ms",
    "info_from_row",
    "info_row",
    "last_seq",
    "not_found",
    "now_ms",
    "to_ms",
]


def now_ms() -> int:
    return time.time_ns() // 1_000_000


def to_ms(moment: datetime) -> int:
    return int(moment.timestamp() * 1000)


def from_ms(ms: int) -> datetime:
    return datetime.fromtimestamp(ms / 1000, tz=UTC)


def not_found(session_id: str) -> SessionNotFound:
    shown = session_id if len(session_id) <= 80 else session_id[:77] + "..."
    return SessionNotFound(
        f"no session has the id {shown!r} (it may have expired and been pruned)",
        session_id=shown,
    )


INFO_COLUMNS = "id, title, created_at, last_activity, cwd"


def info_from_row(row: tuple[str, str, int, int, str | None]) -> SessionInfo:
    return SessionInfo(
        id=row[0],
        title=row[1],
        created_at=from_ms(row[2]),
        last_activity=from_ms(row[3]),
        cwd=row[4],
    )


def info_row(
    connection: sqlite3.Connection,
    session_id: str,
    check: Callable[[str, int], None] | None = None,
) -> SessionInfo | None:
    """The session's info, or None; ``check(id, last_activity_ms)`` may refuse it first
    (an expired session)."""
    row = connection.execute(
        f"SELECT {INFO_COLUMNS} FROM sessions WHERE id = ?", (session_id,)
    ).fetchone()
    if row is None:
        return None
    if check is not None:
        check(row[0], row[3])
    return info_from_row(row)


def _too_new(path: Path, session_id: str, what: str, found: str, reads: str) -> StoreTooNew:
    return StoreTooNew(
        f"{what} of session {session_id} has {found}, written by a newer raw "
        f"(this raw reads {reads})",
        path=str(path),
        session_id=session_id,
    )


def _unreadable(path: Path, session_id: str, what: str, exc: Exception) -> StoreCorrupt:
    return StoreCorrupt(
        f"{what} of session {session_id} cannot be read: {exc}",
        path=str(path),
        session_id=session_id,
    )


def decode_message(
    path: Path, session_id: str, seq: int, fmt: int | None, body: str | None
) -> Message:
    """A stored message; :class:`StoreTooNew` for a newer format, :class:`StoreCorrupt` for
    a row that cannot be read."""
    if fmt is not None and fmt > MESSAGE_FORMAT:
        raise _too_new(
            path, session_id, f"message {seq}", f"format {fmt}", f"format {MESSAGE_FORMAT}"
        )
    try:
        if fmt != MESSAGE_FORMAT or body is None:
            raise ValueError(f"format {fmt!r} with {'no' if body is None else 'a'} body")
        return loads_message(body)
    except ValueError as exc:
        raise _unreadable(path, session_id, f"message {seq}", exc) from exc


_LOADERS: dict[int, Callable[[str], Any]] = {
    KIND_TOOL_OUTPUT: loads_tool_output,
    KIND_REQUEST: loads_request,
    KIND_PANEL: loads_panel,
}


def decode_entry(path: Path, session_id: str, seq: int, kind: int, fmt: int, body: str) -> Any:
    """A stored display row: a message, a tool output, an approval or a panel update."""
    if kind == KIND_MESSAGE:
        return decode_message(path, session_id, seq, fmt, body)
    loader = _LOADERS.get(kind)
    if loader is None:
        if kind > KIND_PANEL:
            raise _too_new(path, session_id, f"entry {seq}", f"kind {kind}", f"up to {KIND_PANEL}")
        raise _unreadable(path, session_id, f"entry {seq}", ValueError(f"kind {kind} in a page"))
    if fmt > ENTRY_FORMAT:
        raise _too_new(path, session_id, f"entry {seq}", f"format {fmt}", f"format {ENTRY_FORMAT}")
    try:
        if fmt != ENTRY_FORMAT:
            raise ValueError(f"format {fmt!r}")
        return loader(body)
    except ValueError as exc:
        raise _unreadable(path, session_id, f"entry {seq}", exc) from exc


# A session's rows lie in its own range of ``seq`` (see _schema.seq_range), so every query
# below is a range scan of the primary key. Model-only rows are skipped by pages and
# display-only rows by the context: both are rare beside messages, so the scans stay short.
PAGE_OLDEST_FIRST = (
    "SELECT seq, created_at, kind, format, body FROM display"
    f" WHERE seq > ? AND seq < ? AND kind != {KIND_MODEL_ONLY} ORDER BY seq LIMIT ?"
)
PAGE_NEWEST_FIRST = (
    "SELECT seq, created_at, kind, format, body FROM display"
    f" WHERE seq < ? AND seq > ? AND kind != {KIND_MODEL_ONLY} ORDER BY seq DESC LIMIT ?"
)
_LAST_SEQ_IN = "SELECT coalesce(max(seq), ?) FROM display WHERE seq > ? AND seq < ?"
_CONTEXT_HEAD = "SELECT key, context_from, summary_format, summary_body FROM sessions WHERE id = ?"
_CONTEXT_TAIL = (
    "SELECT seq, format, body FROM display"
    f" WHERE seq >= ? AND seq < ? AND kind < {CONTEXT_KINDS_END} ORDER BY seq"
)


def last_seq(connection: sqlite3.Connection, key: int) -> int:
    """The ``seq`` of the session's last display row (the bottom of its range if none)."""
    low, high = seq_range(key)
    (last,) = connection.execute(_LAST_SEQ_IN, (low, low, high)).fetchone()
    return int(last)


def context_rows(
    connection: sqlite3.Connection, session_id: str
) -> list[tuple[int, int | None, str | None]]:
    """``(position, format, body)`` of the model context: the summary (position 0), then
    the context rows from ``context_from`` on (their position in the session). Call inside
    a read transaction."""
    head = connection.execute(_CONTEXT_HEAD, (session_id,)).fetchone()
    if head is None:
        return []
    key, context_from, summary_format, summary_body = head
    low, high = seq_range(key)
    rows: list[tuple[int, int | None, str | None]] = []
    if summary_body is not None:
        rows.append((0, summary_format, summary_body))
    rows.extend(
        (seq - low, fmt, body)
        for seq, fmt, body in connection.execute(_CONTEXT_TAIL, (max(context_from, low), high))
    )
    return rows
