"""The plug-in host: registration, reserved and duplicate names, failing plug-ins."""

from __future__ import annotations

import importlib.metadata
import subprocess
import sys
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import pytest

from raw_core import ToolFolder, hookimpl
from raw_core.errors import PluginConflict, PluginInvalid
from raw_core.plugins import PluginHost


class Ships:
    def __init__(self, *records: Any) -> None:
        self.records = records

    @hookimpl
    def raw_register_tools(self) -> list[Any]:
        return list(self.records)


@pytest.mark.parametrize("name", ["local", "agent", "pkg", "mcp"])
def test_reserved_source_names_cannot_be_taken(host: PluginHost, name: str) -> None:
    with pytest.raises(PluginConflict, match="reserved"):
        host.register(Ships(), name=name)


def test_duplicate_names_are_an_error_naming_both(host: PluginHost) -> None:
    host.register(Ships(), name="acme", origin="first.plugin")
    with pytest.raises(PluginConflict) as caught:
        host.register(Ships(), name="acme", origin="second.plugin")
    assert "first.plugin" in caught.value.message
    assert "second.plugin" in caught.value.message


def test_invalid_plugin_name_is_refused(host: PluginHost) -> None:
    with pytest.raises(PluginInvalid):
        host.register(Ships(), name="Acme Tools")


def test_unknown_hook_name_is_refused_by_pluggy(host: PluginHost) -> None:
    class Typo:
        @hookimpl
        def raw_register_toolz(self) -> list[Any]:
            return []

    with pytest.raises(PluginInvalid, match="raw_register_toolz"):
        host.register(Typo(), name="typo")
    assert host.plugin_names() == []


def test_registration_must_return_tool_folder_records(host: PluginHost) -> None:
    host.register(Ships("a/path"), name="acme")
    with pytest.raises(PluginInvalid, match="ToolFolder"):
        host.tool_folders()


def test_two_tools_of_one_name_in_a_plugin_are_refused(host: PluginHost, tmp_path: Path) -> None:
    host.register(
        Ships(ToolFolder(path=tmp_path / "a" / "grep"), ToolFolder(path=tmp_path / "b" / "grep")),
        name="acme",
    )
    with pytest.raises(PluginInvalid, match="two tools named 'grep'"):
        host.tool_folders()


def test_a_registration_hook_that_raises_is_an_error(host: PluginHost) -> None:
    class Broken:
        @hookimpl
        def raw_register_tools(self) -> list[Any]:
            raise RuntimeError("boom")

    host.register(Broken(), name="broken")
    with pytest.raises(PluginInvalid, match="boom"):
        host.tool_folders()


def test_tool_folders_are_grouped_by_plugin(host: PluginHost, tmp_path: Path) -> None:
    host.register(Ships(ToolFolder(path=tmp_path / "grep")), name="acme")
    host.register(Ships(), name="empty")
    assert {k: list(v) for k, v in host.tool_folders().items()} == {"acme": ["grep"], "empty": []}


def test_a_plugin_that_fails_to_import_is_an_error(
    host: PluginHost, monkeypatch: pytest.MonkeyPatch
) -> None:
    broken = importlib.metadata.EntryPoint(
        name="broken", value="no_such_module_x:plugin", group="raw"
    )

    def fake_entry_points(group: str) -> list[importlib.metadata.EntryPoint]:
        return [broken] if group == "raw" else []

    monkeypatch.setattr(importlib.metadata, "entry_points", fake_entry_points)
    with pytest.raises(PluginInvalid, match="failed to load") as caught:
        host.load_entry_points()
    assert "no_such_module_x:plugin (from unknown distribution)" in caught.value.message


def test_two_entry_points_of_one_name_are_refused_naming_both(
    host: PluginHost, monkeypatch: pytest.MonkeyPatch
) -> None:
    twins = [
        importlib.metadata.EntryPoint(name="twin", value=module, group="raw")
        for module in ("types", "string")
    ]
    monkeypatch.setattr(importlib.metadata, "entry_points", lambda group: twins)
    with pytest.raises(PluginConflict) as caught:
        host.load_entry_points()
    assert caught.value.message == (
        "two plug-ins are named 'twin': types (from unknown distribution) and"
        " string (from unknown distribution)"
    )


def test_loading_the_plugins_reads_no_distributions_metadata() -> None:
    """Where a plug-in comes from (its distribution's name and version, which Python reads
    by parsing the distribution's metadata) is written out only in an error message."""
    code = (
        "import sys\n"
        "from raw_core.plugins import PluginHost\n"
        "host = PluginHost()\n"
        "host.load_entry_points()\n"
        "assert 'builtin' in host.plugin_names()\n"
        "print('email.parser' in sys.modules)\n"
    )
    result = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True, timeout=60
    )
    assert result.stdout.strip() == "False"


def test_the_builtin_plugin_is_installed_under_its_name() -> None:
    names = {ep.name: ep.value for ep in importlib.metadata.entry_points(group="raw")}
    assert names["builtin"] == "raw_builtin_tools.plugin"
    host = PluginHost()
    host.load_entry_points()
    assert "read_file" in host.tool_folders()["builtin"]


def test_hosts_are_independent() -> None:
    first, second = PluginHost(), PluginHost()
    first.register(SimpleNamespace(), name="acme")
    assert second.plugin_names() == []


def test_providers_are_collected_by_name_and_clashes_refused(host: PluginHost) -> None:
    from raw_core.providers.contract import ProviderRecord

    def factory(model: Any, api_key: str | None = None) -> Any:
        return None

    class Ships:
        def __init__(self, *records: Any) -> None:
            self.records = records

        @hookimpl
        def raw_register_providers(self) -> list[Any]:
            return list(self.records)

    host.register(Ships(ProviderRecord(name="echo", factory=factory)), name="one")
    assert list(host.providers()) == ["replay", "echo"]  # raw_core's own, then plug-ins'
    host.register(Ships(ProviderRecord(name="echo", factory=factory)), name="two")
    with pytest.raises(PluginConflict, match="'one' and 'two'"):
        host.providers()


def test_provider_records_must_be_records(host: PluginHost) -> None:
    class Bad:
        @hookimpl
        def raw_register_providers(self) -> list[Any]:
            return ["openai"]

    host.register(Bad(), name="bad")
    with pytest.raises(PluginInvalid, match="ProviderRecord"):
        host.providers()


def test_a_plugin_cannot_take_the_replay_provider_name(host: PluginHost) -> None:
    from raw_core.providers.contract import ProviderRecord

    class Ships:
        @hookimpl
        def raw_register_providers(self) -> list[Any]:
            def factory(model: Any, api_key: str | None = None) -> Any:
                return None

            return [ProviderRecord(name="replay", factory=factory)]

    host.register(Ships(), name="imposter")
    with pytest.raises(PluginConflict, match="'raw_core' and 'imposter'"):
        host.providers()


@pytest.mark.parametrize(
    ("hook", "accessor"),
    [
        ("raw_register_tool_sources", "tool_sources"),
        ("raw_register_config_sections", "config_sections"),
        ("raw_register_session_backends", "session_backends"),
    ],
)
def test_new_registration_hooks_fail_loudly_naming_the_plugin(hook: str, accessor: str) -> None:
    def raising() -> list[Any]:
        raise RuntimeError("boom")

    def not_a_list() -> Any:
        return "records"

    for function, match in ((raising, "boom"), (not_a_list, "must return a list")):
        host = PluginHost()
        host.register(SimpleNamespace(**{hook: hookimpl(function)}), name="acme")
        with pytest.raises(PluginInvalid, match=match) as caught:
            getattr(host, accessor)()
        assert caught.value.context["plugin"] == "acme"


def test_registered_records_are_recomputed_when_a_plugin_joins(host: PluginHost) -> None:
    from raw_core.config import ConfigSection

    def section(name: str) -> SimpleNamespace:
        record = ConfigSection(name=name, validate=lambda value, field: value)
        return SimpleNamespace(raw_register_config_sections=hookimpl(lambda: [record]))

    host.register(section("one"), name="first")
    assert list(host.config_sections()) == ["one"]
    host.register(section("two"), name="second")
    assert sorted(host.config_sections()) == ["one", "two"]
    assert host.registered_by("config_section", "two") == "second"


def test_implements_registers_a_function_under_its_hookspec(host: PluginHost) -> None:
    from raw_core.plugins import hookspecs
    from raw_core.plugins.hookspecs import implements
    from raw_core.tools.registry import ToolDefinition

    @implements(hookspecs.raw_tool_describe)
    def shout(tool: ToolDefinition, description: str) -> str | None:
        return description.upper()

    host.register(SimpleNamespace(shout=shout), name="loud")
    (impl,) = host.hook.raw_tool_describe.get_hookimpls()
    assert impl.function is shout
    assert impl.plugin_name == "loud"
    assert host.hook.raw_tool_describe(tool=None, description="hi") == ["HI"]


def test_implements_refuses_what_is_not_a_hookspec() -> None:
    from raw_core.plugins.hookspecs import implements

    def raw_tool_check() -> None:
        return None

    with pytest.raises(TypeError, match="hookspec"):
        implements(raw_tool_check)
