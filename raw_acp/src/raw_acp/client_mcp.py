"""The MCP servers an ACP client hands over in ``session/new``, used only on opt-in.

raw loads only the tools an agent selects, so a client's ``mcpServers`` are refused
unless the config opts in with ``"acp": {"client_mcp_servers": true}``. Then each server
joins the config's ``mcp.servers`` for that session alone (a stdio server by its
command and arguments, an HTTP server by its URL), every tool it lists is added to the
agent's ``tools.use`` as ``mcp/<server>/<tool>``, and the agent's rules apply to them
as to any tool. raw-mcp must be installed. A server that carries environment values or
headers is refused too: raw never takes a secret from the wire into a config, and a
client's values have no ``{"env": ...}`` or ``{"var": ...}`` reference to stand for them.
"""

from __future__ import annotations

import importlib.util
import re
from collections.abc import AsyncIterator, Mapping, Sequence
from contextlib import asynccontextmanager
from typing import Any

import anyio
import attrs
from acp import RequestError

from raw_core import App, Config

__all__ = ["AcpSection", "ClientServers", "client_mcp_app", "parse_acp_section"]

_NAME = re.compile(r"[a-z][a-z0-9_-]*")


@attrs.frozen(kw_only=True)
class AcpSection:
    """The config's ``acp`` key: ``client_mcp_servers`` (default false)."""

    client_mcp_servers: bool = False


def parse_acp_section(value: Any, field: str = "$.acp") -> AcpSection:
    """Check the config's ``acp`` key; ``config_invalid`` naming the field otherwise."""
    from raw_core.errors import ConfigInvalid

    if not isinstance(value, dict):
        raise ConfigInvalid("expected an object", field=field)
    for key in value:
        if key != "client_mcp_servers":
            raise ConfigInvalid(
                "unknown field (expected one of client_mcp_servers)", field=f"{field}.{key}"
            )
    flag = value.get("client_mcp_servers", False)
    if not isinstance(flag, bool):
        raise ConfigInvalid("expected true or false", field=f"{field}.client_mcp_servers")
    return AcpSection(client_mcp_servers=flag)


def _refuse(message: str, **data: Any) -> RequestError:
    return RequestError.invalid_params({"message": message, **data})


@attrs.frozen
class ClientServers:
    """The servers of one ``session/new``, checked: ``(name, command or url)``."""

    servers: tuple[tuple[str, tuple[str, ...] | str], ...] = ()

    @staticmethod
    def available() -> bool:
        """Whether raw-mcp is installed (without importing it)."""
        return importlib.util.find_spec("raw_mcp") is not None

    @classmethod
    def parse(cls, given: Sequence[Any], config: Config) -> ClientServers:
        """The client's servers, or a refusal that says why they cannot be used."""
        if not given:
            return cls()
        section = config.sections.get("acp")
        if not isinstance(section, AcpSection) or not section.client_mcp_servers:
            raise _refuse(
                "raw uses the MCP servers an ACP client passes only when its config opts in"
                ' with "acp": {"client_mcp_servers": true}; otherwise raw\'s agents select'
                " their own tools",
                field="mcpServers",
            )
        if not cls.available():
            raise _refuse(
                "the client passed MCP servers, and raw-mcp (raw's MCP client) is not installed",
                field="mcpServers",
            )
        taken = set(_configured(config))
        servers: list[tuple[str, tuple[str, ...] | str]] = []
        for index, server in enumerate(given):
            where = f"mcpServers[{index}]"
            name = re.sub(r"[^a-z0-9_-]+", "-", str(server.name).lower()).strip("-_")
            if not _NAME.fullmatch(name or "-"):
                name = f"client-{index}"
            if name in taken:
                raise _refuse(f"two MCP servers are named {name!r}", field=f"{where}.name")
            taken.add(name)
            if getattr(server, "env", None) or getattr(server, "headers", None):
                raise _refuse(
                    "raw does not take environment values or headers for an MCP server over"
                    ' ACP: give the server in raw\'s config, with {"env": NAME} references',
                    field=where,
                )
            command = getattr(server, "command", None)
            url = getattr(server, "url", None)
            if command:
                servers.append((name, (command, *server.args)))
            elif url and getattr(server, "type", "http") == "http":
                servers.append((name, url))
            else:
                raise _refuse(
                    "raw takes stdio and HTTP MCP servers (not SSE)", field=f"{where}.type"
                )
        return cls(tuple(servers))


def _configured(config: Config) -> Mapping[str, Any]:
    section = config.sections.get("mcp")
    servers = getattr(section, "servers", None)
    return servers if isinstance(servers, Mapping) else {}


def _agent_name(config: Config, agent: str | None) -> str:
    if agent is not None:
        return agent
    if config.default_agent is not None:
        return config.default_agent
    if len(config.agents) == 1:
        return next(iter(config.agents))
    raise _refuse("the config has several agents and no default_agent: start raw acp with --agent")


async def _list_tools(config: Any, group: anyio.abc.TaskGroup) -> tuple[str, ...]:
    """The names of every tool one server lists (the server is started, then stopped)."""
    from raw_mcp.connection import ServerConnection

    connection = ServerConnection(config, values={}, cwd=None, group=group)
    try:
        await connection.start()
        return tuple(connection.tools)
    finally:
        with anyio.CancelScope(shield=True):
            await connection.stop()


@asynccontextmanager
async def client_mcp_app(
    app: App, servers: ClientServers, agent: str | None
) -> AsyncIterator[tuple[App, str | None]]:
    """``(app, agent)`` to open the session with: ``app`` itself without client servers,
    else an app on a config with the servers and their tools added, sharing ``app``'s
    plug-in host and session store."""
    if not servers.servers:
        yield app, agent
        return
    from raw_mcp.config import HttpServer, McpSection, ServerConfig, StdioServer

    config = app.config
    name = _agent_name(config, agent)
    agent_config = config.agents.get(name)
    if agent_config is None:
        raise _refuse(f"the config has no agent {name!r}")
    added: dict[str, ServerConfig] = {}
    use = list(agent_config.tools.use)
    async with anyio.create_task_group() as group:
        for server_name, where in servers.servers:
            transport = (
                HttpServer(url=where) if isinstance(where, str) else StdioServer(command=where)
            )
            server = ServerConfig(name=server_name, transport=transport)
            added[server_name] = server
            for tool in await _list_tools(server, group):
                use.append(f"mcp/{server_name}/{tool}")
    section = McpSection(servers={**_configured(config), **added})
    derived = attrs.evolve(
        config,
        agents={
            **config.agents,
            name: attrs.evolve(
                agent_config, tools=attrs.evolve(agent_config.tools, use=tuple(use))
            ),
        },
        sections={**config.sections, "mcp": section},
    )
    async with App.open(derived, host=app.host, backend=await app.backend()) as derived_app:
        yield derived_app, name
