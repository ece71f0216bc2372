"""The async face of the session store, for code that runs under anyio.

A thin facade over the synchronous core in :mod:`raw_core.store.store`: each method runs
the core's operation inline, on the event loop's thread, rather than through
``anyio.to_thread.run_sync``. That is deliberate (design.md: "commits inline, no thread
hop"):

* every operation is one short transaction on a local file, cheaper than a thread hop;
* inline commits happen in exactly the order the agent loop issues them, and a commit has
  finished (or failed) when the ``await`` returns, whatever cancellation arrives;
* SQLite connections belong to one thread, so inline use needs no connection juggling.

The one wait that can be long, for another writer to release a session, polls with
``anyio.sleep`` and never blocks the loop. What remains blocking is bounded: SQLite's
``busy_timeout`` while another process commits to the same file, and the ``fsync`` of a
WAL sync at :meth:`AsyncSessionWriter.end_turn`.
"""

from __future__ import annotations

import os
from collections.abc import AsyncIterator, Iterable, Mapping
from contextlib import asynccontextmanager
from datetime import datetime
from pathlib import Path
from types import TracebackType
from typing import Any

from raw_core.store import _lock
from raw_core.store.messages import Message
from raw_core.store.store import (
    DEFAULT_EXPIRE_AFTER_DAYS,
    DisplayPage,
    SessionInfo,
    SessionReader,
    SessionStore,
    SessionWriter,
)

__all__ = ["AsyncSessionReader", "AsyncSessionStore", "AsyncSessionWriter"]


class AsyncSessionReader:
    """Reads one session; see :class:`SessionReader`."""

    def __init__(self, reader: SessionReader) -> None:
        self._reader = reader

    @property
    def session_id(self) -> str:
        """The session's id."""
        return self._reader.session_id

    async def info(self) -> SessionInfo:
        """See :meth:`SessionReader.info`."""
        return self._reader.info()

    async def page_display(
        self, cursor: str | None = None, *, limit: int = 100, newest_first: bool = False
    ) -> DisplayPage:
        """See :meth:`SessionReader.page_display`."""
        return self._reader.page_display(cursor, limit=limit, newest_first=newest_first)

    async def tail_cursor(self) -> str:
        """See :meth:`SessionReader.tail_cursor`."""
        return self._reader.tail_cursor()

    async def read_context(self) -> tuple[Message, ...]:
        """See :meth:`SessionReader.read_context`."""
        return self._reader.read_context()

    async def state(self) -> dict[str, Any]:
        """See :meth:`SessionReader.state`."""
        return self._reader.state()


class AsyncSessionWriter(AsyncSessionReader):
    """The one writer of a session; see :class:`SessionWriter`. Closed by the ``async
    with`` block of :meth:`AsyncSessionStore.open_writer`."""

    def __init__(self, writer: SessionWriter) -> None:
        super().__init__(writer)
        self._writer = writer

    async def append(self, messages: Iterable[Message]) -> None:
        """See :meth:`SessionWriter.append`."""
        self._writer.append(messages)

    async def compact(self, summary: Message, *, replace_first: int) -> None:
        """See :meth:`SessionWriter.compact`."""
        self._writer.compact(summary, replace_first=replace_first)

    async def set_title(self, title: str) -> None:
        """See :meth:`SessionWriter.set_title`."""
        self._writer.set_title(title)

    async def set_state(self, state: Mapping[str, Any]) -> None:
        """See :meth:`SessionWriter.set_state`."""
        self._writer.set_state(state)

    async def end_turn(self) -> None:
        """See :meth:`SessionWriter.end_turn`."""
        self._writer.end_turn()


class AsyncSessionStore:
    """All sessions of one user; see :class:`SessionStore`. Make one with :meth:`open`."""

    def __init__(self, store: SessionStore) -> None:
        self._store = store

    @classmethod
    def open(
        cls,
        directory: str | os.PathLike[str] | None = None,
        *,
        expire_after_days: float = DEFAULT_EXPIRE_AFTER_DAYS,
        lock_wait: float = 0.0,
        busy_timeout: float = 5.0,
    ) -> AsyncSessionStore:
        """See :meth:`SessionStore.open`."""
        return cls(
            SessionStore.open(
                directory,
                expire_after_days=expire_after_days,
                lock_wait=lock_wait,
                busy_timeout=busy_timeout,
            )
        )

    @property
    def sync(self) -> SessionStore:
        """The synchronous core this facade runs on."""
        return self._store

    @property
    def path(self) -> Path:
        """The database file."""
        return self._store.path

    async def aclose(self) -> None:
        """See :meth:`SessionStore.close`."""
        self._store.close()

    async def __aenter__(self) -> AsyncSessionStore:
        return self

    async def __aexit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        traceback: TracebackType | None,
    ) -> None:
        self._store.close()

    async def create(self, title: str = "") -> SessionInfo:
        """See :meth:`SessionStore.create`."""
        return self._store.create(title)

    async def info(self, session_id: str) -> SessionInfo:
        """See :meth:`SessionStore.info`."""
        return self._store.info(session_id)

    async def list_sessions(self, *, limit: int | None = None) -> tuple[SessionInfo, ...]:
        """See :meth:`SessionStore.list_sessions`."""
        return self._store.list_sessions(limit=limit)

    async def open_reader(self, session_id: str) -> AsyncSessionReader:
        """See :meth:`SessionStore.open_reader`."""
        return AsyncSessionReader(self._store.open_reader(session_id))

    @asynccontextmanager
    async def open_writer(
        self, session_id: str, *, wait: float | None = None
    ) -> AsyncIterator[AsyncSessionWriter]:
        """``async with store.open_writer(id) as writer:`` holds the session's lock for the
        block. Waiting for another writer (up to ``wait`` seconds, default the store's
        ``lock_wait``) sleeps without blocking the loop; then :class:`SessionLocked`."""
        store = self._store
        store.info(session_id)
        lock = await _lock.acquire_async(
            store._lock_path(session_id), session_id=session_id, wait=store._wait(wait)
        )
        writer = store._writer_holding(session_id, lock)
        try:
            yield AsyncSessionWriter(writer)
        finally:
            writer.close()

    async def delete(self, session_id: str, *, wait: float | None = None) -> None:
        """See :meth:`SessionStore.delete`; waiting for the lock does not block the loop."""
        store = self._store
        store.info(session_id)
        lock = await _lock.acquire_async(
            store._lock_path(session_id), session_id=session_id, wait=store._wait(wait)
        )
        store._delete_holding(session_id, lock)

    async def prune(self, now: datetime | None = None) -> tuple[str, ...]:
        """See :meth:`SessionStore.prune`."""
        return self._store.prune(now)
