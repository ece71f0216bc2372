"""The mcp/ source passes the tool source contract (tests/contracts/tool_source_contract.py)
against the test server; the session's task group comes from an async fixture, as
open_agent gives it."""

from __future__ import annotations

from collections.abc import AsyncIterator
from pathlib import Path

import anyio
import anyio.abc
import pytest

from raw_core import PluginHost
from raw_core.tools.loader import ToolLoader
from raw_core.tools.sources import SourceContext
from raw_mcp.source import McpSource
from tests.contracts.tool_source_contract import ToolSourceCase, ToolSourceContract
from tests.raw_mcp.conftest import make_config, server_entry


@pytest.fixture
async def tasks() -> AsyncIterator[anyio.abc.TaskGroup]:
    async with anyio.create_task_group() as group:
        yield group
        group.cancel_scope.cancel()


class TestMcpSource(ToolSourceContract):
    @pytest.fixture
    def tool_source_case(
        self, mcp_host: PluginHost, marks: Path, tasks: anyio.abc.TaskGroup
    ) -> ToolSourceCase:
        config = make_config(mcp_host, {"t": server_entry(marks)}, ["mcp/t/echo"])

        def make_source() -> McpSource:
            context = SourceContext(
                config=config,
                host=mcp_host,
                loader=ToolLoader(),
                plugin="mcp-client",
                section=config.sections["mcp"],
                tasks=tasks,
            )
            return McpSource(context)

        return ToolSourceCase(
            make_source=make_source, known="mcp/t/echo", unknown="mcp/t/no_such_tool"
        )
