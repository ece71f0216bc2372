"""Making commits survive a power loss, and keeping the WAL bounded.

Commits run with ``synchronous=NORMAL``: a commit is in the WAL file when it returns, so it
survives a crash or kill of the process. At the end of a turn :func:`end_turn_sync` syncs
the WAL file to disk, so the turn also survives a power loss (a WAL database is recovered
from its WAL: this is what ``synchronous=FULL`` does at every commit, done once a turn),
and, once the WAL has grown past :data:`~raw_core.sessions.sqlite._sqlite.WAL_LIMIT`, copies it into
the database file with a passive checkpoint. Connections never checkpoint on their own
(``wal_autocheckpoint=0``): SQLite would do it inside whichever commit crossed its
threshold, syncing the file on the thread that commits. The async backend runs this whole
function in a worker thread.
"""

from __future__ import annotations

import errno
import os
import sqlite3
from pathlib import Path

from raw_core.errors import StoreUnavailable
from raw_core.sessions.sqlite._sqlite import WAL_LIMIT, is_busy, sqlite_errors

__all__ = ["WalName", "end_turn_sync", "fsync_path"]


class WalName:
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
            fsync_path(self._path.parent)
        except OSError as exc:
            # Some file systems cannot sync a folder at all; as SQLite does, take that as
            # done rather than refuse every session (the WAL's own sync still counts).
            if exc.errno not in _FOLDER_SYNC_UNSUPPORTED:
                raise _sync_failed(self._path, exc) from exc
        self._durable = True


_FOLDER_SYNC_UNSUPPORTED = frozenset(
    code for code in (errno.EINVAL, errno.EBADF, getattr(errno, "ENOTSUP", None)) if code
)


def fsync_path(path: str | Path) -> int:
    """Sync the file or folder at ``path`` to disk and return its size; raises
    :class:`OSError`."""
    fd = os.open(path, os.O_RDONLY | os.O_CLOEXEC)
    try:
        os.fsync(fd)
        return os.fstat(fd).st_size
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


def end_turn_sync(connection: sqlite3.Connection, path: Path, wal_name: WalName) -> None:
    """Sync the WAL (and once, its folder entry); checkpoint when it is past the limit.

    The WAL file's size tells when: ``journal_size_limit`` shrinks it back to
    :data:`WAL_LIMIT` when SQLite restarts it after a complete checkpoint, so a larger file
    holds more than that since. A checkpoint another connection is running, or readers
    still on old frames, just leave the rest to a later turn.
    """
    try:
        size = fsync_path(f"{path}-wal")
    except FileNotFoundError:
        return
    except OSError as exc:
        raise _sync_failed(path, exc) from exc
    wal_name.make_durable()
    if size > WAL_LIMIT:
        try:
            with sqlite_errors(path):
                connection.execute("PRAGMA wal_checkpoint(PASSIVE)").fetchall()
        except StoreUnavailable as exc:
            if not is_busy(exc):
                raise
