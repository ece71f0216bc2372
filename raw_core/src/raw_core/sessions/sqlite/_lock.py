"""One writer per session across processes: an advisory ``flock`` on a per-session file.

``flock`` (not a PID file) because the kernel releases it when its holder dies, however it
dies, so a crashed writer never leaves a session stuck. The lock belongs to an open file
description, so two writers in one process exclude each other as well.

Lock files may be removed (when their session is deleted) only by a holder of the lock.
A process that locked a file which was removed meanwhile notices (the path no longer names
the file it holds) and tries again, so two holders can never coexist on different files.
"""

from __future__ import annotations

import errno
import fcntl
import functools
import os
import time
import warnings
from collections.abc import Awaitable, Callable
from pathlib import Path

from raw_core.errors import SessionLocked, StorageFull

__all__ = ["POLL_INTERVAL", "SessionLock", "acquire", "acquire_async"]

POLL_INTERVAL = 0.02
"""Seconds between two attempts while waiting for a lock."""


class SessionLock:
    """An exclusive lock on one session, held until :meth:`release`."""

    def __init__(self, path: Path, fd: int) -> None:
        self.path = path
        self._fd: int | None = fd

    @classmethod
    def try_acquire(cls, path: Path) -> SessionLock | None:
        """Take the lock at ``path`` if nobody holds it; ``None`` when someone does."""
        while True:
            try:
                fd = os.open(path, os.O_RDWR | os.O_CREAT | os.O_CLOEXEC, 0o600)
            except OSError as exc:
                if exc.errno in (errno.ENOSPC, errno.EDQUOT):
                    raise StorageFull(
                        "the disk is full: cannot create a session lock file", path=str(path)
                    ) from exc
                raise
            try:
                fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
            except BlockingIOError:
                os.close(fd)
                return None
            except BaseException:
                os.close(fd)
                raise
            held = os.fstat(fd)
            try:
                named = os.stat(path)
            except FileNotFoundError:
                named = None
            if named is not None and (named.st_dev, named.st_ino) == (held.st_dev, held.st_ino):
                return cls(path, fd)
            os.close(fd)  # the file was removed while we waited for it: lock the new one

    @property
    def held(self) -> bool:
        """Whether this object still holds the lock."""
        return self._fd is not None

    def release(self, *, remove_file: bool = False) -> None:
        """Let go of the lock (idempotent); ``remove_file`` deletes the lock file first."""
        fd, self._fd = self._fd, None
        if fd is None:
            return
        try:
            if remove_file:
                self.path.unlink(missing_ok=True)
        finally:
            os.close(fd)  # closing the last descriptor releases the flock

    def __del__(self) -> None:
        # A lock dropped without release() would otherwise stay held until the process
        # exits, keeping every other writer out of the session.
        if self._fd is not None:
            warnings.warn(
                f"session lock {self.path} was never released", ResourceWarning, stacklevel=1
            )
            self.release()


def _locked(session_id: str, wait: float) -> SessionLocked:
    waited = f" (waited {wait:g} s)" if wait > 0 else ""
    return SessionLocked(
        f"session {session_id} is open for writing elsewhere: another process, or another "
        f"writer in this one, holds it{waited}",
        session_id=session_id,
    )


def acquire(path: Path, *, session_id: str, wait: float) -> SessionLock:
    """Take the lock, polling for up to ``wait`` seconds; :class:`SessionLocked` after."""
    deadline = time.monotonic() + wait
    while True:
        lock = SessionLock.try_acquire(path)
        if lock is not None:
            return lock
        remaining = deadline - time.monotonic()
        if remaining <= 0:
            raise _locked(session_id, wait)
        time.sleep(min(POLL_INTERVAL, remaining))


async def acquire_async(
    path: Path,
    *,
    session_id: str,
    wait: float,
    run: Callable[[Callable[[], SessionLock | None]], Awaitable[SessionLock | None]] | None = None,
) -> SessionLock:
    """:func:`acquire` for async callers: tries in a worker thread (``run(function)`` runs
    it in the caller's own threads; anyio's default ones otherwise) and waits with
    ``anyio.sleep``, never blocking the loop."""
    import anyio  # only async callers pay for importing it

    deadline = anyio.current_time() + wait
    while True:
        # Opening (often creating) the lock file waits for the file system: off the loop.
        # Not abandoned on cancellation, so a lock taken is never lost to a cancelled wait.
        attempt = functools.partial(SessionLock.try_acquire, path)
        lock = await (run(attempt) if run is not None else anyio.to_thread.run_sync(attempt))
        if lock is not None:
            return lock
        remaining = deadline - anyio.current_time()
        if remaining <= 0:
            raise _locked(session_id, wait)
        await anyio.sleep(min(POLL_INTERVAL, remaining))
