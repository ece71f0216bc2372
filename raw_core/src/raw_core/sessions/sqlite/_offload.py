"""How the async backend keeps waits off the event loop: pooled read connections in worker
threads, a gate for a connection that is briefly in a worker thread, and the cheap change
check that lets waiters see other processes' commits.

* :class:`ReadPool`: connections that only read, each used by one worker thread at a
  time, at most ``size`` at once (an anyio capacity limiter, made on first use: it belongs
  to the event loop);
* :class:`Gate`: a connection used inline on the loop thread is sometimes handed to a
  worker thread (a busy commit retried with the real busy timeout, a WAL sync); while it
  is there, other tasks wait for it on an event instead of using it from the loop thread.
  The check is one attribute read on the hot path;
* :class:`ChangeWatch`: ``PRAGMA data_version`` on a connection of its own, which changes
  whenever another connection (any process's) has committed. It reads the WAL index in
  shared memory, microseconds, so it runs inline;
* :class:`Threads` and :class:`InlineConnection`: the few worker threads a backend's
  writers use, and a connection that commits inline on the loop thread and is lent to
  one of them for a busy commit or a wait.
"""

from __future__ import annotations

import functools
import sqlite3
import threading
from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any, TypeVar

import anyio
import anyio.to_thread

from raw_core.errors import StoreUnavailable
from raw_core.sessions.sqlite._sqlite import connect, is_busy, set_busy_timeout, sqlite_errors

__all__ = ["WORKER_THREADS", "ChangeWatch", "Gate", "InlineConnection", "ReadPool", "Threads"]

T = TypeVar("T")


class ReadPool:
    """Read connections to ``path`` for worker threads."""

    def __init__(self, path: Path, *, busy_timeout: float, size: int = 4) -> None:
        self._path = path
        self._busy_timeout = busy_timeout
        self._size = size
        self._idle: list[sqlite3.Connection] = []
        self._all: list[sqlite3.Connection] = []
        self._mutex = threading.Lock()
        self._limiter: anyio.CapacityLimiter | None = None
        self._closed = False

    def _take(self) -> sqlite3.Connection:
        with self._mutex:
            if self._closed:
                raise StoreUnavailable("the session backend is closed", path=str(self._path))
            if self._idle:
                return self._idle.pop()
        connection = connect(self._path, busy_timeout=self._busy_timeout, any_thread=True)
        with self._mutex:
            self._all.append(connection)
        return connection

    def _give_back(self, connection: sqlite3.Connection) -> None:
        with self._mutex:
            if self._closed:
                connection.close()
            else:
                self._idle.append(connection)

    def _call(self, function: Callable[[sqlite3.Connection], T]) -> T:
        connection = self._take()
        try:
            return function(connection)
        finally:
            if connection.in_transaction:  # an error inside a read: never keep it open
                connection.rollback()
            self._give_back(connection)

    async def run(self, function: Callable[[sqlite3.Connection], T]) -> T:
        """``function(connection)`` in a worker thread, on a pooled connection."""
        if self._limiter is None:
            self._limiter = anyio.CapacityLimiter(self._size)
        return await anyio.to_thread.run_sync(self._call, function, limiter=self._limiter)

    def close(self) -> None:
        """Close every connection (ones in use close when given back)."""
        with self._mutex:
            self._closed = True
            idle, self._idle = self._idle, []
            self._all.clear()
        for connection in idle:
            connection.close()


class Gate:
    """Keeps loop-thread users off a connection while a worker thread has it."""

    __slots__ = ("away",)

    def __init__(self) -> None:
        self.away: anyio.Event | None = None
        """Set while a worker thread has the connection (a plain attribute: it is read
        on every commit of the hot path)."""

    async def wait(self) -> None:
        """Until no worker thread has the connection."""
        while self.away is not None:
            await self.away.wait()

    @asynccontextmanager
    async def lent(self) -> AsyncIterator[None]:
        """The block has the connection (waiting first for another worker's turn)."""
        await self.wait()
        self.away = event = anyio.Event()
        try:
            yield
        finally:
            self.away = None
            event.set()


class ChangeWatch:
    """Tells whether anyone committed to the file since the last look."""

    def __init__(self, path: Path) -> None:
        self._path = path
        self._connection: sqlite3.Connection | None = None
        self._busy = 0

    def version(self) -> int:
        """A number that changes after any other connection's commit (a new negative one
        each time SQLite was busy: then assume a change and read again)."""
        if self._connection is None:
            self._connection = connect(self._path, busy_timeout=0.0)
        try:
            with sqlite_errors(self._path):
                (value,) = self._connection.execute("PRAGMA data_version").fetchone()
        except StoreUnavailable as exc:
            if is_busy(exc):
                self._busy -= 1
                return self._busy
            raise
        return int(value)

    def close(self) -> None:
        """Close its connection."""
        if self._connection is not None:
            self._connection.close()
            self._connection = None


def _patiently(
    connection: sqlite3.Connection, timeout: float, function: Callable[..., T], *args: Any
) -> T:
    """``function(*args)`` with ``connection`` waiting up to ``timeout`` for SQLite's locks
    (in a worker thread), then back to not waiting."""
    set_busy_timeout(connection, timeout)
    try:
        return function(*args)
    finally:
        set_busy_timeout(connection, 0.0)


WORKER_THREADS = 2
"""How many worker threads one backend's writers use at once (its readers have a pool of
their own)."""


class Threads:
    """The worker threads one backend's waits run in, at most :data:`WORKER_THREADS` at
    once. Few threads, reused: starting a thread blocks the event loop until it runs, and
    with many sessions opening at once that start-up is what stalls every other session."""

    __slots__ = ("_limiter",)

    def __init__(self) -> None:
        self._limiter: anyio.CapacityLimiter | None = None  # made on first use, on the loop

    async def run(self, function: Callable[[], T]) -> T:
        """``function()`` in one of the backend's worker threads."""
        if self._limiter is None:
            self._limiter = anyio.CapacityLimiter(WORKER_THREADS)
        return await anyio.to_thread.run_sync(function, limiter=self._limiter)


class InlineConnection:
    """A connection used inline on the loop thread, lent to worker threads now and then."""

    __slots__ = ("connection", "gate", "threads", "timeout")

    def __init__(self, connection: sqlite3.Connection, timeout: float, threads: Threads) -> None:
        self.connection = connection
        self.timeout = timeout
        self.threads = threads
        self.gate = Gate()

    async def commit(self, function: Callable[..., T], *args: Any) -> T:
        """Run a short commit inline; once more in a worker thread if SQLite was busy."""
        if self.gate.away is not None:
            await self.gate.wait()
        try:
            return function(*args)
        except StoreUnavailable as exc:
            if not is_busy(exc):
                raise
        return await self.in_thread(function, *args)

    async def in_thread(self, function: Callable[..., T], *args: Any) -> T:
        """Run ``function(*args)`` in a worker thread, waiting for locks as long as the
        store's busy timeout says; other tasks wait for the connection meanwhile."""
        async with self.gate.lent():
            return await self.threads.run(
                functools.partial(_patiently, self.connection, self.timeout, function, *args)
            )
