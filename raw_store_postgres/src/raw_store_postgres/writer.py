"""The one writer of a session, on a connection of its own that holds the session's lock.

Each write is one transaction on that connection. An append is a single statement (its own
transaction: one round trip) that inserts the rows, records the activity and notifies the
session's id; the writer numbers the rows itself, since it alone appends to the session.

Faults: a write that fails ends with a raw error (``store_unavailable`` for a broken
connection or a cancelled statement) and changes nothing it did not commit. When the
connection broke, the lock went with it, so the writer's next operation connects again and
takes the lock again — and goes on only if no other writer opened the session meanwhile
(the session's ``writer_epoch`` is still the one this writer got); otherwise it is
``session_locked``. It then re-reads the last row's number, so a commit whose reply was
lost is neither repeated nor overwritten.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Sequence
from typing import Any

import anyio
import psycopg.errors

from raw_core.sessions.backend import (
    PendingRequest,
    RequestAnswer,
    RequestState,
    SessionState,
)
from raw_core.sessions.messages import (
    MESSAGE_FORMAT,
    AssistantMessage,
    Message,
    ToolResultMessage,
    dumps_message,
)
from raw_core.sessions.sqlite.entries import check_closing, dumps_json
from raw_store_postgres import _lock
from raw_store_postgres._errors import database_errors
from raw_store_postgres._queries import context_of, request_on, state_of
from raw_store_postgres._rows import (
    Connection,
    Expiry,
    decode_message,
    encode_entry,
    not_found,
    request_not_found,
    state_text,
)
from raw_store_postgres._schema import CHANNEL, CONTEXT_KINDS_END, SCHEMA

__all__ = ["PostgresWriter", "take_session"]

_APPEND = f"""
WITH touched AS (
    UPDATE {SCHEMA}.sessions SET last_activity = greatest(last_activity, %(now)s)
    WHERE key = %(key)s RETURNING key
), added AS (
    INSERT INTO {SCHEMA}.entries (session_key, seq, created_at, kind, format, body)
    SELECT touched.key, %(first)s + e.n - 1, %(now)s, e.kind, e.format, e.body
    FROM touched, unnest(%(kinds)s::smallint[], %(formats)s::smallint[], %(bodies)s::text[])
        WITH ORDINALITY AS e(kind, format, body, n)
    RETURNING 1
)
SELECT (SELECT count(*) FROM added), pg_notify(%(channel)s, %(session)s)
"""

_LAST_SEQ = f"(SELECT coalesce(max(seq), 0) FROM {SCHEMA}.entries WHERE session_key = s.key)"


async def take_session(
    connection: Connection, session_id: str, wait: float, expiry: Expiry
) -> tuple[int, int, int]:
    """Become the session's writer on ``connection``: its key, the writer epoch this
    writer is, and the last row's number. ``session_locked`` after ``wait`` seconds;
    ``session_not_found`` / ``session_expired`` when it is gone or expired (also while we
    waited)."""
    with database_errors(f"opening session {session_id} for writing"):
        cursor = await connection.execute(
            f"SELECT key, last_activity FROM {SCHEMA}.sessions WHERE id = %s", (session_id,)
        )
        row = await cursor.fetchone()
    if row is None:
        raise not_found(session_id)
    expiry.check(session_id, row[1])
    key = int(row[0])
    if not await _lock.poll(lambda: _lock.try_lock(connection, key, session_id), wait):
        raise _lock.locked(session_id, wait)
    try:
        with database_errors(f"opening session {session_id} for writing"):
            cursor = await connection.execute(
                f"SELECT last_activity FROM {SCHEMA}.sessions WHERE key = %s", (key,)
            )
            found = await cursor.fetchone()
            if found is None:
                raise not_found(session_id)
            expiry.check(session_id, found[0])  # it may have expired while we waited
            cursor = await connection.execute(
                f"UPDATE {SCHEMA}.sessions AS s SET writer_epoch = writer_epoch + 1"
                f" WHERE key = %s RETURNING writer_epoch, {_LAST_SEQ}",
                (key,),
            )
            taken = await cursor.fetchone()
    except BaseException:
        with anyio.CancelScope(shield=True):
            await _release(connection, key, session_id)
        raise
    assert taken is not None
    return key, int(taken[0]), int(taken[1])


async def _release(connection: Connection, key: int, session_id: str) -> None:
    """Give the lock back and close the connection (quietly: a broken one holds nothing)."""
    if not connection.closed:
        try:
            await _lock.unlock(connection, key, session_id)
        except Exception:
            pass
    await connection.close()


class PostgresWriter:
    """The one writer of a session (:class:`raw_core.sessions.backend.SessionWriter`), for
    the block of :meth:`PostgresBackend.open_writer`. Use it from one task at a time."""

    def __init__(
        self,
        *,
        connection: Connection,
        connect: Callable[[], Awaitable[Connection]],
        notify: Callable[[str], None],
        expiry: Expiry,
        session_id: str,
        key: int,
        epoch: int,
        last_seq: int,
        wait: float,
    ) -> None:
        self._connection = connection
        self._connect = connect
        self._notify = notify
        self._expiry = expiry
        self._session_id = session_id
        self._key = key
        self._epoch = epoch
        self._last_seq = last_seq
        self._wait = wait

    @property
    def session_id(self) -> str:
        """The session's id."""
        return self._session_id

    @property
    def connection(self) -> Connection:
        """The connection that holds the lock (tests end it to play a dropped link)."""
        return self._connection

    async def _live(self) -> Connection:
        """The connection, made again (with the lock taken again) if it broke."""
        if not self._connection.closed:
            return self._connection
        connection = await self._connect()
        sid = self._session_id
        try:
            if not await _lock.poll(lambda: _lock.try_lock(connection, self._key, sid), self._wait):
                raise _lock.locked(sid, self._wait, "this writer lost its connection meanwhile")
            with database_errors(f"reconnecting the writer of session {sid}"):
                cursor = await connection.execute(
                    f"SELECT writer_epoch, {_LAST_SEQ} FROM {SCHEMA}.sessions AS s WHERE key = %s",
                    (self._key,),
                )
                row = await cursor.fetchone()
            if row is None:
                raise not_found(sid)
            if int(row[0]) != self._epoch:
                raise _lock.locked(
                    sid,
                    self._wait,
                    "another writer opened it while this one was disconnected; open it again",
                )
        except BaseException:
            with anyio.CancelScope(shield=True):
                await _release(connection, self._key, sid)
            raise
        self._connection = connection
        self._last_seq = int(row[1])
        return connection

    async def append(self, entries: Sequence[Any]) -> None:
        """Append ``entries`` in one transaction (all or none); it wakes every backend
        following the session. Nothing to append is a no-op."""
        rows = [encode_entry(entry) for entry in entries]
        if not rows:
            return
        connection = await self._live()
        now = self._expiry.now()
        first = self._last_seq + 1
        with database_errors(f"appending to session {self._session_id}"):
            cursor = await connection.execute(
                _APPEND,
                {
                    "now": now,
                    "key": self._key,
                    "first": first,
                    "kinds": [row[0] for row in rows],
                    "formats": [row[1] for row in rows],
                    "bodies": [row[2] for row in rows],
                    "channel": CHANNEL,
                    "session": self._session_id,
                },
            )
            found = await cursor.fetchone()
        if found is None or found[0] != len(rows):
            raise not_found(self._session_id)
        self._last_seq = first + len(rows) - 1
        self._notify(self._session_id)

    async def compact(self, summary: Message, *, replace_first: int) -> None:
        """Replace the first ``replace_first`` messages of the model context with
        ``summary``; the display history keeps everything. ``ValueError`` as the SQLite
        backend raises it."""
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
        connection = await self._live()
        with database_errors(f"compacting session {sid}"):
            async with connection.transaction():
                await connection.execute(
                    f"UPDATE {SCHEMA}.sessions SET last_activity = greatest(last_activity, %s)"
                    " WHERE key = %s",
                    (self._expiry.now(), self._key),
                )
                rows = await context_of(connection, self._key, CONTEXT_KINDS_END)
                if replace_first > len(rows):
                    raise ValueError(
                        f"expected at most {len(rows)} messages to replace (the model context "
                        f"holds {len(rows)}), found replace_first={replace_first}"
                    )
                if replace_first < len(rows):
                    position, fmt, kept = rows[replace_first]
                    if isinstance(decode_message(sid, position, fmt, kept), ToolResultMessage):
                        raise ValueError(
                            f"replacing the first {replace_first} messages would leave a tool "
                            "result without the call it answers; replace fewer or more"
                        )
                    context_from = position
                else:
                    context_from = self._last_seq + 1  # after every row
                await connection.execute(
                    f"UPDATE {SCHEMA}.sessions SET context_from = %s, summary_format = %s,"
                    " summary_body = %s WHERE key = %s",
                    (context_from, MESSAGE_FORMAT, body, self._key),
                )

    async def read_context(self) -> tuple[Message, ...]:
        """The model context, summary first (on the writer's connection: it holds the
        session, so it reads it even if it expired meanwhile)."""
        connection = await self._live()
        with database_errors(f"reading the context of session {self._session_id}"):
            rows = await context_of(connection, self._key, CONTEXT_KINDS_END)
        return tuple(decode_message(self._session_id, *row) for row in rows)

    async def state(self) -> SessionState:
        """The session's typed state."""
        connection = await self._live()
        with database_errors(f"reading the state of session {self._session_id}"):
            return await state_of(connection, self._session_id, None)

    async def set_state(self, state: SessionState) -> None:
        """Replace the session's state (title and cwd included); not activity."""
        connection = await self._live()
        with database_errors(f"saving the state of session {self._session_id}"):
            cursor = await connection.execute(
                f"UPDATE {SCHEMA}.sessions SET title = %s, cwd = %s, state = %s WHERE key = %s",
                (state.title, state.cwd, state_text(state), self._key),
            )
        if cursor.rowcount == 0:
            raise not_found(self._session_id)

    async def add_request(self, request: PendingRequest) -> None:
        """Store a new pending request of this session."""
        if request.session_id != self._session_id:
            raise ValueError(
                f"expected a request of session {self._session_id}, found one of "
                f"session {request.session_id}"
            )
        if request.state != "pending" or request.answer is not None:
            raise ValueError(f"expected a new pending request, found one {request.state}")
        connection = await self._live()
        try:
            with database_errors(f"adding a request to session {self._session_id}"):
                await connection.execute(
                    f"INSERT INTO {SCHEMA}.requests (id, session_key, kind, tool_call_id, show,"
                    " created_at, deadline, state) VALUES (%s, %s, %s, %s, %s, %s, %s, 'pending')",
                    (
                        request.id,
                        self._key,
                        request.kind,
                        request.tool_call_id,
                        dumps_json(request.show),
                        request.created_at,
                        request.deadline,
                    ),
                )
        except psycopg.errors.UniqueViolation:
            raise ValueError(
                f"expected a new request id, found {request.id!r} stored already"
            ) from None

    async def close_request(
        self, request_id: str, state: RequestState, answer: RequestAnswer | None = None
    ) -> PendingRequest:
        """End a pending request of this session and return it as stored (an earlier
        answer stands); it wakes whoever waits for the answer."""
        connection = await self._live()
        with database_errors(f"closing request {request_id}"):
            async with connection.transaction():
                current = await request_on(connection, request_id, session_key=self._key)
                if current is None:
                    raise request_not_found(request_id)
                if current.state == "pending":
                    check_closing(current.kind, state, answer)
                    await connection.execute(
                        f"UPDATE {SCHEMA}.requests SET state = %s, answer = %s,"
                        " answered_at = %s WHERE id = %s AND state = 'pending'",
                        (
                            state,
                            None if answer is None else dumps_json(answer.to_dict()),
                            self._expiry.now(),
                            request_id,
                        ),
                    )
                    await connection.execute("SELECT pg_notify(%s, %s)", (CHANNEL, request_id))
                    current = await request_on(connection, request_id, session_key=self._key)
                    assert current is not None
        self._notify(request_id)
        return current

    async def end_turn(self) -> None:
        """A completed turn: every commit is durable already (the server flushed its WAL
        before it answered each one), so there is nothing left to do."""
        await anyio.lowlevel.checkpoint()

    async def release(self) -> None:
        """Give the session back: release the lock and close the connection."""
        await _release(self._connection, self._key, self._session_id)
