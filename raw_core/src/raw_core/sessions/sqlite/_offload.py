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
  shared memory, microseconds, so it runs inline.
"""

from __future__ import annotations

import sqlite3
import threading
from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager
from pathlib import Path
from typing import TypeVar

import anyio
import anyio.to_thread

from raw_core.errors import StoreUnavailable
from raw_core.sessions.sqlite._sqlite import connect, is_busy, sqlite_errors

__all__ = ["ChangeWatch", "Gate", "ReadPool"]

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
