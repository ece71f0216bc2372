"""Where the database file is, what its tables are, and which files this raw uses.

Raw does not convert old session data. The layout's version is in the file name
(``sessions-v3.sqlite3``): a layout change gets a new file name, and the new file is
created fresh with the one schema below. An older file (``sessions-v2.sqlite3`` or
``sessions-v1.sqlite3``, written by an older raw) is never opened, so it stays exactly as
it is and an older raw keeps reading it; new sessions go to the new file.

``PRAGMA application_id`` marks the file as raw's, so another program's database is
:class:`StoreCorrupt`, never adopted. ``PRAGMA user_version`` is :data:`SCHEMA_VERSION`; a
file of this name with a higher one was written by a newer raw and is refused with
:class:`StoreTooNew` without being modified.

The file's header is read directly before SQLite opens it: SQLite, even read-only, creates
``-wal`` and ``-shm`` files beside a WAL database, and read-write it may checkpoint on
close; a newer raw's file must stay exactly as it is.
"""

from __future__ import annotations

import os
import sqlite3
import struct
from pathlib import Path

from raw_core.errors import StoreCorrupt, StoreTooNew, StoreUnavailable
from raw_core.sessions.sqlite._sqlite import connect, sqlite_errors, write_transaction

__all__ = [
    "APPLICATION_ID",
    "CONTEXT_KINDS_END",
    "FILE_NAME",
    "KIND_MESSAGE",
    "KIND_MODEL_ONLY",
    "KIND_PANEL",
    "KIND_REQUEST",
    "KIND_TOOL_OUTPUT",
    "MAX_KEY",
    "OLDER_FILE_NAMES",
    "SCHEMA_VERSION",
    "SEQ_BITS",
    "SQLITE_PAGE_SIZE",
    "ensure_private_dir",
    "open_database",
    "seq_range",
]

FILE_NAME = "sessions-v3.sqlite3"
OLDER_FILE_NAMES = ("sessions-v1.sqlite3", "sessions-v2.sqlite3")
"""Files of older layouts; never opened (listed so tests and docs can name them)."""
APPLICATION_ID = 0x72617731  # "raw1"

SQLITE_PAGE_SIZE = 2048
"""The page size of a new file. Nearly every write is the append of one message, and each
commit puts whole pages in the WAL, which ``end_turn`` then syncs: 2 KiB pages write half
of what 4 KiB pages do for a short message, and the same for a long one (measured in
benchmarks/README.md, "Session store"). A file keeps the page size it was made with."""

SEQ_BITS = 32
"""A session's display rows are numbered ``key << SEQ_BITS`` + 1, + 2, ..."""

MAX_KEY = 2**31 - 2
"""The largest session key: the end of its range, ``(key + 1) << SEQ_BITS``, must stay below
SQLite's largest integer."""


def seq_range(key: int) -> tuple[int, int]:
    """The bounds, both excluded, of the display ``seq`` of the session with ``key``."""
    low = key << SEQ_BITS
    return low, low + (1 << SEQ_BITS)


# The row kinds of the display table. Kinds below CONTEXT_KINDS_END are in the model
# context; the others are display-only, so a display-only kind a later raw adds never
# reaches the model of an older one (which refuses it in a page as store_too_new).
KIND_MESSAGE = 0
"""A message: in the display history and the model context."""
KIND_MODEL_ONLY = 1
"""A message for the model context only; never paged."""
KIND_TOOL_OUTPUT = 2
"""A call's output as the user saw it (display only)."""
KIND_REQUEST = 3
"""A pending request (approval or interaction) as it opened or ended (display only)."""
KIND_PANEL = 4
"""A panel update (display only)."""
CONTEXT_KINDS_END = 2

# The one layout of this file name; a change that an older raw cannot read gets a new name.
#
# sessions: ``key`` is a small number of the session's own, fixed for its life and never
#   given to another session (AUTOINCREMENT); ``id`` is the stable id callers use;
#   ``state`` is the runtime state as a JSON object (see _state.py).
# display: both streams, append-only. A session's rows are numbered from its key:
#   ``seq = key * 2**32 + n`` for its n-th row (n from 1), so they lie together in the
#   table's own b-tree: paging is a range scan of the primary key, and an append writes
#   one page and no index (one index page per append cost a third of the commit).
#   ``kind`` says which stream(s) a row belongs to (KIND_* above); it comes before
#   ``body`` so the range scans filter on it without reading a long body's overflow pages.
# The model context is not a table of its own: it is the session's compaction summary (if
#   any: ``summary_format``/``summary_body`` on the sessions row) followed by the session's
#   context rows from ``context_from`` on. Appending a message therefore writes one display
#   row and nothing else, and a compaction rewrites one sessions row.
# ``format`` is the JSON form of a body: messages.MESSAGE_FORMAT for messages,
#   entries.ENTRY_FORMAT for display-only entries.
# requests: pending requests (approvals and interactions), found by their own id, and per session
#   through ``requests_by_session`` in the order they were added (rowid). Answering one
#   is a compare-and-set on ``state``.
# Whoever deletes a session (raw, a person at the sqlite3 prompt) deletes its rows and
#   requests through the trigger: none can outlive it.
_SCHEMA = (
    f"""
    CREATE TABLE sessions (
        key INTEGER PRIMARY KEY AUTOINCREMENT CHECK (key BETWEEN 1 AND {MAX_KEY}),
        id TEXT NOT NULL UNIQUE,
        title TEXT NOT NULL,
        cwd TEXT,
        created_at INTEGER NOT NULL,
        last_activity INTEGER NOT NULL,
        state TEXT NOT NULL DEFAULT '{{}}',
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
        created_at INTEGER NOT NULL,
        kind INTEGER NOT NULL,
        format INTEGER NOT NULL,
        body TEXT NOT NULL
    )
    """,
    """
    CREATE TABLE requests (
        id TEXT NOT NULL UNIQUE,
        session_key INTEGER NOT NULL,
        kind TEXT NOT NULL,
        tool_call_id TEXT NOT NULL,
        show TEXT NOT NULL,
        created_at INTEGER NOT NULL,
        deadline INTEGER,
        state TEXT NOT NULL
            CHECK (state IN ('pending', 'approved', 'denied', 'answered', 'expired', 'cancelled',
                'interrupted')),
        answer TEXT,
        answered_at INTEGER
    )
    """,
    "CREATE INDEX requests_by_session ON requests (session_key)",
    f"""
    CREATE TRIGGER sessions_delete_rows AFTER DELETE ON sessions BEGIN
        DELETE FROM display
        WHERE seq > (old.key << {SEQ_BITS}) AND seq < ((old.key + 1) << {SEQ_BITS});
        DELETE FROM requests WHERE session_key = old.key;
    END
    """,
)

SCHEMA_VERSION = 1
"""``PRAGMA user_version`` of a file of this name. Only a newer raw writes a higher one."""


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
    if version < SCHEMA_VERSION:
        raise StoreCorrupt(
            f"expected a raw session database of schema {SCHEMA_VERSION}, found "
            + ("none" if version == 0 else f"schema {version}"),
            path=str(path),
        )
    return int(version)


def _create(connection: sqlite3.Connection, path: Path) -> None:
    """Create the schema in a new, empty file, in one transaction (re-read inside it:
    another process may have done it first)."""
    with write_transaction(connection, path):
        if _read_version(connection, path) == SCHEMA_VERSION:
            return
        for statement in _SCHEMA:
            connection.execute(statement)
        connection.execute(f"PRAGMA application_id = {APPLICATION_ID}")
        connection.execute(f"PRAGMA user_version = {SCHEMA_VERSION}")


def open_database(
    directory: Path, *, busy_timeout: float, any_thread: bool = False
) -> tuple[Path, sqlite3.Connection]:
    """Open (creating if needed) the session database in ``directory``.

    Returns its path and a configured read-write connection in WAL mode (usable from any
    thread, one at a time, when ``any_thread``).
    """
    ensure_private_dir(directory)
    path = directory / FILE_NAME
    _create_private_file(path)
    _check_header(path)
    if os.stat(path).st_mode & 0o077:
        os.chmod(path, 0o600)
    connection = connect(path, busy_timeout=busy_timeout, any_thread=any_thread)
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
        if version == 0:
            _create(connection, path)
    except BaseException:
        connection.close()
        raise
    return path, connection
