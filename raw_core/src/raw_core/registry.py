"""The registry: load the tools an agent selects, in ``tools.use`` order, and nothing else.

Each identity is resolved by its source — ``local/`` in the user's tools directory,
``agent/`` beside the config file, ``<plugin>/`` from a plug-in's registered folders —
then loaded by :class:`~raw_core.loader.ToolLoader`. ``mcp/`` and ``pkg/`` have no resolver
yet and fail with ``tool_source_unavailable``. The registry then holds what the model
receives: name, description and input schema of each selected tool, in order.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping, Sequence
from pathlib import Path
from typing import Any

import attrs

from raw_core.discovery import user_config_dir
from raw_core.errors import (
    RawError,
    ToolNameConflict,
    ToolNotFound,
    ToolSelectedTwice,
    ToolSourceUnavailable,
    ToolUnknown,
)
from raw_core.identity import ToolIdentity, parse_identity
from raw_core.loader import LoadedTool, ToolLoader
from raw_core.plugins import PluginHost

__all__ = ["Registry", "ToolDefinition", "ToolSources", "user_tools_dir"]


def user_tools_dir(environ: Mapping[str, str] | None = None) -> Path:
    """``$XDG_CONFIG_HOME/raw/tools``, or ``~/.config/raw/tools`` (spec 001, ``local/``).

    An unset, empty or relative ``XDG_CONFIG_HOME`` is ignored, as the XDG spec says.
    """
    return user_config_dir(environ) / "tools"


@attrs.frozen(kw_only=True)
class ToolDefinition:
    """What the model receives for one tool."""

    identity: str
    name: str
    description: str
    input_schema: Mapping[str, Any]

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready form: ``{identity, name, description, input_schema}``."""
        return {
            "identity": self.identity,
            "name": self.name,
            "description": self.description,
            "input_schema": self.input_schema,
        }


@attrs.frozen(kw_only=True)
class ToolSources:
    """Where identities are resolved: the user's tools dir, the config's dir, the plug-ins."""

    host: PluginHost
    local_dir: Path = attrs.field(factory=user_tools_dir)
    agent_dir: Path | None = None

    def locate(self, identity: ToolIdentity) -> tuple[Path, Path]:
        """Return ``(folder, root)`` for ``identity``: the tool folder and the directory it
        must stay inside."""
        if identity.source in ("mcp", "pkg"):
            kind = "MCP servers" if identity.source == "mcp" else "packages"
            raise ToolSourceUnavailable(
                f"{identity}: tools from {kind} are not available in this version of raw",
                tool=identity.text,
            )
        if identity.source == "local":
            return self.local_dir / identity.folder, self.local_dir
        if identity.source == "agent":
            if self.agent_dir is None:
                raise ToolNotFound(
                    f"{identity}: agent/ tools live beside a config file, and none was given",
                    tool=identity.text,
                )
            return self.agent_dir / identity.folder, self.agent_dir
        plugins = self.host.tool_folders()
        tools = plugins.get(identity.source)
        if tools is None:
            installed = ", ".join(sorted(plugins)) or "none"
            raise ToolNotFound(
                f"{identity}: no plug-in named {identity.source!r} is installed"
                f" (installed: {installed})",
                tool=identity.text,
            )
        record = tools.get(identity.folder)
        if record is None:
            offered = ", ".join(sorted(tools)) or "none"
            raise ToolNotFound(
                f"{identity}: plug-in {identity.source!r} has no tool"
                f" {identity.folder!r} (it offers: {offered})",
                tool=identity.text,
            )
        return record.path, record.path.parent


class Registry:
    """The selected tools of one agent, in ``tools.use`` order, looked up by model name."""

    def __init__(self, tools: Sequence[LoadedTool]) -> None:
        self._tools = tuple(tools)
        self._by_name = {tool.name: tool for tool in self._tools}
        self._by_identity = {tool.identity: tool for tool in self._tools}

    @classmethod
    def select(
        cls,
        use: Sequence[str],
        *,
        sources: ToolSources,
        loader: ToolLoader | None = None,
        field: str = "$.tools.use",
    ) -> Registry:
        """Load every identity of ``use``; errors carry ``field`` with the entry's index."""
        loader = loader or ToolLoader()
        tools: list[LoadedTool] = []
        seen_folders: dict[Path, str] = {}
        seen_names: dict[str, str] = {}
        for index, text in enumerate(use):
            where = f"{field}[{index}]"
            try:
                identity = parse_identity(text)
            except ValueError as exc:
                raise ToolNotFound(str(exc), field=where, tool=text) from None
            try:
                if text in (t.identity for t in tools):
                    raise ToolSelectedTwice(f"{text} is selected twice", tool=text)
                folder, root = sources.locate(identity)
                tool = loader.load(folder, identity=text, root=root)
            except RawError as exc:
                exc.context.setdefault("field", where)
                exc.context.setdefault("tool", text)
                raise
            if tool.folder in seen_folders:
                raise ToolSelectedTwice(
                    f"{text} and {seen_folders[tool.folder]} are the same folder"
                    f" ({tool.folder}); a folder can be selected once",
                    tool=text,
                    field=where,
                )
            if tool.name in seen_names:
                raise ToolNameConflict(
                    f"{text} and {seen_names[tool.name]} both have the model-facing name"
                    f" {tool.name!r}; names must be unique among the selected tools",
                    tool=text,
                    field=where,
                )
            seen_folders[tool.folder] = text
            seen_names[tool.name] = text
            tools.append(tool)
        return cls(tools)

    def __iter__(self) -> Iterator[LoadedTool]:
        return iter(self._tools)

    def __len__(self) -> int:
        return len(self._tools)

    @property
    def tools(self) -> tuple[LoadedTool, ...]:
        """The selected tools, in ``tools.use`` order."""
        return self._tools

    def by_name(self, name: str) -> LoadedTool:
        """The selected tool with model-facing ``name``; ``tool_unknown`` otherwise."""
        tool = self._by_name.get(name)
        if tool is None:
            raise ToolUnknown(f"no selected tool is named {name!r}", tool=name)
        return tool

    def by_identity(self, identity: str) -> LoadedTool:
        """The selected tool with ``identity``; ``tool_unknown`` otherwise."""
        tool = self._by_identity.get(identity)
        if tool is None:
            raise ToolUnknown(f"{identity} is not selected", tool=identity)
        return tool

    def definitions(self) -> list[ToolDefinition]:
        """What the model receives, in ``tools.use`` order."""
        return [
            ToolDefinition(
                identity=t.identity,
                name=t.name,
                description=t.description,
                input_schema=t.manifest.input_schema,
            )
            for t in self._tools
        ]
