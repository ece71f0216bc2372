"""write_file's engine: plan every change in memory, then commit all of it or none.

A :class:`Workspace` holds the planned state of each file a call touches. It reads a file
from disk at most once, the first time an entry needs it; every later entry sees the state
the earlier ones left. The edits (:mod:`raw_builtin_tools.toolkit.edits`) check everything
first and change the plan only when they succeed, raising :class:`EditError` with a stable
code otherwise. When every entry has succeeded, :meth:`Workspace.commit` writes the result:

1. every new content is staged in a temporary file beside its target (parent folders of
   new files are created; on any failure the temporary files and the created folders are
   removed and nothing has changed);
2. the staged files are renamed over their targets, one atomic ``os.replace`` each;
3. deleted files (including a move's source) are removed last.

A file that changed on disk after the plan read it is refused (``changed_on_disk``) before
anything is renamed. A path that passes through a symbolic link (other than the working
directory's own ancestors) is refused (``symlink_refused``): the tool changes only the file
its effects name.
"""

from __future__ import annotations

import errno
import os
import stat
from dataclasses import dataclass, field
from typing import Literal

from raw_builtin_tools.toolkit.atomic import Staged, stage

__all__ = ["EditError", "Workspace"]

Kind = Literal["missing", "file", "dir", "other", "blocked"]
"""What a path is: no file, a regular file, a folder, something else, or under a file."""


class EditError(Exception):
    """An entry that cannot apply: a stable ``code`` and a message for the model.

    ``entry`` is the index of the entry at fault when the error comes from the commit;
    ``partial`` is true in the one case where a call is left half-applied: a rename failed
    after others had succeeded (the message lists the files already changed).
    """

    def __init__(self, code: str, message: str, *, entry: int | None = None) -> None:
        super().__init__(message)
        self.code = code
        self.message = message
        self.entry = entry
        self.partial = False  # set when some files were already replaced


def _os_error(exc: OSError, path: str, doing: str, fallback: str = "write_failed") -> EditError:
    if isinstance(exc, PermissionError):
        return EditError("permission_denied", f"{doing} {path}: permission denied")
    if exc.errno == errno.ENOSPC:
        return EditError("no_space", f"{doing} {path}: no space left on the device")
    return EditError(fallback, f"{doing} {path}: {exc.strerror or exc}")


@dataclass(slots=True)
class _Slot:
    """One path: what was on disk at first look, and its planned state."""

    path: str
    kind: Kind  # on disk, following links
    disk_stat: os.stat_result | None
    present: bool  # exists in the planned state
    text: str | None = None  # planned content, when known
    original: str | None = None  # the disk content, once read
    read_stamp: tuple[int, int, int, int] | None = None
    changed: bool = False
    mode: int | None = None  # permission bits a new file takes (a move's source's)
    writer: int = -1  # the last entry that changed it


def _stamp(status: os.stat_result) -> tuple[int, int, int, int]:
    return (status.st_ino, status.st_size, status.st_mtime_ns, status.st_ctime_ns)


@dataclass
class Workspace:
    """The planned state of every file a call touches, in the order first touched.

    ``cwd`` is the session's working directory: links among its own ancestors (a home
    folder that is a link, say) are the user's choice and are followed; any other link on
    the way to a target is refused, so the file changed is always the one the effects name.
    """

    slots: dict[str, _Slot] = field(default_factory=dict)
    cwd: str = "/"

    # --- looking ---------------------------------------------------------------------------

    def _refuse_links(self, path: str) -> None:
        """``symlink_refused`` when ``path`` passes through a link that is not one of the
        working directory's own ancestors (or the directory itself)."""
        trusted = self.cwd.rstrip("/") + "/"
        prefix = ""
        for part in path.strip("/").split("/"):
            prefix = f"{prefix}/{part}"
            if trusted.startswith(prefix + "/"):
                continue  # the working directory itself, or one of its ancestors
            try:
                info = os.lstat(prefix)
            except OSError:
                return  # nothing exists from here on: no link can redirect the path
            if stat.S_ISLNK(info.st_mode):
                raise EditError(
                    "symlink_refused",
                    f"{prefix} is a symbolic link: write_file acts on paths as written and"
                    " never through a link, whose target may not be the file your rules saw",
                )
            if not stat.S_ISDIR(info.st_mode):
                return

    def _slot(self, path: str) -> _Slot:
        slot = self.slots.get(path)
        if slot is not None:
            return slot
        self._refuse_links(path)
        kind: Kind
        status: os.stat_result | None = None
        try:
            status = os.stat(path)
        except FileNotFoundError:
            kind = "missing"
        except NotADirectoryError:
            kind = "blocked"
        except OSError as exc:
            raise _os_error(exc, path, "cannot look at", "read_failed") from None
        else:
            if stat.S_ISREG(status.st_mode):
                kind = "file"
            elif stat.S_ISDIR(status.st_mode):
                kind = "dir"
            else:
                kind = "other"
        slot = _Slot(path=path, kind=kind, disk_stat=status, present=kind == "file")
        self.slots[path] = slot
        return slot

    def kind(self, path: str) -> Kind:
        """What ``path`` is in the planned state."""
        slot = self._slot(path)
        if slot.changed:
            return "file" if slot.present else "missing"
        return slot.kind

    def refusal(self, path: str, kind: Kind) -> EditError:
        """The error for an entry that needs a file where ``path`` is of ``kind``."""
        if kind == "dir":
            return EditError("is_a_directory", f"{path} is a folder, not a file")
        if kind == "other":
            return EditError("not_a_file", f"{path} is not a regular file")
        if kind == "blocked":
            return EditError("not_a_directory", f"a parent of {path} is a file, not a folder")
        return EditError("file_not_found", f"{path} does not exist")

    def read(self, path: str) -> str:
        """The planned text of ``path``; reads it from disk the first time."""
        slot = self._slot(path)
        kind = self.kind(path)
        if kind != "file":
            raise self.refusal(path, kind)
        if slot.text is not None:
            return slot.text
        try:
            with open(path, "rb") as handle:
                data = handle.read()
                stamp = _stamp(os.fstat(handle.fileno()))
        except OSError as exc:
            raise _os_error(exc, path, "cannot read", "read_failed") from None
        if b"\x00" in data:
            raise EditError("binary_file", f"{path} holds binary data (a NUL byte); not edited")
        try:
            text = data.decode("utf-8")
        except UnicodeDecodeError as exc:
            line = data.count(b"\n", 0, exc.start) + 1
            raise EditError(
                "not_utf8",
                f"{path} is not UTF-8 text (bad byte at offset {exc.start}, line {line})",
            ) from None
        slot.text = slot.original = text
        slot.read_stamp = stamp
        return text

    def mode_of(self, path: str) -> int | None:
        """The permission bits ``path`` has (or will have), for a move's destination."""
        slot = self._slot(path)
        if slot.mode is not None:
            return slot.mode
        if slot.kind == "file" and slot.disk_stat is not None:
            return stat.S_IMODE(slot.disk_stat.st_mode)
        return None

    # --- planning ------------------------------------------------------------------------

    def _check_parents(self, path: str) -> None:
        """A new file needs folders above it: no ancestor may be (or become) a file."""
        for other, slot in self.slots.items():
            if other.startswith(path + "/") and (
                slot.present if slot.changed else slot.kind != "missing"
            ):
                raise EditError(
                    "is_a_directory", f"{path} is a folder in this call (it holds {other})"
                )
        folder = os.path.dirname(path)
        while folder not in ("/", ""):
            planned = self.slots.get(folder)
            if planned is not None and planned.changed and planned.present:
                raise EditError(
                    "not_a_directory", f"{folder} is a file in this call, so {path} cannot exist"
                )
            try:
                status = os.stat(folder)
            except (FileNotFoundError, NotADirectoryError):
                folder = os.path.dirname(folder)
                continue
            except OSError as exc:
                raise _os_error(exc, folder, "cannot look at", "read_failed") from None
            if not stat.S_ISDIR(status.st_mode):
                raise EditError(
                    "not_a_directory", f"{folder} is a file, not a folder, so {path} cannot exist"
                )
            return

    def write(self, path: str, text: str, entry: int, *, mode: int | None = None) -> None:
        """Plan ``path`` to hold ``text`` (checked first: nothing changes on error)."""
        kind = self.kind(path)
        if kind not in ("file", "missing"):
            raise self.refusal(path, kind)
        if kind == "missing":
            self._check_parents(path)
        slot = self._slot(path)
        slot.present, slot.text, slot.changed, slot.writer = True, text, True, entry
        if mode is not None:
            slot.mode = mode

    def delete(self, path: str, entry: int) -> None:
        """Plan ``path`` to be removed (the caller checked it is a file)."""
        slot = self._slot(path)
        slot.present, slot.text, slot.changed, slot.writer = False, None, True, entry
        slot.mode = None

    # --- committing ----------------------------------------------------------------------

    def changes(self) -> tuple[list[_Slot], list[_Slot]]:
        """``(writes, deletes)``: the slots whose planned state differs from the disk."""
        writes = [
            s
            for s in self.slots.values()
            if s.changed and s.present and not (s.kind == "file" and s.text == s.original)
        ]
        deletes = [
            s for s in self.slots.values() if s.changed and not s.present and s.kind == "file"
        ]
        return writes, deletes

    def commit(self) -> None:
        """Stage every write, rename them all, then delete; raises :class:`EditError`."""
        writes, deletes = self.changes()
        staged: list[Staged] = []
        created: list[str] = []
        try:
            for slot in writes:
                staged.append(self._stage(slot, created))
            for slot in deletes:
                self._check_unchanged(slot)
        except EditError:
            for item in staged:
                item.discard()
            for folder in reversed(created):
                try:
                    os.rmdir(folder)
                except OSError:
                    pass
            raise
        done: list[str] = []
        for slot, item in zip(writes, staged, strict=True):
            try:
                item.commit()
            except OSError as exc:
                for rest in staged:
                    rest.discard()
                raise self._partial(exc, slot, done) from exc
            done.append(slot.path)
        for slot in deletes:
            try:
                os.unlink(slot.path)
            except FileNotFoundError:
                pass
            except OSError as exc:
                raise self._partial(exc, slot, done) from exc
            done.append(slot.path)

    @staticmethod
    def _partial(exc: OSError, slot: _Slot, done: list[str]) -> EditError:
        error = _os_error(exc, slot.path, "changing")
        already = ", ".join(done) if done else "none"
        error.message += f" (files already changed by this call: {already})"
        error.entry = slot.writer
        error.partial = bool(done)
        return error

    @staticmethod
    def _check_unchanged(slot: _Slot) -> None:
        try:
            status = os.stat(slot.path)
        except FileNotFoundError:
            status = None
        if slot.kind == "missing":
            if status is not None:
                raise EditError(
                    "changed_on_disk",
                    f"{slot.path} was created by something else while this call was prepared",
                    entry=slot.writer,
                )
            return
        expected = slot.read_stamp or (_stamp(slot.disk_stat) if slot.disk_stat else None)
        if status is None or _stamp(status) != expected:
            raise EditError(
                "changed_on_disk",
                f"{slot.path} changed on disk while this call was prepared; read it again",
                entry=slot.writer,
            )

    def _stage(self, slot: _Slot, created: list[str]) -> Staged:
        self._check_unchanged(slot)
        target = os.path.realpath(slot.path) if os.path.islink(slot.path) else slot.path
        assert slot.text is not None
        try:
            _make_parents(os.path.dirname(target), created)
            return stage(target, slot.text.encode("utf-8"), mode=slot.mode)
        except OSError as exc:
            error = _os_error(exc, slot.path, "writing")
            error.entry = slot.writer
            raise error from exc


def _make_parents(folder: str, created: list[str]) -> None:
    missing: list[str] = []
    while folder and not os.path.isdir(folder):
        missing.append(folder)
        folder = os.path.dirname(folder)
    for path in reversed(missing):
        os.mkdir(path)
        created.append(path)
