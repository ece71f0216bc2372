"""Unpacking a package source — a folder or a tar archive — into a staging folder.

Every member is checked by raw itself before anything is written: no absolute name, no
``..``, no member under a link, no link or hard link leading outside, no device, FIFO or
other special member, no name twice, and at most :data:`MAX_MEMBERS` members and
:data:`MAX_BYTES` bytes as the archive declares them (counted while reading the headers,
so an archive bomb is refused before it is inflated). Only then are the members extracted,
with the standard library's ``data`` filter as a second line of defence.

This module imports :mod:`tarfile` and the decompressors: it is imported only by install.
"""

from __future__ import annotations

import hashlib
import lzma
import os
import posixpath
import stat
import tarfile
import zlib
from collections import deque
from pathlib import Path
from typing import BinaryIO, Final, Self

import attrs

from raw_core.errors import PackageInvalid, PackageUnsafe
from raw_core.packages.tree import MAX_LINKS

__all__ = [
    "MAX_BYTES",
    "MAX_DEPTH",
    "MAX_HEADER_BYTES",
    "MAX_HEADER_CHAIN",
    "MAX_MEMBERS",
    "Limits",
    "copy_folder",
    "file_digest",
    "unpack_archive",
]

MAX_MEMBERS: Final = 10_000
MAX_BYTES: Final = 256 * 1024 * 1024
MAX_DEPTH: Final = 64
MAX_HEADER_BYTES: Final = 16 * 1024 * 1024
MAX_HEADER_CHAIN: Final = 8
# RecursionError: tarfile reads a header that extends the next one by calling itself, so
# thousands of them in a row exhaust the stack (the chain limit refuses them earlier).
_ARCHIVE_ERRORS: Final = (
    tarfile.TarError,
    EOFError,
    OSError,
    zlib.error,
    lzma.LZMAError,
    RecursionError,
)
# The headers whose data tarfile reads into memory to extend the member that follows: a
# GNU long name or long link target, a pax header (per member or global).
_EXTENDED: Final = frozenset(
    (
        tarfile.GNUTYPE_LONGNAME,
        tarfile.GNUTYPE_LONGLINK,
        tarfile.XHDTYPE,
        tarfile.XGLTYPE,
        tarfile.SOLARIS_XHDTYPE,
    )
)


@attrs.frozen(kw_only=True)
class Limits:
    """How many members, how many unpacked bytes and how many levels of folders one
    package may hold, and how many bytes of extended headers (long names, pax headers) its
    archive may declare in all, and how many in a row."""

    members: int = MAX_MEMBERS
    bytes: int = MAX_BYTES
    depth: int = MAX_DEPTH
    header_bytes: int = MAX_HEADER_BYTES
    header_chain: int = MAX_HEADER_CHAIN


def file_digest(path: Path) -> str:
    """The SHA-256 (hex) of a file's bytes: an archive's digest in the index."""
    digest = hashlib.sha256()
    with path.open("rb") as handle:
        while chunk := handle.read(1024 * 1024):
            digest.update(chunk)
    return digest.hexdigest()


def _clean_name(name: str, where: str) -> str:
    """A member's name as a relative path inside the package; refuses absolute names and
    ``..`` (a ``./`` prefix and a trailing ``/`` are fine)."""
    if name.startswith("/") or "\0" in name:
        raise PackageUnsafe(f"{where}: member {name!r} has an absolute name", path=where)
    parts = [p for p in name.split("/") if p not in ("", ".")]
    if ".." in parts:
        raise PackageUnsafe(f"{where}: member {name!r} leads outside with ..", path=where)
    return "/".join(parts)


def _inside(base: str, target: str) -> bool:
    """Whether relative ``target``, read from folder ``base`` of the package, stays in it."""
    if target.startswith("/"):
        return False
    joined = posixpath.normpath(posixpath.join(base, target))
    return joined != ".." and not joined.startswith("../") and not joined.startswith("/")


class _Checker:
    """The checks on one source's members, in the order they come."""

    def __init__(self, where: str, limits: Limits) -> None:
        self.where = where
        self.limits = limits
        self.count = 0
        self.size = 0
        self.files: set[str] = set()
        self.links: dict[str, str] = {}
        self.seen: set[str] = set()
        self.header_bytes = 0
        self.chain = 0

    def refuse(self, message: str) -> PackageUnsafe:
        return PackageUnsafe(f"{self.where}: {message}", path=self.where)

    def header(self, info: tarfile.TarInfo) -> None:
        """Check a header as soon as tarfile has parsed its 512 bytes, before it reads any
        data that follows: an extended header's data is read into memory whole."""
        if info.size < 0:
            raise self.refuse(f"member {info.name!r} declares a negative size")
        if info.type not in _EXTENDED:
            self.chain = 0
            return
        self.chain += 1
        if self.chain > self.limits.header_chain:
            raise self.refuse(
                f"more than {self.limits.header_chain} extended headers (long names, pax"
                " headers) in a row"
            )
        self.header_bytes += info.size
        if self.header_bytes > self.limits.header_bytes:
            raise self.refuse(
                f"more than {self.limits.header_bytes} bytes of extended headers (long"
                " names, pax headers)"
            )

    def member(self, name: str, *, size: int = 0, is_dir: bool = False) -> None:
        self.count += 1
        if self.count > self.limits.members:
            raise self.refuse(f"more than {self.limits.members} members")
        self.size += size
        if self.size > self.limits.bytes:
            raise self.refuse(f"more than {self.limits.bytes} bytes unpacked")
        parts = name.split("/")
        if len(parts) > self.limits.depth:
            shown = name if len(name) <= 120 else f"{name[:120]}..."
            raise PackageInvalid(
                f"{self.where}: member {shown!r} has {len(parts)} parts; a package's"
                f" paths have at most {self.limits.depth} parts",
                path=self.where,
            )
        for depth in range(1, len(parts)):
            if "/".join(parts[:depth]) in self.links:
                raise self.refuse(f"member {name!r} lies under a link")
        if name in self.seen and not is_dir:
            raise self.refuse(f"member {name!r} appears twice")
        self.seen.add(name)

    def link(self, name: str, target: str) -> None:
        if not _inside(posixpath.dirname(name), target):
            raise self.refuse(f"member {name!r} is a link to {target!r}, outside the package")
        self.links[name] = target

    def link_chains(self) -> None:
        """Follow each link through the package's own links, as the kernel would once the
        package is unpacked, and refuse one that leads outside or through more than
        :data:`MAX_LINKS` links: checked here, before anything is written, the standard
        library's filter (which follows a chain by recursing) never sees a long one."""
        for name, target in self.links.items():
            resolved = name.split("/")[:-1]
            parts = deque(target.split("/"))
            followed = 0
            while parts:
                part = parts.popleft()
                if part in ("", "."):
                    continue
                if part == "..":
                    if not resolved:
                        raise self.refuse(
                            f"member {name!r} is a link that leads outside the package"
                        )
                    resolved.pop()
                    continue
                candidate = "/".join([*resolved, part])
                if candidate not in self.links:
                    resolved.append(part)
                    continue
                followed += 1
                if followed > MAX_LINKS:
                    raise self.refuse(
                        f"member {name!r} is a link that leads through more than {MAX_LINKS}"
                        " links (a loop or chain)"
                    )
                parts.extendleft(reversed(self.links[candidate].split("/")))


def unpack_archive(source: Path, dest: Path, limits: Limits | None = None) -> None:
    """Check every member of the tar archive ``source`` (plain, gzip, bzip2 or xz), then
    extract them into the empty folder ``dest``. Raises ``package_unsafe`` for a refused
    member and ``package_invalid`` for a file that is no readable tar archive."""
    where = str(source)
    checker = _Checker(where, limits or Limits())
    try:
        with tarfile.open(source, "r:*", tarinfo=_checked_headers(checker)) as archive:
            members: list[tarfile.TarInfo] = []
            while (member := archive.next()) is not None:
                members.append(_check_member(member, checker))
            checker.link_chains()
            try:
                archive.extractall(dest, members=members, filter="data")
            except RecursionError:  # the filter resolves a link's chain by recursing
                raise checker.refuse(
                    f"its links lead through one another more than {MAX_LINKS} times"
                ) from None
    except (PackageUnsafe, PackageInvalid):
        raise
    except tarfile.FilterError as exc:  # the second line held where the first did not
        raise checker.refuse(f"the standard library's data filter refused it: {exc}") from None
    except _ARCHIVE_ERRORS as exc:
        raise PackageInvalid(
            f"{where}: not a readable tar archive (.tar, .tar.gz, .tar.xz): {_why(exc)}",
            path=where,
        ) from None


def _checked_headers(checker: _Checker) -> type[tarfile.TarInfo]:
    """The ``TarInfo`` class tarfile is to build headers with: ``frombuf`` parses one
    512-byte header, and tarfile calls it before it reads the data the header declares, so
    ``checker`` sees each declared size before anything is read into memory."""

    class CheckedTarInfo(tarfile.TarInfo):
        @classmethod
        def frombuf(cls, buf: bytes | bytearray, encoding: str, errors: str) -> Self:
            info = super().frombuf(buf, encoding, errors)
            checker.header(info)
            return info

    return CheckedTarInfo


def _why(exc: BaseException) -> str:
    """Why the archive cannot be read, in words (never an exception's repr)."""
    if isinstance(exc, RecursionError):
        return "its headers are nested too deeply"
    if isinstance(exc, tarfile.ReadError) and str(exc).startswith("file could not be opened"):
        return "it is no tar archive, plain or compressed with gzip, bzip2 or xz"
    if isinstance(exc, EOFError):
        return "it ends early (truncated)"
    if isinstance(exc, (zlib.error, lzma.LZMAError, tarfile.CompressionError)):
        return "its compressed data is damaged"
    if isinstance(exc, OSError) and exc.strerror:
        return f"it cannot be read: {exc.strerror}"
    return str(exc) or type(exc).__name__


def _check_member(member: tarfile.TarInfo, checker: _Checker) -> tarfile.TarInfo:
    name = _clean_name(member.name, checker.where)
    if member.type == tarfile.DIRTYPE:
        checker.member(name, is_dir=True)
    elif member.type in (tarfile.REGTYPE, tarfile.AREGTYPE):
        checker.member(name, size=member.size)
        checker.files.add(name)
    elif member.type == tarfile.SYMTYPE:
        checker.member(name)
        checker.link(name, member.linkname)
    elif member.type == tarfile.LNKTYPE:
        checker.member(name)
        try:
            target = _clean_name(member.linkname, checker.where)
        except PackageUnsafe:
            raise checker.refuse(
                f"member {name!r} is a hard link to {member.linkname!r}, outside the package"
            ) from None
        if target not in checker.files:
            raise checker.refuse(
                f"member {name!r} is a hard link to {member.linkname!r}, which is no file"
                " earlier in the package"
            )
        checker.files.add(name)
    else:
        kind = (
            "a device"
            if member.ischr() or member.isblk()
            else "a FIFO"
            if member.isfifo()
            else "not a file, folder or link"
        )
        raise checker.refuse(f"member {member.name!r} is {kind}")
    if not name and member.type != tarfile.DIRTYPE:
        raise checker.refuse(f"member {member.name!r} names the package's own folder")
    return member


def _copy_at_most(reader: BinaryIO, writer: BinaryIO, size: int) -> int:
    """Copy up to ``size`` bytes, and read one more to see whether the file grew; return
    how many bytes there were (at most ``size + 1``)."""
    left = size + 1
    total = 0
    while left > 0 and (chunk := reader.read(min(left, 1024 * 1024))):
        total += len(chunk)
        left -= len(chunk)
        if total <= size:
            writer.write(chunk)
        else:
            writer.write(chunk[: len(chunk) - (total - size)])
    return total


def _listing(source: Path, base: str, where: str) -> list[str]:
    """The names in folder ``base`` of ``source``; one that cannot be read is
    ``package_invalid`` (a package is copied whole or not at all)."""
    try:
        return os.listdir(source / base if base else source)
    except OSError as exc:
        shown = repr(base) if base else "its top folder"
        raise PackageInvalid(
            f"{where}: cannot read {shown}: {exc.strerror or exc}", path=where
        ) from None


def copy_folder(source: Path, dest: Path, limits: Limits | None = None) -> None:
    """Check every entry of the folder ``source``, then copy them into the empty folder
    ``dest`` (files are opened without following links, links are recreated as links)."""
    where = str(source)
    checker = _Checker(where, limits or Limits())
    entries: list[tuple[str, os.stat_result, str | None]] = []
    # A walk with a stack of its own (os.walk recurses once per level): each folder is
    # listed before anything under it, and the depth limit ends a deep tree early.
    stack = [""]
    while stack:
        base = stack.pop()
        below: list[str] = []
        for name in sorted(_listing(source, base, where)):
            relative = f"{base}/{name}" if base else name
            path = source / relative
            info = os.lstat(path)
            if stat.S_ISLNK(info.st_mode):
                target = os.readlink(path)
                checker.member(relative)
                checker.link(relative, target)
                entries.append((relative, info, target))
            elif stat.S_ISDIR(info.st_mode):
                checker.member(relative, is_dir=True)
                entries.append((relative, info, None))
                below.append(relative)
            elif stat.S_ISREG(info.st_mode):
                checker.member(relative, size=info.st_size)
                entries.append((relative, info, None))
            else:
                raise checker.refuse(f"{relative!r} is not a file, folder or link")
        stack.extend(reversed(below))
    checker.link_chains()
    for relative, info, link in entries:
        destination = dest / relative
        if link is not None:
            os.symlink(link, destination)
        elif stat.S_ISDIR(info.st_mode):
            destination.mkdir()
        else:
            fd = os.open(source / relative, os.O_RDONLY | os.O_NOFOLLOW)
            with os.fdopen(fd, "rb") as reader, destination.open("xb") as writer:
                copied = _copy_at_most(reader, writer, info.st_size)
            if copied > info.st_size:  # it grew after it was counted: the limits would not hold
                raise checker.refuse(f"{relative!r} changed while it was copied")
            os.chmod(destination, 0o755 if info.st_mode & stat.S_IXUSR else 0o644)
