"""``raw pkg remove`` and ``raw pkg gc``: an alias leaves its index, and gc frees only the
store entries that no listed index names; the commands' JSON and exit codes."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest
from click.testing import CliRunner

from raw_core.cli import cli
from raw_core.errors import PackageNotFound
from raw_core.packages import (
    PackageStore,
    gc_packages,
    install_package,
    list_packages,
    remove_package,
    show_package,
)
from tests.raw_core.packages.conftest import MakePackage, environment, store_listing


def test_gc_frees_what_no_index_names_and_forgets_indexes_that_are_gone(
    tmp_path: Path, make_package: MakePackage, store: PackageStore, config_file: Path
) -> None:
    other_config = tmp_path / "elsewhere" / "raw.json"
    other_config.parent.mkdir()
    other_config.write_text("{}")
    acme = install_package(make_package(), config_file=config_file, store=store)
    tools = install_package(
        make_package("tools", tools=("count",)), config_file=config_file, store=store
    )
    shared = install_package(
        make_package(root=tmp_path / "copy"), config_file=other_config, store=store
    )
    assert shared.entry.hash == acme.entry.hash
    removed = remove_package("acme", config_file=config_file, store=store)
    assert removed.hash == acme.entry.hash
    assert sorted(list_packages(config_file)) == ["tools"]
    report = gc_packages(store)
    assert report.removed == []  # acme's files are still named by the other index
    assert sorted(report.kept) == sorted([acme.entry.hash, tools.entry.hash])
    remove_package("tools", config_file=config_file, store=store)
    assert gc_packages(store).removed == [tools.entry.hash]
    other_config.parent.joinpath("raw-packages.json").unlink()
    report = gc_packages(store)
    assert report.removed == [acme.entry.hash]
    assert report.dropped_indexes == [str(other_config.parent / "raw-packages.json")]
    assert store_listing(store) == []
    assert store.indexes() == [config_file.parent / "raw-packages.json"]


def test_an_unknown_alias_is_package_not_found_for_show_and_remove(
    make_package: MakePackage, store: PackageStore, config_file: Path
) -> None:
    install_package(make_package(), config_file=config_file, store=store)
    for operation in (show_package, remove_package):
        with pytest.raises(PackageNotFound) as caught:
            operation("nope", config_file=config_file, store=store)
        assert "installed: acme" in caught.value.message
    assert sorted(list_packages(config_file)) == ["acme"]


def test_the_commands_print_json_and_exit_by_the_usual_codes(
    tmp_path: Path, make_package: MakePackage, config_file: Path, marker: Path
) -> None:
    env = environment(tmp_path)
    runner = CliRunner(env=env)
    config = ["--config", str(config_file)]

    def run(*args: str) -> tuple[int, object]:
        result = runner.invoke(cli, list(args), catch_exceptions=False)
        return result.exit_code, json.loads(result.stdout) if result.stdout else None

    code, report = run("pkg", "install", str(make_package()), *config, "--json")
    assert code == 0
    assert isinstance(report, dict)
    assert report["changed"] is True
    assert run("pkg", "install", str(tmp_path / "nothing"), *config, "--json") == (
        2,
        {
            "error": {
                "code": "package_invalid",
                "message": f"no package folder or archive at {tmp_path / 'nothing'}",
            }
        },
    )
    code, shown = run("pkg", "show", "acme", *config, "--json")
    assert code == 0
    assert isinstance(shown, dict)
    entry = Path(shown["folder"]) / "raw-package.json"
    entry.chmod(0o644)
    entry.write_text(entry.read_text() + " ")
    code, shown = run("pkg", "show", "acme", *config, "--json")
    assert code == 1  # a damaged entry: show still reports, and exits 1
    assert isinstance(shown, dict)
    assert shown["intact"] is False
    assert "package_damaged" in shown["problem"]
    assert run("pkg", "remove", "nope", *config, "--json")[0] == 2
    assert run("pkg", "remove", "acme", *config, "--json")[0] == 0
    assert run("pkg", "list", *config, "--json") == (0, [])
    code, collected = run("pkg", "gc", "--json")
    assert code == 0
    assert isinstance(collected, dict)
    assert len(collected["removed"]) == 1
    assert not marker.exists()


def test_raw_help_imports_no_package_module() -> None:
    script = (
        "import sys\n"
        "from raw_core.cli import cli\n"
        "try:\n"
        "    cli(['--help'], prog_name='raw')\n"
        "except SystemExit:\n"
        "    pass\n"
        "loaded = [m for m in ('tarfile', 'raw_core.packages.archive',\n"
        "          'raw_core.packages.install') if m in sys.modules]\n"
        "print(loaded)\n"
    )
    result = subprocess.run(
        [sys.executable, "-c", script], capture_output=True, text=True, timeout=60
    )
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip().splitlines()[-1] == "[]"
