"""Text that UTF-8 cannot hold: a manifest string with a lone surrogate is refused at its
field; a source or config folder whose name is not UTF-8 is installed, and the files raw
writes keep its name as JSON escapes that read back to the same path."""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path

import pytest

from raw_core.errors import PackageInvalid
from raw_core.packages import PackageStore, gc_packages, install_package, list_packages
from raw_core.packages.index import index_path
from tests.conftest import raw_script
from tests.raw_core.packages.conftest import MakePackage, environment, store_listing

NOT_UTF8 = os.fsdecode(b"pk\xff")  # how Python names a folder called b"pk\xff"


@pytest.mark.parametrize(
    ("field", "path"),
    [
        ("version", "$.version"),
        ("description", "$.description"),
        ("folder", "$.exports.tools.greet"),
    ],
)
def test_a_manifest_string_with_a_lone_surrogate_is_refused_at_its_field(
    make_package: MakePackage, store: PackageStore, config_file: Path, field: str, path: str
) -> None:
    manifest = {
        "api_version": 1,
        "name": "acme",
        "version": "\ud800" if field == "version" else "1.0.0",
        "description": "x\udcff" if field == "description" else "The acme package.",
        "exports": {"tools": {"greet": "tools/\ud800" if field == "folder" else "tools/greet"}},
    }
    package = make_package(manifest=json.dumps(manifest))  # ASCII JSON: \ud800 as an escape
    with pytest.raises(PackageInvalid) as caught:
        install_package(package, config_file=config_file, store=store)
    assert caught.value.field == path
    assert "Unicode text" in caught.value.message
    assert not store.data_dir.exists()
    assert not index_path(config_file).exists()


def test_a_source_and_a_config_folder_whose_names_are_not_utf8_round_trip(
    tmp_path: Path, make_package: MakePackage, store: PackageStore
) -> None:
    package = make_package(root=tmp_path / NOT_UTF8)
    project = tmp_path / f"c{NOT_UTF8}"
    project.mkdir()
    config_file = project / "raw.json"
    config_file.write_text("{}")
    report = install_package(package, config_file=config_file, store=store)
    assert report.entry.source == str(package)
    # The files are UTF-8, with the undecodable byte kept as a JSON escape of its surrogate.
    index_text = index_path(config_file).read_bytes().decode("utf-8")
    assert "pk\\udcff" in index_text
    assert store.indexes_file.read_bytes().decode("utf-8").count("\\udcff") == 1
    assert store.indexes() == [index_path(config_file)]
    assert list_packages(config_file)["acme"].source == str(package)
    # gc finds the index by its name read back: the entry stays in use.
    assert gc_packages(store).kept == [report.entry.hash]
    assert store_listing(store) == [report.entry.hash]
    again = install_package(package, config_file=config_file, store=store)
    assert again.changed is False


def test_the_command_line_installs_and_lists_from_a_folder_whose_name_is_not_utf8(
    tmp_path: Path, make_package: MakePackage
) -> None:
    package = make_package(root=tmp_path / NOT_UTF8)
    project = tmp_path / f"c{NOT_UTF8}"
    project.mkdir()
    (project / "raw.json").write_text("{}")
    env = environment(tmp_path)
    config = os.fsencode(project / "raw.json")

    def raw(*args: str | bytes) -> subprocess.CompletedProcess[bytes]:
        return subprocess.run(
            [raw_script(), *args], capture_output=True, env=env, timeout=60, check=False
        )

    installed = raw("pkg", "install", os.fsencode(package), "--config", config, "--json")
    assert installed.returncode == 0, installed.stderr
    assert json.loads(installed.stdout)["source"] == str(package)
    listed = raw("pkg", "list", "--config", config)
    assert listed.returncode == 0, listed.stderr
    assert b"pk\\udcff" in listed.stdout
    collected = raw("pkg", "gc", "--json")
    assert collected.returncode == 0, collected.stderr
    assert json.loads(collected.stdout)["removed"] == []
