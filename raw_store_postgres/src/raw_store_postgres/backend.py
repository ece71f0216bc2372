"""The PostgreSQL session backend: :class:`raw_core.sessions.backend.SessionBackend` on psycopg 3.

Connections, and what each is for:

* a **pool** (psycopg_pool, ``pool_size`` connections at most, each checked before it is
  handed out, so one broken by a server restart is replaced instead of failing the next
  operation): every read, and the writes that take no writer lock — creating a session,
  answering a request, deleting and pruning (under the session's transaction-level lock);
* one **dedicated connection per writer**, holding the session's advisory lock for the
  writer's block (:mod:`raw_store_postgres._lock`); every write of the writer goes through
  it;
* one **listening connection** that wakes the waiters of :meth:`wait_for_items` and
  :meth:`wait_for_answer` (:mod:`raw_store_postgres._wakeups`).

Everything is asynchronous on the event loop (psycopg's async API needs anyio's asyncio
backend); nothing blocks it. Every commit is durable when it returns (the server's
``synchronous_commit``), so :meth:`PostgresWriter.end_turn` has nothing to do.

The SQL is in ``_queries``, rows in ``_rows``, locks in ``_lock``, wake-ups in
``_wakeups``, and the pending requests' operations in ``_requests``.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Awaitable, Callable
from contextlib import AbstractAsyncContextManager, asynccontextmanager
from datetime import datetime, timedelta
from types import TracebackType
from typing import Final, TypeVar

import anyio
import psycopg
from psycopg.conninfo import conninfo_to_dict
from psycopg_pool import AsyncConnectionPool

from raw_core.errors import StoreUnavailable
from raw_core.sessions.backend import (
    DisplayPage,
    PendingRequest,
    RequestAnswer,
    SessionInfo,
    SessionState,
    title_text,
)
from raw_core.sessions.messages import Message
from raw_store_postgres import _lock
from raw_store_postgres._errors import BACKEND, database_errors, first_line
from raw_store_postgres._queries import (
    context_of,
    info_of,
    list_sessions_of,
    page_of,
    session_key,
    state_of,
    tail_of,
)
from raw_store_postgres._requests import Requests
from raw_store_postgres._rows import (
    Clock,
    Connection,
    Expiry,
    decode_message,
    is_session_id,
    new_session_id,
    not_found,
)
from raw_store_postgres._schema import CHANNEL, LOCK_SPACE, SCHEMA, ensure_schema
from raw_store_postgres._wakeups import Wakeups
from raw_store_postgres.writer import PostgresWriter, take_session

__all__ = ["DEFAULT_EXPIRE_AFTER_DAYS", "PostgresBackend"]

DEFAULT_EXPIRE_AFTER_DAYS: Final = 30.0
T = TypeVar("T")

_PRUNE_ONE = f"""
WITH gone AS (
    DELETE FROM {SCHEMA}.sessions WHERE key = %(key)s AND last_activity < %(cutoff)s
    AND pg_try_advisory_xact_lock({LOCK_SPACE}, key) RETURNING id
)
SELECT id, pg_notify(%(channel)s, id) FROM gone
"""


class PostgresBackend:
    """Sessions in a PostgreSQL database (:class:`raw_core.sessions.backend.SessionBackend`).

    Make one with ``await PostgresBackend.open(dsn)`` and close it with :meth:`aclose`, or
    use ``async with await PostgresBackend.open(...) as backend``.
    """

    def __init__(
        self,
        *,
        connect: Callable[[], Awaitable[Connection]],
        pool: AsyncConnectionPool[Connection],
        expiry: Expiry,
        lock_wait: float,
    ) -> None:
        self._connect = connect
        self._pool = pool
        self._expiry = expiry
        self._lock_wait = lock_wait
        self._wakeups = Wakeups(connect)
        self._requests = Requests(self._on_pool, self._until, self._wakeups, expiry)
        self._swept = False
        self._closed = False

    @classmethod
    async def open(
        cls,
        dsn: str,
        *,
        expire_after_days: float = DEFAULT_EXPIRE_AFTER_DAYS,
        lock_wait: float = 0.0,
        pool_size: int = 4,
        statement_timeout: float = 30.0,
        connect_timeout: float = 10.0,
        clock: Clock | None = None,
    ) -> PostgresBackend:
        """Connect to the database ``dsn`` names (a libpq connection string or URI), and
        create the schema when it has none.

        ``expire_after_days``: sessions without conversation activity for longer have
        expired. ``lock_wait``: seconds a new writer waits for another by default.
        ``pool_size``: connections for reads at most. ``statement_timeout``: seconds a
        statement may run before the server cancels it (``store_unavailable``).
        ``connect_timeout``: seconds to wait for a connection. ``clock``: the current time
        (an aware datetime) for every time stamped and every expiry judged.
        """
        if expire_after_days <= 0:
            raise ValueError(f"expected a positive number of days, found {expire_after_days}")
        if lock_wait < 0 or statement_timeout <= 0 or connect_timeout <= 0 or pool_size < 1:
            raise ValueError(
                "expected lock_wait >= 0, statement_timeout > 0, connect_timeout > 0 and"
                " pool_size >= 1"
            )
        try:
            given = conninfo_to_dict(dsn)
        except psycopg.ProgrammingError as exc:
            raise StoreUnavailable(
                f"expected a PostgreSQL connection string or URI: {first_line(exc)}",
                backend=BACKEND,
                cause="dsn",
            ) from None
        options: dict[str, object] = {"autocommit": True}
        if "connect_timeout" not in given:
            options["connect_timeout"] = max(1, round(connect_timeout))
        if "application_name" not in given:
            options["application_name"] = "raw"
        timeout_ms = max(1, round(statement_timeout * 1000))

        async def configure(connection: Connection) -> None:
            await connection.execute(
                "SELECT set_config('statement_timeout', %s, false)", (str(timeout_ms),)
            )

        async def connect() -> Connection:
            with database_errors("connecting"):
                connection = await psycopg.AsyncConnection.connect(dsn, **options)  # type: ignore[arg-type]
                try:
                    await configure(connection)
                except BaseException:
                    await connection.close()
                    raise
            return connection

        first = await connect()
        try:
            await ensure_schema(first)
            pool: AsyncConnectionPool[Connection] = AsyncConnectionPool(
                dsn,
                kwargs=options,
                min_size=1,
                max_size=pool_size,
                open=False,
                configure=configure,
                check=AsyncConnectionPool.check_connection,
                timeout=connect_timeout,
                name="raw-sessions",
            )
            with database_errors("opening the connection pool"):
                await pool.open(wait=True, timeout=connect_timeout)
        finally:
            with anyio.CancelScope(shield=True):
                await first.close()
        return cls(
            connect=connect,
            pool=pool,
            expiry=Expiry(timedelta(days=expire_after_days), clock),
            lock_wait=lock_wait,
        )

    @property
    def name(self) -> str:
        """``"postgres"``."""
        return "postgres"

    async def aclose(self) -> None:
        """Close every connection and wake every waiter."""
        if self._closed:
            return
        self._closed = True
        with anyio.CancelScope(shield=True):
            await self._wakeups.aclose()
            await self._pool.close()

    async def __aenter__(self) -> PostgresBackend:
        return self

    async def __aexit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        traceback: TracebackType | None,
    ) -> None:
        await self.aclose()

    # --- running statements ---

    async def _on_pool(self, doing: str, run: Callable[[Connection], Awaitable[T]]) -> T:
        """``await run(connection)`` on a pooled connection; database errors become raw
        errors."""
        if self._closed:
            raise StoreUnavailable(
                "this session backend is closed", backend=BACKEND, cause="closed"
            )
        with database_errors(doing):
            async with self._pool.connection() as connection:
                return await run(connection)

    async def _until(self, key: str, look: Callable[[], Awaitable[T | None]]) -> T:
        """``await look()`` until it returns something: again each time a commit about
        ``key`` is announced."""
        while True:
            await self._wakeups.listening()
            event = self._wakeups.event(key)  # before looking: a commit meanwhile sets it
            found = await look()
            if found is not None:
                return found
            if self._closed:
                raise StoreUnavailable(
                    "this session backend is closed", backend=BACKEND, cause="closed"
                )
            await self._wakeups.wait(event)

    # --- sessions ---

    async def _sweep(self) -> None:
        """The backend's first write deletes the expired sessions."""
        if not self._swept:
            self._swept = True
            await self.prune()

    async def create(self, *, title: str = "", cwd: str | None = None) -> SessionInfo:
        """A new, empty session (the backend's first write sweeps the expired ones)."""
        title = title_text(title)
        await self._sweep()
        session_id = new_session_id()
        now = self._expiry.now()

        async def run(connection: Connection) -> None:
            await connection.execute(
                f"INSERT INTO {SCHEMA}.sessions (id, title, cwd, created_at, last_activity)"
                " VALUES (%s, %s, %s, %s, %s)",
                (session_id, title, cwd, now, now),
            )

        await self._on_pool("creating a session", run)
        return SessionInfo(id=session_id, title=title, created_at=now, last_activity=now, cwd=cwd)

    async def _info(self, session_id: str, *, live: bool = True) -> SessionInfo:
        if not is_session_id(session_id):
            raise not_found(session_id)
        expiry = self._expiry if live else None
        return await self._on_pool(
            f"reading session {session_id}",
            lambda connection: info_of(connection, session_id, expiry),
        )

    async def info(self, session_id: str) -> SessionInfo:
        """One session; ``session_not_found`` / ``session_expired``."""
        return await self._info(session_id)

    async def list_sessions(self, *, limit: int | None = None) -> tuple[SessionInfo, ...]:
        """Sessions that have not expired, most recent activity first."""
        if limit is not None and limit < 0:
            raise ValueError(f"expected a limit of zero or more, found {limit}")
        return await self._on_pool(
            "listing sessions",
            lambda connection: list_sessions_of(connection, limit=limit, expiry=self._expiry),
        )

    async def page(
        self,
        session_id: str,
        cursor: str | None = None,
        *,
        limit: int = 100,
        newest_first: bool = False,
    ) -> DisplayPage:
        """Up to ``limit`` display items after ``cursor``."""
        if not is_session_id(session_id):
            raise not_found(session_id)
        return await self._on_pool(
            f"reading session {session_id}",
            lambda connection: page_of(
                connection,
                session_id,
                cursor,
                limit=limit,
                newest_first=newest_first,
                expiry=self._expiry,
            ),
        )

    async def tail_cursor(self, session_id: str) -> str:
        """An oldest-first cursor after the last item."""
        if not is_session_id(session_id):
            raise not_found(session_id)
        return await self._on_pool(
            f"reading session {session_id}",
            lambda connection: tail_of(connection, session_id, self._expiry),
        )

    async def wait_for_items(
        self, session_id: str, cursor: str, *, limit: int = 100
    ) -> DisplayPage:
        """The page after ``cursor`` once it holds an item, woken by the commits of any
        backend on the database; bound the wait with ``anyio.move_on_after``."""

        async def look() -> DisplayPage | None:
            page = await self.page(session_id, cursor, limit=limit)
            return page if page.items else None

        return await self._until(session_id, look)

    async def read_context(self, session_id: str) -> tuple[Message, ...]:
        """The model context, summary first."""
        if not is_session_id(session_id):
            raise not_found(session_id)

        async def run(connection: Connection) -> tuple[Message, ...]:
            key = await session_key(connection, session_id, self._expiry)
            rows = await context_of(connection, key)
            return tuple(decode_message(session_id, *row) for row in rows)

        return await self._on_pool(f"reading the context of session {session_id}", run)

    async def state(self, session_id: str) -> SessionState:
        """The typed state."""
        if not is_session_id(session_id):
            raise not_found(session_id)
        return await self._on_pool(
            f"reading the state of session {session_id}",
            lambda connection: state_of(connection, session_id, self._expiry),
        )

    def open_writer(
        self, session_id: str, *, wait: float | None = None
    ) -> AbstractAsyncContextManager[PostgresWriter]:
        """``async with backend.open_writer(id) as writer:`` — the session's one writer for
        the block, on a connection of its own; ``session_locked`` after waiting ``wait``
        seconds (default: the backend's ``lock_wait``) for another writer, in any process
        on any host."""
        return self._writer_block(session_id, self._lock_wait if wait is None else wait)

    @asynccontextmanager
    async def _writer_block(self, session_id: str, wait: float) -> AsyncIterator[PostgresWriter]:
        try:
            await self.info(session_id)
        finally:
            await self._sweep()
        connection = await self._connect()
        try:
            key, epoch, last_seq = await take_session(connection, session_id, wait, self._expiry)
        except BaseException:
            with anyio.CancelScope(shield=True):
                await connection.close()
            raise
        writer = PostgresWriter(
            connection=connection,
            connect=self._connect,
            notify=self._wakeups.notify,
            expiry=self._expiry,
            session_id=session_id,
            key=key,
            epoch=epoch,
            last_seq=last_seq,
            wait=wait,
        )
        try:
            yield writer
        finally:
            with anyio.CancelScope(shield=True):
                await writer.release()

    async def delete(self, session_id: str, *, wait: float | None = None) -> None:
        """Delete a session and everything it holds (an expired one too); waits up to
        ``wait`` seconds for its writer, then ``session_locked``."""
        await self._info(session_id, live=False)
        seconds = self._lock_wait if wait is None else wait

        async def run(connection: Connection) -> bool:
            async with connection.transaction():
                key = await session_key(connection, session_id, None)
                found = await connection.execute(
                    "SELECT pg_try_advisory_xact_lock(%s, %s)", (LOCK_SPACE, key)
                )
                row = await found.fetchone()
                if not (row and row[0]):
                    return False  # its writer holds it
                await connection.execute(f"DELETE FROM {SCHEMA}.sessions WHERE key = %s", (key,))
                await connection.execute("SELECT pg_notify(%s, %s)", (CHANNEL, session_id))
                return True

        async def attempt() -> bool:
            return await self._on_pool(f"deleting session {session_id}", run)

        if not await _lock.poll(attempt, seconds):
            raise _lock.locked(session_id, seconds)
        self._wakeups.notify(session_id)

    async def prune(self, now: datetime | None = None) -> tuple[str, ...]:
        """Delete the sessions that expired (by ``now``, default the clock's time); skip
        one that is being written."""
        cutoff = self._expiry.cutoff(now)

        async def run(connection: Connection) -> tuple[str, ...]:
            found = await connection.execute(
                f"SELECT key FROM {SCHEMA}.sessions WHERE last_activity < %s"
                " ORDER BY last_activity",
                (cutoff,),
            )
            pruned: list[str] = []
            for (key,) in await found.fetchall():
                gone = await connection.execute(
                    _PRUNE_ONE, {"key": key, "cutoff": cutoff, "channel": CHANNEL}
                )
                pruned += [row[0] for row in await gone.fetchall()]
            return tuple(pruned)

        pruned = await self._on_pool("deleting the expired sessions", run)
        for session_id in pruned:
            self._wakeups.notify(session_id)
        return pruned

    # --- pending requests ---

    async def get_request(self, request_id: str) -> PendingRequest:
        """One request; ``request_not_found`` when there is none."""
        return await self._requests.get(request_id)

    async def list_requests(
        self, session_id: str, *, pending_only: bool = True
    ) -> tuple[PendingRequest, ...]:
        """A session's requests, oldest first."""
        return await self._requests.listing(session_id, pending_only=pending_only)

    async def answer_request(self, request_id: str, answer: RequestAnswer) -> PendingRequest:
        """Answer a pending request from anywhere: the first answer wins (one
        compare-and-set); a request whose deadline passed is marked expired instead."""
        return await self._requests.answer(request_id, answer)

    async def cancel_request(self, request_id: str, *, by: str) -> PendingRequest:
        """Cancel a pending interaction request from anywhere (``by`` names the front end;
        a cancelled request stores no answer): the first end wins (one compare-and-set); a
        request whose deadline passed is marked expired instead; ``ValueError`` for an
        approval request (it is declined with an answer)."""
        del by
        return await self._requests.cancel(request_id)

    async def wait_for_answer(self, request_id: str) -> PendingRequest:
        """The request once it is no longer pending, answered in any process; bound the
        wait with ``anyio.move_on_after``."""
        return await self._requests.wait_for_answer(request_id)
