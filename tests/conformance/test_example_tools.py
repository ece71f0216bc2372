"""Spec 001, "Write a local tool" and the built-in list: ``project_note`` is the contract's
example of a local tool, shipped under ``examples/tools/`` and loaded from there as
``local/project_note``; the ``builtin`` plug-in ships only the built-ins the docs list."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
from click.testing import CliRunner

from raw_builtin_tools import TOOLS_DIR
from raw_core.agent import load_agent
from raw_core.cli import cli
from raw_core.config import load_config
from raw_core.dispatch import Dispatcher
from raw_core.errors import ToolNotFound
from raw_core.plugins import PluginHost
from raw_core.tools.calls import ToolCall

REPO = Path(__file__).parents[2]
EXAMPLE_TOOLS = REPO / "examples" / "tools"
BUILTINS_PAGE = REPO / "docs" / "tools" / "index.md"


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


def write_config(folder: Path, use: list[str]) -> Path:
    path = folder / "raw.json"
    path.write_text(json.dumps({"agents": {"a": {"tools": {"use": use}}}}), encoding="utf-8")
    return path


def test_the_example_passes_raw_tools_check() -> None:
    folder = EXAMPLE_TOOLS / "project_note"
    result = CliRunner().invoke(cli, ["tools", "check", str(folder)], catch_exceptions=False)
    assert result.exit_code == 0, result.output
    assert "project_note 1.0.0" in result.output


@pytest.mark.anyio
async def test_the_example_loads_as_a_local_tool_and_runs(tmp_path: Path) -> None:
    work = tmp_path / "work"
    work.mkdir()
    (work / "a.txt").write_text("a", encoding="utf-8")
    (work / "b.txt").write_text("b", encoding="utf-8")
    host = PluginHost()
    host.load_entry_points()
    config = load_config(write_config(tmp_path, ["local/project_note", "builtin/read_file"]))
    agent = load_agent(config, host=host, local_dir=EXAMPLE_TOOLS)
    tool = agent.registry.by_identity("local/project_note")
    assert tool.folder == (EXAMPLE_TOOLS / "project_note").resolve()
    dispatcher = Dispatcher(agent.registry, agent.policy, cwd=work)
    result = await dispatcher.dispatch(ToolCall(id="c1", name="project_note", arguments="{}"))
    assert result.status == "ok"
    assert result.text() == f"Project directory: {work} (2 entries)"


def test_project_note_is_not_a_builtin(tmp_path: Path) -> None:
    host = PluginHost()
    host.load_entry_points()
    assert "project_note" not in host.tool_folders()["builtin"]
    with pytest.raises(ToolNotFound) as caught:
        load_agent(load_config(write_config(tmp_path, ["builtin/project_note"])), host=host)
    assert caught.value.code == "tool_not_found"


def test_the_docs_list_the_builtins_that_are_shipped() -> None:
    rows = re.findall(
        r"^\| `builtin/(\w+)` \|[^|]*\| (yes|not yet) \|", BUILTINS_PAGE.read_text("utf-8"), re.M
    )
    assert len(rows) == 11
    shipped = sorted(name for name, status in rows if status == "yes")
    assert shipped == sorted(p.name for p in TOOLS_DIR.iterdir() if (p / "tool.json").is_file())
