"""Writing one session: the one writer, its appends, compaction, state and requests.

The hot path is :meth:`SessionWriter.append` of one message in a running turn: one
``INSERT`` that is its own transaction (autocommit), no ``BEGIN``/``COMMIT`` round trips,
no index, no sessions-row update (activity is recorded at most once a second). Every
other write is one short ``BEGIN IMMEDIATE`` transaction.

Each method commits completely or not at all, and changes the writer's own bookkeeping
(the last ``seq``, when activity was recorded) only after its commit, so the async
backend can run a commit that met another process's lock (``SQLITE_BUSY`` with a zero
busy timeout, inline on the event loop) once more, unchanged, in a worker thread with the
store's real busy timeout.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Callable, Iterable
from pathlib import Path
from types import TracebackType
from typing import Any

from raw_core.errors import StorageFull
from raw_core.sessions.backend import (
    ModelOnly,
    PanelUpdate,
    PendingRequest,
    RequestAnswer,
    RequestEntry,
    RequestState,
    SessionState,
    ToolOutput,
)
from raw_core.sessions.messages import (
    MESSAGE_FORMAT,
    AssistantMessage,
    Message,
    ToolResultMessage,
    UserMessage,
    dumps_message,
)
from raw_core.sessions.sqlite import _requests
from raw_core.sessions.sqlite._durability import WalName, end_turn_sync
from raw_core.sessions.sqlite._lock import SessionLock
from raw_core.sessions.sqlite._rows import context_rows, decode_message, not_found, now_ms
from raw_core.sessions.sqlite._schema import (
    KIND_MESSAGE,
    SEQ_BITS,
    seq_range,
)
from raw_core.sessions.sqlite._sqlite import sqlite_errors, write_transaction
from raw_core.sessions.sqlite._state import typed_state_text
from raw_core.sessions.sqlite.entries import encode_entry
from raw_core.sessions.sqlite.reader import SessionReader

__all__ = ["SessionWriter"]

_TOUCH_RESOLUTION_MS = 1000
_INSERT_DISPLAY = "INSERT INTO display (seq, created_at, kind, format, body) VALUES (?, ?, ?, ?, ?)"
_MESSAGES = (UserMessage, AssistantMessage, ToolResultMessage)


class SessionWriter(SessionReader):
    """The one writer of a session: holds its lock (and its own connection) until closed.

    Made by :meth:`SessionStore.open_writer`; use it as a context manager or call
    :meth:`close`. It reads like a :class:`SessionReader`.
    """

    def __init__(
        self,
        connection: sqlite3.Connection,
        path: Path,
        session_id: str,
        lock: SessionLock,
        *,
        key: int,
        last_seq: int,
        wal_name: WalName,
        now_ms: Callable[[], int] = now_ms,
    ) -> None:
        super().__init__(connection, path, session_id)
        self._now_ms = now_ms  # the store's clock: what it stamps
        self._lock = lock
        self._wal_name = wal_name
        self._key = key
        # The session's range of display numbers, and its last one: only this writer
        # appends to the session, so the next numbers are known without asking SQLite.
        self._last_seq = last_seq
        self._seq_low, self._seq_limit = seq_range(key)
        self._touched_at = 0  # ms; see append

    @property
    def closed(self) -> bool:
        """Whether :meth:`close` has run (the lock is released)."""
        return not self._lock.held

    @property
    def connection(self) -> sqlite3.Connection:
        """The writer's own connection (the async backend sets its busy timeout)."""
        return self._connection

    def _touch(self, connection: sqlite3.Connection, now: int) -> None:
        """Record conversation activity (and check the session is still there)."""
        updated = connection.execute(
            "UPDATE sessions SET last_activity = max(last_activity, ?) WHERE id = ?",
            (now, self._session_id),
        ).rowcount
        if not updated:
            raise not_found(self._session_id)

    def append(
        self, entries: Iterable[Message | ModelOnly | ToolOutput | RequestEntry | PanelUpdate]
    ) -> None:
        """Append ``entries`` in one transaction: a reader sees all of them or none, and a
        crash keeps all or none.

        Messages go to both streams, :class:`ModelOnly` messages to the model context only,
        :class:`ToolOutput`, :class:`RequestEntry` and :class:`PanelUpdate` to the display
        history only. Put
        what belongs together in one call (a completed assistant message; all tool results
        of a batch). Nothing to append is a no-op; anything else is refused before
        anything is written.
        """
        rows = [
            (KIND_MESSAGE, MESSAGE_FORMAT, dumps_message(entry))
            if isinstance(entry, _MESSAGES)  # the hot path: a message, no further dispatch
            else encode_entry(entry)
            for entry in entries
        ]
        if not rows:
            return
        now = self._now_ms()
        first = self._last_seq + 1
        if first + len(rows) > self._seq_limit:
            raise StorageFull(
                f"session {self._session_id} holds the most entries one session can "
                f"({(1 << SEQ_BITS) - 1:,}); start a new session",
                path=str(self._path),
                session_id=self._session_id,
            )
        # Activity is recorded at most once per second: expiry counts days, and skipping the
        # sessions row spares a page write in the many appends of a running turn. The
        # session cannot vanish meanwhile: deleting it needs this writer's lock.
        touch = now - self._touched_at >= _TOUCH_RESOLUTION_MS
        if len(rows) == 1 and not touch:
            # The common case in a running turn: one statement is its own transaction
            # (autocommit), which spares the round trips of BEGIN and COMMIT.
            with sqlite_errors(self._path):
                self._connection.execute(_INSERT_DISPLAY, (first, now, *rows[0]))
            self._last_seq = first
            return
        with write_transaction(self._connection, self._path) as connection:
            if touch:
                self._touch(connection, now)
            connection.executemany(
                _INSERT_DISPLAY,
                [(seq, now, *row) for seq, row in enumerate(rows, first)],
            )
        self._last_seq = first + len(rows) - 1
        if touch:
            self._touched_at = now

    def compact(self, summary: Message, *, replace_first: int) -> None:
        """Replace the first ``replace_first`` messages of the model context with
        ``summary``; the display history keeps everything.

        ``summary`` is a user message or an assistant message without tool calls. Raises
        ``ValueError`` when the context holds fewer messages, or when the message after
        the replaced ones is a tool result (its call would be gone).
        """
        if isinstance(summary, ToolResultMessage) or (
            isinstance(summary, AssistantMessage) and summary.tool_calls
        ):
            raise ValueError(
                "expected a summary that is a user message or an assistant message "
                "without tool calls"
            )
        if replace_first < 1:
            raise ValueError(f"expected at least one message to replace, found {replace_first}")
        body = dumps_message(summary)
        sid = self._session_id
        with write_transaction(self._connection, self._path) as connection:
            self._touch(connection, self._now_ms())
            rows = context_rows(connection, sid)
            if replace_first > len(rows):
                raise ValueError(
                    f"expected at most {len(rows)} messages to replace (the model context "
                    f"holds {len(rows)}), found replace_first={replace_first}"
                )
            if replace_first < len(rows):
                position, fmt, kept = rows[replace_first]
                kept_message = decode_message(self._path, sid, position, fmt, kept)
                if isinstance(kept_message, ToolResultMessage):
                    raise ValueError(
                        f"replacing the first {replace_first} messages would leave a tool "
                        "result without the call it answers; replace fewer or more"
                    )
                context_from = self._seq_low + position
            else:
                context_from = self._last_seq + 1  # after every row: none is in the context
            connection.execute(
                "UPDATE sessions SET context_from = ?, summary_format = ?, summary_body = ?"
                " WHERE id = ?",
                (context_from, MESSAGE_FORMAT, body, sid),
            )

    def _update_session(self, assignments: str, values: tuple[Any, ...]) -> None:
        with write_transaction(self._connection, self._path) as connection:
            updated = connection.execute(
                f"UPDATE sessions SET {assignments} WHERE id = ?", (*values, self._session_id)
            ).rowcount
            if not updated:
                raise not_found(self._session_id)

    def set_session_state(self, state: SessionState) -> None:
        """Replace the session's typed state, its title and cwd included. Not conversation
        activity: expiry is unaffected."""
        self._update_session(
            "title = ?, cwd = ?, state = ?", (state.title, state.cwd, typed_state_text(state))
        )

    def add_request(self, request: PendingRequest) -> None:
        """Store a new pending request of this session (its id from
        :func:`raw_core.sessions.sqlite.new_request_id`)."""
        if request.session_id != self._session_id:
            raise ValueError(
                f"expected a request of session {self._session_id}, found one of "
                f"session {request.session_id}"
            )
        if request.state != "pending" or request.answer is not None:
            raise ValueError(f"expected a new pending request, found one {request.state}")
        with write_transaction(self._connection, self._path) as connection:
            _requests.insert_request(connection, self._key, request)

    def close_request(
        self, request_id: str, state: RequestState, answer: RequestAnswer | None = None
    ) -> PendingRequest:
        """End a pending request of this session (answered through this writer's front
        end, expired or cancelled) and return it as stored: when someone answered it first,
        that answer stands and is returned. :class:`RequestNotFound` for a request this
        session does not have."""
        with write_transaction(self._connection, self._path) as connection:
            return _requests.close_request(
                connection, self._key, request_id, state, answer, self._now_ms(), self._path
            )

    def end_turn(self) -> None:
        """Mark a completed turn: sync the WAL file to disk, so every commit so far
        survives a power loss, not only a crash; checkpoint once the WAL is large (see
        :mod:`raw_core.sessions.sqlite._durability`)."""
        end_turn_sync(self._connection, self._path, self._wal_name)

    def close(self) -> None:
        """Close the connection and release the lock (idempotent)."""
        if self._lock.held:
            try:
                self._connection.close()
            finally:
                self._lock.release()

    def __enter__(self) -> SessionWriter:
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        traceback: TracebackType | None,
    ) -> None:
        self.close()
