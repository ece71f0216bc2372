"""Tool sources: plug-ins serving prefixes, open_agent's lifecycle, the sync path, conflicts."""

from __future__ import annotations

import importlib.util
import json
import re
from pathlib import Path
from typing import Any

import anyio
import pytest

from raw_core import ConfigSection, ToolFolder, ToolSourceRecord, hookimpl
from raw_core.agent import load_agent, open_agent
from raw_core.config import Config, parse_config
from raw_core.errors import (
    ConfigInvalid,
    PluginConflict,
    PluginInvalid,
    ToolNameConflict,
    ToolNotFound,
    ToolSelectedTwice,
    ToolSourceUnavailable,
)
from raw_core.plugins import PluginHost
from raw_core.tools.identity import ToolIdentity
from raw_core.tools.loader import LoadedTool
from raw_core.tools.sources import FolderSource, SourceContext
from tests.conftest import MakeTool

pytestmark = pytest.mark.anyio


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


class NotesSource:
    """A source that serves ``<prefix>/<tool>`` from folders in ``root`` and logs its calls."""

    def __init__(
        self,
        context: SourceContext,
        *,
        prefix: str,
        root: Path,
        log: list[str],
        fail_close: bool = False,
    ) -> None:
        self.context = context
        self._prefix = prefix
        self._folders = FolderSource(prefix, root, loader=context.loader)
        self.log = log
        self.fail_close = fail_close

    @property
    def prefix(self) -> str:
        return self._prefix

    async def open(self) -> None:
        self.log.append(f"open {self._prefix}")

    async def resolve(self, identity: ToolIdentity) -> LoadedTool:
        self.log.append(f"resolve {identity}")
        return self._folders.load(identity)

    async def close(self) -> None:
        self.log.append(f"close {self._prefix}")
        if self.fail_close:
            raise RuntimeError("the server would not stop")


class ServesSource:
    """A plug-in registering one source record (and optionally a config section)."""

    def __init__(self, *records: Any, sections: tuple[ConfigSection, ...] = ()) -> None:
        self.records = records
        self.sections = sections

    @hookimpl
    def raw_register_tool_sources(self) -> list[Any]:
        return list(self.records)

    @hookimpl
    def raw_register_config_sections(self) -> list[Any]:
        return list(self.sections)


class ShipsFolders:
    def __init__(self, *folders: Path) -> None:
        self.folders = folders

    @hookimpl
    def raw_register_tools(self) -> list[ToolFolder]:
        return [ToolFolder(path=f) for f in self.folders]


def config_for(
    use: list[str], directory: Path | None = None, host: PluginHost | None = None, **top: Any
) -> Config:
    text = json.dumps({"agents": {"coder": {"tools": {"use": use}}}, **top})
    return parse_config(text, path=directory / "raw.json" if directory else None, host=host)


def notes_record(
    root: Path, log: list[str], prefix: str = "notes", **kwargs: Any
) -> ToolSourceRecord:
    return ToolSourceRecord(
        prefix=prefix,
        factory=lambda context: NotesSource(context, prefix=prefix, root=root, log=log, **kwargs),
    )


@pytest.fixture
def notes(tmp_path: Path, make_tool: MakeTool) -> Path:
    root = tmp_path / "notes"
    make_tool("today", root=root)
    make_tool("archive", root=root)
    return root


async def test_a_plugin_source_serves_a_new_prefix(
    host: PluginHost, notes: Path, tmp_path: Path
) -> None:
    log: list[str] = []
    host.register(ServesSource(notes_record(notes, log)), name="acme")
    config = config_for(["notes/today", "notes/archive"])
    async with open_agent(config, host=host, local_dir=tmp_path / "none") as agent:
        assert [t.identity for t in agent.registry] == ["notes/today", "notes/archive"]
        assert [d.name for d in agent.definitions()] == ["today", "archive"]
        assert log == ["open notes", "resolve notes/today", "resolve notes/archive"]
    assert log[-1] == "close notes"


async def test_the_context_carries_the_config_host_plugin_and_section(
    host: PluginHost, notes: Path
) -> None:
    log: list[str] = []
    built: list[SourceContext] = []

    def factory(context: SourceContext) -> NotesSource:
        built.append(context)
        return NotesSource(context, prefix="notes", root=notes, log=log)

    section = ConfigSection(name="notes", validate=lambda value, field: {"parsed": value})
    host.register(
        ServesSource(
            ToolSourceRecord(prefix="notes", factory=factory, section="notes"), sections=(section,)
        ),
        name="acme",
    )
    text = json.dumps({"agents": {"coder": {"tools": {"use": ["notes/today"]}}}, "notes": 1})
    config = parse_config(text, host=host)
    async with open_agent(config, host=host):
        pass
    (context,) = built
    assert context.config is config
    assert context.host is host
    assert context.plugin == "acme"
    assert context.section == {"parsed": 1}


async def test_only_the_sources_tools_use_names_are_built(
    host: PluginHost, notes: Path, tmp_path: Path, make_tool: MakeTool
) -> None:
    log: list[str] = []
    host.register(ServesSource(notes_record(notes, log)), name="acme")
    make_tool("helper", root=tmp_path / "local")
    config = config_for(["local/helper"])
    async with open_agent(config, host=host, local_dir=tmp_path / "local") as agent:
        assert [t.identity for t in agent.registry] == ["local/helper"]
    assert log == []


async def test_sources_close_when_the_block_raises(host: PluginHost, notes: Path) -> None:
    log: list[str] = []
    host.register(ServesSource(notes_record(notes, log)), name="acme")
    with pytest.raises(KeyError, match="inside"):
        async with open_agent(config_for(["notes/today"]), host=host):
            raise KeyError("inside")
    assert log[-1] == "close notes"


async def test_sources_close_when_resolving_fails(host: PluginHost, notes: Path) -> None:
    log: list[str] = []
    host.register(ServesSource(notes_record(notes, log)), name="acme")
    with pytest.raises(ToolNotFound) as caught:
        async with open_agent(config_for(["notes/today", "notes/missing"]), host=host):
            pytest.fail("the block must not run")
    assert caught.value.field == "$.agents.coder.tools.use[1]"
    assert caught.value.context["tool"] == "notes/missing"
    assert log[-1] == "close notes"


async def test_sources_close_when_the_block_is_cancelled(host: PluginHost, notes: Path) -> None:
    log: list[str] = []
    host.register(ServesSource(notes_record(notes, log)), name="acme")
    with anyio.CancelScope() as outside:
        async with open_agent(config_for(["notes/today"]), host=host):
            outside.cancel()  # the block is cancelled at its next wait
            await anyio.sleep(10)
    assert outside.cancelled_caught
    assert log[-1] == "close notes"


async def test_a_close_failure_does_not_hide_the_error_that_ended_the_block(
    host: PluginHost, notes: Path
) -> None:
    log: list[str] = []
    host.register(ServesSource(notes_record(notes, log, fail_close=True)), name="acme")
    with pytest.raises(KeyError) as caught:
        async with open_agent(config_for(["notes/today"]), host=host):
            raise KeyError("inside")
    assert any("would not stop" in note for note in caught.value.__notes__)


async def test_a_close_failure_after_a_clean_block_is_raised(host: PluginHost, notes: Path) -> None:
    log: list[str] = []
    host.register(ServesSource(notes_record(notes, log, fail_close=True)), name="acme")
    with pytest.raises(RuntimeError, match="would not stop"):
        async with open_agent(config_for(["notes/today"]), host=host):
            pass


async def test_selection_checks_apply_across_sources(
    host: PluginHost, notes: Path, tmp_path: Path, make_tool: MakeTool
) -> None:
    log: list[str] = []
    host.register(ServesSource(notes_record(notes, log)), name="acme")
    make_tool("today", root=tmp_path / "local")
    with pytest.raises(ToolNameConflict) as conflict:
        async with open_agent(
            config_for(["notes/today", "local/today"]), host=host, local_dir=tmp_path / "local"
        ):
            pass
    assert conflict.value.field == "$.agents.coder.tools.use[1]"
    with pytest.raises(ToolSelectedTwice) as twice:
        async with open_agent(config_for(["notes/today", "notes/today"]), host=host):
            pass
    assert twice.value.field == "$.agents.coder.tools.use[1]"


async def test_folder_prefixes_resolve_through_open_agent_too(
    host: PluginHost, tmp_path: Path, make_tool: MakeTool
) -> None:
    project = tmp_path / "project"
    make_tool("helper", root=project / "tools")
    grep = make_tool("grep", root=tmp_path / "plugin")
    host.register(ShipsFolders(grep), name="acme")
    config = config_for(["agent/helper", "acme/grep"], directory=project)
    async with open_agent(config, host=host) as agent:
        assert [t.identity for t in agent.registry] == ["agent/helper", "acme/grep"]
    assert [t.identity for t in load_agent(config, host=host).registry] == [
        "agent/helper",
        "acme/grep",
    ]


def test_load_agent_refuses_a_prefix_served_only_asynchronously(
    host: PluginHost, notes: Path
) -> None:
    log: list[str] = []
    host.register(ServesSource(notes_record(notes, log)), name="acme")
    with pytest.raises(ToolSourceUnavailable, match="open_agent") as caught:
        load_agent(config_for(["notes/today"]), host=host)
    assert caught.value.field == "$.agents.coder.tools.use[0]"
    assert log == []  # nothing was opened


def test_load_agent_uses_a_plugin_source_that_can_load_synchronously(
    host: PluginHost, notes: Path
) -> None:
    host.register(
        ServesSource(
            ToolSourceRecord(
                prefix="notes", factory=lambda ctx: FolderSource("notes", notes, loader=ctx.loader)
            )
        ),
        name="acme",
    )
    agent = load_agent(config_for(["notes/today"]), host=host)
    assert [t.identity for t in agent.registry] == ["notes/today"]


@pytest.mark.parametrize("prefix", ["mcp", "pkg"])
async def test_mcp_is_unavailable_and_pkg_finds_no_package_until_a_plugin_serves_them(
    host: PluginHost, prefix: str, tmp_path: Path, make_tool: MakeTool
) -> None:
    identity = "mcp/github/search" if prefix == "mcp" else "pkg/tools1/tools/search"
    # raw serves pkg/ itself, from the index beside the config file: there is none here.
    refused = ToolSourceUnavailable if prefix == "mcp" else ToolNotFound
    with pytest.raises(refused) as caught:
        async with open_agent(config_for([identity]), host=host):
            pass
    assert caught.value.field == "$.agents.coder.tools.use[0]"
    with pytest.raises(refused):
        load_agent(config_for([identity]), host=host)

    class Served:
        def __init__(self, context: SourceContext) -> None:
            self.tool = context.loader.load(
                make_tool("search", root=tmp_path / prefix), identity=identity
            )

        prefix = property(lambda self: prefix)

        async def open(self) -> None: ...

        async def resolve(self, identity: ToolIdentity) -> LoadedTool:
            return self.tool

        async def close(self) -> None: ...

    host.register(ServesSource(ToolSourceRecord(prefix=prefix, factory=Served)), name="remote")
    async with open_agent(config_for([identity]), host=host) as agent:
        assert [t.identity for t in agent.registry] == [identity]


async def test_a_source_that_crashes_is_unavailable_naming_its_plugin(host: PluginHost) -> None:
    class Crashes:
        def __init__(self, context: SourceContext) -> None:
            pass

        prefix = "notes"

        async def open(self) -> None:
            raise OSError("cannot start the server")

        async def resolve(self, identity: ToolIdentity) -> LoadedTool:
            raise AssertionError("not reached")

        async def close(self) -> None:
            pass

    host.register(ServesSource(ToolSourceRecord(prefix="notes", factory=Crashes)), name="acme")
    with pytest.raises(ToolSourceUnavailable, match="cannot start") as caught:
        async with open_agent(config_for(["notes/today"]), host=host):
            pass
    assert caught.value.context["plugin"] == "acme"
    assert caught.value.field == "$.agents.coder.tools.use[0]"


async def test_a_source_must_return_loaded_tools_of_the_identity(host: PluginHost) -> None:
    class Wrong:
        def __init__(self, context: SourceContext) -> None:
            pass

        prefix = "notes"

        async def open(self) -> None: ...

        async def resolve(self, identity: ToolIdentity) -> Any:
            return "a tool"

        async def close(self) -> None: ...

    host.register(ServesSource(ToolSourceRecord(prefix="notes", factory=Wrong)), name="acme")
    with pytest.raises(PluginInvalid, match="LoadedTool"):
        async with open_agent(config_for(["notes/today"]), host=host):
            pass


async def test_a_factory_must_build_a_source_of_its_prefix(host: PluginHost, notes: Path) -> None:
    host.register(
        ServesSource(
            ToolSourceRecord(
                prefix="notes", factory=lambda ctx: FolderSource("other", notes, loader=ctx.loader)
            )
        ),
        name="acme",
    )
    with pytest.raises(PluginInvalid, match="prefix is 'notes'"):
        async with open_agent(config_for(["notes/today"]), host=host):
            pass


def test_an_unknown_prefix_lists_what_is_installed(host: PluginHost, notes: Path) -> None:
    host.register(ServesSource(notes_record(notes, [])), name="acme")
    with pytest.raises(ToolNotFound, match=r"installed: notes") as caught:
        load_agent(config_for(["nothing/here"]), host=host)
    assert caught.value.field == "$.agents.coder.tools.use[0]"


# --- registration ------------------------------------------------------------------------


def test_two_sources_for_one_prefix_conflict_naming_both(host: PluginHost, notes: Path) -> None:
    host.register(ServesSource(notes_record(notes, [])), name="one")
    host.register(ServesSource(notes_record(notes, [])), name="two")
    with pytest.raises(PluginConflict, match="'one' and 'two'"):
        host.tool_sources()


@pytest.mark.parametrize("prefix", ["local", "agent"])
def test_raw_own_prefixes_cannot_be_served(host: PluginHost, notes: Path, prefix: str) -> None:
    host.register(ServesSource(notes_record(notes, [], prefix=prefix)), name="acme")
    with pytest.raises(PluginConflict, match="raw serves itself"):
        host.tool_sources()


def test_a_source_prefix_cannot_be_a_plugins_tool_folder_name(
    host: PluginHost, notes: Path, make_tool: MakeTool, tmp_path: Path
) -> None:
    host.register(ShipsFolders(make_tool("grep", root=tmp_path / "p")), name="notes")
    host.register(ServesSource(notes_record(notes, [])), name="acme")
    with pytest.raises(PluginConflict, match=r"'acme'.*'notes' ships tool folders"):
        host.tool_sources()


def test_source_records_are_typed(host: PluginHost) -> None:
    host.register(ServesSource("notes"), name="acme")
    with pytest.raises(PluginInvalid, match="ToolSourceRecord"):
        host.tool_sources()


def test_a_source_prefix_must_be_an_identity_segment(host: PluginHost, notes: Path) -> None:
    host.register(ServesSource(notes_record(notes, [], prefix="Not/OK")), name="acme")
    with pytest.raises(PluginInvalid, match="prefix"):
        host.tool_sources()


def test_a_source_may_read_only_a_section_its_plugin_claims(host: PluginHost) -> None:
    record = ToolSourceRecord(prefix="notes", factory=lambda ctx: None, section="notes")  # type: ignore[arg-type,return-value]
    host.register(ServesSource(record), name="acme")
    host.register(
        ServesSource(sections=(ConfigSection(name="notes", validate=lambda v, f: v),)),
        name="other",
    )
    with pytest.raises(PluginInvalid, match="does not claim"):
        host.tool_sources()


def test_registered_by_names_the_plugin(host: PluginHost, notes: Path) -> None:
    host.register(ServesSource(notes_record(notes, [])), name="acme")
    assert list(host.tool_sources()) == ["notes"]
    assert host.registered_by("tool_source", "notes") == "acme"
    assert host.registered_by("provider", "replay") == "raw_core"


# --- the how-to page's example ----------------------------------------------------------

HOW_TO = Path(__file__).parents[2] / "docs" / "how-to" / "write-a-tool-source.md"


def example_plugin(tmp_path: Path) -> Any:
    """The page's ``acme_notes/plugin.py``, imported from a temporary folder."""
    text = HOW_TO.read_text(encoding="utf-8")
    match = re.search(r"<!-- file: acme_notes/plugin.py -->\n```python\n(.*?)```", text, re.S)
    assert match is not None
    path = tmp_path / "acme_notes_plugin.py"
    path.write_text(match[1], encoding="utf-8")
    spec = importlib.util.spec_from_file_location("acme_notes_plugin", path)
    assert spec is not None
    assert spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


async def test_the_how_to_example_serves_notes_tools(
    host: PluginHost, tmp_path: Path, make_tool: MakeTool
) -> None:
    host.register(example_plugin(tmp_path), name="acme-notes")
    make_tool("todo", root=tmp_path / "notes-tools")
    document = {
        "notes": {"folder": str(tmp_path / "notes-tools")},
        "agents": {"coder": {"tools": {"use": ["notes/todo"]}}},
    }
    config = parse_config(json.dumps(document), host=host)
    async with open_agent(config, host=host) as agent:
        assert [t.identity for t in agent.registry] == ["notes/todo"]
    with pytest.raises(ToolNotFound, match=r"offered: todo"):
        async with open_agent(
            config_for(["notes/other"], host=host, notes=document["notes"]), host=host
        ):
            pass
    with pytest.raises(ToolSourceUnavailable, match="open_agent"):
        load_agent(config, host=host)
    with pytest.raises(ConfigInvalid) as caught:
        parse_config(json.dumps({**document, "notes": {"folder": 3}}), host=host)
    assert caught.value.field == "$.notes.folder"
