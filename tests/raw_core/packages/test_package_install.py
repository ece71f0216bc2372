"""Installing packages: one hash whatever the format, nothing run on install, list, show
or remove, the store read-only, aliases, and bad manifests that leave nothing behind."""

from __future__ import annotations

import json
import stat
import subprocess
from pathlib import Path

import pytest

from raw_core.errors import PackageAliasTaken, PackageIndexInvalid, PackageInvalid
from raw_core.packages import PackageStore, install_package, list_packages
from raw_core.packages.index import index_path
from tests.conftest import raw_script
from tests.raw_core.packages.conftest import MakePackage, archive_of, environment, store_listing


def test_a_folder_a_tar_gz_and_a_tar_xz_of_one_package_get_one_hash(
    tmp_path: Path, make_package: MakePackage, store: PackageStore, config_file: Path
) -> None:
    folder = make_package("acme", tools=("greet", "count"))
    gz = archive_of(folder, tmp_path / "acme.tar.gz", mode="w:gz", top="acme-1.0.0")
    xz = archive_of(folder, tmp_path / "acme.tar.xz", mode="w:xz")
    plain = archive_of(folder, tmp_path / "acme.tar", mode="w", top="acme")
    first = install_package(folder, config_file=config_file, store=store)
    assert first.changed
    assert first.stored
    for archive in (gz, xz, plain):
        again = install_package(archive, config_file=config_file, store=store)
        assert again.entry.hash == first.entry.hash
        assert (again.changed, again.stored) == (False, False)  # the same content: a no-op
    assert store.hashes() == [first.entry.hash]
    other = install_package(xz, config_file=config_file, store=store, alias="acme2")
    assert other.entry.hash == first.entry.hash
    assert other.entry.archive_digest is not None
    assert len(other.entry.archive_digest) == 64
    assert list_packages(config_file)["acme"].archive_digest is None  # installed from a folder


def test_the_store_entry_is_read_only_and_named_by_its_tree(
    make_package: MakePackage, store: PackageStore, config_file: Path
) -> None:
    report = install_package(make_package(), config_file=config_file, store=store)
    entry = store.entry(report.entry.hash)
    modes = {
        path.relative_to(entry).as_posix(): stat.S_IMODE(path.stat().st_mode)
        for path in [entry, *entry.rglob("*")]
    }
    assert modes == {
        ".": 0o555,
        "raw-package.json": 0o444,
        "tools": 0o555,
        "tools/greet": 0o555,
        "tools/greet/tool.json": 0o444,
        "tools/greet/tool.py": 0o444,
    }
    index = json.loads(index_path(config_file).read_text())
    assert index["packages"]["acme"]["hash"] == report.entry.hash
    assert json.loads((store.data_dir / "package-indexes.json").read_text()) == {
        "indexes": [str(index_path(config_file))]
    }


def test_install_list_and_show_run_nothing_and_the_call_does(
    tmp_path: Path, make_package: MakePackage, marker: Path, config_file: Path
) -> None:
    archive = archive_of(make_package(), tmp_path / "acme.tar.gz", mode="w:gz", top="acme")
    env = environment(tmp_path)

    def raw(*args: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            [raw_script(), *args], capture_output=True, text=True, env=env, timeout=60
        )

    installed = raw("pkg", "install", str(archive), "--config", str(config_file), "--json")
    assert installed.returncode == 0, installed.stderr
    report = json.loads(installed.stdout)
    assert (report["alias"], report["changed"]) == ("acme", True)
    listed = raw("pkg", "list", "--config", str(config_file), "--json")
    assert [p["alias"] for p in json.loads(listed.stdout)] == ["acme"]
    shown = raw("pkg", "show", "acme", "--config", str(config_file), "--json")
    assert shown.returncode == 0, shown.stderr
    details = json.loads(shown.stdout)
    assert details["intact"] is True
    assert details["hash"] == report["hash"]
    assert details["tools"]["greet"]["manifest"]["name"] == "greet"
    assert raw("pkg", "show", "acme", "--config", str(config_file)).returncode == 0
    assert not marker.exists(), "installing or inspecting a package ran its code"
    called = raw("tools", "call", "pkg/acme/tools/greet", "{}", "--config", str(config_file))
    assert called.returncode == 0, called.stderr
    assert "hello from greet" in called.stdout
    assert marker.exists()


def test_an_alias_that_names_other_content_needs_force(
    tmp_path: Path, make_package: MakePackage, store: PackageStore, config_file: Path
) -> None:
    first = install_package(make_package(), config_file=config_file, store=store)
    other = make_package("acme", tools=("count",), root=tmp_path / "other")
    with pytest.raises(PackageAliasTaken) as caught:
        install_package(other, config_file=config_file, store=store)
    assert "--force" in caught.value.message
    assert list_packages(config_file)["acme"].hash == first.entry.hash
    assert store.hashes() == [first.entry.hash]
    replaced = install_package(other, config_file=config_file, store=store, force=True)
    assert list_packages(config_file)["acme"].hash == replaced.entry.hash != first.entry.hash
    beside = install_package(
        make_package(root=tmp_path / "again"),
        config_file=config_file,
        store=store,
        alias="acme-old",
    )
    assert sorted(list_packages(config_file)) == ["acme", "acme-old"]
    assert beside.entry.hash == first.entry.hash


GOOD = {
    "api_version": 1,
    "name": "acme",
    "version": "1.0.0",
    "description": "d",
    "exports": {"tools": {"greet": "tools/greet"}},
}


@pytest.mark.parametrize(
    ("manifest", "field", "fragment"),
    [
        pytest.param({**GOOD, "author": "me"}, "$.author", "unknown field", id="unknown-field"),
        pytest.param(
            {**GOOD, "exports": {"tools": {}, "skills": {}}},
            "$.exports.skills",
            "unknown field",
            id="unknown-nested",
        ),
        pytest.param({**GOOD, "api_version": 2}, "$.api_version", "expected 1", id="api-version"),
        pytest.param({**GOOD, "name": "Acme Tools"}, "$.name", "lowercase", id="bad-name"),
        pytest.param(
            {**GOOD, "exports": {"tools": {"greet": "../greet"}}},
            "$.exports.tools.greet",
            "without ..",
            id="export-outside",
        ),
        pytest.param(
            {**GOOD, "exports": {"tools": {"greet": "tools/nothing"}}},
            "$.exports.tools.greet",
            "no folder",
            id="export-missing",
        ),
        pytest.param('{"api_version": 1,', "$", "not valid JSON", id="not-json"),
        pytest.param(
            {k: v for k, v in GOOD.items() if k != "version"},
            "$.version",
            "required",
            id="missing-field",
        ),
    ],
)
def test_a_bad_manifest_is_refused_with_its_field_and_nothing_is_written(
    make_package: MakePackage,
    store: PackageStore,
    config_file: Path,
    manifest: object,
    field: str,
    fragment: str,
) -> None:
    folder = make_package(manifest=manifest)
    with pytest.raises(PackageInvalid) as caught:
        install_package(folder, config_file=config_file, store=store)
    assert caught.value.field == field
    assert fragment in caught.value.message
    assert store_listing(store) == []
    assert not index_path(config_file).exists()


def test_an_exported_folder_that_is_no_tool_is_refused_without_importing_it(
    make_package: MakePackage, store: PackageStore, config_file: Path, marker: Path
) -> None:
    folder = make_package()
    (folder / "tools" / "greet" / "tool.json").write_text('{"api_version": 2, "id": "greet"}')
    with pytest.raises(PackageInvalid) as caught:
        install_package(folder, config_file=config_file, store=store)
    assert caught.value.field == "$.exports.tools.greet"
    assert "manifest_invalid" in caught.value.message
    assert store_listing(store) == []
    assert not marker.exists()


@pytest.mark.parametrize("source", ["missing", "not-a-tar.tar.gz", "no-manifest"])
def test_a_source_that_is_no_package_is_refused(
    tmp_path: Path, store: PackageStore, config_file: Path, source: str
) -> None:
    path = tmp_path / source
    if source == "not-a-tar.tar.gz":
        path.write_bytes(b"\x1f\x8b this is no archive")
    elif source == "no-manifest":
        (path / "tools").mkdir(parents=True)
    with pytest.raises(PackageInvalid):
        install_package(path, config_file=config_file, store=store)
    assert store_listing(store) == []


def test_an_index_raw_cannot_read_stops_install_and_the_store_stays_as_it_was(
    make_package: MakePackage, store: PackageStore, config_file: Path
) -> None:
    index_path(config_file).write_text("{not json")
    with pytest.raises(PackageIndexInvalid):
        install_package(make_package(), config_file=config_file, store=store)
    assert store_listing(store) == []
    assert index_path(config_file).read_text() == "{not json"


def test_an_unreadable_list_of_indexes_stops_install_before_the_store_changes(
    make_package: MakePackage, store: PackageStore, config_file: Path
) -> None:
    store.data_dir.mkdir(parents=True)
    store.indexes_file.write_text('{"indexes": "nope"}')
    with pytest.raises(PackageIndexInvalid):
        install_package(make_package(), config_file=config_file, store=store)
    assert store_listing(store) == []
    assert not index_path(config_file).exists()


def test_a_file_that_is_no_tar_archive_is_named_in_plain_words(
    tmp_path: Path, store: PackageStore, config_file: Path
) -> None:
    text = tmp_path / "hostname"
    text.write_text("a host name, not an archive\n")
    with pytest.raises(PackageInvalid) as raised:
        install_package(text, config_file=config_file, store=store)
    message = raised.value.message
    assert message.startswith(f"{text}: not a readable tar archive (.tar, .tar.gz, .tar.xz): ")
    assert "Error" not in message  # no exception repr such as ReadError('not a gzip file')
    assert "method" not in message
    assert store_listing(store) == []


@pytest.mark.parametrize("alias", ["", "Bad"])
def test_an_empty_alias_is_refused_like_any_alias_that_breaks_the_rule(
    alias: str, make_package: MakePackage, store: PackageStore, config_file: Path
) -> None:
    with pytest.raises(PackageInvalid) as raised:
        install_package(make_package(), config_file=config_file, store=store, alias=alias)
    assert raised.value.field == "--alias"
    assert f"{alias!r} is no alias" in raised.value.message
    assert store_listing(store) == []
    assert not index_path(config_file).exists()
