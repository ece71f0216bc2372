"""Where the database file is, what its tables are, and which versions this raw can use.

Two version numbers, two purposes:

* the file name (``sessions-v1.sqlite3``) changes only when a new raw cannot read the old
  layout. An older file is then never opened, so it stays untouched, and new sessions go
  to the new file (raw does not convert old session data);
* ``PRAGMA user_version`` counts the steps applied within one file name. An older file is
  brought forward in place, its data kept, in one transaction; a file whose version is
  higher than :data:`SCHEMA_VERSION` was written by a newer raw and is refused with
  :class:`StoreTooNew` without being modified. ``PRAGMA application_id`` marks the file
  as raw's, so another program's database is :class:`StoreCorrupt`, never adopted.

The file's header is read directly before SQLite opens it: SQLite, even read-only, creates
``-wal`` and ``-shm`` files beside a WAL database, and read-write it may checkpoint on
close; a newer raw's file must stay exactly as it is.
"""

from __future__ import annotations

import os
import sqlite3
import struct
from collections.abc import Callable, Iterable, Iterator
from pathlib import Path

from raw_core.errors import StoreCorrupt, StoreTooNew, StoreUnavailable
from raw_core.store._sqlite import connect, sqlite_errors, write_transaction

__all__ = [
    "APPLICATION_ID",
    "FILE_NAME",
    "MAX_KEY",
    "SCHEMA_VERSION",
    "SEQ_BITS",
    "SQLITE_PAGE_SIZE",
    "ensure_private_dir",
    "open_database",
    "seq_range",
]

FILE_NAME = "sessions-v1.sqlite3"
APPLICATION_ID = 0x72617731  # "raw1"

SQLITE_PAGE_SIZE = 2048
"""The page size of a new file. Nearly every write is the append of one message, and each
commit puts whole pages in the WAL, which ``end_turn`` then syncs: 2 KiB pages write half
of what 4 KiB pages do for a short message, and the same for a long one (measured in
benchmarks/README.md, "Session store"). A file keeps the page size it was made with."""

# Each step is applied once, in order; step n takes user_version from n to n + 1. A step is
# SQL statements, or a function of the connection for what plain SQL cannot say portably.
#
# Step 1 (kept so older files can be brought forward): display rows numbered across the
# file, found through an index on (session_id, seq).
_STEP_1 = (
    """
    CREATE TABLE sessions (
        id TEXT PRIMARY KEY NOT NULL,
        title TEXT NOT NULL,
        created_at INTEGER NOT NULL,
        last_activity INTEGER NOT NULL,
        state TEXT NOT NULL DEFAULT '{}',
        context_from INTEGER NOT NULL DEFAULT 0,
        summary_format INTEGER,
        summary_body TEXT,
        CHECK ((summary_format IS NULL) = (summary_body IS NULL))
    )
    """,
    "CREATE INDEX sessions_by_activity ON sessions (last_activity)",
    """
    CREATE TABLE display (
        seq INTEGER PRIMARY KEY,
        session_id TEXT NOT NULL REFERENCES sessions (id) ON DELETE CASCADE,
        created_at INTEGER NOT NULL,
        format INTEGER NOT NULL,
        body TEXT NOT NULL
    )
    """,
    "CREATE INDEX display_by_session ON display (session_id, seq)",
)

SEQ_BITS = 32
"""A session's display rows are numbered ``key << SEQ_BITS`` + 1, + 2, ..."""

MAX_KEY = 2**31 - 2
"""The largest session key: the end of its range, ``(key + 1) << SEQ_BITS``, must stay below
SQLite's largest integer."""


def seq_range(key: int) -> tuple[int, int]:
    """The bounds, both excluded, of the display ``seq`` of the session with ``key``."""
    low = key << SEQ_BITS
    return low, low + (1 << SEQ_BITS)


# Step 2, the current layout.
#
# sessions: ``key`` is a small number of the session's own, fixed for its life and never
#   given to another session (AUTOINCREMENT); ``id`` is the stable id callers use.
# display: the display history, append-only. A session's rows are numbered from its key:
#   ``seq = key * 2**32 + n`` for its n-th message (n from 1), so they lie together in the
#   table's own b-tree: paging is a range scan of the primary key, and an append writes
#   one page and no index (one index page per append cost a third of the commit).
# The model context is not a table of its own: it is the session's compaction summary (if
#   any: ``summary_format``/``summary_body`` on the sessions row) followed by the session's
#   display rows from ``context_from`` on. Appending a message therefore writes one display
#   row and nothing else, and a compaction rewrites one sessions row.
# ``format`` is the message format (messages.MESSAGE_FORMAT) of a body.
_STEP_2_TABLES = (
    f"""
    CREATE TABLE sessions_v2 (
        key INTEGER PRIMARY KEY AUTOINCREMENT CHECK (key BETWEEN 1 AND {MAX_KEY}),
        id TEXT NOT NULL UNIQUE,
        title TEXT NOT NULL,
        created_at INTEGER NOT NULL,
        last_activity INTEGER NOT NULL,
        state TEXT NOT NULL DEFAULT '{{}}',
        context_from INTEGER NOT NULL DEFAULT 0,
        summary_format INTEGER,
        summary_body TEXT,
        CHECK ((summary_format IS NULL) = (summary_body IS NULL))
    )
    """,
    """
    CREATE TABLE display_v2 (
        seq INTEGER PRIMARY KEY,
        created_at INTEGER NOT NULL,
        format INTEGER NOT NULL,
        body TEXT NOT NULL
    )
    """,
)


def _cluster_display_by_session(connection: sqlite3.Connection) -> None:
    """Step 2: give each session a key and renumber its display rows from it, keeping
    their order and where the model context starts."""
    for statement in _STEP_2_TABLES:
        connection.execute(statement)
    connection.execute(
        "INSERT INTO sessions_v2 (id, title, created_at, last_activity, state, summary_format,"
        " summary_body) SELECT id, title, created_at, last_activity, state, summary_format,"
        " summary_body FROM sessions ORDER BY created_at, id"
    )
    sessions = connection.execute(
        "SELECT new.key, new.id, old.context_from FROM sessions_v2 AS new"
        " JOIN sessions AS old ON old.id = new.id ORDER BY new.key"
    ).fetchall()
    for key, session_id, context_from in sessions:
        connection.execute(
            "UPDATE sessions_v2 SET context_from = ? WHERE key = ?",
            (_renumber(connection, key, session_id, context_from), key),
        )
    for statement in (
        "DROP TABLE display",
        "DROP TABLE sessions",
        "ALTER TABLE sessions_v2 RENAME TO sessions",
        "ALTER TABLE display_v2 RENAME TO display",
        "CREATE INDEX sessions_by_activity ON sessions (last_activity)",
        # Whoever deletes a session (an older raw still running, a person at the sqlite3
        # prompt) deletes its display rows: none can outlive it.
        f"""
        CREATE TRIGGER sessions_delete_display AFTER DELETE ON sessions BEGIN
            DELETE FROM display
            WHERE seq > (old.key << {SEQ_BITS}) AND seq < ((old.key + 1) << {SEQ_BITS});
        END
        """,
    ):
        connection.execute(statement)


def _renumber(connection: sqlite3.Connection, key: int, session_id: str, context_from: int) -> int:
    """Copy one session's step-1 display rows into ``display_v2``, numbered from its key
    in their order (streamed: a session may be large); return its new ``context_from``."""
    low, _ = seq_range(key)
    count = 0
    new_from = 0

    def renumbered(
        rows: Iterable[tuple[int, int, int, str]],
    ) -> Iterator[tuple[int, int, int, str]]:
        nonlocal count, new_from
        for old_seq, created_at, fmt, body in rows:
            count += 1
            if not new_from and old_seq >= context_from:
                new_from = low + count
            yield low + count, created_at, fmt, body

    connection.executemany(
        "INSERT INTO display_v2 (seq, created_at, format, body) VALUES (?, ?, ?, ?)",
        renumbered(
            connection.execute(
                "SELECT seq, created_at, format, body FROM display WHERE session_id = ?"
                " ORDER BY seq",
                (session_id,),
            )
        ),
    )
    return new_from or low + count + 1  # every row replaced: the context starts after them


_Step = tuple[str, ...] | Callable[[sqlite3.Connection], None]
_STEPS: tuple[_Step, ...] = (_STEP_1, _cluster_display_by_session)

SCHEMA_VERSION = len(_STEPS)


def ensure_private_dir(path: Path) -> None:
    """Create ``path`` (and its parents) if missing, the folder itself with mode 0700.

    An existing folder keeps its mode: it may be one the user chose, such as a project
    folder; the files raw puts in it are private on their own.
    """
    try:
        path.mkdir(mode=0o700, parents=True)
    except FileExistsError:
        if not path.is_dir():
            raise StoreUnavailable(
                f"expected a folder for the session store, found a file: {path}", path=str(path)
            ) from None
        return
    os.chmod(path, 0o700)  # mkdir's mode is filtered by the umask


def _create_private_file(path: Path) -> None:
    """Create ``path`` empty with mode 0600 unless it exists (an empty file is a valid db)."""
    try:
        fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_CLOEXEC, 0o600)
    except FileExistsError:
        return
    os.close(fd)


_MAGIC = b"SQLite format 3\x00"


def _check_header(path: Path) -> None:
    """Refuse a file whose header shows it is not raw's, or a newer raw's.

    Reads the 100-byte header directly: SQLite itself, even read-only, would create
    ``-wal`` and ``-shm`` files beside a WAL database, and a newer raw's file must stay as
    it is. Raises like :func:`_check_version`.
    """
    with open(path, "rb") as file:
        header = file.read(100)
    if not header:
        return  # created just now, or by a process that is creating it
    if len(header) < 100 or not header.startswith(_MAGIC):
        raise StoreCorrupt(
            "expected a raw session database, found a file that is not a SQLite database",
            path=str(path),
        )
    (schema_cookie,) = struct.unpack_from(">I", header, 40)
    (version,) = struct.unpack_from(">i", header, 60)
    (application_id,) = struct.unpack_from(">i", header, 68)
    _check_version(path, application_id, version, has_schema=schema_cookie != 0)


def _read_version(connection: sqlite3.Connection, path: Path) -> int:
    """The schema version as SQLite sees it (the WAL included); raises like
    :func:`_check_version`."""
    with sqlite_errors(path):
        (application_id,) = connection.execute("PRAGMA application_id").fetchone()
        (version,) = connection.execute("PRAGMA user_version").fetchone()
        (objects,) = connection.execute("SELECT count(*) FROM sqlite_master").fetchone()
    return _check_version(path, application_id, version, has_schema=objects > 0)


def _check_version(path: Path, application_id: int, version: int, *, has_schema: bool) -> int:
    """The usable schema version; :class:`StoreCorrupt` for a database that is not raw's,
    :class:`StoreTooNew` for one written by a newer raw."""
    if application_id == 0 and version == 0 and not has_schema:
        return 0
    if application_id != APPLICATION_ID:
        raise StoreCorrupt(
            "expected a raw session database, found another program's SQLite database",
            path=str(path),
        )
    if version > SCHEMA_VERSION:
        raise StoreTooNew(
            f"this database was written by a newer raw (schema {version}; this raw reads up "
            f"to {SCHEMA_VERSION}); it is left untouched: upgrade raw to use it",
            path=str(path),
        )
    if version < 1:
        raise StoreCorrupt(
            "expected a raw session database with a schema version, found none",
            path=str(path),
        )
    return int(version)


def _bring_forward(connection: sqlite3.Connection, path: Path) -> None:
    """Apply the missing steps in one transaction (re-read inside it: another process may
    have done it first)."""
    with write_transaction(connection, path):
        current = _read_version(connection, path)
        for step in _STEPS[current:]:
            if callable(step):
                step(connection)
            else:
                for statement in step:
                    connection.execute(statement)
        if current < SCHEMA_VERSION:
            connection.execute(f"PRAGMA application_id = {APPLICATION_ID}")
            connection.execute(f"PRAGMA user_version = {SCHEMA_VERSION}")


def open_database(directory: Path, *, busy_timeout: float) -> tuple[Path, sqlite3.Connection]:
    """Open (creating if needed) the session database in ``directory``.

    Returns its path and a configured read-write connection in WAL mode.
    """
    ensure_private_dir(directory)
    path = directory / FILE_NAME
    _create_private_file(path)
    _check_header(path)
    if os.stat(path).st_mode & 0o077:
        os.chmod(path, 0o600)
    connection = connect(path, busy_timeout=busy_timeout)
    try:
        version = _read_version(connection, path)  # the header may predate the WAL's content
        with sqlite_errors(path):
            if version == 0:  # a new file: only now can its page size be chosen
                connection.execute(f"PRAGMA page_size = {SQLITE_PAGE_SIZE}")
            (mode,) = connection.execute("PRAGMA journal_mode = WAL").fetchone()
        if str(mode).lower() != "wal":
            raise StoreUnavailable(
                f"expected SQLite to use WAL mode, found {mode!r}: the file system of "
                f"{directory} does not support it",
                path=str(path),
            )
        if version < SCHEMA_VERSION:
            _bring_forward(connection, path)
    except BaseException:
        connection.close()
        raise
    return path, connection
