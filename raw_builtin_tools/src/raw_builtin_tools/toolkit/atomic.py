"""Atomic file replacement: a reader or a crash sees the old file or the new one, never a mix.

The new content goes to a temporary file in the target's own folder (so the rename cannot
cross file systems), is flushed and ``fsync``-ed, gets the target's permission bits (and,
where allowed, its owner), and is then renamed over the target with :func:`os.replace`,
which POSIX makes atomic. The folder is ``fsync``-ed after the rename so the new name
survives a power loss too. A new file gets ``0o666`` minus the process's umask, as
``open()`` would give it.

:func:`stage` and :meth:`Staged.commit` are separate steps so that a caller changing
several files can prepare every temporary file first and rename only when all are ready.
A process killed between the two leaves at worst a stray ``.<name>.raw-*.tmp`` file beside
the untouched target.
"""

from __future__ import annotations

import os
import secrets
import stat
from dataclasses import dataclass
from typing import Final

__all__ = ["Staged", "stage", "write_atomic"]

_NEW_FILE_MODE: Final = 0o666
_TEMP_MODE: Final = 0o600


def _fsync_folder(folder: str) -> None:
    try:
        fd = os.open(folder, os.O_RDONLY | getattr(os, "O_DIRECTORY", 0))
    except OSError:
        return
    try:
        os.fsync(fd)
    except OSError:
        pass
    finally:
        os.close(fd)


@dataclass(slots=True)
class Staged:
    """A temporary file holding a target's new content, ready to be renamed over it."""

    target: str
    temp: str
    done: bool = False

    def commit(self) -> None:
        """Rename the temporary file over the target and make the rename durable."""
        os.replace(self.temp, self.target)
        self.done = True
        _fsync_folder(os.path.dirname(self.target) or ".")

    def discard(self) -> None:
        """Remove the temporary file (when it was not committed)."""
        if not self.done:
            try:
                os.unlink(self.temp)
            except FileNotFoundError:
                pass
            self.done = True


def stage(target: str, data: bytes, *, mode: int | None = None) -> Staged:
    """Write ``data`` to a new temporary file beside ``target``, with ``target``'s mode.

    ``target`` is the file to replace (the caller resolves a symbolic link first if it
    wants to write through it). When ``target`` does not exist yet, the file gets ``mode``
    if given (a moved file keeps its permissions), else ``0o666`` minus the umask. Raises
    :class:`OSError`; on error nothing is left behind.
    """
    folder, name = os.path.split(target)
    try:
        existing: os.stat_result | None = os.stat(target)
    except FileNotFoundError:
        existing = None
    # A long name is shortened so the temporary name stays within NAME_MAX (255 bytes).
    stem = name.encode("utf-8", "surrogateescape")[:150].decode("utf-8", "ignore")
    while True:
        temp = os.path.join(folder, f".{stem}.raw-{secrets.token_hex(4)}.tmp")
        try:
            fd = os.open(
                temp,
                os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_CLOEXEC", 0),
                _TEMP_MODE if existing is not None or mode is not None else _NEW_FILE_MODE,
            )
            break
        except FileExistsError:
            continue
    try:
        if existing is not None:
            try:
                os.fchown(fd, existing.st_uid, existing.st_gid)
            except OSError:
                pass  # only the owner's own groups (or root) may be given away
            os.fchmod(fd, stat.S_IMODE(existing.st_mode))
        elif mode is not None:
            os.fchmod(fd, stat.S_IMODE(mode))
        view = memoryview(data)
        while view:
            written = os.write(fd, view)
            view = view[written:]
        os.fsync(fd)
    except BaseException:
        os.close(fd)
        try:
            os.unlink(temp)
        except OSError:
            pass
        raise
    os.close(fd)
    return Staged(target=target, temp=temp)


def write_atomic(target: str, data: bytes) -> None:
    """Replace ``target`` with ``data`` atomically (create it when missing)."""
    staged = stage(target, data)
    try:
        staged.commit()
    finally:
        staged.discard()
