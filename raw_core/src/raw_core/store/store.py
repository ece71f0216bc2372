"""The session store: create, list, read, write, compact, delete and expire sessions.

This is the synchronous core and the hot path. Every operation is one short transaction on
a local file, run inline: commits happen in the caller's order, with no thread hop (see
:mod:`raw_core.store.async_store` for the async facade and why it stays inline too).

Durability: WAL with ``synchronous=NORMAL``. A commit is in the WAL file when
:meth:`SessionWriter.append` returns, so it survives a crash or kill of the process;
:meth:`SessionWriter.end_turn` syncs the WAL to disk, so a completed turn also survives a
power loss.

Concurrency: one writer per session across processes (an advisory ``flock`` held by
:class:`SessionWriter`); readers take no lock and never wait for a writer, and since each
append is one transaction they never see half of one.
"""

from __future__ import annotations

import errno
import json
import os
import sqlite3
import time
from collections.abc import Iterable, Mapping
from datetime import UTC, datetime, timedelta
from pathlib import Path
from types import TracebackType
from typing import Any

import attrs

from raw_core.errors import (
    InvalidCursor,
    SessionNotFound,
    StorageFull,
    StoreCorrupt,
    StoreTooNew,
    StoreUnavailable,
)
from raw_core.store import _lock
from raw_core.store._cursor import Cursor
from raw_core.store._ids import is_session_id, new_session_id
from raw_core.store._lock import SessionLock
from raw_core.store._schema import (
    MAX_KEY,
    SEQ_BITS,
    ensure_private_dir,
    open_database,
    seq_range,
)
from raw_core.store._sqlite import connect, read_transaction, sqlite_errors, write_transaction
from raw_core.store.messages import (
    MESSAGE_FORMAT,
    AssistantMessage,
    Message,
    ToolResultMessage,
    UserMessage,
    dumps_message,
    loads_message,
)

__all__ = [
    "DEFAULT_EXPIRE_AFTER_DAYS",
    "MAX_PAGE_SIZE",
    "DisplayItem",
    "DisplayPage",
    "SessionInfo",
    "SessionReader",
    "SessionStore",
    "SessionWriter",
    "default_store_directory",
]

DEFAULT_EXPIRE_AFTER_DAYS = 30.0
MAX_PAGE_SIZE = 10_000


def default_store_directory() -> Path:
    """Where sessions live unless told otherwise: ``platformdirs.user_state_dir("raw")``."""
    import platformdirs  # imported when needed: it costs startup time

    return Path(platformdirs.user_state_dir("raw", appauthor=False))


# --- records -----------------------------------------------------------------------------


@attrs.frozen(kw_only=True)
class SessionInfo:
    """One session as a list shows it. ``last_activity`` is the last committed append or
    compaction (or the creation); reading and listing never change it."""

    id: str
    title: str
    created_at: datetime
    last_activity: datetime


@attrs.frozen(kw_only=True)
class DisplayItem:
    """One entry of the display history. ``seq`` is its position in the session (1 for
    the first message, then 2, ...): stable, and it grows with time."""

    seq: int
    created_at: datetime
    message: Message


@attrs.frozen(kw_only=True)
class DisplayPage:
    """A page of display history.

    Oldest first, ``next_cursor`` is always set: it continues after this page, also once
    the session has grown (an empty page means "nothing new yet"). Newest first, it is
    ``None`` when the page reached the first item. ``has_more`` says whether more items
    were there when the page was read.
    """

    items: tuple[DisplayItem, ...]
    next_cursor: str | None
    has_more: bool


# --- helpers -----------------------------------------------------------------------------


_TOUCH_RESOLUTION_MS = 1000
_NEVER = 2**63 - 1  # SQLite's largest integer: a time after every last activity
_INSERT_DISPLAY = "INSERT INTO display (seq, created_at, format, body) VALUES (?, ?, ?, ?)"


def _now_ms() -> int:
    return time.time_ns() // 1_000_000


def _to_ms(moment: datetime) -> int:
    return int(moment.timestamp() * 1000)


def _from_ms(ms: int) -> datetime:
    return datetime.fromtimestamp(ms / 1000, tz=UTC)


def _not_found(session_id: str) -> SessionNotFound:
    shown = session_id if len(session_id) <= 80 else session_id[:77] + "..."
    return SessionNotFound(
        f"no session has the id {shown!r} (it may have expired and been pruned)",
        session_id=shown,
    )


def _decode(path: Path, session_id: str, seq: int, fmt: int | None, body: str | None) -> Message:
    """A stored message; :class:`StoreTooNew` for a newer format, :class:`StoreCorrupt` for
    a row that cannot be read."""
    if fmt is not None and fmt > MESSAGE_FORMAT:
        raise StoreTooNew(
            f"message {seq} of session {session_id} has format {fmt}, written by a newer raw "
            f"(this raw reads format {MESSAGE_FORMAT})",
            path=str(path),
            session_id=session_id,
        )
    try:
        if fmt != MESSAGE_FORMAT or body is None:
            raise ValueError(f"format {fmt!r} with {'no' if body is None else 'a'} body")
        return loads_message(body)
    except ValueError as exc:
        raise StoreCorrupt(
            f"message {seq} of session {session_id} cannot be read: {exc}",
            path=str(path),
            session_id=session_id,
        ) from exc


def _info_row(connection: sqlite3.Connection, session_id: str) -> SessionInfo | None:
    row = connection.execute(
        "SELECT id, title, created_at, last_activity FROM sessions WHERE id = ?", (session_id,)
    ).fetchone()
    return None if row is None else _info(row)


def _info(row: tuple[str, str, int, int]) -> SessionInfo:
    return SessionInfo(
        id=row[0], title=row[1], created_at=_from_ms(row[2]), last_activity=_from_ms(row[3])
    )


# A session's display rows lie in its own range of ``seq`` (see _schema.seq_range), so
# every query below is a range scan of the primary key.
_PAGE_OLDEST_FIRST = (
    "SELECT seq, created_at, format, body FROM display"
    " WHERE seq > ? AND seq < ? ORDER BY seq LIMIT ?"
)
_PAGE_NEWEST_FIRST = (
    "SELECT seq, created_at, format, body FROM display"
    " WHERE seq < ? AND seq > ? ORDER BY seq DESC LIMIT ?"
)
_LAST_SEQ_IN = "SELECT coalesce(max(seq), ?) FROM display WHERE seq > ? AND seq < ?"
_CONTEXT_HEAD = "SELECT key, context_from, summary_format, summary_body FROM sessions WHERE id = ?"
_CONTEXT_TAIL = "SELECT seq, format, body FROM display WHERE seq >= ? AND seq < ? ORDER BY seq"


def _last_seq(connection: sqlite3.Connection, key: int) -> int:
    """The ``seq`` of the session's last display row (the bottom of its range if none)."""
    low, high = seq_range(key)
    (last,) = connection.execute(_LAST_SEQ_IN, (low, low, high)).fetchone()
    return int(last)


def _context_rows(
    connection: sqlite3.Connection, session_id: str
) -> list[tuple[int, int | None, str | None]]:
    """``(position, format, body)`` of the model context: the summary (position 0), then
    the display rows from ``context_from`` on (their position in the session). Call inside
    a read transaction."""
    head = connection.execute(_CONTEXT_HEAD, (session_id,)).fetchone()
    if head is None:
        return []
    key, context_from, summary_format, summary_body = head
    low, high = seq_range(key)
    rows: list[tuple[int, int | None, str | None]] = []
    if summary_body is not None:
        rows.append((0, summary_format, summary_body))
    rows.extend(
        (seq - low, fmt, body)
        for seq, fmt, body in connection.execute(_CONTEXT_TAIL, (max(context_from, low), high))
    )
    return rows


# --- reading -----------------------------------------------------------------------------


class SessionReader:
    """Reads one session. Takes no lock: it never waits for, nor blocks, a writer.

    Made by :meth:`SessionStore.open_reader`. Each call reads one consistent snapshot;
    a session deleted meanwhile raises :class:`SessionNotFound`.
    """

    def __init__(self, connection: sqlite3.Connection, path: Path, session_id: str) -> None:
        self._connection = connection
        self._path = path
        self._session_id = session_id

    @property
    def session_id(self) -> str:
        """The session's id."""
        return self._session_id

    def info(self) -> SessionInfo:
        """The session's title, creation time and last activity."""
        with read_transaction(self._connection, self._path) as connection:
            info = _info_row(connection, self._session_id)
        if info is None:
            raise _not_found(self._session_id)
        return info

    def _require(self, connection: sqlite3.Connection) -> int:
        """The session's key; :class:`SessionNotFound` when it is gone."""
        found = connection.execute(
            "SELECT key FROM sessions WHERE id = ?", (self._session_id,)
        ).fetchone()
        if found is None:
            raise _not_found(self._session_id)
        return int(found[0])

    def page_display(
        self, cursor: str | None = None, *, limit: int = 100, newest_first: bool = False
    ) -> DisplayPage:
        """Up to ``limit`` display items after ``cursor`` (``None``: from the start, or
        from the end when ``newest_first``).

        A cursor is an opaque string from :attr:`DisplayPage.next_cursor` or
        :meth:`tail_cursor`; it remembers its direction, and ``newest_first`` must agree
        with it (:class:`StoreError` with ``field="cursor"`` otherwise, or for a string
        that is not a cursor of this session). Reading costs the same at any depth.
        """
        if not 1 <= limit <= MAX_PAGE_SIZE:
            raise ValueError(f"expected a page size from 1 to {MAX_PAGE_SIZE}, found {limit}")
        if cursor is None:
            start = (1 << SEQ_BITS) if newest_first else 0
        else:
            decoded = Cursor.decode(cursor, session_id=self._session_id)
            if decoded.newest_first != newest_first:
                order = "newest first" if decoded.newest_first else "oldest first"
                raise InvalidCursor(
                    f"this cursor pages {order}; pass newest_first={decoded.newest_first}",
                    field="cursor",
                    session_id=self._session_id,
                )
            start = decoded.position
        with read_transaction(self._connection, self._path) as connection:
            low, high = seq_range(self._require(connection))
            if newest_first:
                query, bounds = _PAGE_NEWEST_FIRST, (low + start, low)
            else:
                query, bounds = _PAGE_OLDEST_FIRST, (low + start, high)
            rows = connection.execute(query, (*bounds, limit + 1)).fetchall()
        has_more = len(rows) > limit
        items = tuple(
            DisplayItem(
                seq=seq - low,
                created_at=_from_ms(created_at),
                message=_decode(self._path, self._session_id, seq - low, fmt, body),
            )
            for seq, created_at, fmt, body in rows[:limit]
        )
        if newest_first:
            next_position = items[-1].seq if has_more else None
        else:
            next_position = items[-1].seq if items else start
        next_cursor = (
            None
            if next_position is None
            else Cursor(
                session_id=self._session_id, newest_first=newest_first, position=next_position
            )
        )
        return DisplayPage(
            items=items,
            next_cursor=None if next_cursor is None else next_cursor.encode(),
            has_more=has_more,
        )

    def tail_cursor(self) -> str:
        """An oldest-first cursor after the current last item: pages from it return only
        items appended later (to follow a session live after showing its newest page)."""
        with read_transaction(self._connection, self._path) as connection:
            key = self._require(connection)
            last = _last_seq(connection, key) - seq_range(key)[0]
        return Cursor(session_id=self._session_id, newest_first=False, position=last).encode()

    def state(self) -> dict[str, Any]:
        """The runtime state :meth:`SessionWriter.set_state` last stored (``{}`` at first)."""
        with sqlite_errors(self._path):
            row = self._connection.execute(
                "SELECT state FROM sessions WHERE id = ?", (self._session_id,)
            ).fetchone()
        if row is None:
            raise _not_found(self._session_id)
        try:
            value = json.loads(row[0])
        except ValueError as exc:
            raise StoreCorrupt(
                f"the state of session {self._session_id} cannot be read: {exc}",
                path=str(self._path),
                session_id=self._session_id,
            ) from exc
        if not isinstance(value, dict):
            raise StoreCorrupt(
                f"the state of session {self._session_id} is not an object",
                path=str(self._path),
                session_id=self._session_id,
            )
        return value

    def read_context(self) -> tuple[Message, ...]:
        """The model context: the messages the next request includes, in order (a
        compaction summary in place of the messages it replaced)."""
        with read_transaction(self._connection, self._path) as connection:
            self._require(connection)
            rows = _context_rows(connection, self._session_id)
        return tuple(
            _decode(self._path, self._session_id, pos, fmt, body) for pos, fmt, body in rows
        )


# --- writing -----------------------------------------------------------------------------


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
        wal_name: _WalName,
    ) -> None:
        super().__init__(connection, path, session_id)
        self._lock = lock
        self._wal_name = wal_name
        # The session's range of display numbers, and its last one: only this writer
        # appends to the session, so the next numbers are known without asking SQLite.
        self._last_seq = last_seq
        self._seq_low, self._seq_limit = seq_range(key)
        self._touched_at = 0  # ms; see append

    @property
    def closed(self) -> bool:
        """Whether :meth:`close` has run (the lock is released)."""
        return not self._lock.held

    def _touch(self, connection: sqlite3.Connection, now: int) -> None:
        """Record conversation activity (and check the session is still there)."""
        updated = connection.execute(
            "UPDATE sessions SET last_activity = max(last_activity, ?) WHERE id = ?",
            (now, self._session_id),
        ).rowcount
        if not updated:
            raise _not_found(self._session_id)

    def append(self, messages: Iterable[Message]) -> None:
        """Append ``messages`` to the display history and the model context, in one
        transaction: a reader sees all of them or none, and a crash keeps all or none.

        Put what belongs together in one call (a completed assistant message; all tool
        results of a batch). Nothing to append is a no-op.
        """
        batch = tuple(messages)
        for message in batch:
            if not isinstance(message, UserMessage | AssistantMessage | ToolResultMessage):
                raise TypeError(f"expected a message record, found {type(message).__name__}")
        if not batch:
            return
        bodies = [dumps_message(message) for message in batch]
        now = _now_ms()
        first = self._last_seq + 1
        if first + len(bodies) > self._seq_limit:
            raise StorageFull(
                f"session {self._session_id} holds the most messages one session can "
                f"({(1 << SEQ_BITS) - 1:,}); start a new session",
                path=str(self._path),
                session_id=self._session_id,
            )
        # Activity is recorded at most once per second: expiry counts days, and skipping the
        # sessions row spares a page write in the many appends of a running turn. The
        # session cannot vanish meanwhile: deleting it needs this writer's lock.
        touch = now - self._touched_at >= _TOUCH_RESOLUTION_MS
        if len(bodies) == 1 and not touch:
            # The common case in a running turn: one statement is its own transaction
            # (autocommit), which spares the round trips of BEGIN and COMMIT.
            with sqlite_errors(self._path):
                self._connection.execute(_INSERT_DISPLAY, (first, now, MESSAGE_FORMAT, bodies[0]))
            self._last_seq = first
            return
        with write_transaction(self._connection, self._path) as connection:
            if touch:
                self._touch(connection, now)
            connection.executemany(
                _INSERT_DISPLAY,
                [(seq, now, MESSAGE_FORMAT, body) for seq, body in enumerate(bodies, first)],
            )
        self._last_seq = first + len(bodies) - 1
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
            self._touch(connection, _now_ms())
            rows = _context_rows(connection, sid)
            if replace_first > len(rows):
                raise ValueError(
                    f"the model context holds {len(rows)} messages; cannot replace the first "
                    f"{replace_first}"
                )
            if replace_first < len(rows):
                position, fmt, kept = rows[replace_first]
                if isinstance(_decode(self._path, sid, position, fmt, kept), ToolResultMessage):
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

    def set_state(self, state: Mapping[str, Any]) -> None:
        """Replace the session's runtime state: a small JSON object the agent loop keeps
        between runs (the tool definitions' hash, the prompt-cache key, the skills the model
        has read). Not conversation activity: expiry is unaffected."""
        text = json.dumps(dict(state), sort_keys=True, separators=(",", ":"), allow_nan=False)
        with write_transaction(self._connection, self._path) as connection:
            updated = connection.execute(
                "UPDATE sessions SET state = ? WHERE id = ?", (text, self._session_id)
            ).rowcount
            if not updated:
                raise _not_found(self._session_id)

    def set_title(self, title: str) -> None:
        """Change the title (not conversation activity: expiry is unaffected)."""
        with write_transaction(self._connection, self._path) as connection:
            updated = connection.execute(
                "UPDATE sessions SET title = ? WHERE id = ?", (title, self._session_id)
            ).rowcount
            if not updated:
                raise _not_found(self._session_id)

    def end_turn(self) -> None:
        """Mark a completed turn: sync the WAL file to disk, so every commit so far
        survives a power loss, not only a crash.

        A WAL database is recovered from its WAL, so syncing it is what
        ``synchronous=FULL`` does at every commit — done here once per turn, which costs a
        fraction of a full checkpoint. Checkpoints into the database file stay SQLite's
        own business (it syncs the WAL before and the file after each one). The WAL's
        name in its folder is made durable once per WAL file (see :class:`_WalName`).
        """
        try:
            _fsync(f"{self._path}-wal")
        except FileNotFoundError:
            return
        except OSError as exc:
            raise _sync_failed(self._path, exc) from exc
        self._wal_name.make_durable()

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


# --- the store ---------------------------------------------------------------------------


class _WalName:
    """Makes the name of the store's ``-wal`` file durable, once per WAL file.

    Syncing the WAL's data is not enough after a power loss if the folder entry naming the
    file was never synced. SQLite removes the WAL only when the last connection to the
    database closes, and the store's own connection stays open while writers can be made,
    so one folder sync per store (done when its first writer opens, outside any turn)
    covers every turn of its writers.
    """

    def __init__(self, path: Path) -> None:
        self._path = path
        self._durable = False

    def make_durable(self) -> None:
        """Sync the folder once, as soon as the WAL file exists."""
        if self._durable or not os.path.exists(f"{self._path}-wal"):
            return
        try:
            _fsync(self._path.parent)
        except OSError as exc:
            # Some file systems cannot sync a folder at all; as SQLite does, take that as
            # done rather than refuse every session (the WAL's own sync still counts).
            if exc.errno not in _FOLDER_SYNC_UNSUPPORTED:
                raise _sync_failed(self._path, exc) from exc
        self._durable = True


_FOLDER_SYNC_UNSUPPORTED = frozenset(
    code for code in (errno.EINVAL, errno.EBADF, getattr(errno, "ENOTSUP", None)) if code
)


def _fsync(path: str | Path) -> None:
    """Sync the file or folder at ``path`` to disk; raises :class:`OSError`."""
    fd = os.open(path, os.O_RDONLY | os.O_CLOEXEC)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


def _sync_failed(path: Path, exc: OSError) -> StoreUnavailable:
    """What a failed sync of the session file raises: the commits are in the file, but
    nothing says they reached the disk."""
    return StoreUnavailable(
        f"syncing the session database to disk failed ({exc.strerror or exc}): what was "
        "committed is kept, but may not survive a power loss",
        path=str(path),
    )


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
    ) -> None:
        self._path = path
        self._connection = connection
        self._locks = path.parent / "locks"
        self._expire_after = expire_after
        self._lock_wait = lock_wait
        self._busy_timeout = busy_timeout
        self._wal_name = _WalName(path)

    @classmethod
    def open(
        cls,
        directory: str | os.PathLike[str] | None = None,
        *,
        expire_after_days: float = DEFAULT_EXPIRE_AFTER_DAYS,
        lock_wait: float = 0.0,
        busy_timeout: float = 5.0,
    ) -> SessionStore:
        """Open the store in ``directory`` (default: :func:`default_store_directory`),
        creating the folder (0700) and database (0600) when missing.

        ``expire_after_days``: sessions without conversation activity for longer are
        removed by :meth:`prune`. ``lock_wait``: seconds a new writer waits for another
        to release a session before :class:`SessionLocked`. ``busy_timeout``: seconds
        SQLite waits for another process's transaction on the file.

        Raises :class:`StoreCorrupt` (not a raw session database), :class:`StoreTooNew`
        (written by a newer raw; left untouched).
        """
        if expire_after_days <= 0:
            raise ValueError(f"expected a positive number of days, found {expire_after_days}")
        if lock_wait < 0 or busy_timeout < 0:
            raise ValueError("expected lock_wait and busy_timeout of zero seconds or more")
        folder = Path(directory) if directory is not None else default_store_directory()
        path, connection = open_database(folder, busy_timeout=busy_timeout)
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
        )

    @property
    def path(self) -> Path:
        """The database file."""
        return self._path

    @property
    def expire_after(self) -> timedelta:
        """How long a session lasts without conversation activity."""
        return self._expire_after

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

    def create(self, title: str = "") -> SessionInfo:
        """A new, empty session with a fresh stable id."""
        session_id = new_session_id()
        now = _now_ms()
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
                "INSERT INTO sessions (id, title, created_at, last_activity) VALUES (?, ?, ?, ?)",
                (session_id, title, now, now),
            )
        return SessionInfo(
            id=session_id, title=title, created_at=_from_ms(now), last_activity=_from_ms(now)
        )

    def info(self, session_id: str) -> SessionInfo:
        """One session's title and times; :class:`SessionNotFound` if there is none."""
        if not is_session_id(session_id):
            raise _not_found(session_id)
        with read_transaction(self._connection, self._path) as connection:
            info = _info_row(connection, session_id)
        if info is None:
            raise _not_found(session_id)
        return info

    def list_sessions(self, *, limit: int | None = None) -> tuple[SessionInfo, ...]:
        """Sessions, most recent activity first (listing does not renew them)."""
        if limit is not None and limit < 0:
            raise ValueError(f"expected a limit of zero or more, found {limit}")
        with read_transaction(self._connection, self._path) as connection:
            rows = connection.execute(
                "SELECT id, title, created_at, last_activity FROM sessions"
                " ORDER BY last_activity DESC, id DESC LIMIT ?",
                (-1 if limit is None else limit,),
            ).fetchall()
        return tuple(_info(row) for row in rows)

    def open_reader(self, session_id: str) -> SessionReader:
        """Read a session without locking it; :class:`SessionNotFound` if there is none."""
        self.info(session_id)
        return SessionReader(self._connection, self._path, session_id)

    def _lock_path(self, session_id: str) -> Path:
        return self._locks / f"{session_id}.lock"

    def _wait(self, wait: float | None) -> float:
        return self._lock_wait if wait is None else wait

    def open_writer(self, session_id: str, *, wait: float | None = None) -> SessionWriter:
        """Become the session's one writer.

        Another writer (in any process) makes this wait up to ``wait`` seconds (default:
        the store's ``lock_wait``), then raise :class:`SessionLocked`. A crashed writer's
        lock is released by the operating system.
        """
        self.info(session_id)  # before a lock file is made for it
        lock = _lock.acquire(
            self._lock_path(session_id), session_id=session_id, wait=self._wait(wait)
        )
        return self._writer_holding(session_id, lock)

    def _writer_holding(self, session_id: str, lock: SessionLock) -> SessionWriter:
        """The writer for a session whose lock we just took (the session may have been
        deleted while we waited)."""
        try:
            connection = connect(self._path, busy_timeout=self._busy_timeout)
        except BaseException:
            lock.release()
            raise
        try:
            with read_transaction(connection, self._path):
                row = connection.execute(
                    "SELECT key FROM sessions WHERE id = ?", (session_id,)
                ).fetchone()
                last_seq = 0 if row is None else _last_seq(connection, row[0])
            if row is not None:
                self._wal_name.make_durable()
        except BaseException:
            connection.close()
            lock.release()
            raise
        if row is None:
            connection.close()
            lock.release(remove_file=True)
            raise _not_found(session_id)
        return SessionWriter(
            connection,
            self._path,
            session_id,
            lock,
            key=row[0],
            last_seq=last_seq,
            wal_name=self._wal_name,
        )

    def delete(self, session_id: str, *, wait: float | None = None) -> None:
        """Delete a session and everything it holds. Needs the session's lock, so an open
        writer (even in this process) makes this raise :class:`SessionLocked`."""
        self.info(session_id)
        lock = _lock.acquire(
            self._lock_path(session_id), session_id=session_id, wait=self._wait(wait)
        )
        self._delete_holding(session_id, lock)

    def _delete_holding(self, session_id: str, lock: SessionLock) -> None:
        if not self._delete_locked(session_id, lock, older_than=None):
            raise _not_found(session_id)

    def _delete_locked(self, session_id: str, lock: SessionLock, *, older_than: int | None) -> bool:
        """Delete with the lock held, then release it (removing the lock file when the
        session is gone). ``older_than``: only if its last activity is before this."""
        deleted = False
        try:
            with write_transaction(self._connection, self._path) as connection:
                # The schema's trigger deletes the session's display rows with it.
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
        ``now`` (default: the current time); returns their ids.

        Safe while other processes use the store: a session whose lock is held (it is
        being written) is skipped, and one that was renewed meanwhile is kept.
        """
        moment = _now_ms() if now is None else _to_ms(now)
        cutoff = moment - int(self._expire_after.total_seconds() * 1000)
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
            lock = SessionLock.try_acquire(self._lock_path(session_id))
            if lock is None:
                continue
            if self._delete_locked(session_id, lock, older_than=cutoff):
                pruned.append(session_id)
        return tuple(pruned)
