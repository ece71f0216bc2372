"""Loading ``pkg/<alias>/tools/<export>``: through the index beside the config file, only
what the selected agent names, and never from a store entry whose files changed."""

from __future__ import annotations

import json
import os
from collections.abc import Callable
from pathlib import Path

import pytest

from raw_core.agent import load_agent, open_agent
from raw_core.config import load_config
from raw_core.errors import PackageDamaged, ToolNotFound
from raw_core.packages import PackageSource, PackageStore, install_package
from raw_core.plugins import PluginHost
from raw_core.tools.loader import ToolLoader
from tests.contracts.tool_source_contract import ToolSourceCase, ToolSourceContract
from tests.raw_core.packages.conftest import MakePackage


@pytest.fixture
def data_home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> PackageStore:
    """The user's store, in the test's own data directory (what load_agent uses)."""
    monkeypatch.setenv("XDG_DATA_HOME", str(tmp_path / "data"))
    return PackageStore()


def write_config(config_file: Path, agents: dict[str, list[str]]) -> Path:
    document = {"agents": {name: {"tools": {"use": use}} for name, use in agents.items()}}
    config_file.write_text(json.dumps(document))
    return config_file


def test_a_selected_export_loads_and_only_it_is_imported(
    make_package: MakePackage, data_home: PackageStore, config_file: Path, marker: Path
) -> None:
    install_package(make_package(tools=("greet", "count")), config_file=config_file)
    write_config(config_file, {"a": ["pkg/acme/tools/greet"], "b": ["pkg/missing/tools/x"]})
    agent = load_agent(load_config(config_file), "a", host=PluginHost())
    tool = agent.registry.tools[0]
    assert tool.identity == "pkg/acme/tools/greet"
    assert tool.folder.parents[1] == data_home.entry(data_home.hashes()[0])
    assert tool.handler({}, None) == {"content": [{"type": "text", "text": "hello from greet"}]}
    assert marker.read_text() == "greet\n"  # count was not imported; agent b not resolved


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


@pytest.mark.anyio
async def test_open_agent_resolves_a_package_tool(
    make_package: MakePackage, data_home: PackageStore, config_file: Path
) -> None:
    install_package(make_package(), config_file=config_file)
    async with open_agent(load_config(config_file), host=PluginHost()) as agent:
        assert [t.identity for t in agent.registry] == ["pkg/acme/tools/greet"]


def test_an_unknown_alias_names_the_index_and_what_is_installed(
    make_package: MakePackage, data_home: PackageStore, config_file: Path
) -> None:
    install_package(make_package(), config_file=config_file)
    write_config(config_file, {"a": ["pkg/acme/tools/greet", "pkg/other/tools/greet"]})
    with pytest.raises(ToolNotFound) as caught:
        load_agent(load_config(config_file), host=PluginHost())
    assert caught.value.field == "$.agents.a.tools.use[1]"
    assert "installed: acme" in caught.value.message
    assert caught.value.context["path"] == str(config_file.parent / "raw-packages.json")


def test_an_export_the_package_lacks_lists_its_exports(
    make_package: MakePackage, data_home: PackageStore, config_file: Path
) -> None:
    install_package(make_package(), config_file=config_file)
    write_config(config_file, {"a": ["pkg/acme/tools/nope"]})
    with pytest.raises(ToolNotFound) as caught:
        load_agent(load_config(config_file), host=PluginHost())
    assert "it exports: greet" in caught.value.message
    assert caught.value.field == "$.agents.a.tools.use[0]"


def _change(path: Path) -> None:
    os.chmod(path, 0o644)
    path.write_text(path.read_text() + "\n# changed\n")


def _add(path: Path) -> None:
    os.chmod(path.parent, 0o755)
    (path.parent / "extra.py").write_text("")


def _remove(path: Path) -> None:
    os.chmod(path.parent, 0o755)
    (path.parent / "tool.json").unlink()


def _make_executable(path: Path) -> None:
    os.chmod(path, 0o555)


@pytest.mark.parametrize(
    "tamper",
    [_change, _add, _remove, _make_executable],
    ids=["changed-file", "added-file", "removed-file", "mode-changed"],
)
def test_a_tampered_store_entry_is_refused_naming_the_package_and_nothing_runs(
    make_package: MakePackage,
    data_home: PackageStore,
    config_file: Path,
    marker: Path,
    tamper: Callable[[Path], None],
) -> None:
    report = install_package(make_package(), config_file=config_file)
    tamper(data_home.entry(report.entry.hash) / "tools" / "greet" / "tool.py")
    with pytest.raises(PackageDamaged) as caught:
        load_agent(load_config(config_file), host=PluginHost())
    assert "package 'acme'" in caught.value.message
    assert caught.value.field == "$.agents.a.tools.use[0]"
    assert not marker.exists()
    again = install_package(
        make_package(root=config_file.parent / "again"), config_file=config_file
    )
    assert again.stored  # reinstalling the same content repairs the entry
    assert load_agent(load_config(config_file), host=PluginHost()).registry.tools


def test_a_removed_store_entry_is_refused(
    make_package: MakePackage, data_home: PackageStore, config_file: Path
) -> None:
    report = install_package(make_package(), config_file=config_file)
    data_home.remove(report.entry.hash)
    with pytest.raises(PackageDamaged, match="missing"):
        load_agent(load_config(config_file), host=PluginHost())


class TestPackageSource(ToolSourceContract):
    @pytest.fixture
    def tool_source_case(
        self, make_package: MakePackage, store: PackageStore, config_file: Path
    ) -> ToolSourceCase:
        install_package(make_package(), config_file=config_file, store=store)
        loader = ToolLoader()
        return ToolSourceCase(
            make_source=lambda: PackageSource(config_file, loader=loader, store=store),
            known="pkg/acme/tools/greet",
            unknown="pkg/acme/tools/missing",
        )
