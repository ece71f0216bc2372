"""A data directory raw cannot use for packages (a file where a folder should be) is
``package_store_unavailable`` naming the folder, for install, remove and gc alike: exit 2,
no traceback, and the index and the files around stay as they were."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import pytest

from raw_core.errors import PackageStoreUnavailable
from raw_core.packages import PackageStore, gc_packages, install_package, remove_package
from raw_core.packages.index import index_path
from tests.conftest import raw_script
from tests.raw_core.packages.conftest import MakePackage, environment


@pytest.fixture
def blocked(tmp_path: Path) -> Path:
    """A file standing where the data directory's parent folder should be."""
    path = tmp_path / "not-a-folder"
    path.write_text("a file\n")
    return path


def test_install_remove_and_gc_name_the_folder_that_is_a_file(
    blocked: Path, make_package: MakePackage, config_file: Path
) -> None:
    store = PackageStore(blocked / "raw")
    for attempt in (
        lambda: install_package(make_package(), config_file=config_file, store=store),
        lambda: remove_package("acme", config_file=config_file, store=store),
        lambda: gc_packages(store),
    ):
        with pytest.raises(PackageStoreUnavailable) as raised:
            attempt()
        assert raised.value.code == "package_store_unavailable"
        assert str(store.root) in raised.value.message
        assert f"{blocked} is no folder" in raised.value.message
        assert raised.value.context["path"] == str(store.root)
    assert blocked.read_text() == "a file\n"
    assert not index_path(config_file).exists()


def test_a_list_of_indexes_raw_cannot_read_stops_install_and_gc(
    make_package: MakePackage, store: PackageStore, config_file: Path
) -> None:
    (store.data_dir / "package-indexes.json").mkdir(parents=True)
    for attempt in (
        lambda: install_package(make_package(), config_file=config_file, store=store),
        lambda: gc_packages(store),
    ):
        with pytest.raises(PackageStoreUnavailable) as raised:
            attempt()
        assert raised.value.message == (
            f"cannot use {store.indexes_file} for packages: Is a directory"
        )
    assert store.hashes() == []
    assert not index_path(config_file).exists()


def test_raw_pkg_install_and_gc_exit_2_without_a_traceback(
    tmp_path: Path, blocked: Path, make_package: MakePackage, config_file: Path
) -> None:
    env = {**environment(tmp_path), "XDG_DATA_HOME": str(blocked)}
    folder = make_package()
    for args in (
        ["pkg", "install", str(folder), "--config", str(config_file)],
        ["pkg", "gc"],
        ["pkg", "install", str(folder), "--config", str(config_file), "--json"],
    ):
        done = subprocess.run(
            [raw_script(), *args], capture_output=True, text=True, env=env, timeout=60
        )
        assert done.returncode == 2, done.stderr
        assert "Traceback" not in done.stderr
        assert "NotADirectoryError" not in done.stderr + done.stdout
        output = done.stdout if "--json" in args else done.stderr
        assert "package_store_unavailable" in output
        assert f"{blocked} is no folder" in output
        if "--json" in args:
            assert json.loads(done.stdout)["error"]["code"] == "package_store_unavailable"
    assert not index_path(config_file).exists()


def test_an_index_file_whose_folder_is_a_file_is_store_unavailable(blocked: Path) -> None:
    from raw_core.packages.index import write_index

    with pytest.raises(PackageStoreUnavailable) as raised:
        write_index(blocked / "raw-packages.json", {})
    assert raised.value.message == f"cannot use {blocked} for packages: {blocked} is no folder"
    assert blocked.read_text() == "a file\n"
