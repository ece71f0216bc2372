"""Where packages live: the content-addressed store and the list of indexes that use it.

``<user data dir>/raw/packages/<hash>/`` holds one package's files, read-only, named by
the hash of its file tree (:mod:`raw_core.packages.tree`). A package is unpacked into a
staging folder beside the entries and renamed into place, so an entry is either whole or
absent. ``<user data dir>/raw/package-indexes.json`` lists the index files install wrote
to, which ``raw pkg gc`` reads to know which entries are still used. Changes to the store
and to that list are made under one lock file (``packages/.lock``).
"""

from __future__ import annotations

import fcntl
import json
import os
import re
import tempfile
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from pathlib import Path
from typing import Any, Final

from raw_core._json import JsonInputError, loads_strict
from raw_core.errors import PackageDamaged, PackageIndexInvalid, PackageStoreUnavailable
from raw_core.packages.tree import TreeProblem, hash_tree, make_read_only, remove_tree

__all__ = ["PackageStore", "store_unavailable", "user_data_dir", "write_json_atomic"]

_HASH_RE: Final = re.compile(r"[0-9a-f]{64}")
_STAGING: Final = ".staging-"
_INDEXES_FILE: Final = "package-indexes.json"


def user_data_dir(environ: Mapping[str, str] | None = None) -> Path:
    """raw's data directory: ``$XDG_DATA_HOME/raw``, or ``~/.local/share/raw`` (a
    relative XDG value is ignored, as the XDG spec says)."""
    env = os.environ if environ is None else environ
    base = env.get("XDG_DATA_HOME", "")
    root = Path(base) if base and os.path.isabs(base) else Path.home() / ".local" / "share"
    return root / "raw"


def store_unavailable(path: Path, exc: OSError) -> PackageStoreUnavailable:
    """``package_store_unavailable`` for the folder (or file) ``path``, which could not be
    used as ``exc`` says; names the part of a folder's path that is no folder when one is."""
    reason = exc.strerror or str(exc)
    parents = path.parents if isinstance(exc, NotADirectoryError) else ()
    blocker = next((p for p in (path, *parents) if p.exists() and not p.is_dir()), None)
    why = f"{blocker} is no folder" if blocker is not None else reason
    return PackageStoreUnavailable(f"cannot use {path} for packages: {why}", path=str(path))


def write_json_atomic(path: Path, value: Any) -> None:
    """Write ``value`` as JSON to ``path`` through a temporary file in the same folder and
    a rename: a reader sees the old file or the new one, never half of one. A folder that
    cannot take the file is ``package_store_unavailable``; ``path`` is then unchanged.

    The file is UTF-8. A string that UTF-8 cannot hold — a path whose name is not UTF-8,
    which Python reads with each undecodable byte as a lone surrogate ``\\udc80``–``\\udcff``
    — is written with those surrogates as JSON escapes (``"pk\\udcff"``): reading the file
    gives the same string back, and so the same path (``os.fsencode``)."""
    try:
        _write_json_atomic(path, value)
    except OSError as exc:
        raise store_unavailable(path.parent, exc) from None


def _write_json_atomic(path: Path, value: Any) -> None:
    fd, temporary = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}-", suffix=".tmp")
    try:
        text = json.dumps(value, indent=2, ensure_ascii=False, sort_keys=True) + "\n"
        # Lone surrogates occur only inside JSON strings, and each is at most U+DFFF: its
        # backslash escape is exactly JSON's own \uXXXX escape of it.
        data = text.encode("utf-8", "backslashreplace")
        with os.fdopen(fd, "wb") as handle:
            handle.write(data)
            handle.flush()
            os.fsync(handle.fileno())
        os.chmod(temporary, 0o644)
        os.replace(temporary, path)
    except BaseException:
        Path(temporary).unlink(missing_ok=True)
        raise


class PackageStore:
    """The store under one data directory (by default :func:`user_data_dir`)."""

    def __init__(self, data_dir: Path | None = None) -> None:
        self.data_dir = data_dir if data_dir is not None else user_data_dir()
        self.root = self.data_dir / "packages"

    def entry(self, digest: str) -> Path:
        """The folder of the entry named ``digest``."""
        return self.root / digest

    def _names(self) -> list[str]:
        if not self.root.is_dir():
            return []
        try:
            return [p.name for p in self.root.iterdir()]
        except OSError as exc:
            raise store_unavailable(self.root, exc) from None

    def hashes(self) -> list[str]:
        """The entries the store holds."""
        return sorted(name for name in self._names() if _HASH_RE.fullmatch(name))

    @contextmanager
    def locked(self) -> Iterator[None]:
        """Hold the store's lock: one install, remove or gc at a time. A store folder and
        data directory raw cannot make, lock or write to are ``package_store_unavailable``
        before anything changes."""
        try:
            self.root.mkdir(parents=True, exist_ok=True)
            fd = os.open(self.root / ".lock", os.O_RDWR | os.O_CREAT, 0o644)
        except OSError as exc:
            raise store_unavailable(self.root, exc) from None
        try:
            for folder in (self.root, self.data_dir):
                if not os.access(folder, os.W_OK | os.X_OK):
                    raise store_unavailable(folder, PermissionError(13, "Permission denied"))
            fcntl.flock(fd, fcntl.LOCK_EX)
            yield
        finally:
            os.close(fd)  # closing releases the lock

    @contextmanager
    def staging(self) -> Iterator[Path]:
        """An empty folder beside the entries (same file system, so renames are atomic),
        removed with what is left in it when the block ends."""
        try:
            self.root.mkdir(parents=True, exist_ok=True)
            folder = Path(tempfile.mkdtemp(dir=self.root, prefix=_STAGING))
        except OSError as exc:
            raise store_unavailable(self.root, exc) from None
        try:
            yield folder
        finally:
            remove_tree(folder)

    def verify(self, digest: str, *, package: str) -> Path:
        """The entry ``digest``, checked: its files must still hash to its name. Raises
        ``package_damaged`` naming ``package`` when they do not, or when it is gone."""
        folder = self.entry(digest)
        if not folder.is_dir() or folder.is_symlink():
            raise PackageDamaged(
                f"package {package!r}: its store entry {folder} is missing; install it again",
                package=package,
                path=str(folder),
            )
        try:
            found = hash_tree(folder).digest
        except (TreeProblem, OSError) as exc:
            raise PackageDamaged(
                f"package {package!r}: its store entry {folder} cannot be read ({exc});"
                " install it again",
                package=package,
                path=str(folder),
            ) from None
        if found != digest:
            raise PackageDamaged(
                f"package {package!r}: the files of its store entry {folder} no longer match"
                f" its hash (changed or damaged): found {found}; install it again",
                package=package,
                path=str(folder),
            )
        return folder

    def commit(self, tree: Path, digest: str, *, package: str) -> bool:
        """Move the staged ``tree`` into place as entry ``digest``, read-only; ``False``
        when an intact entry of that content was already there (``tree`` is left to the
        staging folder's cleanup). A damaged entry of that name is replaced."""
        target = self.entry(digest)
        if target.exists():
            try:
                self.verify(digest, package=package)
                return False
            except PackageDamaged:
                remove_tree(target)
        try:
            make_read_only(tree, include_root=False)
            os.rename(tree, target)
            os.chmod(target, 0o555)
        except OSError as exc:
            raise store_unavailable(self.root, exc) from None
        return True

    def remove(self, digest: str) -> None:
        """Remove entry ``digest`` (making its folders writable first)."""
        remove_tree(self.entry(digest))

    def stale_staging(self) -> list[Path]:
        """Staging folders a crashed install left behind (call with the lock held)."""
        return [self.root / name for name in self._names() if name.startswith(_STAGING)]

    # --- the list of indexes ---------------------------------------------------------

    @property
    def indexes_file(self) -> Path:
        """The file listing every index install wrote to."""
        return self.data_dir / _INDEXES_FILE

    def indexes(self) -> list[Path]:
        """The index files install recorded (some may no longer exist)."""
        try:
            data = loads_strict(self.indexes_file.read_bytes())
        except FileNotFoundError:
            return []
        except OSError as exc:
            raise store_unavailable(self.indexes_file, exc) from None
        except JsonInputError as exc:
            raise PackageIndexInvalid(
                f"{self.indexes_file}: cannot be read as raw's list of package indexes: {exc}",
                path=str(self.indexes_file),
            ) from None
        listed = data.get("indexes") if isinstance(data, dict) else None
        if not isinstance(listed, list) or not all(isinstance(p, str) for p in listed):
            raise PackageIndexInvalid(
                f'{self.indexes_file}: expected {{"indexes": [paths]}}',
                field="$.indexes",
                path=str(self.indexes_file),
            )
        return [Path(p) for p in listed]

    def record_index(self, index: Path) -> None:
        """Add ``index`` to the list (call with the lock held)."""
        listed = self.indexes()
        if index not in listed:
            self.write_indexes([*listed, index])

    def write_indexes(self, indexes: list[Path]) -> None:
        """Replace the list (call with the lock held)."""
        try:
            self.data_dir.mkdir(parents=True, exist_ok=True)
        except OSError as exc:
            raise store_unavailable(self.data_dir, exc) from None
        write_json_atomic(self.indexes_file, {"indexes": [str(p) for p in indexes]})
