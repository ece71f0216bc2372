"""Deep trees and long chains: a package's paths are at most MAX_DEPTH parts, refused
naming the member, from an archive and from a folder; thousands of extended headers in a
row, and chains of links longer than MAX_LINKS, are refused, not a RecursionError; and
trees are removed without recursion, so a deep staging folder never stops gc."""

from __future__ import annotations

import gzip
import io
import os
import tarfile
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from raw_core.errors import PackageInvalid, PackageUnsafe
from raw_core.packages import PackageStore, gc_packages, install_package
from raw_core.packages.archive import MAX_DEPTH, MAX_HEADER_CHAIN
from raw_core.packages.index import index_path
from raw_core.packages.tree import MAX_LINKS, remove_tree
from tests.raw_core.packages.conftest import MakePackage, add_member, store_listing

DEEP = 1100  # well past Python's recursion limit, well under the member limit
TOO_DEEP = MAX_DEPTH + 40  # past the limit; unpacked by raw before it had one


DeepFolder = Callable[[Path, int], Path]


@pytest.fixture
def deep_folder() -> Iterator[DeepFolder]:
    """``deep_folder(top, levels)``: ``levels`` nested folders ``d/d/d...`` under ``top``;
    returns the deepest. Removed at the end by raw's own removal: pytest's clean-up of old
    temporary folders recurses, and would fail on them."""
    made: list[Path] = []

    def make(top: Path, levels: int) -> Path:
        folder = top
        for _ in range(levels):
            folder = folder / "d"
            folder.mkdir()  # one level at a time: each path stays short enough for the kernel
        made.append(top / "d")
        return folder

    yield make
    for folder in made:
        remove_tree(folder)


def test_a_package_deeper_than_the_limit_is_refused_from_an_archive(
    tmp_path: Path, make_package: MakePackage, store: PackageStore, config_file: Path
) -> None:
    package = make_package()
    target = tmp_path / "deep.tar.gz"
    with tarfile.open(target, "w:gz") as archive:
        for path in sorted(package.rglob("*")):
            archive.add(path, arcname=f"pkg/{path.relative_to(package)}", recursive=False)
        name = "pkg"
        for _ in range(TOO_DEEP):  # what `tar -czf` makes of nested folders
            name += "/d"
            add_member(archive, name, type=tarfile.DIRTYPE, mode=0o755)
    for _ in range(2):  # the first install was the one that got through before
        with pytest.raises(PackageInvalid) as caught:
            install_package(target, config_file=config_file, store=store)
        assert f"at most {MAX_DEPTH} parts" in caught.value.message
        assert "pkg/d/d/d" in caught.value.message
    assert not store.data_dir.exists()
    assert not index_path(config_file).exists()


def test_a_package_deeper_than_the_limit_is_refused_from_a_folder(
    make_package: MakePackage,
    store: PackageStore,
    config_file: Path,
    deep_folder: DeepFolder,
) -> None:
    package = make_package()
    deep_folder(package, TOO_DEEP)
    with pytest.raises(PackageInvalid) as caught:
        install_package(package, config_file=config_file, store=store)
    assert f"at most {MAX_DEPTH} parts" in caught.value.message
    assert not store.data_dir.exists()


def test_a_package_at_the_depth_limit_installs(
    make_package: MakePackage,
    store: PackageStore,
    config_file: Path,
    deep_folder: DeepFolder,
) -> None:
    package = make_package()
    (deep_folder(package, MAX_DEPTH - 1) / "leaf").write_text("deep")
    report = install_package(package, config_file=config_file, store=store)
    assert report.stored


def _long_name_chain(count: int) -> bytes:
    """A .tar.gz of ``count`` GNU long-name headers in a row before one small file."""
    stream = io.BytesIO()
    for number in range(count):
        header = tarfile.TarInfo("././@LongLink")
        header.type = tarfile.GNUTYPE_LONGNAME
        name = f"long-{number}".encode() + b"\0"
        header.size = len(name)
        stream.write(header.tobuf(format=tarfile.USTAR_FORMAT))
        stream.write(name + b"\0" * (-len(name) % tarfile.BLOCKSIZE))
    member = tarfile.TarInfo("raw-package.json")
    stream.write(member.tobuf(format=tarfile.USTAR_FORMAT))
    stream.write(b"\0" * 1024)
    return gzip.compress(stream.getvalue())


def test_thousands_of_long_name_headers_in_a_row_are_refused(
    tmp_path: Path, store: PackageStore, config_file: Path
) -> None:
    target = tmp_path / "chain.tar.gz"
    target.write_bytes(_long_name_chain(5000))
    assert target.stat().st_size < 64 * 1024
    with pytest.raises(PackageUnsafe) as caught:
        install_package(target, config_file=config_file, store=store)
    assert f"more than {MAX_HEADER_CHAIN} extended headers" in caught.value.message
    assert not store.data_dir.exists()


def test_a_short_chain_of_long_name_headers_is_read_as_tarfile_reads_it(
    tmp_path: Path, store: PackageStore, config_file: Path
) -> None:
    target = tmp_path / "chain.tar.gz"
    target.write_bytes(_long_name_chain(MAX_HEADER_CHAIN))
    # Within the limit the archive reads as usual; the last long name names the member,
    # which is no package (an empty file, no tool folder).
    with pytest.raises(PackageInvalid, match=r"raw-package\.json"):
        install_package(target, config_file=config_file, store=store)


def test_gc_removes_a_deep_read_only_staging_folder_a_crashed_install_left(
    store: PackageStore, deep_folder: DeepFolder
) -> None:
    staging = store.root / ".staging-crashed"
    staging.mkdir(parents=True)
    deepest = deep_folder(staging, DEEP)
    (deepest / "file").write_text("x")
    os.chmod(deepest, 0o555)  # read-only folders, as in a store entry
    os.chmod(staging / "d", 0o555)
    report = gc_packages(store)
    assert report.removed == []
    assert store_listing(store) == []


def _link_chain(folder: Path, count: int) -> None:
    """Links ``l0`` → ``l1`` → ... → ``l<count>`` → ``tools``, all inside ``folder``."""
    for number in range(count):
        (folder / f"l{number}").symlink_to(f"l{number + 1}")
    (folder / f"l{count}").symlink_to("tools")


@pytest.mark.parametrize("count", [MAX_LINKS + 1, DEEP])
def test_a_chain_of_links_longer_than_the_limit_is_refused_from_a_folder(
    make_package: MakePackage, store: PackageStore, config_file: Path, count: int
) -> None:
    package = make_package()
    _link_chain(package, count)
    with pytest.raises(PackageUnsafe) as caught:
        install_package(package, config_file=config_file, store=store)
    assert f"more than {MAX_LINKS} links" in caught.value.message
    assert not store.data_dir.exists()


def test_a_long_chain_of_links_is_refused_from_an_archive(
    tmp_path: Path, make_package: MakePackage, store: PackageStore, config_file: Path
) -> None:
    package = make_package()
    target = tmp_path / "chain.tar.gz"
    with tarfile.open(target, "w:gz") as archive:
        for path in sorted(package.rglob("*")):
            archive.add(path, arcname=path.relative_to(package).as_posix(), recursive=False)
        # The far end first: the standard library's filter then follows the whole chain
        # for each new link, recursing once per link.
        add_member(archive, f"l{DEEP}", type=tarfile.SYMTYPE, linkname="tools")
        for number in reversed(range(DEEP)):
            add_member(archive, f"l{number}", type=tarfile.SYMTYPE, linkname=f"l{number + 1}")
    with pytest.raises(PackageUnsafe) as caught:
        install_package(target, config_file=config_file, store=store)
    assert f"more than {MAX_LINKS} links" in caught.value.message
    assert not store.data_dir.exists()


def test_a_short_chain_of_links_is_kept(
    make_package: MakePackage, store: PackageStore, config_file: Path
) -> None:
    package = make_package()
    _link_chain(package, MAX_LINKS - 1)  # with l0 itself: MAX_LINKS links to follow
    report = install_package(package, config_file=config_file, store=store)
    assert (store.entry(report.entry.hash) / "l0" / "greet" / "tool.json").is_file()
