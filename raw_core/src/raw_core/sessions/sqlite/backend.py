"""The SQLite session backend: :class:`raw_core.sessions.backend.SessionBackend` on the sync store.

:class:`SqliteBackend` runs the synchronous core (:mod:`raw_core.sessions.sqlite.store`)
under anyio.
The rule — nothing that can wait long runs on the event loop:

* **off the loop, in worker threads**: page reads, listing, info, state, requests and
  :meth:`~SqliteBackend.read_context` (loading a deep session), each on a pooled read
  connection of its own (``check_same_thread=False``, one thread at a time); the
  end-of-turn WAL sync and checkpoint; compaction (it reads the whole context); opening a
  writer (its first syncs the folder); delete and prune (the first write's sweep of the
  expired sessions too); opening and closing the file;
* **waits that poll without blocking**: another writer's lock (``anyio.sleep`` between
  tries), :meth:`~SqliteBackend.wait_for_items` and
  :meth:`~SqliteBackend.wait_for_answer` (woken at once by this backend's own commits,
  and every :data:`POLL_INTERVAL` seconds they check ``PRAGMA data_version`` for other
  processes' commits);
* **inline on the loop thread**: short commits — an append (one ``INSERT`` in a running
  turn), a state change, adding or closing a request, creating a session, answering a
  request — because a thread hop costs more than the commit. Their connections have a
  zero busy timeout, so a commit that meets another process's write lock never waits
  inside SQLite on the loop: it fails at once with ``SQLITE_BUSY`` and the same commit is
  run again in a worker thread with the store's real busy timeout.

Connections never checkpoint inside a commit (``wal_autocheckpoint=0``; SQLite's own
checkpoint syncs the file, for many milliseconds, in whichever commit crosses its
threshold): ``end_turn`` checkpoints, off the loop, once the WAL passes 4 MiB.
"""

from __future__ import annotations

import functools
import os
import sqlite3
from collections.abc import AsyncIterator, Callable, Sequence
from contextlib import AbstractAsyncContextManager, asynccontextmanager
from datetime import datetime
from pathlib import Path
from types import TracebackType
from typing import Any, Final, TypeVar

import anyio
import anyio.to_thread

from raw_core.errors import StoreUnavailable
from raw_core.sessions.backend import (
    DisplayPage,
    PendingRequest,
    RequestAnswer,
    RequestState,
    SessionInfo,
    SessionState,
)
from raw_core.sessions.messages import Message
from raw_core.sessions.sqlite import _lock
from raw_core.sessions.sqlite._expiry import Clock
from raw_core.sessions.sqlite._ids import is_session_id
from raw_core.sessions.sqlite._offload import ChangeWatch, InlineConnection, ReadPool, Threads
from raw_core.sessions.sqlite._rows import not_found
from raw_core.sessions.sqlite._sqlite import is_busy, set_busy_timeout
from raw_core.sessions.sqlite.reader import SessionReader
from raw_core.sessions.sqlite.store import (
    DEFAULT_EXPIRE_AFTER_DAYS,
    SessionStore,
    get_request_on,
    list_requests_on,
    list_sessions_on,
)
from raw_core.sessions.sqlite.writer import SessionWriter

__all__ = ["POLL_INTERVAL", "SqliteBackend", "SqliteWriter"]

POLL_INTERVAL: Final = 0.05
"""Seconds between two looks for other processes' commits while a wait is open."""

T = TypeVar("T")


class SqliteWriter:
    """The one writer of a session (:class:`raw_core.sessions.backend.SessionWriter`), for the block
    of :meth:`SqliteBackend.open_writer`. Use it from one task at a time."""

    def __init__(self, backend: SqliteBackend, writer: SessionWriter, timeout: float) -> None:
        self._backend = backend
        self._writer = writer
        self._connection = InlineConnection(writer.connection, timeout, backend._threads)

    @property
    def session_id(self) -> str:
        """The session's id."""
        return self._writer.session_id

    async def append(self, entries: Sequence[Any]) -> None:
        """See :meth:`raw_core.sessions.sqlite.SessionWriter.append`; inline, and it wakes this
        backend's waiters on the session at once."""
        # The agent loop's hot path: the common case (the connection is here, SQLite is
        # not busy) is :meth:`InlineConnection.commit` written out, one coroutine fewer.
        connection = self._connection
        if connection.gate.away is not None:
            await connection.commit(self._writer.append, entries)
        else:
            try:
                self._writer.append(entries)
            except StoreUnavailable as exc:
                if not is_busy(exc):
                    raise
                await connection.in_thread(self._writer.append, entries)
        if self._backend._events:
            self._backend._notify(self._writer.session_id)

    async def compact(self, summary: Message, *, replace_first: int) -> None:
        """See :meth:`raw_core.sessions.sqlite.SessionWriter.compact`; in a worker thread (it reads
        the whole model context)."""
        await self._connection.in_thread(
            functools.partial(self._writer.compact, summary, replace_first=replace_first)
        )

    async def read_context(self) -> tuple[Message, ...]:
        """The model context, summary first (read in a worker thread); the writer holds
        its session, so it is read even if the session expired meanwhile."""
        return await self._backend._read(self.session_id, SessionReader.read_context, live=False)

    async def state(self) -> SessionState:
        """The session's typed state (read in a worker thread)."""
        return await self._backend._read(self.session_id, SessionReader.session_state, live=False)

    async def set_state(self, state: SessionState) -> None:
        """See :meth:`raw_core.sessions.sqlite.SessionWriter.set_session_state`; inline."""
        await self._connection.commit(self._writer.set_session_state, state)

    async def add_request(self, request: PendingRequest) -> None:
        """See :meth:`raw_core.sessions.sqlite.SessionWriter.add_request`; inline."""
        await self._connection.commit(self._writer.add_request, request)

    async def close_request(
        self, request_id: str, state: RequestState, answer: RequestAnswer | None = None
    ) -> PendingRequest:
        """See :meth:`raw_core.sessions.sqlite.SessionWriter.close_request`; inline, and it wakes
        this backend's waiters on the request."""
        closed = await self._connection.commit(
            self._writer.close_request, request_id, state, answer
        )
        self._backend._notify(request_id)
        return closed

    async def end_turn(self) -> None:
        """See :meth:`raw_core.sessions.sqlite.SessionWriter.end_turn`: the WAL sync (and a
        checkpoint once the WAL is large) in a worker thread."""
        await self._connection.in_thread(self._writer.end_turn)

    def _close(self) -> None:
        self._writer.close()


class SqliteBackend:
    """Sessions in a SQLite file (:class:`raw_core.sessions.backend.SessionBackend`).

    Make one with ``await SqliteBackend.open(directory)`` and close it with
    :meth:`aclose`, or use ``async with await SqliteBackend.open(...) as backend``.
    """

    def __init__(self, store: SessionStore, *, read_connections: int = 4) -> None:
        """Serve ``store``, which must be opened with ``any_thread=True``."""
        self._store = store
        self._path = store.path
        self._timeout = store.busy_timeout
        set_busy_timeout(store.connection, 0.0)
        self._threads = Threads()
        self._control = InlineConnection(store.connection, self._timeout, self._threads)
        self._pool = ReadPool(store.path, busy_timeout=self._timeout, size=read_connections)
        self._watch = ChangeWatch(store.path)
        self._events: dict[str, anyio.Event] = {}
        self._closed = False

    @classmethod
    async def open(
        cls,
        directory: str | os.PathLike[str] | None = None,
        *,
        expire_after_days: float = DEFAULT_EXPIRE_AFTER_DAYS,
        lock_wait: float = 0.0,
        busy_timeout: float = 5.0,
        clock: Clock | None = None,
    ) -> SqliteBackend:
        """Open (creating if needed) the store in ``directory``; the arguments are
        :meth:`raw_core.sessions.sqlite.SessionStore.open`'s. The file is opened in a worker
        thread."""
        store = await anyio.to_thread.run_sync(
            functools.partial(
                SessionStore.open,
                directory,
                expire_after_days=expire_after_days,
                lock_wait=lock_wait,
                busy_timeout=busy_timeout,
                any_thread=True,
                clock=clock,
            )
        )
        return cls(store)

    @property
    def name(self) -> str:
        """``"sqlite"``."""
        return "sqlite"

    @property
    def path(self) -> Path:
        """The database file."""
        return self._path

    @property
    def store(self) -> SessionStore:
        """The synchronous core this backend runs on."""
        return self._store

    async def aclose(self) -> None:
        """Close the connections (in a worker thread: closing the last one checkpoints)
        and wake every waiter (their next read raises ``store_unavailable``)."""
        if self._closed:
            return
        self._closed = True
        for event in self._events.values():
            event.set()
        self._events.clear()
        self._watch.close()
        await self._control.gate.wait()
        await anyio.to_thread.run_sync(self._close_files)

    def _close_files(self) -> None:
        self._pool.close()
        self._store.close()

    async def __aenter__(self) -> SqliteBackend:
        return self

    async def __aexit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        traceback: TracebackType | None,
    ) -> None:
        await self.aclose()

    # --- waking waiters ---

    def _event(self, key: str) -> anyio.Event:
        """The event the next commit about ``key`` (a session or request id) sets."""
        event = self._events.get(key)
        if event is None:
            event = self._events[key] = anyio.Event()
        return event

    def _notify(self, key: str) -> None:
        event = self._events.pop(key, None)
        if event is not None:
            event.set()

    async def _until(self, key: str, look: Callable[[], Any]) -> Any:
        """Call ``await look()`` until it returns something other than ``None``: again as
        soon as this backend commits about ``key``, or another connection committed."""
        while True:
            event = self._event(key)  # before looking: a commit meanwhile sets it
            version = self._watch.version()
            found = await look()
            if found is not None:
                return found
            while not event.is_set():
                with anyio.move_on_after(POLL_INTERVAL):
                    await event.wait()
                if self._closed or self._watch.version() != version:
                    break

    # --- sessions ---

    async def _sweep(self) -> None:
        """The store's first write deletes the expired sessions (in a worker thread)."""
        if not self._store.swept:
            for session_id in await self._control.in_thread(self._store.sweep_expired):
                self._notify(session_id)

    async def create(self, *, title: str = "", cwd: str | None = None) -> SessionInfo:
        """A new, empty session (inline: one short commit; the first write sweeps)."""
        await self._sweep()
        return await self._control.commit(self._store.create, title, cwd)

    def _reader(
        self, session_id: str, connection: sqlite3.Connection, *, live: bool = True
    ) -> SessionReader:
        """A reader on a pooled connection (an id that is none is refused first); ``live``:
        an expired session is refused."""
        if not is_session_id(session_id):
            raise not_found(session_id)
        return SessionReader(
            connection, self._path, session_id, self._store.expiry if live else None
        )

    async def _read(
        self, session_id: str, read: Callable[[SessionReader], T], *, live: bool = True
    ) -> T:
        """``read(reader)`` on a pooled connection, in a worker thread."""
        return await self._pool.run(
            lambda connection: read(self._reader(session_id, connection, live=live))
        )

    async def info(self, session_id: str) -> SessionInfo:
        """One session; ``session_not_found`` when there is none, ``session_expired`` when
        it expired."""
        return await self._read(session_id, SessionReader.info)

    async def list_sessions(self, *, limit: int | None = None) -> tuple[SessionInfo, ...]:
        """Sessions that have not expired, most recent activity first (listing does not
        renew them)."""
        expiry = self._store.expiry
        return await self._pool.run(
            lambda connection: list_sessions_on(connection, self._path, limit=limit, expiry=expiry)
        )

    async def page(
        self,
        session_id: str,
        cursor: str | None = None,
        *,
        limit: int = 100,
        newest_first: bool = False,
    ) -> DisplayPage:
        """See :meth:`raw_core.sessions.sqlite.SessionReader.page_display`."""
        return await self._read(
            session_id,
            lambda reader: reader.page_display(cursor, limit=limit, newest_first=newest_first),
        )

    async def tail_cursor(self, session_id: str) -> str:
        """See :meth:`raw_core.sessions.sqlite.SessionReader.tail_cursor`."""
        return await self._read(session_id, SessionReader.tail_cursor)

    async def wait_for_items(
        self, session_id: str, cursor: str, *, limit: int = 100
    ) -> DisplayPage:
        """The page after ``cursor`` (oldest first) once it holds an item; bound the wait
        with ``anyio.move_on_after``."""

        async def look() -> DisplayPage | None:
            page = await self.page(session_id, cursor, limit=limit)
            return page if page.items else None

        page: DisplayPage = await self._until(session_id, look)
        return page

    async def read_context(self, session_id: str) -> tuple[Message, ...]:
        """The model context, summary first (read in a worker thread)."""
        return await self._read(session_id, SessionReader.read_context)

    async def state(self, session_id: str) -> SessionState:
        """The typed state (read in a worker thread)."""
        return await self._read(session_id, SessionReader.session_state)

    def open_writer(
        self, session_id: str, *, wait: float | None = None
    ) -> AbstractAsyncContextManager[SqliteWriter]:
        """``async with backend.open_writer(id) as writer:`` — the session's one writer for
        the block; waiting for another (up to ``wait`` seconds, default the store's
        ``lock_wait``) sleeps without blocking the loop, then ``session_locked``. An
        expired session is refused with ``session_expired``; the first write sweeps."""
        return self._writer_block(session_id, wait)

    @asynccontextmanager
    async def _writer_block(
        self, session_id: str, wait: float | None
    ) -> AsyncIterator[SqliteWriter]:
        try:
            await self.info(session_id)  # before a lock file is made for it
        finally:
            await self._sweep()
        store = self._store
        lock = await _lock.acquire_async(
            store.lock_path(session_id),
            session_id=session_id,
            wait=store.lock_wait_for(wait),
            run=self._threads.run,
        )
        with anyio.CancelScope(shield=True):  # a writer made must not be lost to a cancel
            sync_writer = await self._threads.run(
                functools.partial(store.writer_holding, session_id, lock)
            )
        writer = SqliteWriter(self, sync_writer, self._timeout)
        try:
            yield writer
        finally:
            with anyio.CancelScope(shield=True):
                await writer._connection.gate.wait()
            writer._close()

    async def delete(self, session_id: str, *, wait: float | None = None) -> None:
        """Delete a session and everything it holds, its requests too (in a worker
        thread); waiting for its writer does not block the loop. An expired session can
        be deleted too."""
        await self._read(session_id, SessionReader.info, live=False)
        store = self._store
        lock = await _lock.acquire_async(
            store.lock_path(session_id), session_id=session_id, wait=store.lock_wait_for(wait)
        )
        try:
            await self._control.in_thread(store.delete_holding, session_id, lock)
        finally:
            lock.release()  # idempotent: delete_holding released it already unless cancelled
        self._notify(session_id)

    async def prune(self, now: datetime | None = None) -> tuple[str, ...]:
        """Delete the expired sessions (in a worker thread); skips ones being written."""
        pruned = await self._control.in_thread(self._store.prune, now)
        for session_id in pruned:
            self._notify(session_id)
        return pruned

    # --- pending requests ---

    async def get_request(self, request_id: str) -> PendingRequest:
        """One request; ``request_not_found`` when there is none."""
        return await self._pool.run(
            lambda connection: get_request_on(connection, self._path, request_id)
        )

    async def list_requests(
        self, session_id: str, *, pending_only: bool = True
    ) -> tuple[PendingRequest, ...]:
        """A session's requests, oldest first."""
        return await self._pool.run(
            lambda connection: list_requests_on(
                connection,
                self._path,
                session_id,
                pending_only=pending_only,
                expiry=self._store.expiry,
            )
        )

    async def answer_request(self, request_id: str, answer: RequestAnswer) -> PendingRequest:
        """See :meth:`raw_core.sessions.sqlite.SessionStore.answer_request`; inline, and it wakes
        this backend's waiters on the request."""
        try:
            return await self._control.commit(self._store.answer_request, request_id, answer)
        finally:
            self._notify(request_id)

    async def cancel_request(self, request_id: str, *, by: str) -> PendingRequest:
        """See :meth:`raw_core.sessions.sqlite.SessionStore.cancel_request`; inline, and it wakes
        this backend's waiters on the request."""
        try:
            store = self._store
            return await self._control.commit(lambda: store.cancel_request(request_id, by=by))
        finally:
            self._notify(request_id)

    async def wait_for_answer(self, request_id: str) -> PendingRequest:
        """The request once it is no longer pending; bound the wait with
        ``anyio.move_on_after``."""

        async def look() -> PendingRequest | None:
            request = await self.get_request(request_id)
            return None if request.state == "pending" else request

        request: PendingRequest = await self._until(request_id, look)
        return request
