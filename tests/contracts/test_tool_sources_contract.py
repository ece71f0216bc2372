"""raw's own tool sources pass the tool source contract (tool_source_contract.py):
``local/`` and ``agent/`` folders, and the folders a plug-in registers."""

from __future__ import annotations

from pathlib import Path

import pytest

from raw_core.plugins import ToolFolder
from raw_core.tools.loader import ToolLoader
from raw_core.tools.sources import FolderSource, PluginFolderSource
from tests.conftest import MakeTool
from tests.contracts.tool_source_contract import ToolSourceCase, ToolSourceContract


class TestLocalFolderSource(ToolSourceContract):
    @pytest.fixture
    def tool_source_case(self, tmp_path: Path, make_tool: MakeTool) -> ToolSourceCase:
        root = tmp_path / "local"
        make_tool("notes", root=root)
        loader = ToolLoader()
        return ToolSourceCase(
            make_source=lambda: FolderSource("local", root, loader=loader),
            known="local/notes",
            unknown="local/missing",
        )


class TestAgentFolderSource(ToolSourceContract):
    @pytest.fixture
    def tool_source_case(self, tmp_path: Path, make_tool: MakeTool) -> ToolSourceCase:
        root = tmp_path / "project" / "tools"
        make_tool("helper", root=root)
        return ToolSourceCase(
            make_source=lambda: FolderSource("agent", root, loader=ToolLoader()),
            known="agent/helper",
            unknown="agent/missing",
        )


class TestPluginFolderSource(ToolSourceContract):
    @pytest.fixture
    def tool_source_case(self, tmp_path: Path, make_tool: MakeTool) -> ToolSourceCase:
        grep = make_tool("grep", root=tmp_path / "acme" / "tools")
        tools = {"grep": ToolFolder(path=grep)}
        return ToolSourceCase(
            make_source=lambda: PluginFolderSource("acme", tools, loader=ToolLoader()),
            known="acme/grep",
            unknown="acme/missing",
        )
