"""Spec 001, "Select tools for an agent": identities, order, uniqueness, sources."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from raw_core import ToolFolder, hookimpl
from raw_core.agent import load_agent
from raw_core.config import load_config
from raw_core.errors import (
    ConfigInvalid,
    RawError,
    ToolNameConflict,
    ToolNotFound,
    ToolSelectedTwice,
    ToolSourceUnavailable,
    ToolUnknown,
)
from raw_core.plugins import PluginHost
from raw_core.tools.registry import user_tools_dir


class _Plugin:
    """An in-process plug-in that ships the folders it is given."""

    def __init__(self, *folders: Path) -> None:
        self.folders = folders

    @hookimpl
    def raw_register_tools(self) -> list[ToolFolder]:
        return [ToolFolder(path=f) for f in self.folders]


@pytest.fixture
def workspace(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A config directory with agent/ tools and an XDG config home with local/ tools."""
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path / "xdg"))
    (tmp_path / "project").mkdir()
    return tmp_path


def write_config(workspace: Path, use: list[str], **agent: Any) -> Path:
    path = workspace / "project" / "raw.json"
    path.write_text(json.dumps({"agents": {"coder": {"tools": {"use": use}, **agent}}}))
    return path


def select(workspace: Path, use: list[str], host: PluginHost | None = None) -> Any:
    config = load_config(write_config(workspace, use))
    return load_agent(config, host=host or PluginHost()).registry


def test_local_tools_come_from_xdg_config_home(workspace: Path, make_tool: Any) -> None:
    make_tool("notes", root=workspace / "xdg" / "raw" / "tools")
    registry = select(workspace, ["local/notes"])
    assert [t.identity for t in registry] == ["local/notes"]
    assert registry.tools[0].folder == (workspace / "xdg/raw/tools/notes").resolve()


def test_local_tools_default_to_dot_config(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.delenv("XDG_CONFIG_HOME", raising=False)
    monkeypatch.setenv("HOME", str(tmp_path))
    assert user_tools_dir() == tmp_path / ".config" / "raw" / "tools"
    assert (
        user_tools_dir({"XDG_CONFIG_HOME": "relative/dir"})
        == Path.home() / ".config" / "raw" / "tools"
    )


def test_agent_tools_come_from_tools_beside_the_config(workspace: Path, make_tool: Any) -> None:
    make_tool("helper", root=workspace / "project" / "tools")
    registry = select(workspace, ["agent/helper"])
    assert registry.tools[0].identity == "agent/helper"


def test_plugin_tools_get_the_plugin_name_as_prefix(
    workspace: Path, make_tool: Any, host: PluginHost
) -> None:
    host.register(_Plugin(make_tool("grep", root=workspace / "acme")), name="acme")
    registry = select(workspace, ["acme/grep"], host)
    assert registry.tools[0].identity == "acme/grep"


def test_tools_use_order_is_kept(workspace: Path, make_tool: Any, host: PluginHost) -> None:
    host.register(_Plugin(make_tool("zeta", root=workspace / "acme")), name="acme")
    make_tool("alpha", root=workspace / "xdg" / "raw" / "tools")
    make_tool("mid", root=workspace / "project" / "tools")
    use = ["local/alpha", "acme/zeta", "agent/mid"]
    registry = select(workspace, use, host)
    assert [d.identity for d in registry.definitions()] == use
    assert [d.name for d in registry.definitions()] == ["alpha", "zeta", "mid"]


def test_what_the_model_receives_is_name_description_and_schema(
    workspace: Path, make_tool: Any
) -> None:
    schema = {"type": "object", "properties": {"q": {"type": "string"}}}
    make_tool(
        "find",
        root=workspace / "project" / "tools",
        name="find_text",
        description="Find text.",
        input_schema=schema,
    )
    (definition,) = select(workspace, ["agent/find"]).definitions()
    assert definition.to_dict() == {
        "identity": "agent/find",
        "name": "find_text",
        "description": "Find text.",
        "input_schema": schema,
    }


def test_an_empty_list_gives_no_tools(workspace: Path) -> None:
    assert len(select(workspace, [])) == 0


def test_tools_use_is_required(workspace: Path) -> None:
    path = workspace / "project" / "raw.json"
    path.write_text(json.dumps({"agents": {"coder": {"tools": {}}}}))
    with pytest.raises(ConfigInvalid) as caught:
        load_config(path)
    assert caught.value.field == "$.agents.coder.tools.use"


def test_model_visible_names_must_be_unique(workspace: Path, make_tool: Any) -> None:
    make_tool("one", root=workspace / "project" / "tools", name="same")
    make_tool("two", root=workspace / "xdg" / "raw" / "tools", name="same")
    with pytest.raises(ToolNameConflict) as caught:
        select(workspace, ["agent/one", "local/two"])
    assert caught.value.code == "tool_name_conflict"
    assert caught.value.field == "$.agents.coder.tools.use[1]"
    assert "agent/one" in caught.value.message


def test_the_same_identity_cannot_be_selected_twice(workspace: Path, make_tool: Any) -> None:
    make_tool("one", root=workspace / "project" / "tools")
    with pytest.raises(ToolSelectedTwice) as caught:
        select(workspace, ["agent/one", "agent/one"])
    assert caught.value.field == "$.agents.coder.tools.use[1]"


def test_the_same_folder_cannot_be_selected_under_two_identities(
    workspace: Path, make_tool: Any
) -> None:
    # The config directory's tools/ is also the user's local tools directory.
    monkey_root = workspace / "project" / "tools"
    make_tool("one", root=monkey_root)
    (workspace / "xdg" / "raw").mkdir(parents=True)
    (workspace / "xdg" / "raw" / "tools").symlink_to(monkey_root, target_is_directory=True)
    with pytest.raises(ToolSelectedTwice, match="same folder"):
        select(workspace, ["agent/one", "local/one"])


def test_the_mcp_source_is_not_available_without_its_plugin(workspace: Path) -> None:
    with pytest.raises(ToolSourceUnavailable) as caught:
        select(workspace, ["mcp/search/find"])
    assert caught.value.code == "tool_source_unavailable"
    assert caught.value.field == "$.agents.coder.tools.use[0]"


def test_a_pkg_alias_resolves_through_the_index_beside_the_config_file(workspace: Path) -> None:
    with pytest.raises(RawError) as caught:
        select(workspace, ["pkg/acme/tools/grep"])
    assert caught.value.code == "tool_not_found"
    assert caught.value.field == "$.agents.coder.tools.use[0]"
    assert caught.value.context["path"] == str(workspace / "project" / "raw-packages.json")


@pytest.mark.parametrize(
    ("identity", "fragment"),
    [
        pytest.param("local/missing", "no tool folder", id="local-missing"),
        pytest.param("agent/missing", "no tool folder", id="agent-missing"),
        pytest.param("nobody/tool", "no plug-in named 'nobody'", id="unknown-plugin"),
    ],
)
def test_missing_tools_are_reported_with_their_entry(
    workspace: Path, identity: str, fragment: str
) -> None:
    with pytest.raises(ToolNotFound, match=fragment) as caught:
        select(workspace, [identity])
    assert caught.value.field == "$.agents.coder.tools.use[0]"


def test_a_plugin_without_that_tool_lists_what_it_offers(
    workspace: Path, make_tool: Any, host: PluginHost
) -> None:
    host.register(_Plugin(make_tool("grep", root=workspace / "acme")), name="acme")
    with pytest.raises(ToolNotFound, match="offers: grep"):
        select(workspace, ["acme/find"], host)


@pytest.mark.parametrize(
    "identity",
    ["bash", "builtin/", "builtin/Bash", "local/a/b", "mcp/server", "pkg/a/b/c", "/x", ""],
)
def test_malformed_identities_are_config_errors(workspace: Path, identity: str) -> None:
    with pytest.raises(ConfigInvalid) as caught:
        load_config(write_config(workspace, [identity]))
    assert caught.value.field == "$.agents.coder.tools.use[0]"


def test_only_selected_tools_are_loaded(workspace: Path, make_tool: Any, imported: Any) -> None:
    chosen = make_tool("chosen", root=workspace / "project" / "tools")
    other = make_tool("other", root=workspace / "project" / "tools")
    select(workspace, ["agent/chosen"])
    assert imported(chosen)
    assert not imported(other)


def test_lookup_by_model_name_and_identity(workspace: Path, make_tool: Any) -> None:
    make_tool("one", root=workspace / "project" / "tools", name="first")
    registry = select(workspace, ["agent/one"])
    assert registry.by_name("first").identity == "agent/one"
    assert registry.by_identity("agent/one").name == "first"
    with pytest.raises(ToolUnknown) as caught:
        registry.by_name("one")
    assert caught.value.code == "tool_unknown"


def test_builtin_tools_are_discovered_through_the_installed_entry_point(workspace: Path) -> None:
    host = PluginHost()
    host.load_entry_points()
    assert "builtin" in host.plugin_names()
    registry = select(workspace, ["builtin/list_skills"], host)
    tool = registry.by_identity("builtin/list_skills")
    result = tool.handler({}, type("Context", (), {"skills": None})())
    assert result["content"][0]["text"] == "No skills are available."
