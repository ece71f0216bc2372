"""SQLite connections configured the one way the store uses them, and the one seam where
``sqlite3`` errors become store errors.

Every connection: autocommit mode (``isolation_level=None``) so transactions are explicit,
``busy_timeout`` and ``synchronous=NORMAL`` (both are per connection, so each connection
sets them), and no automatic checkpoint: SQLite's auto-checkpoint runs inside whichever
commit crosses its threshold and syncs the file, which can take many milliseconds on the
thread that commits (the event loop's, for the async backend). The store checkpoints
itself at the end of a turn instead (see ``writer.py``), and ``journal_size_limit`` lets
the WAL file shrink back to :data:`WAL_LIMIT` after a checkpoint, so its size tells when
the next one is due. Writers open with ``BEGIN IMMEDIATE``: a deferred ``BEGIN`` that reads
and then writes fails at once with ``SQLITE_BUSY_SNAPSHOT`` whatever ``busy_timeout`` says.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from types import TracebackType

from raw_core.errors import StorageFull, StoreCorrupt, StoreUnavailable

__all__ = [
    "WAL_LIMIT",
    "connect",
    "is_busy",
    "read_transaction",
    "set_busy_timeout",
    "sqlite_errors",
    "translate",
    "write_transaction",
]

WAL_LIMIT = 4 * 1024 * 1024
"""Bytes of WAL past which ``end_turn`` checkpoints (and to which the WAL file shrinks
after one). A passive checkpoint of this much takes a few milliseconds, off the event
loop; measured in benchmarks/README.md, "Session store"."""

_CORRUPT = {sqlite3.SQLITE_CORRUPT, sqlite3.SQLITE_NOTADB}


def translate(exc: sqlite3.Error, path: Path) -> Exception:
    """The store error for a ``sqlite3`` error; programming errors are returned unchanged."""
    if isinstance(exc, sqlite3.ProgrammingError | sqlite3.InterfaceError):
        return exc
    code = getattr(exc, "sqlite_errorcode", 0) & 0xFF
    if code == sqlite3.SQLITE_FULL:
        return StorageFull(
            "the disk is full (or the database reached its size limit); the operation was "
            "rolled back and nothing committed before it was lost",
            path=str(path),
        )
    if code in _CORRUPT:
        return StoreCorrupt(
            f"expected a raw session database, found a file SQLite cannot use: {exc}",
            path=str(path),
        )
    return StoreUnavailable(
        f"the session database failed: {exc}",
        path=str(path),
        sqlite_error=getattr(exc, "sqlite_errorname", None),
    )


class sqlite_errors:  # lower case: used like a function, ``with sqlite_errors(path):``
    """Raise store errors (see :func:`translate`) for ``sqlite3`` errors in the block.

    A class rather than a generator: it wraps every append, on the hot path."""

    __slots__ = ("_path",)

    def __init__(self, path: Path) -> None:
        self._path = path

    def __enter__(self) -> None:
        return None

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        traceback: TracebackType | None,
    ) -> None:
        if isinstance(exc, sqlite3.Error):
            translated = translate(exc, self._path)
            if translated is not exc:
                raise translated from exc


def is_busy(exc: BaseException) -> bool:
    """Whether ``exc`` (a store error or a ``sqlite3`` error) says another connection held
    the lock SQLite needed (``SQLITE_BUSY`` and its extended codes)."""
    if isinstance(exc, StoreUnavailable):
        return str(exc.context.get("sqlite_error") or "").startswith("SQLITE_BUSY")
    return (
        isinstance(exc, sqlite3.Error)
        and getattr(exc, "sqlite_errorcode", 0) & 0xFF == sqlite3.SQLITE_BUSY
    )


def set_busy_timeout(connection: sqlite3.Connection, seconds: float) -> None:
    """How long SQLite waits for another connection's lock before ``SQLITE_BUSY``."""
    connection.execute(f"PRAGMA busy_timeout = {int(seconds * 1000)}")


def connect(
    path: Path, *, busy_timeout: float, read_only: bool = False, any_thread: bool = False
) -> sqlite3.Connection:
    """A configured connection to the existing file ``path`` (never creates it).

    ``any_thread``: the connection may be used from any thread, one at a time (SQLite
    serializes the calls; the store never shares one between two threads at once).
    """
    uri = f"{path.resolve().as_uri()}?mode={'ro' if read_only else 'rw'}"
    with sqlite_errors(path):
        connection = sqlite3.connect(
            uri,
            uri=True,
            timeout=busy_timeout,
            isolation_level=None,
            cached_statements=64,
            check_same_thread=not any_thread,
        )
        try:
            set_busy_timeout(connection, busy_timeout)
            connection.execute("PRAGMA synchronous = NORMAL")
            connection.execute("PRAGMA wal_autocheckpoint = 0")
            connection.execute(f"PRAGMA journal_size_limit = {WAL_LIMIT}")
        except BaseException:
            connection.close()
            raise
    return connection


@contextmanager
def write_transaction(connection: sqlite3.Connection, path: Path) -> Iterator[sqlite3.Connection]:
    """``BEGIN IMMEDIATE`` ... ``COMMIT``; anything raised inside rolls the whole back.

    SQLite may already have rolled back by itself (it does on ``SQLITE_FULL``), so the
    rollback runs only when a transaction is still open.
    """
    with sqlite_errors(path):
        connection.execute("BEGIN IMMEDIATE")
        try:
            yield connection
            connection.execute("COMMIT")
        except BaseException:
            if connection.in_transaction:
                connection.execute("ROLLBACK")
            raise


@contextmanager
def read_transaction(connection: sqlite3.Connection, path: Path) -> Iterator[sqlite3.Connection]:
    """A deferred read transaction: every statement inside sees one snapshot."""
    with sqlite_errors(path):
        connection.execute("BEGIN")
        try:
            yield connection
        finally:
            if connection.in_transaction:
                connection.execute("COMMIT")
