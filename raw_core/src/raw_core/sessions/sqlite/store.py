"""The session store: the file, and creating, listing, deleting and expiring sessions in it,
and answering their pending requests.

Expiry (see :mod:`raw_core.sessions.sqlite._expiry`): an expired session is not listed, and
reading it or opening it for writing raises ``session_expired``; the store's first write
(creating a session or opening one for writing) deletes the expired sessions, as
:meth:`SessionStore.prune` does. Reading and listing never renew a session.

This is the synchronous core. Every operation is one short transaction on a local file.
Used directly (the agent loop, the CLI), it runs inline on the caller's thread; the async
:class:`~raw_core.sessions.sqlite.backend.SqliteBackend` runs on it too, and decides which
calls stay on the event loop and which go to worker threads (see its module).

Durability: WAL with ``synchronous=NORMAL``. A commit is in the WAL file when it returns, so
it survives a crash or kill of the process; :meth:`SessionWriter.end_turn` syncs the WAL to
disk, so a completed turn also survives a power loss.

Concurrency: one writer per session across processes (an advisory ``flock`` held by
:class:`SessionWriter`); readers take no lock and never wait for a writer, and since each
append is one transaction they never see half of one. Pending requests need no lock: each
state change is a compare-and-set.
"""

from __future__ import annotations

import os
import sqlite3
from collections.abc import Callable
from datetime import datetime, timedelta
from pathlib import Path
from types import TracebackType

from raw_core.errors import StorageFull
from raw_core.sessions.backend import PendingRequest, RequestAnswer, SessionInfo, title_text
from raw_core.sessions.sqlite import _lock, _requests
from raw_core.sessions.sqlite._durability import WalName
from raw_core.sessions.sqlite._expiry import Clock, Expiry
from raw_core.sessions.sqlite._ids import is_request_id, is_session_id, new_session_id
from raw_core.sessions.sqlite._lock import SessionLock
from raw_core.sessions.sqlite._rows import (
    INFO_COLUMNS,
    from_ms,
    info_from_row,
    info_row,
    last_seq,
    not_found,
    to_ms,
)
from raw_core.sessions.sqlite._schema import MAX_KEY, ensure_private_dir, open_database
from raw_core.sessions.sqlite._sqlite import (
    connect,
    read_transaction,
    set_busy_timeout,
    write_transaction,
)
from raw_core.sessions.sqlite.reader import SessionReader
from raw_core.sessions.sqlite.writer import SessionWriter

__all__ = [
    "DEFAULT_EXPIRE_AFTER_DAYS",
    "SessionStore",
    "default_store_directory",
    "get_request_on",
    "list_requests_on",
    "list_sessions_on",
]

DEFAULT_EXPIRE_AFTER_DAYS = 30.0
_NEVER = 2**63 - 1  # SQLite's largest integer: a time after every last activity


def default_store_directory() -> Path:
    """Where sessions live unless told otherwise: ``platformdirs.user_state_dir("raw")``."""
    import platformdirs  # imported when needed: it costs startup time

    return Path(platformdirs.user_state_dir("raw", appauthor=False))


class SessionStore:
    """All sessions of one user, in one SQLite file. Make one with :meth:`open`.

    A store object (and the readers it opens) belongs to the thread that opened it; each
    writer has its own connection. Close the store when done.
    """

    def __init__(
        self,
        *,
        path: Path,
        connection: sqlite3.Connection,
        expire_after: timedelta,
        lock_wait: float,
        busy_timeout: float,
        any_thread: bool = False,
        clock: Clock | None = None,
    ) -> None:
        self._path = path
        self._connection = connection
        self._locks = path.parent / "locks"
        self._expiry = Expiry(expire_after, clock)
        self._swept = False
        self._lock_wait = lock_wait
        self._busy_timeout = busy_timeout
        self._any_thread = any_thread
        self._wal_name = WalName(path)

    @classmethod
    def open(
        cls,
        directory: str | os.PathLike[str] | None = None,
        *,
        expire_after_days: float = DEFAULT_EXPIRE_AFTER_DAYS,
        lock_wait: float = 0.0,
        busy_timeout: float = 5.0,
        any_thread: bool = False,
        clock: Clock | None = None,
    ) -> SessionStore:
        """Open the store in ``directory`` (default: :func:`default_store_directory`),
        creating the folder (0700) and database (0600) when missing.

        ``expire_after_days``: sessions without conversation activity for longer have
        expired (see the module docstring). ``lock_wait``: seconds a new writer waits for
        another to release a session before :class:`SessionLocked`. ``busy_timeout``:
        seconds SQLite waits for another process's transaction on the file.
        ``any_thread``: the store's and its writers' connections may be used from any
        thread, one at a time, and writers' connections start with a zero busy timeout
        (the async backend's mode: it retries a busy commit in a worker thread with
        ``busy_timeout``).
        ``clock``: the current time (an aware datetime) for every time the store stamps and
        every expiry it judges (default: the system clock).

        Raises :class:`StoreCorrupt` (not a raw session database), :class:`StoreTooNew`
        (written by a newer raw; left untouched).
        """
        if expire_after_days <= 0:
            raise ValueError(f"expected a positive number of days, found {expire_after_days}")
        if lock_wait < 0 or busy_timeout < 0:
            raise ValueError("expected lock_wait and busy_timeout of zero seconds or more")
        folder = Path(directory) if directory is not None else default_store_directory()
        path, connection = open_database(folder, busy_timeout=busy_timeout, any_thread=any_thread)
        try:
            ensure_private_dir(path.parent / "locks")
        except BaseException:
            connection.close()
            raise
        return cls(
            path=path,
            connection=connection,
            expire_after=timedelta(days=expire_after_days),
            lock_wait=lock_wait,
            busy_timeout=busy_timeout,
            any_thread=any_thread,
            clock=clock,
        )

    @property
    def path(self) -> Path:
        """The database file."""
        return self._path

    @property
    def expire_after(self) -> timedelta:
        """How long a session lasts without conversation activity."""
        return self._expiry.after

    @property
    def expiry(self) -> Expiry:
        """The expiry time and the clock (readers of the async backend use them)."""
        return self._expiry

    @property
    def swept(self) -> bool:
        """Whether this store object deleted the expired sessions already
        (:meth:`sweep_expired`)."""
        return self._swept

    def sweep_expired(self) -> tuple[str, ...]:
        """The first time only: delete the expired sessions (:meth:`prune`) and return
        their ids. The store's first write calls it, so the data of an expired session is
        gone the next time the store is opened for writing."""
        if self._swept:
            return ()
        self._swept = True
        return self.prune()

    @property
    def busy_timeout(self) -> float:
        """Seconds SQLite waits for another process's transaction."""
        return self._busy_timeout

    @property
    def connection(self) -> sqlite3.Connection:
        """The store's own connection (the async backend sets its busy timeout)."""
        return self._connection

    def close(self) -> None:
        """Close the store's connection (writers it opened stay usable until closed)."""
        self._connection.close()

    def __enter__(self) -> SessionStore:
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        traceback: TracebackType | None,
    ) -> None:
        self.close()

    # --- sessions ---

    def create(self, title: str = "", cwd: str | None = None) -> SessionInfo:
        """A new, empty session with a fresh stable id; ``cwd`` is the folder its tools
        run in, when known; ``title`` is stored as :func:`title_text` makes it. The store's
        first write deletes the expired sessions first."""
        title = title_text(title)
        self.sweep_expired()
        session_id = new_session_id()
        now = self._expiry.now_ms()
        with write_transaction(self._connection, self._path) as connection:
            (last_key,) = connection.execute(  # SQLite gives the next key after both
                "SELECT max((SELECT coalesce(max(seq), 0) FROM sqlite_sequence"
                " WHERE name = 'sessions'), (SELECT coalesce(max(key), 0) FROM sessions))"
            ).fetchone()
            if last_key >= MAX_KEY:
                raise StorageFull(
                    f"this store has made the most sessions one file can ({MAX_KEY:,}); "
                    "use a new store folder",
                    path=str(self._path),
                )
            connection.execute(
                "INSERT INTO sessions (id, title, cwd, created_at, last_activity)"
                " VALUES (?, ?, ?, ?, ?)",
                (session_id, title, cwd, now, now),
            )
        moment = from_ms(now)
        return SessionInfo(
            id=session_id, title=title, created_at=moment, last_activity=moment, cwd=cwd
        )

    def info(self, session_id: str) -> SessionInfo:
        """One session's title, cwd and times; :class:`SessionNotFound` if there is none,
        :class:`SessionExpired` if it expired."""
        return self._info(session_id, self._expiry.check)

    def _info(self, session_id: str, check: Callable[[str, int], None] | None) -> SessionInfo:
        if not is_session_id(session_id):
            raise not_found(session_id)
        with read_transaction(self._connection, self._path) as connection:
            info = info_row(connection, session_id, check)
        if info is None:
            raise not_found(session_id)
        return info

    def list_sessions(self, *, limit: int | None = None) -> tuple[SessionInfo, ...]:
        """Sessions that have not expired, most recent activity first (listing does not
        renew them)."""
        return list_sessions_on(self._connection, self._path, limit=limit, expiry=self._expiry)

    def open_reader(self, session_id: str) -> SessionReader:
        """Read a session without locking it; :class:`SessionNotFound` if there is none,
        :class:`SessionExpired` if it expired (also later, for each read)."""
        self.info(session_id)
        return SessionReader(self._connection, self._path, session_id, self._expiry)

    def lock_path(self, session_id: str) -> Path:
        """The lock file of a session (its id is checked to be one first)."""
        return self._locks / f"{session_id}.lock"

    def lock_wait_for(self, wait: float | None) -> float:
        """``wait``, or the store's ``lock_wait`` when it is ``None``."""
        return self._lock_wait if wait is None else wait

    def open_writer(self, session_id: str, *, wait: float | None = None) -> SessionWriter:
        """Become the session's one writer.

        Another writer (in any process) makes this wait up to ``wait`` seconds (default:
        the store's ``lock_wait``), then raise :class:`SessionLocked`. A crashed writer's
        lock is released by the operating system. An expired session is refused with
        :class:`SessionExpired` (nothing revives it); the store's first write deletes the
        expired sessions.
        """
        try:
            self.info(session_id)  # before a lock file is made for it
        finally:
            self.sweep_expired()
        lock = _lock.acquire(
            self.lock_path(session_id), session_id=session_id, wait=self.lock_wait_for(wait)
        )
        return self.writer_holding(session_id, lock)

    def writer_holding(self, session_id: str, lock: SessionLock) -> SessionWriter:
        """The writer for a session whose lock was just taken (the session may have been
        deleted while we waited): its own connection, its last ``seq``, and the WAL's
        folder entry made durable once per store."""
        # Opening and the first read wait for SQLite's locks as long as the store says
        # (another connection may be checkpointing); an async backend's writer then runs
        # its commits inline and so does not wait (see raw_core.sessions.sqlite.backend).
        try:
            connection = connect(
                self._path, busy_timeout=self._busy_timeout, any_thread=self._any_thread
            )
        except BaseException:
            lock.release()
            raise
        try:
            with read_transaction(connection, self._path):
                row = connection.execute(
                    "SELECT key, last_activity FROM sessions WHERE id = ?", (session_id,)
                ).fetchone()
                if row is not None:  # it may have expired while we waited for the lock
                    self._expiry.check(session_id, row[1])
                last = 0 if row is None else last_seq(connection, row[0])
            if row is not None:
                self._wal_name.make_durable()
            if self._any_thread:
                set_busy_timeout(connection, 0.0)
        except BaseException:
            connection.close()
            lock.release()
            raise
        if row is None:
            connection.close()
            lock.release(remove_file=True)
            raise not_found(session_id)
        return SessionWriter(
            connection,
            self._path,
            session_id,
            lock,
            key=row[0],
            last_seq=last,
            wal_name=self._wal_name,
            now_ms=self._expiry.now_ms,
        )

    def delete(self, session_id: str, *, wait: float | None = None) -> None:
        """Delete a session and everything it holds (its requests too). Needs the session's
        lock, so an open writer (even in this process) makes this raise
        :class:`SessionLocked`. An expired session can be deleted too."""
        self._info(session_id, None)
        lock = _lock.acquire(
            self.lock_path(session_id), session_id=session_id, wait=self.lock_wait_for(wait)
        )
        self.delete_holding(session_id, lock)

    def delete_holding(self, session_id: str, lock: SessionLock) -> None:
        """Delete a session whose lock was just taken, then release the lock."""
        if not self._delete_locked(session_id, lock, older_than=None):
            raise not_found(session_id)

    def _delete_locked(self, session_id: str, lock: SessionLock, *, older_than: int | None) -> bool:
        """Delete with the lock held, then release it (removing the lock file when the
        session is gone). ``older_than``: only if its last activity is before this."""
        deleted = False
        try:
            with write_transaction(self._connection, self._path) as connection:
                # The schema's trigger deletes the session's rows and requests with it.
                deleted = (
                    connection.execute(
                        "DELETE FROM sessions WHERE id = ? AND last_activity < ?",
                        (session_id, _NEVER if older_than is None else older_than),
                    ).rowcount
                    > 0
                )
        finally:
            lock.release(remove_file=deleted)
        return deleted

    def prune(self, now: datetime | None = None) -> tuple[str, ...]:
        """Delete the sessions whose last activity is older than ``expire_after`` at
        ``now`` (default: the clock's time); returns their ids.

        Safe while other processes use the store: a session whose lock is held (it is
        being written) is skipped, and one that was renewed meanwhile is kept.
        """
        cutoff = self._expiry.cutoff(None if now is None else to_ms(now))
        with read_transaction(self._connection, self._path) as connection:
            candidates = [
                session_id
                for (session_id,) in connection.execute(
                    "SELECT id FROM sessions WHERE last_activity < ? ORDER BY last_activity",
                    (cutoff,),
                )
            ]
        pruned: list[str] = []
        for session_id in candidates:
            if not is_session_id(session_id):
                continue  # not made by raw; never used as a file name
            lock = SessionLock.try_acquire(self.lock_path(session_id))
            if lock is None:
                continue
            if self._delete_locked(session_id, lock, older_than=cutoff):
                pruned.append(session_id)
        return tuple(pruned)

    # --- pending requests ---

    def get_request(self, request_id: str) -> PendingRequest:
        """One request; :class:`RequestNotFound` when there is none."""
        return get_request_on(self._connection, self._path, request_id)

    def list_requests(
        self, session_id: str, *, pending_only: bool = True
    ) -> tuple[PendingRequest, ...]:
        """A session's requests, oldest first (only the pending ones by default)."""
        return list_requests_on(
            self._connection,
            self._path,
            session_id,
            pending_only=pending_only,
            expiry=self._expiry,
        )

    def answer_request(self, request_id: str, answer: RequestAnswer) -> PendingRequest:
        """Answer a pending request from any process, holding no session lock: the first
        answer wins. :class:`RequestNotPending` (naming its ``state``) when it was
        answered, expired (its deadline passed) or cancelled already;
        :class:`RequestNotFound` when there is none."""
        if not is_request_id(request_id):
            raise _requests.not_found(request_id)
        with write_transaction(self._connection, self._path) as connection:
            request, taken = _requests.answer_request(
                connection, request_id, answer, self._expiry.now_ms(), self._path
            )
        if not taken:
            raise _requests.not_pending(request)
        return request

    def cancel_request(self, request_id: str, *, by: str) -> PendingRequest:
        """Cancel a pending interaction request from any process, holding no session
        lock: the first end wins. ``by`` names the front end that cancels. Raises as
        :meth:`answer_request` does; ``ValueError`` for an approval request."""
        del by  # a cancelled request stores no answer, so no one to name
        if not is_request_id(request_id):
            raise _requests.not_found(request_id)
        with write_transaction(self._connection, self._path) as connection:
            request, taken = _requests.cancel_request(
                connection, request_id, self._expiry.now_ms(), self._path
            )
        if not taken:
            raise _requests.not_pending(request)
        return request


# --- reads on any connection (the async backend runs them on pooled ones) ----------------


def list_sessions_on(
    connection: sqlite3.Connection, path: Path, *, limit: int | None, expiry: Expiry
) -> tuple[SessionInfo, ...]:
    """:meth:`SessionStore.list_sessions` on ``connection``."""
    if limit is not None and limit < 0:
        raise ValueError(f"expected a limit of zero or more, found {limit}")
    with read_transaction(connection, path):
        rows = connection.execute(
            f"SELECT {INFO_COLUMNS} FROM sessions WHERE last_activity >= ?"
            " ORDER BY last_activity DESC, id DESC LIMIT ?",
            # SQLite's integers end at 2**63 - 1: a limit past it is no limit.
            (expiry.cutoff(), -1 if limit is None or limit >= 2**63 else limit),
        ).fetchall()
    return tuple(info_from_row(row) for row in rows)


def get_request_on(connection: sqlite3.Connection, path: Path, request_id: str) -> PendingRequest:
    """:meth:`SessionStore.get_request` on ``connection``."""
    if not is_request_id(request_id):
        raise _requests.not_found(request_id)
    with read_transaction(connection, path):
        return _requests.get_request(connection, request_id, path)


def list_requests_on(
    connection: sqlite3.Connection,
    path: Path,
    session_id: str,
    *,
    pending_only: bool,
    expiry: Expiry,
) -> tuple[PendingRequest, ...]:
    """:meth:`SessionStore.list_requests` on ``connection``."""
    if not is_session_id(session_id):
        raise not_found(session_id)
    with read_transaction(connection, path):
        found = connection.execute(
            "SELECT key, last_activity FROM sessions WHERE id = ?", (session_id,)
        ).fetchone()
        if found is None:
            raise not_found(session_id)
        expiry.check(session_id, found[1])
        return _requests.list_requests(connection, found[0], pending_only=pending_only, path=path)
