"""The hash of a package's file tree, and making a stored tree read-only.

The hash covers what a package *is* — each path, whether it is a folder, a file (its bytes
and whether it is executable) or a link (its target) — and nothing of how it arrived:
owners, times and the archive format leave it unchanged, so the same content always gets
the same store directory. Installing names the store entry by it; loading recomputes it to
find a changed or damaged entry.
"""

from __future__ import annotations

import hashlib
import os
import stat
from collections import deque
from contextlib import suppress
from pathlib import Path
from typing import Final

import attrs

__all__ = [
    "MAX_LINKS",
    "TreeProblem",
    "TreeSummary",
    "hash_tree",
    "make_read_only",
    "make_writable",
    "remove_tree",
]

_DOMAIN: Final = b"raw-package-tree/1\0"
_CHUNK: Final = 1024 * 1024
MAX_LINKS: Final = 40
"""The most links one path of a package may lead through, as Linux's own limit."""


class TreeProblem(ValueError):
    """The tree holds something a package may not: a device, a FIFO, a socket, or a link
    that leads outside it. ``path`` is relative to the tree's root."""

    def __init__(self, path: str, message: str) -> None:
        super().__init__(f"{path}: {message}")
        self.path = path
        self.message = message


@attrs.frozen(kw_only=True)
class TreeSummary:
    """A tree's hash (hex SHA-256) and how many files and bytes it holds."""

    digest: str
    files: int
    size: int


def _file_digest(path: str) -> str:
    digest = hashlib.sha256()
    fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW)
    with os.fdopen(fd, "rb") as handle:
        while chunk := handle.read(_CHUNK):
            digest.update(chunk)
    return digest.hexdigest()


def _entries(root: Path) -> list[tuple[bytes, os.DirEntry[str]]]:
    """Every entry under ``root`` (links not followed), with its relative path as bytes."""
    found: list[tuple[bytes, os.DirEntry[str]]] = []
    stack = [("", str(root))]
    while stack:
        prefix, directory = stack.pop()
        with os.scandir(directory) as listing:
            for entry in listing:
                relative = f"{prefix}{entry.name}"
                found.append((os.fsencode(relative), entry))
                if entry.is_dir(follow_symlinks=False):
                    stack.append((relative + "/", entry.path))
    found.sort(key=lambda item: item[0])
    return found


def _resolve(path: str) -> str | None:
    """``os.path.realpath(path)`` — links followed, a missing part kept as it is written —
    without recursion, or ``None`` when that takes more than :data:`MAX_LINKS` links (the
    kernel gives up on such a path too). ``realpath`` calls itself once per link of a chain
    and so raises ``RecursionError`` on a long one."""
    parts = deque(os.path.abspath(path).split("/"))
    resolved = "/"
    followed = 0
    while parts:
        part = parts.popleft()
        if part in ("", "."):
            continue
        if part == "..":
            resolved = os.path.dirname(resolved)
            continue
        candidate = os.path.join(resolved, part)
        try:
            is_link = stat.S_ISLNK(os.lstat(candidate).st_mode)
        except OSError:
            is_link = False
        if not is_link:
            resolved = candidate
            continue
        followed += 1
        if followed > MAX_LINKS:
            return None
        target = os.readlink(candidate)
        if target.startswith("/"):
            resolved = "/"
        parts.extendleft(reversed(target.split("/")))
    return resolved


def hash_tree(root: Path) -> TreeSummary:
    """Hash the tree under ``root``; raise :class:`TreeProblem` for what no package holds."""
    real_root = os.path.realpath(root)
    digest = hashlib.sha256(_DOMAIN)
    files = size = 0
    for relative, entry in _entries(root):
        info = entry.stat(follow_symlinks=False)
        name = relative.decode("utf-8", "surrogateescape")
        if stat.S_ISDIR(info.st_mode):
            record = b"D\0" + relative
        elif stat.S_ISREG(info.st_mode):
            executable = b"x" if info.st_mode & stat.S_IXUSR else b"-"
            record = b"F\0" + relative + b"\0" + executable + _file_digest(entry.path).encode()
            files += 1
            size += info.st_size
        elif stat.S_ISLNK(info.st_mode):
            target = os.readlink(entry.path)
            resolved = _resolve(entry.path)
            if resolved is None:
                raise TreeProblem(
                    name, f"a link that leads through more than {MAX_LINKS} links (a loop or chain)"
                )
            if os.path.isabs(target) or os.path.commonpath([real_root, resolved]) != real_root:
                raise TreeProblem(name, f"a link to {target}, outside the package")
            record = b"L\0" + relative + b"\0" + os.fsencode(target)
        else:
            raise TreeProblem(name, "not a file, folder or link (a device, FIFO or socket)")
        digest.update(record + b"\n")
    return TreeSummary(digest=digest.hexdigest(), files=files, size=size)


def make_read_only(root: Path, *, include_root: bool = True) -> None:
    """Files become 0444 (0555 when executable) and folders 0555; links are left alone."""
    for _relative, entry in _entries(root):
        info = entry.stat(follow_symlinks=False)
        if stat.S_ISDIR(info.st_mode):
            os.chmod(entry.path, 0o555)
        elif stat.S_ISREG(info.st_mode):
            os.chmod(entry.path, 0o555 if info.st_mode & stat.S_IXUSR else 0o444)
    if include_root:
        os.chmod(root, 0o555)


def make_writable(root: Path) -> None:
    """Give the owner write access to every folder under ``root`` again, so that it can be
    removed (a read-only folder's entries cannot be unlinked)."""
    if not root.is_dir() or root.is_symlink():
        return
    os.chmod(root, 0o755)
    for _relative, entry in _entries(root):
        if entry.is_dir(follow_symlinks=False):
            os.chmod(entry.path, 0o755)


def remove_tree(root: Path) -> None:
    """Remove ``root`` and everything under it, as far as it can (what cannot be removed is
    left, as ``shutil.rmtree(ignore_errors=True)`` would). Read-only folders are made
    writable first and links are removed, never followed. The walk keeps its own stack
    instead of recursing, so no depth of folders makes it fail (``shutil.rmtree`` recurses
    once per level and raises ``RecursionError`` on a deep enough tree, whatever
    ``ignore_errors`` says)."""
    try:
        if not stat.S_ISDIR(os.lstat(root).st_mode):
            os.unlink(root)
            return
    except OSError:
        return
    folders: list[str] = []
    stack = [str(root)]
    while stack:
        folder = stack.pop()
        folders.append(folder)
        with suppress(OSError):
            os.chmod(folder, 0o755)
        try:
            with os.scandir(folder) as listing:
                for entry in listing:
                    try:
                        if entry.is_dir(follow_symlinks=False):
                            stack.append(entry.path)
                        else:
                            os.unlink(entry.path)
                    except OSError:
                        continue
        except OSError:
            continue
    for folder in reversed(folders):  # a folder comes after its parent: children first
        with suppress(OSError):
            os.rmdir(folder)
