"""The reads, each one statement (so one snapshot: a reader never sees half an append, and
never waits for a writer), on any connection: a pooled one for the backend, the writer's
own for the writer.

Every read of one session finds the session's row in the same statement, so a session
that is gone is ``session_not_found`` and, given an :class:`~raw_store_postgres._rows.Expiry`,
an expired one ``session_expired``.
"""

from __future__ import annotations

from datetime import datetime
from typing import Final

from raw_core.sessions.backend import (
    DisplayItem,
    DisplayPage,
    PendingRequest,
    SessionInfo,
    SessionState,
)
from raw_core.sessions.cursors import Cursor
from raw_store_postgres._rows import (
    CURSORS,
    INFO_COLUMNS,
    REQUEST_COLUMNS,
    Connection,
    Expiry,
    decode_entry,
    info_from_row,
    not_found,
    request_from_row,
    state_from_row,
    utc,
)
from raw_store_postgres._schema import CONTEXT_KINDS_END, KIND_MODEL_ONLY, SCHEMA

__all__ = [
    "MAX_PAGE_SIZE",
    "context_of",
    "info_of",
    "list_requests_of",
    "list_sessions_of",
    "page_of",
    "request_on",
    "state_of",
    "tail_of",
]

MAX_PAGE_SIZE: Final = 10_000
_END: Final = 2**62

_CONTEXT = f"""
SELECT 0::bigint AS seq, summary_format, summary_body FROM {SCHEMA}.sessions
    WHERE key = %(key)s AND summary_body IS NOT NULL
UNION ALL
(SELECT e.seq, e.format, e.body FROM {SCHEMA}.entries AS e, {SCHEMA}.sessions AS s
    WHERE s.key = %(key)s AND e.session_key = s.key AND e.seq >= s.context_from
    AND e.kind < %(kinds_end)s ORDER BY e.seq)
"""

_PAGE = f"""
SELECT s.key, s.last_activity, e.seq, e.created_at, e.kind, e.format, e.body
FROM {SCHEMA}.sessions AS s LEFT JOIN LATERAL (
    SELECT seq, created_at, kind, format, body FROM {SCHEMA}.entries
    WHERE session_key = s.key AND seq {{op}} %(start)s AND kind <> {KIND_MODEL_ONLY}
    ORDER BY seq {{order}} LIMIT %(limit)s
) AS e ON true
WHERE s.id = %(id)s
"""
_PAGE_OLDEST_FIRST = _PAGE.format(op=">", order="ASC")
_PAGE_NEWEST_FIRST = _PAGE.format(op="<", order="DESC")


def _check(expiry: Expiry | None, session_id: str, last_activity: datetime) -> None:
    if expiry is not None:
        expiry.check(session_id, last_activity)


async def info_of(connection: Connection, session_id: str, expiry: Expiry | None) -> SessionInfo:
    cursor = await connection.execute(
        f"SELECT {INFO_COLUMNS} FROM {SCHEMA}.sessions WHERE id = %s", (session_id,)
    )
    row = await cursor.fetchone()
    if row is None:
        raise not_found(session_id)
    _check(expiry, session_id, row[3])
    return info_from_row(row)


async def list_sessions_of(
    connection: Connection, *, limit: int | None, expiry: Expiry
) -> tuple[SessionInfo, ...]:
    cursor = await connection.execute(
        f"SELECT {INFO_COLUMNS} FROM {SCHEMA}.sessions WHERE last_activity >= %s"
        " ORDER BY last_activity DESC, id DESC LIMIT %s",
        # PostgreSQL's bigint ends at 2**63 - 1: a limit past it is no limit (LIMIT NULL).
        (expiry.cutoff(), None if limit is not None and limit >= 2**63 else limit),
    )
    return tuple(info_from_row(row) for row in await cursor.fetchall())


async def page_of(
    connection: Connection,
    session_id: str,
    cursor: str | None,
    *,
    limit: int,
    newest_first: bool,
    expiry: Expiry,
) -> DisplayPage:
    """Up to ``limit`` display items after ``cursor`` (keyset paging on the primary key:
    the same cost at any depth)."""
    if not 1 <= limit <= MAX_PAGE_SIZE:
        raise ValueError(f"expected a page size from 1 to {MAX_PAGE_SIZE}, found {limit}")
    if cursor is None:
        start = _END if newest_first else 0
    else:
        start = CURSORS.decode(cursor, session_id=session_id, newest_first=newest_first).position
    query = _PAGE_NEWEST_FIRST if newest_first else _PAGE_OLDEST_FIRST
    found = await connection.execute(query, {"id": session_id, "start": start, "limit": limit + 1})
    rows = await found.fetchall()
    if not rows:
        raise not_found(session_id)
    _check(expiry, session_id, rows[0][1])
    entries = [row for row in rows if row[2] is not None]
    has_more = len(entries) > limit
    items = tuple(
        DisplayItem(
            seq=seq,
            created_at=utc(created_at),
            entry=decode_entry(session_id, seq, kind, fmt, body),
        )
        for _key, _activity, seq, created_at, kind, fmt, body in entries[:limit]
    )
    if newest_first:
        position = items[-1].seq if has_more else None
    else:
        position = items[-1].seq if items else start
    next_cursor = (
        None
        if position is None
        else CURSORS.encode(
            Cursor(session_id=session_id, newest_first=newest_first, position=position)
        )
    )
    return DisplayPage(items=items, next_cursor=next_cursor, has_more=has_more)


async def tail_of(connection: Connection, session_id: str, expiry: Expiry) -> str:
    found = await connection.execute(
        f"SELECT s.last_activity, (SELECT coalesce(max(seq), 0) FROM {SCHEMA}.entries"
        f" WHERE session_key = s.key) FROM {SCHEMA}.sessions AS s WHERE s.id = %s",
        (session_id,),
    )
    row = await found.fetchone()
    if row is None:
        raise not_found(session_id)
    _check(expiry, session_id, row[0])
    return CURSORS.encode(Cursor(session_id=session_id, newest_first=False, position=int(row[1])))


async def context_of(
    connection: Connection, key: int, kinds_end: int = CONTEXT_KINDS_END
) -> list[tuple[int, int | None, str | None]]:
    """``(position, format, body)`` of the model context: the summary (position 0), then
    the context rows."""
    found = await connection.execute(_CONTEXT, {"key": key, "kinds_end": kinds_end})
    return [(int(seq), fmt, body) for seq, fmt, body in await found.fetchall()]


async def session_key(connection: Connection, session_id: str, expiry: Expiry | None) -> int:
    """The session's key (checking it is there and, with ``expiry``, has not expired)."""
    found = await connection.execute(
        f"SELECT key, last_activity FROM {SCHEMA}.sessions WHERE id = %s", (session_id,)
    )
    row = await found.fetchone()
    if row is None:
        raise not_found(session_id)
    _check(expiry, session_id, row[1])
    return int(row[0])


async def state_of(connection: Connection, session_id: str, expiry: Expiry | None) -> SessionState:
    found = await connection.execute(
        f"SELECT title, cwd, state, last_activity FROM {SCHEMA}.sessions WHERE id = %s",
        (session_id,),
    )
    row = await found.fetchone()
    if row is None:
        raise not_found(session_id)
    _check(expiry, session_id, row[3])
    return state_from_row(row[0], row[1], row[2], session_id)


_REQUEST = (
    f"SELECT {REQUEST_COLUMNS} FROM {SCHEMA}.requests AS r"
    f" JOIN {SCHEMA}.sessions AS s ON s.key = r.session_key"
)


async def request_on(
    connection: Connection, request_id: str, *, session_key: int | None = None
) -> PendingRequest | None:
    """The request, or None (also when it belongs to another session than the one with
    ``session_key``)."""
    if session_key is None:
        found = await connection.execute(f"{_REQUEST} WHERE r.id = %s", (request_id,))
    else:
        found = await connection.execute(
            f"{_REQUEST} WHERE r.id = %s AND r.session_key = %s", (request_id, session_key)
        )
    row = await found.fetchone()
    return None if row is None else request_from_row(row)


async def list_requests_of(
    connection: Connection, session_id: str, *, pending_only: bool, expiry: Expiry
) -> tuple[PendingRequest, ...]:
    pending = " AND r.state = 'pending'" if pending_only else ""
    found = await connection.execute(
        f"SELECT s.last_activity, {REQUEST_COLUMNS} FROM {SCHEMA}.sessions AS s"
        f" LEFT JOIN {SCHEMA}.requests AS r ON r.session_key = s.key{pending}"
        " WHERE s.id = %s ORDER BY r.added",
        (session_id,),
    )
    rows = await found.fetchall()
    if not rows:
        raise not_found(session_id)
    _check(expiry, session_id, rows[0][0])
    return tuple(request_from_row(row[1:]) for row in rows if row[1] is not None)
