"""A refused install leaves the data directory exactly as it was — on a fresh one (no
folder, no lock file made) and on one that holds a store — whatever refused it: a hostile
archive, a bad manifest, an export that is no tool folder, an alias that is taken. A
package is unpacked and checked in a temporary folder first, and moved into the store
(copied, when that folder is on another file system) only once every check passed."""

from __future__ import annotations

import json
import os
import shutil
import tarfile
import tempfile
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from raw_core.errors import PackageAliasTaken, PackageInvalid, PackageUnsafe, RawError
from raw_core.packages import PackageStore, install_package
from raw_core.packages.index import index_path
from raw_core.packages.tree import make_writable, remove_tree
from tests.conftest import missing_prerequisite
from tests.raw_core.packages.conftest import MakePackage, add_member

Refused = Callable[[Path, MakePackage], Path]


def snapshot(folder: Path) -> dict[str, bytes | None]:
    """Every path under ``folder``, with a file's bytes (``None`` for a folder)."""
    if not folder.exists():
        return {}
    found: dict[str, bytes | None] = {".": None}
    for directory, folders, files in os.walk(folder):
        for name in folders:
            found[os.path.relpath(os.path.join(directory, name), folder)] = None
        for name in files:
            path = Path(directory, name)
            found[os.path.relpath(path, folder)] = path.read_bytes()
    return found


def hostile_archive(tmp_path: Path, make_package: MakePackage) -> Path:
    package = make_package(root=tmp_path / "hostile")
    target = tmp_path / "hostile.tar.xz"
    with tarfile.open(target, "w:xz") as archive:
        for path in sorted(package.rglob("*")):
            archive.add(path, arcname=path.relative_to(package).as_posix(), recursive=False)
        add_member(archive, "tools/../../planted", b"owned")
    return target


def bad_manifest(tmp_path: Path, make_package: MakePackage) -> Path:
    return make_package(root=tmp_path / "bad", manifest='{"api_version": 1,')


def export_no_tool(tmp_path: Path, make_package: MakePackage) -> Path:
    folder = make_package(root=tmp_path / "no-tool")
    (folder / "tools" / "greet" / "tool.json").write_text('{"api_version": 2}')
    return folder


def alias_taken(tmp_path: Path, make_package: MakePackage) -> Path:
    return make_package("acme", tools=("count",), root=tmp_path / "other")


REFUSED: dict[str, tuple[Refused, type[RawError]]] = {
    "hostile-archive": (hostile_archive, PackageUnsafe),
    "bad-manifest": (bad_manifest, PackageInvalid),
    "export-no-tool": (export_no_tool, PackageInvalid),
    "alias-taken": (alias_taken, PackageAliasTaken),
}


def _name_acme_in_the_index(tmp_path: Path, make_package: MakePackage, config_file: Path) -> None:
    """An index that names ``acme`` already (installed with a data dir of its own, then
    that data dir went away, as on a fresh machine with the project's files)."""
    other = PackageStore(tmp_path / "elsewhere" / "raw")
    install_package(make_package(root=tmp_path / "first"), config_file=config_file, store=other)
    for entry in other.root.iterdir():
        make_writable(entry)
    shutil.rmtree(other.data_dir)


@pytest.mark.parametrize("name", list(REFUSED))
def test_a_refused_install_on_a_fresh_data_dir_creates_nothing_there(
    tmp_path: Path, make_package: MakePackage, store: PackageStore, config_file: Path, name: str
) -> None:
    build, error = REFUSED[name]
    _name_acme_in_the_index(tmp_path, make_package, config_file)
    index_before = index_path(config_file).read_bytes()
    with pytest.raises(error):
        install_package(build(tmp_path, make_package), config_file=config_file, store=store)
    assert not store.data_dir.exists()
    assert not store.data_dir.parent.exists()  # not even $XDG_DATA_HOME
    assert index_path(config_file).read_bytes() == index_before


@pytest.mark.parametrize("name", list(REFUSED))
def test_a_refused_install_leaves_a_data_dir_with_a_store_as_it_was(
    tmp_path: Path, make_package: MakePackage, store: PackageStore, config_file: Path, name: str
) -> None:
    build, error = REFUSED[name]
    install_package(make_package(root=tmp_path / "first"), config_file=config_file, store=store)
    other_project = tmp_path / "other-project"
    other_project.mkdir()
    (other_project / "raw.json").write_text(json.dumps({}))
    target = other_project / "raw.json" if name != "alias-taken" else config_file
    if name == "alias-taken":  # the list forgot the index: only the index names acme
        store.indexes_file.unlink()
    before = snapshot(store.data_dir)
    with pytest.raises(error):
        install_package(build(tmp_path, make_package), config_file=target, store=store)
    assert snapshot(store.data_dir) == before


@pytest.fixture
def other_file_system(tmp_path: Path) -> Iterator[Path]:
    """A folder on another file system than ``tmp_path`` (in /dev/shm, a tmpfs)."""
    shm = Path("/dev/shm")
    if not shm.is_dir() or shm.stat().st_dev == tmp_path.stat().st_dev:
        missing_prerequisite("no /dev/shm on a file system of its own")
    folder = Path(tempfile.mkdtemp(dir=shm, prefix="raw-test-"))
    yield folder
    remove_tree(folder)


def test_a_package_unpacked_on_another_file_system_is_copied_into_the_store(
    tmp_path: Path,
    make_package: MakePackage,
    store: PackageStore,
    config_file: Path,
    other_file_system: Path,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    package = make_package()
    (package / "tools" / "run.sh").write_text("#!/bin/sh\n")
    (package / "tools" / "run.sh").chmod(0o755)
    (package / "tools" / "README").symlink_to("greet/tool.json")
    monkeypatch.setattr(tempfile, "tempdir", str(other_file_system))  # where _scratch unpacks
    report = install_package(package, config_file=config_file, store=store)
    assert report.stored
    assert store.verify(report.entry.hash, package="acme") == store.entry(report.entry.hash)
    assert list(other_file_system.iterdir()) == []  # the unpacked copy is gone
    monkeypatch.undo()
    again = install_package(package, config_file=config_file, store=store, alias="same")
    assert again.entry.hash == report.entry.hash
