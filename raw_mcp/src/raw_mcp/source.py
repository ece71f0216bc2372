"""The ``mcp/`` tool source: ``mcp/<server>/<tool>`` from the servers in ``mcp.servers``.

One source per session. It starts a server only when the session resolves one of its
tools (so only the servers the agent's ``tools.use`` names ever start), reads its whole
tool list once, and hands out only the tools asked for, each checked as a ``tool.json``
is: its input schema compiled by raw (calls are validated before anything is sent), its
model-facing name made by :func:`raw_mcp.names.model_name` (or the config's rename), and
``condition_sources: ["arguments"]`` so that ``when`` rules on its arguments bind to that
schema. :meth:`McpSource.close` stops every server it started, with its process group.

A tool whose definition changes on the server while the session runs (the server
announced a new tool list, or came back from a restart with another one) is refused with
``mcp_tool_changed`` until the session starts again: the model was shown the old one.
"""

from __future__ import annotations

import hashlib
import json
import os
from collections.abc import Mapping
from pathlib import Path
from typing import Any, Final

import anyio
import anyio.abc

from raw_core.agent.variables import VarService
from raw_core.errors import (
    McpServerFailed,
    McpToolChanged,
    RawError,
    ToolNotFound,
    ToolSourceUnavailable,
)
from raw_core.frozen import thaw
from raw_core.tools.identity import ToolIdentity
from raw_core.tools.loader import LoadedTool, define_tool
from raw_core.tools.sources import SourceContext
from raw_mcp.config import McpSection, ServerConfig, resolve_cwd
from raw_mcp.connection import ServerConnection
from raw_mcp.content import result_content
from raw_mcp.names import model_name

__all__ = ["McpSource", "definition_digest"]

_VERSION_OK: Final = frozenset("0123456789.")


def definition_digest(tool: Mapping[str, Any]) -> str:
    """A short hash of what the model is shown of an MCP tool: its name, description and
    input schema (as the server lists them)."""
    shown = {k: tool.get(k) for k in ("name", "description", "inputSchema")}
    text = json.dumps(shown, sort_keys=True, separators=(",", ":"), ensure_ascii=False)
    return hashlib.sha256(text.encode("utf-8")).hexdigest()[:16]


class _McpTool:
    """The handler of one selected MCP tool: checks the definition still is the one the
    session loaded, calls the server, maps its result to raw's blocks."""

    def __init__(self, connection: ServerConnection, identity: str, tool: Mapping[str, Any]):
        self._connection = connection
        self._identity = identity
        self._name: str = tool["name"]
        self._digest = definition_digest(tool)

    def _check(self, tools: Mapping[str, Mapping[str, Any]]) -> None:
        current = tools.get(self._name)
        if current is None or definition_digest(current) != self._digest:
            what = "no longer lists it" if current is None else "changed its definition"
            raise McpToolChanged(
                f"{self._identity}: the server {what} since this session loaded it; the"
                " call was not sent. Start the session again to load the current definition",
                tool=self._identity,
            )

    async def handler(self, args: Any, context: Any) -> dict[str, Any]:
        result = await self._connection.call(self._name, thaw(args), check=self._check)
        return result_content(result)


class McpSource:
    """``mcp/<server>/<tool>`` for one session (see the module's docstring).

    Built from a :class:`~raw_core.tools.sources.SourceContext` whose ``section`` is the
    validated ``mcp`` key (a :class:`~raw_mcp.config.McpSection`, or None when the config
    has none).
    """

    def __init__(self, context: SourceContext) -> None:
        section = context.section
        self._section: McpSection = section if isinstance(section, McpSection) else McpSection()
        self._base = context.config.directory
        self._vars = VarService(context.config.vars, (), base_dir=self._base)
        self._tasks = context.tasks
        self._group: anyio.abc.TaskGroup | None = None
        self._connections: dict[str, ServerConnection] = {}
        self._tools: dict[str, LoadedTool] = {}
        self._lock = anyio.Lock()

    @property
    def prefix(self) -> str:
        """``mcp``."""
        return "mcp"

    async def open(self) -> None:
        """Check that the session gives the servers' connections a task group to run in
        (no server starts here: each starts when one of its tools is resolved)."""
        if self._tasks is None:
            raise ToolSourceUnavailable(
                "mcp/: MCP servers run only in an opened agent (open_agent or the app),"
                " not through load_agent",
                source="mcp",
            )
        self._group = self._tasks

    async def resolve(self, identity: ToolIdentity) -> LoadedTool:
        """The tool ``identity`` names, its server started first (once per session)."""
        known = self._tools.get(identity.text)
        if known is not None:
            return known
        server_name, tool_name = identity.parts
        config = self._section.servers.get(server_name)
        if config is None:
            configured = ", ".join(sorted(self._section.servers)) or "none"
            raise ToolNotFound(
                f"{identity}: no MCP server named {server_name!r} in mcp.servers"
                f" (configured: {configured})",
                tool=identity.text,
            )
        connection = await self._connection(config)
        listed = connection.tools.get(tool_name)
        if listed is None:
            offered = ", ".join(connection.tools) or "none"
            raise ToolNotFound(
                f"{identity}: MCP server {server_name!r} has no tool {tool_name!r}"
                f" (it has: {offered})",
                tool=identity.text,
                server=server_name,
            )
        tool = self._define(identity, config, connection, listed)
        self._tools[identity.text] = tool
        return tool

    def connection(self, server: str) -> ServerConnection | None:
        """The session's connection to ``server``, once one of its tools was resolved."""
        return self._connections.get(server)

    async def _connection(self, config: ServerConfig) -> ServerConnection:
        async with self._lock:
            connection = self._connections.get(config.name)
            if connection is not None:
                return connection
            if self._group is None:
                raise McpServerFailed(
                    f"MCP server {config.name!r}: the mcp/ source was not opened",
                    server=config.name,
                )
            connection = ServerConnection(
                config,
                values=self._values(config),
                cwd=self._cwd(config),
                group=self._group,
            )
            self._connections[config.name] = connection  # stopped by close even if start fails
            await connection.start()
            return connection

    def _values(self, config: ServerConfig) -> dict[str, str]:
        """The server's secret values, read now; an error names where a value comes from,
        never the value."""
        values: dict[str, str] = {}
        for key, source in config.secrets().items():
            where = f"$.mcp.servers.{config.name}.{key}"
            if source.env is not None:
                value = os.environ.get(source.env)
                if value is None:
                    raise McpServerFailed(
                        f"MCP server {config.name!r}: {key} comes from the environment"
                        f" variable {source.env}, which is not set",
                        server=config.name,
                        field=where,
                    )
            else:
                assert source.var is not None
                try:
                    value = self._vars.read_defined(source.var)
                except RawError as exc:
                    raise McpServerFailed(
                        f"MCP server {config.name!r}: {key} comes from the variable"
                        f" {source.var!r}: {exc.message}",
                        server=config.name,
                        field=where,
                    ) from None
            values[key] = source.prefix + value
        return values

    def _cwd(self, config: ServerConfig) -> Path | None:
        cwd = getattr(config.transport, "cwd", None)
        path = resolve_cwd(cwd, self._base)
        if path is not None and not path.is_dir():
            raise McpServerFailed(
                f"MCP server {config.name!r}: its cwd {str(path)!r} is not a folder",
                server=config.name,
                field=f"$.mcp.servers.{config.name}.cwd",
            )
        return path

    def _define(
        self,
        identity: ToolIdentity,
        config: ServerConfig,
        connection: ServerConnection,
        listed: Mapping[str, Any],
    ) -> LoadedTool:
        mcp_name: str = listed["name"]
        override = config.tools.get(mcp_name)
        name = override.name if override is not None and override.name else model_name(mcp_name)
        description = listed.get("description")
        if not isinstance(description, str) or not description.strip():
            title = listed.get("title")
            description = (
                title
                if isinstance(title, str) and title.strip()
                else f"The {mcp_name} tool of the MCP server {config.name}."
            )
        version = connection.server_version
        parts = version.split(".")
        if len(parts) != 3 or not all(p.isdigit() and (p == "0" or p[0] != "0") for p in parts):
            version = "0.0.0"
        definition: dict[str, Any] = {
            "api_version": 2,
            "id": config.name,
            "version": version,
            "name": name,
            "description": description,
            "input_schema": listed.get("inputSchema", {"type": "object"}),
            "condition_sources": ["arguments"],
        }
        if override is not None and override.panels:
            definition["panels"] = list(override.panels_json)
        handler = _McpTool(connection, identity.text, listed).handler
        return define_tool(
            definition,
            identity=identity.text,
            handler=handler,
            origin=Path(f"mcp://{config.name}/{mcp_name}"),
        )

    async def close(self) -> None:
        """Stop every server this source started (each with its process group)."""
        connections, self._connections = list(self._connections.values()), {}
        self._tools = {}
        self._group = None
        with anyio.CancelScope(shield=True):
            async with anyio.create_task_group() as stopping:  # all at once: each may wait
                for connection in connections:
                    stopping.start_soon(connection.stop)
