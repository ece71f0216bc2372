"""Hostile package sources are refused before anything is written: absolute names, ``..``,
links and hard links out, devices and FIFOs, members under a link, too many members, and
archive bombs — refused from the sizes the headers declare, before anything is inflated."""

from __future__ import annotations

import gzip
import os
import tarfile
import time
from collections.abc import Callable
from pathlib import Path

import pytest

from raw_core.errors import PackageUnsafe
from raw_core.packages import PackageStore, install_package
from raw_core.packages.archive import MAX_BYTES, MAX_MEMBERS
from raw_core.packages.index import index_path
from tests.raw_core.packages.conftest import ArchiveMode, MakePackage, add_member, store_listing

Build = Callable[[tarfile.TarFile, Path], None]


def _good_start(archive: tarfile.TarFile, package: Path) -> None:
    """A valid package's members, so that only the hostile member can be refused."""
    for path in sorted(package.rglob("*")):
        archive.add(path, arcname=path.relative_to(package).as_posix(), recursive=False)


def absolute(archive: tarfile.TarFile, outside: Path) -> None:
    add_member(archive, str(outside / "planted"), b"owned")


def dot_dot(archive: tarfile.TarFile, outside: Path) -> None:
    add_member(archive, "tools/../../planted", b"owned")


def symlink_out(archive: tarfile.TarFile, outside: Path) -> None:
    add_member(archive, "escape", type=tarfile.SYMTYPE, linkname=str(outside))
    add_member(archive, "escape/planted", b"owned")


def relative_symlink_out(archive: tarfile.TarFile, outside: Path) -> None:
    add_member(archive, "tools/escape", type=tarfile.SYMTYPE, linkname="../../outside")


def symlink_out_through_a_link(archive: tarfile.TarFile, outside: Path) -> None:
    # Each target stays inside when read as text; followed, tools/up is the top folder,
    # so escape/.. is the folder above it.
    add_member(archive, "tools/up", type=tarfile.SYMTYPE, linkname="..")
    add_member(archive, "escape", type=tarfile.SYMTYPE, linkname="tools/up/..")


def under_a_link(archive: tarfile.TarFile, outside: Path) -> None:
    add_member(archive, "inner", type=tarfile.SYMTYPE, linkname="tools")
    add_member(archive, "inner/planted", b"through the link")


def hard_link_out(archive: tarfile.TarFile, outside: Path) -> None:
    add_member(archive, "passwd", type=tarfile.LNKTYPE, linkname=str(outside / "secret"))


def relative_hard_link_out(archive: tarfile.TarFile, outside: Path) -> None:
    add_member(archive, "passwd", type=tarfile.LNKTYPE, linkname="../outside/secret")


def device(archive: tarfile.TarFile, outside: Path) -> None:
    add_member(archive, "null", type=tarfile.CHRTYPE, devmajor=1, devminor=3)


def block_device(archive: tarfile.TarFile, outside: Path) -> None:
    add_member(archive, "disk", type=tarfile.BLKTYPE, devmajor=8, devminor=0)


def fifo(archive: tarfile.TarFile, outside: Path) -> None:
    add_member(archive, "pipe", type=tarfile.FIFOTYPE)


def twice(archive: tarfile.TarFile, outside: Path) -> None:
    add_member(archive, "tools/greet/tool.py", b"def handler(args, context): pass\n")


HOSTILE = {
    "absolute-name": absolute,
    "dot-dot": dot_dot,
    "symlink-out": symlink_out,
    "relative-symlink-out": relative_symlink_out,
    "symlink-out-through-a-link": symlink_out_through_a_link,
    "member-under-a-link": under_a_link,
    "hard-link-out": hard_link_out,
    "relative-hard-link-out": relative_hard_link_out,
    "device-node": device,
    "block-device": block_device,
    "fifo": fifo,
    "same-name-twice": twice,
}


def assert_nothing_written(store: PackageStore, config_file: Path, outside: Path) -> None:
    assert store_listing(store) == []  # no entry, no staging folder left
    assert not index_path(config_file).exists()
    assert not store.indexes_file.exists()
    assert sorted(p.name for p in outside.iterdir()) == ["secret"]


@pytest.fixture
def outside(tmp_path: Path) -> Path:
    """A folder outside the package that a hostile member aims at."""
    folder = tmp_path / "outside"
    folder.mkdir()
    (folder / "secret").write_text("do not touch")
    return folder


@pytest.mark.parametrize("mode", ["w:gz", "w:xz"])
@pytest.mark.parametrize("name", list(HOSTILE))
def test_a_hostile_member_is_refused_with_nothing_written(
    tmp_path: Path,
    make_package: MakePackage,
    store: PackageStore,
    config_file: Path,
    outside: Path,
    name: str,
    mode: ArchiveMode,
) -> None:
    package = make_package()
    target = tmp_path / f"hostile.tar.{mode[2:]}"
    with tarfile.open(target, mode) as archive:
        _good_start(archive, package)
        HOSTILE[name](archive, outside)
    with pytest.raises(PackageUnsafe) as caught:
        install_package(target, config_file=config_file, store=store)
    assert caught.value.code == "package_unsafe"
    assert str(target) in caught.value.message
    assert_nothing_written(store, config_file, outside)


def _headers(count: int) -> bytes:
    """``count`` empty-file ustar headers (``m/0``, ``m/1``...) and the end of the archive,
    built from one template: the checksum of each is the template's plus its name's bytes
    (``TarInfo.tobuf`` per member would take seconds)."""
    template = bytearray(tarfile.TarInfo("").tobuf(format=tarfile.USTAR_FORMAT))
    template[148:156] = b" " * 8  # the checksum field counts as spaces
    base = sum(template)
    blocks = []
    for number in range(count):
        name = f"m/{number}".encode()
        header = bytearray(template)
        header[0 : len(name)] = name
        header[148:156] = b"%06o\0 " % (base + sum(name))
        blocks.append(bytes(header))
    blocks.append(b"\0" * 1024)
    return b"".join(blocks)


def test_an_archive_of_100000_members_is_refused_at_the_member_limit(
    tmp_path: Path, store: PackageStore, config_file: Path, outside: Path
) -> None:
    target = tmp_path / "many.tar.gz"
    target.write_bytes(gzip.compress(_headers(100_000), compresslevel=1))
    with tarfile.open(target) as archive:  # a real archive: the stdlib reads it member by member
        assert archive.next() is not None
    with pytest.raises(PackageUnsafe) as caught:
        install_package(target, config_file=config_file, store=store)
    assert f"more than {MAX_MEMBERS} members" in caught.value.message
    assert_nothing_written(store, config_file, outside)


def _zeros_bomb(target: Path, size: int) -> None:
    """A .tar.gz whose one member declares ``size`` bytes of zeros, written quickly: one
    compressed block of zeros repeated as gzip members (a reader inflates them as one
    stream), so building it compresses a few MiB, not ``size`` bytes."""
    header = tarfile.TarInfo("zeros.bin")
    header.size = size
    chunk = 16 * 1024 * 1024
    block = gzip.compress(b"\0" * chunk, compresslevel=9)
    with target.open("wb") as out:
        out.write(gzip.compress(header.tobuf(format=tarfile.GNU_FORMAT)))
        for _ in range(size // chunk):
            out.write(block)
        out.write(gzip.compress(b"\0" * 1024))


def test_a_gigabyte_of_compressed_zeros_is_refused_before_it_is_inflated(
    tmp_path: Path, store: PackageStore, config_file: Path, outside: Path
) -> None:
    target = tmp_path / "bomb.tar.gz"
    _zeros_bomb(target, 1024**3)
    assert target.stat().st_size < 4 * 1024 * 1024  # a small file that unpacks to 1 GiB
    with tarfile.open(target) as archive:
        declared = archive.next()
        assert declared is not None
        assert declared.size == 1024**3
    started = time.process_time()
    with pytest.raises(PackageUnsafe) as caught:
        install_package(target, config_file=config_file, store=store)
    assert f"more than {MAX_BYTES} bytes" in caught.value.message
    # Refused from the header: far less CPU than inflating a gigabyte would take.
    assert time.process_time() - started < 5
    assert_nothing_written(store, config_file, outside)


def test_a_folder_with_a_link_out_or_a_fifo_is_refused(
    make_package: MakePackage, store: PackageStore, config_file: Path, outside: Path
) -> None:
    package = make_package()
    (package / "escape").symlink_to(outside)
    with pytest.raises(PackageUnsafe, match="outside the package"):
        install_package(package, config_file=config_file, store=store)
    (package / "escape").unlink()
    os.mkfifo(package / "pipe")
    with pytest.raises(PackageUnsafe, match="not a file, folder or link"):
        install_package(package, config_file=config_file, store=store)
    assert_nothing_written(store, config_file, outside)


def test_a_link_that_stays_inside_the_package_is_kept(
    make_package: MakePackage, store: PackageStore, config_file: Path
) -> None:
    package = make_package()
    (package / "tools" / "README").symlink_to("greet/tool.json")
    report = install_package(package, config_file=config_file, store=store)
    stored = store.entry(report.entry.hash) / "tools" / "README"
    assert stored.is_symlink()
    assert os.readlink(stored) == "greet/tool.json"


def test_links_and_hard_links_inside_an_archive_are_kept_and_hash_like_the_folder(
    tmp_path: Path, make_package: MakePackage, store: PackageStore, config_file: Path
) -> None:
    package = make_package()
    (package / "tools" / "README").symlink_to("greet/tool.json")
    (package / "COPY").write_bytes((package / "tools" / "greet" / "tool.py").read_bytes())
    target = tmp_path / "links.tar.gz"
    with tarfile.open(target, "w:gz") as archive:
        for path in sorted(package.rglob("*")):
            if path.name != "COPY":
                archive.add(path, arcname=path.relative_to(package).as_posix(), recursive=False)
        add_member(archive, "COPY", type=tarfile.LNKTYPE, linkname="tools/greet/tool.py")
    from_archive = install_package(target, config_file=config_file, store=store)
    from_folder = install_package(package, config_file=config_file, store=store, alias="other")
    assert from_archive.entry.hash == from_folder.entry.hash
    stored = store.entry(from_archive.entry.hash)
    assert (stored / "COPY").read_bytes() == (package / "COPY").read_bytes()
    assert os.readlink(stored / "tools" / "README") == "greet/tool.json"
