"""Reading one session: its display history in pages, its model context, its state.

A :class:`SessionReader` takes no lock, so it never waits for, nor blocks, a writer; each
call is one read transaction, so it sees one consistent snapshot and never half an
append. It works on any connection to the store's file: the sync store gives it the
store's own, the async backend (:mod:`raw_core.sessions.sqlite.backend`) a pooled one in a worker
thread, since a page of a deep session or a long context is not something to read on the
event loop.

A reader made with the store's :class:`~raw_core.sessions.sqlite._expiry.Expiry` refuses an
expired session with ``session_expired``; the writer, which holds its session, reads
without one.
"""

from __future__ import annotations

import sqlite3
from pathlib import Path

from raw_core.sessions.backend import DisplayItem, DisplayPage, SessionInfo, SessionState
from raw_core.sessions.cursors import Cursor
from raw_core.sessions.messages import Message
from raw_core.sessions.sqlite._cursor import CURSORS
from raw_core.sessions.sqlite._expiry import Expiry
from raw_core.sessions.sqlite._rows import (
    PAGE_NEWEST_FIRST,
    PAGE_OLDEST_FIRST,
    context_rows,
    decode_entry,
    decode_message,
    from_ms,
    info_row,
    last_seq,
    not_found,
)
from raw_core.sessions.sqlite._schema import SEQ_BITS, seq_range
from raw_core.sessions.sqlite._sqlite import read_transaction, sqlite_errors
from raw_core.sessions.sqlite._state import state_from_row

__all__ = ["MAX_PAGE_SIZE", "SessionReader"]

MAX_PAGE_SIZE = 10_000


class SessionReader:
    """Reads one session. Made by :meth:`SessionStore.open_reader`; a session deleted
    meanwhile raises :class:`SessionNotFound`, one expired meanwhile (by ``expiry``)
    :class:`SessionExpired`."""

    def __init__(
        self,
        connection: sqlite3.Connection,
        path: Path,
        session_id: str,
        expiry: Expiry | None = None,
    ) -> None:
        self._connection = connection
        self._path = path
        self._session_id = session_id
        self._expiry = expiry

    @property
    def session_id(self) -> str:
        """The session's id."""
        return self._session_id

    def info(self) -> SessionInfo:
        """The session's title, cwd, creation time and last activity."""
        with read_transaction(self._connection, self._path) as connection:
            info = info_row(connection, self._session_id, self._check)
        if info is None:
            raise not_found(self._session_id)
        return info

    def _check(self, session_id: str, last_activity_ms: int) -> None:
        if self._expiry is not None:
            self._expiry.check(session_id, last_activity_ms)

    def _require(self, connection: sqlite3.Connection) -> int:
        """The session's key; :class:`SessionNotFound` when it is gone,
        :class:`SessionExpired` when it expired."""
        found = connection.execute(
            "SELECT key, last_activity FROM sessions WHERE id = ?", (self._session_id,)
        ).fetchone()
        if found is None:
            raise not_found(self._session_id)
        self._check(self._session_id, found[1])
        return int(found[0])

    def page_display(
        self, cursor: str | None = None, *, limit: int = 100, newest_first: bool = False
    ) -> DisplayPage:
        """Up to ``limit`` display items after ``cursor`` (``None``: from the start, or
        from the end when ``newest_first``).

        Items are messages and display-only entries (:attr:`DisplayItem.kind`); model-only
        messages are not shown, and take a ``seq`` of their own, so ``seq`` can skip one.
        A cursor is an opaque string from :attr:`DisplayPage.next_cursor` or
        :meth:`tail_cursor`; it remembers its direction, and ``newest_first`` must agree
        with it (:class:`InvalidCursor` otherwise, or for a string that is not a cursor of
        this session). Reading costs the same at any depth.
        """
        if not 1 <= limit <= MAX_PAGE_SIZE:
            raise ValueError(f"expected a page size from 1 to {MAX_PAGE_SIZE}, found {limit}")
        if cursor is None:
            start = (1 << SEQ_BITS) if newest_first else 0
        else:
            decoded = CURSORS.decode(cursor, session_id=self._session_id, newest_first=newest_first)
            start = decoded.position
        with read_transaction(self._connection, self._path) as connection:
            low, high = seq_range(self._require(connection))
            if newest_first:
                query, bounds = PAGE_NEWEST_FIRST, (low + start, low)
            else:
                query, bounds = PAGE_OLDEST_FIRST, (low + start, high)
            rows = connection.execute(query, (*bounds, limit + 1)).fetchall()
        has_more = len(rows) > limit
        sid, path = self._session_id, self._path
        items = tuple(
            DisplayItem(
                seq=seq - low,
                created_at=from_ms(created_at),
                entry=decode_entry(path, sid, seq - low, kind, fmt, body),
            )
            for seq, created_at, kind, fmt, body in rows[:limit]
        )
        if newest_first:
            next_position = items[-1].seq if has_more else None
        else:
            next_position = items[-1].seq if items else start
        next_cursor = (
            None
            if next_position is None
            else Cursor(session_id=sid, newest_first=newest_first, position=next_position)
        )
        return DisplayPage(
            items=items,
            next_cursor=None if next_cursor is None else CURSORS.encode(next_cursor),
            has_more=has_more,
        )

    def tail_cursor(self) -> str:
        """An oldest-first cursor after the current last item: pages from it return only
        items appended later (to follow a session live after showing its newest page)."""
        with read_transaction(self._connection, self._path) as connection:
            key = self._require(connection)
            last = last_seq(connection, key) - seq_range(key)[0]
        return CURSORS.encode(
            Cursor(session_id=self._session_id, newest_first=False, position=last)
        )

    def _state_row(self) -> tuple[str, str | None, str]:
        with sqlite_errors(self._path):
            row = self._connection.execute(
                "SELECT title, cwd, state, last_activity FROM sessions WHERE id = ?",
                (self._session_id,),
            ).fetchone()
        if row is None:
            raise not_found(self._session_id)
        self._check(self._session_id, row[3])
        return row[0], row[1], row[2]

    def session_state(self) -> SessionState:
        """The typed state: title, cwd, tool digests, prompt-cache key, skills seen."""
        title, cwd, text = self._state_row()
        return state_from_row(title, cwd, text, self._path, self._session_id)

    def read_context(self) -> tuple[Message, ...]:
        """The model context: the messages (model-only ones included) the next request
        includes, in order, a compaction summary in place of the messages it replaced."""
        with read_transaction(self._connection, self._path) as connection:
            self._require(connection)
            rows = context_rows(connection, self._session_id)
        return tuple(
            decode_message(self._path, self._session_id, pos, fmt, body) for pos, fmt, body in rows
        )
