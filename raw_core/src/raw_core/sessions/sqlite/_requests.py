"""Pending requests (approvals and interactions) in the ``requests`` table: add, close,
answer, read.

A request belongs to a session (``session_key``; the session's delete trigger deletes its
requests). Every state change is one compare-and-set ``UPDATE ... WHERE state =
'pending'``: whoever changes a pending request first wins, in any process, with no lock
beyond SQLite's own write lock; the loser reads the request back and sees the winner's
answer. Each function runs inside a transaction its caller opened.
"""

from __future__ import annotations

import sqlite3
from pathlib import Path
from typing import Any

from raw_core.errors import RequestNotFound, RequestNotPending, StoreCorrupt
from raw_core.sessions.backend import PendingRequest, RequestAnswer, RequestState
from raw_core.sessions.sqlite._rows import from_ms, to_ms
from raw_core.sessions.sqlite.entries import (
    answer_state,
    check_cancelling,
    check_closing,
    decode_request_columns,
    dumps_json,
)

__all__ = [
    "answer_request",
    "close_request",
    "get_request",
    "insert_request",
    "list_requests",
    "not_found",
    "not_pending",
]

_COLUMNS = (
    "r.id, s.id, r.kind, r.tool_call_id, r.show, r.created_at, r.deadline, r.state,"
    " r.answer, r.answered_at"
)
_SELECT = f"SELECT {_COLUMNS} FROM requests AS r JOIN sessions AS s ON s.key = r.session_key"
_CLOSE = (
    "UPDATE requests SET state = ?, answer = ?, answered_at = ? WHERE id = ? AND state = 'pending'"
)


def not_found(request_id: str) -> RequestNotFound:
    shown = request_id if len(request_id) <= 80 else request_id[:77] + "..."
    return RequestNotFound(
        f"no pending request has the id {shown!r} (its session may have been deleted)",
        request_id=shown,
    )


def _request(row: tuple[Any, ...], path: Path) -> PendingRequest:
    rid, sid, kind, call_id, show, created_at, deadline, state, answer, answered_at = row
    try:
        shown, decoded = decode_request_columns(kind, show, state, answer)
    except ValueError as exc:
        raise StoreCorrupt(
            f"request {rid} of session {sid} cannot be read: {exc}",
            path=str(path),
            session_id=sid,
        ) from exc
    return PendingRequest(
        id=rid,
        session_id=sid,
        kind=kind,
        tool_call_id=call_id,
        show=shown,
        created_at=from_ms(created_at),
        deadline=None if deadline is None else from_ms(deadline),
        state=state,
        answer=decoded,
        answered_at=None if answered_at is None else from_ms(answered_at),
    )


def get_request(connection: sqlite3.Connection, request_id: str, path: Path) -> PendingRequest:
    """The request; :class:`RequestNotFound` when there is none."""
    row = connection.execute(f"{_SELECT} WHERE r.id = ?", (request_id,)).fetchone()
    if row is None:
        raise not_found(request_id)
    return _request(row, path)


def list_requests(
    connection: sqlite3.Connection, key: int, *, pending_only: bool, path: Path
) -> tuple[PendingRequest, ...]:
    """A session's requests, oldest first."""
    where = " AND r.state = 'pending'" if pending_only else ""
    rows = connection.execute(
        f"{_SELECT} WHERE r.session_key = ?{where} ORDER BY r.rowid", (key,)
    ).fetchall()
    return tuple(_request(row, path) for row in rows)


def insert_request(connection: sqlite3.Connection, key: int, request: PendingRequest) -> None:
    """Store a new pending request of the session with ``key``; ``ValueError`` when one
    has its id already."""
    try:
        connection.execute(
            "INSERT INTO requests (id, session_key, kind, tool_call_id, show, created_at,"
            " deadline, state) VALUES (?, ?, ?, ?, ?, ?, ?, 'pending')",
            (
                request.id,
                key,
                request.kind,
                request.tool_call_id,
                dumps_json(request.show),
                to_ms(request.created_at),
                None if request.deadline is None else to_ms(request.deadline),
            ),
        )
    except sqlite3.IntegrityError as exc:
        raise ValueError(f"expected a new request id, found {request.id!r} stored already") from exc


def close_request(
    connection: sqlite3.Connection,
    key: int,
    request_id: str,
    state: RequestState,
    answer: RequestAnswer | None,
    now: int,
    path: Path,
) -> PendingRequest:
    """Move the session's pending request to ``state``; the request as stored after (an
    earlier answer stands)."""
    current = get_request(connection, request_id, path)
    found = connection.execute(
        "SELECT session_key FROM requests WHERE id = ?", (request_id,)
    ).fetchone()
    if found is None or found[0] != key:
        raise not_found(request_id)
    if current.state != "pending":
        return current
    check_closing(current.kind, state, answer)
    answer_text = None if answer is None else dumps_json(answer.to_dict())
    connection.execute(_CLOSE, (state, answer_text, now, request_id))
    return get_request(connection, request_id, path)


def answer_request(
    connection: sqlite3.Connection, request_id: str, answer: RequestAnswer, now: int, path: Path
) -> tuple[PendingRequest, bool]:
    """Answer a pending request: the first answer wins. A request whose deadline passed is
    marked expired instead. Returns the request as stored and whether this answer was
    taken (raise :func:`not_pending` after the transaction when it was not: the expiry
    must commit). ``ValueError`` for an answer of the other kind's type."""
    state = answer_state(answer)
    check_closing(get_request(connection, request_id, path).kind, state, answer)
    return _close_pending(connection, request_id, state, dumps_json(answer.to_dict()), now, path)


def cancel_request(
    connection: sqlite3.Connection, request_id: str, now: int, path: Path
) -> tuple[PendingRequest, bool]:
    """Cancel a pending interaction request: the first end wins. A request whose deadline
    passed is marked expired instead. Returns the request as stored and whether this
    cancel was taken (raise :func:`not_pending` after the transaction when it was not).
    ``ValueError`` for an approval: it is declined with an answer instead."""
    check_cancelling(get_request(connection, request_id, path))
    return _close_pending(connection, request_id, "cancelled", None, now, path)


def _close_pending(
    connection: sqlite3.Connection,
    request_id: str,
    state: str,
    answer: str | None,
    now: int,
    path: Path,
) -> tuple[PendingRequest, bool]:
    """End a pending request as ``state`` (with its stored ``answer`` JSON) unless its
    deadline passed, when it is marked expired instead; the request as stored, and whether
    this end was taken."""
    updated = connection.execute(
        _CLOSE + " AND (deadline IS NULL OR deadline > ?)",
        (state, answer, now, request_id, now),
    ).rowcount
    if not updated:
        connection.execute(
            "UPDATE requests SET state = 'expired', answered_at = ?"
            " WHERE id = ? AND state = 'pending'",
            (now, request_id),
        )
    return get_request(connection, request_id, path), updated > 0


def not_pending(request: PendingRequest) -> RequestNotPending:
    """What answering a request that is no longer pending raises."""
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
