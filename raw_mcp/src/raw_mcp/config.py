"""The config's ``mcp`` key: the MCP servers raw may start, checked key by key.

::

    "mcp": {
      "servers": {
        "time": {"command": ["mcp-server-time"], "env": {"TZ": {"env": "TZ"}}},
        "search": {
          "url": "http://127.0.0.1:3001/mcp",
          "headers": {"Authorization": {"var": "SEARCH_TOKEN", "prefix": "Bearer "}},
          "timeout_ms": 30000,
          "tools": {"search": {"name": "web_search"}}
        }
      }
    }

A server is a stdio server (``command``: its argv; ``env``; ``cwd``) or a streamable-HTTP
server (``url``; ``headers``). Every value that may be a secret (``env`` and ``headers``
values) comes from an environment variable (``{"env": NAME}``) or a config variable
(``{"var": NAME}``), read only when the server starts and never shown in an error or a log.
``tools`` gives a server's tools other model-facing names and declares their panels.
Nothing here imports the MCP SDK: checking a config stays fast.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping
from pathlib import Path
from typing import Any, Final

import attrs

from raw_core.errors import ConfigInvalid, ManifestInvalid
from raw_core.tools.manifest import PanelDeclaration, parse_manifest

__all__ = [
    "DEFAULT_START_TIMEOUT_MS",
    "DEFAULT_TIMEOUT_MS",
    "MAX_TIMEOUT_MS",
    "HttpServer",
    "McpSection",
    "ServerConfig",
    "StdioServer",
    "ToolOverride",
    "ValueSource",
    "parse_mcp_section",
]

DEFAULT_TIMEOUT_MS: Final = 60_000
"""How long one call may take by default, in milliseconds."""
DEFAULT_START_TIMEOUT_MS: Final = 30_000
"""How long a server may take to start and list its tools by default."""
MAX_TIMEOUT_MS: Final = 3_600_000

_SERVER_NAME: Final = re.compile(r"[a-z][a-z0-9_-]*")
_ENV_NAME: Final = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")
_HEADER_NAME: Final = re.compile(r"[!#$%&'*+.^_`|~0-9A-Za-z-]+")
_MODEL_NAME: Final = re.compile(r"[A-Za-z_][A-Za-z0-9_-]{0,63}")
_SERVER_KEYS: Final = frozenset(
    {"command", "env", "cwd", "url", "headers", "timeout_ms", "start_timeout_ms", "tools"}
)


@attrs.frozen(kw_only=True)
class ValueSource:
    """Where a secret value comes from: ``env`` (an environment variable) or ``var`` (a
    config variable), with an optional literal ``prefix`` (``"Bearer "``)."""

    env: str | None = None
    var: str | None = None
    prefix: str = ""

    def describe(self) -> str:
        """Where the value comes from, never the value: ``env:NAME`` or ``var:NAME``."""
        return f"env:{self.env}" if self.env is not None else f"var:{self.var}"


@attrs.frozen(kw_only=True)
class StdioServer:
    """A server raw starts as a child process and talks to on its stdin and stdout."""

    command: tuple[str, ...]
    env: Mapping[str, ValueSource] = attrs.field(factory=dict)
    cwd: str | None = None


@attrs.frozen(kw_only=True)
class HttpServer:
    """A server raw reaches over streamable HTTP at ``url``."""

    url: str
    headers: Mapping[str, ValueSource] = attrs.field(factory=dict)


@attrs.frozen(kw_only=True)
class ToolOverride:
    """What the config says of one of a server's tools: another model-facing ``name``,
    and the ``panels`` it updates."""

    name: str | None = None
    panels: tuple[PanelDeclaration, ...] = ()
    panels_json: tuple[Any, ...] = ()
    """The declarations as written (what the tool's manifest carries)."""


@attrs.frozen(kw_only=True)
class ServerConfig:
    """One entry of ``mcp.servers``."""

    name: str
    transport: StdioServer | HttpServer
    timeout_ms: int = DEFAULT_TIMEOUT_MS
    start_timeout_ms: int = DEFAULT_START_TIMEOUT_MS
    tools: Mapping[str, ToolOverride] = attrs.field(factory=dict)

    def secrets(self) -> Mapping[str, ValueSource]:
        """The values read when the server starts, by the key they are for."""
        transport = self.transport
        if isinstance(transport, StdioServer):
            return {f"env.{k}": v for k, v in transport.env.items()}
        return {f"headers.{k}": v for k, v in transport.headers.items()}


@attrs.frozen(kw_only=True)
class McpSection:
    """The validated ``mcp`` key: its servers by name."""

    servers: Mapping[str, ServerConfig] = attrs.field(factory=dict)

    def variables(self) -> dict[str, str]:
        """Each config variable a server reads, with the JSON path that names it."""
        found: dict[str, str] = {}
        for server in self.servers.values():
            for key, source in server.secrets().items():
                if source.var is not None:
                    found.setdefault(source.var, f"$.mcp.servers.{server.name}.{key}.var")
        return found


class _Problems:
    """The findings of one check, each a JSON path and what was expected there."""

    def __init__(self) -> None:
        self.found: list[dict[str, str]] = []

    def add(self, path: str, message: str) -> None:
        self.found.append({"path": path, "message": message})

    def object(self, value: Any, path: str, keys: frozenset[str] | None = None) -> bool:
        """Whether ``value`` is an object (with only ``keys``, when given)."""
        if not isinstance(value, dict):
            self.add(path, f"expected an object, found {_kind(value)}")
            return False
        if keys is not None:
            for key in value:
                if key not in keys:
                    self.add(f"{path}.{key}", f"unknown field (expected one of {_listed(keys)})")
        return True


def _kind(value: Any) -> str:
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "a boolean"
    if isinstance(value, int | float):
        return "a number"
    if isinstance(value, str):
        return "a string"
    if isinstance(value, list):
        return "an array"
    return "an object"


def _listed(keys: frozenset[str]) -> str:
    return ", ".join(sorted(keys))


def _quoted(value: str) -> str:
    text = json.dumps(value, ensure_ascii=False)
    return text if len(text) <= 80 else text[:77] + "..."


def _timeout(value: Any, path: str, problems: _Problems, default: int) -> int:
    if value is None:
        return default
    if isinstance(value, bool) or not isinstance(value, int) or not 0 < value <= MAX_TIMEOUT_MS:
        problems.add(path, f"expected a whole number of milliseconds from 1 to {MAX_TIMEOUT_MS}")
        return default
    return value


def _source(value: Any, path: str, problems: _Problems) -> ValueSource | None:
    """``{"env": NAME}`` or ``{"var": NAME}`` (and an optional ``prefix``)."""
    expected = 'expected {"env": "NAME"} or {"var": "NAME"} (a value is never written here)'
    if isinstance(value, str):
        problems.add(path, f"{expected}, found a string")
        return None
    if not problems.object(value, path, frozenset({"env", "var", "prefix"})):
        return None
    if ("env" in value) == ("var" in value):
        problems.add(path, f"{expected}: exactly one of env and var")
        return None
    key = "env" if "env" in value else "var"
    name = value[key]
    if not isinstance(name, str) or not _ENV_NAME.fullmatch(name):
        problems.add(
            f"{path}.{key}", "expected a name: letters, digits and _, not starting with a digit"
        )
        return None
    prefix = value.get("prefix", "")
    if not isinstance(prefix, str):
        problems.add(f"{path}.prefix", f"expected a string, found {_kind(prefix)}")
        return None
    return ValueSource(prefix=prefix, **{key: name})


def _sources(
    value: Any, path: str, problems: _Problems, name_re: re.Pattern[str], what: str
) -> dict[str, ValueSource]:
    found: dict[str, ValueSource] = {}
    if value is None or not problems.object(value, path):
        return found
    for key, item in value.items():
        if not name_re.fullmatch(key):
            problems.add(f"{path}.{key}", f"expected {what}, found {_quoted(key)}")
            continue
        source = _source(item, f"{path}.{key}", problems)
        if source is not None:
            found[key] = source
    return found


def _command(value: Any, path: str, problems: _Problems) -> tuple[str, ...]:
    if (
        not isinstance(value, list)
        or not value
        or not all(isinstance(part, str) for part in value)
        or not value[0]
        or any("\0" in part for part in value)
    ):
        problems.add(
            path,
            'expected the server\'s argv: a non-empty array of strings, such as ["uvx",'
            ' "mcp-server-time"]',
        )
        return ()
    return tuple(value)


def _url(value: Any, path: str, problems: _Problems) -> str:
    if not isinstance(value, str) or not re.fullmatch(r"https?://[^\s/?#]+[^\s]*", value):
        problems.add(path, "expected an http:// or https:// URL")
        return ""
    return value


def _panels(value: Any, path: str, problems: _Problems) -> tuple[PanelDeclaration, ...]:
    """Panel declarations, checked by the rules of ``tool.json``'s ``panels``."""
    manifest = {
        "api_version": 2,
        "id": "mcp",
        "version": "0.0.0",
        "name": "mcp",
        "description": "panels",
        "input_schema": {"type": "object"},
        "entry": "./mcp.py",
        "panels": value,
    }
    try:
        return parse_manifest(json.dumps(manifest)).panels
    except ManifestInvalid as exc:
        inner = exc.field or "$.panels"
        problems.add(path + inner.removeprefix("$.panels"), exc.message)
        return ()


def _tools(value: Any, path: str, problems: _Problems) -> dict[str, ToolOverride]:
    found: dict[str, ToolOverride] = {}
    if value is None or not problems.object(value, path):
        return found
    renamed: dict[str, str] = {}
    for tool, entry in value.items():
        where = f"{path}.{tool}"
        if not problems.object(entry, where, frozenset({"name", "panels"})):
            continue
        name = entry.get("name")
        if name is not None and (not isinstance(name, str) or not _MODEL_NAME.fullmatch(name)):
            problems.add(
                f"{where}.name",
                "expected a model-facing name: a letter or _ first, then at most 63 letters,"
                " digits, _ or -",
            )
            name = None
        if name is not None:
            if name in renamed:
                problems.add(
                    f"{where}.name", f"{_quoted(name)} is also the name of {renamed[name]}"
                )
            renamed[name] = tool
        panels = _panels(entry["panels"], f"{where}.panels", problems) if "panels" in entry else ()
        written = tuple(entry["panels"]) if panels else ()
        found[tool] = ToolOverride(name=name, panels=panels, panels_json=written)
    return found


def _server(name: str, value: Any, path: str, problems: _Problems) -> ServerConfig | None:
    if not problems.object(value, path, _SERVER_KEYS):
        return None
    stdio, http = "command" in value, "url" in value
    if stdio == http:
        problems.add(
            path,
            'expected exactly one of "command" (a stdio server) and "url" (a streamable-HTTP'
            " server)",
        )
        return None
    transport: StdioServer | HttpServer
    if stdio:
        for key in ("url", "headers"):
            if key in value:
                problems.add(f"{path}.{key}", "a stdio server takes command, env and cwd")
        cwd = value.get("cwd")
        if cwd is not None and (not isinstance(cwd, str) or not cwd):
            problems.add(f"{path}.cwd", "expected a folder's path")
            cwd = None
        transport = StdioServer(
            command=_command(value["command"], f"{path}.command", problems),
            env=_sources(
                value.get("env"), f"{path}.env", problems, _ENV_NAME, "an environment variable"
            ),
            cwd=cwd,
        )
    else:
        for key in ("env", "cwd"):
            if key in value:
                problems.add(f"{path}.{key}", "an HTTP server takes url and headers")
        transport = HttpServer(
            url=_url(value["url"], f"{path}.url", problems),
            headers=_sources(
                value.get("headers"), f"{path}.headers", problems, _HEADER_NAME, "a header name"
            ),
        )
    return ServerConfig(
        name=name,
        transport=transport,
        timeout_ms=_timeout(
            value.get("timeout_ms"), f"{path}.timeout_ms", problems, DEFAULT_TIMEOUT_MS
        ),
        start_timeout_ms=_timeout(
            value.get("start_timeout_ms"),
            f"{path}.start_timeout_ms",
            problems,
            DEFAULT_START_TIMEOUT_MS,
        ),
        tools=_tools(value.get("tools"), f"{path}.tools", problems),
    )


def parse_mcp_section(value: Any, field: str = "$.mcp") -> McpSection:
    """Check the config's ``mcp`` key and return its servers; ``config_invalid`` listing
    every problem (each with its JSON path) otherwise. Names no value, ever."""
    problems = _Problems()
    servers: dict[str, ServerConfig] = {}
    if problems.object(value, field, frozenset({"servers"})):
        listed = value.get("servers", {})
        where = f"{field}.servers"
        if problems.object(listed, where):
            for name, entry in listed.items():
                if not _SERVER_NAME.fullmatch(name):
                    problems.add(
                        f"{where}.{name}",
                        "a server's name is its identity segment (mcp/<server>/<tool>):"
                        " lowercase letters, digits, _ and -, starting with a letter",
                    )
                    continue
                server = _server(name, entry, f"{where}.{name}", problems)
                if server is not None:
                    servers[name] = server
    if problems.found:
        first = problems.found[0]
        error = ConfigInvalid(first["message"], field=first["path"])
        error.context["problems"] = problems.found
        raise error
    return McpSection(servers=servers)


def resolve_cwd(cwd: str | None, base: Path | None) -> Path | None:
    """A server's ``cwd``: ``~`` expanded, relative to the config file's folder."""
    if cwd is None:
        return None
    path = Path(cwd).expanduser()
    if not path.is_absolute() and base is not None:
        path = base / path
    return path
