"""The registry: the tools an agent selects, in ``tools.use`` order, and nothing else.

Each identity is resolved by the tool source of its prefix (:mod:`raw_core.tools.sources`);
:class:`ToolSelection` applies the selection rules while that happens — an identity
selected twice, one folder selected under two identities, two tools with one model-facing
name — the same way for the synchronous :meth:`Registry.select` and the asynchronous
:meth:`Registry.aselect`. The registry then holds what the model receives: name,
description and input schema of each selected tool, in order.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Awaitable, Callable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import attrs

from raw_core.config.discovery import user_config_dir
from raw_core.errors import (
    RawError,
    ToolNameConflict,
    ToolNotFound,
    ToolSelectedTwice,
    ToolUnknown,
)
from raw_core.tools.identity import ToolIdentity, parse_identity
from raw_core.tools.loader import LoadedTool

__all__ = ["Registry", "ToolDefinition", "ToolSelection", "user_tools_dir"]


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

    def definition_hash(self) -> str:
        """The SHA-256 (hex) of what the model is shown: name, description and input
        schema, as canonical JSON. ``raw tools list`` shows it for MCP tools, whose
        definitions come from a server and may change under the user."""
        shown = {
            "name": self.name,
            "description": self.description,
            "input_schema": self.input_schema,
        }
        text = json.dumps(shown, sort_keys=True, separators=(",", ":"), ensure_ascii=False)
        return hashlib.sha256(text.encode("utf-8", "surrogatepass")).hexdigest()

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready form: ``{identity, name, description, input_schema}``."""
        return {
            "identity": self.identity,
            "name": self.name,
            "description": self.description,
            "input_schema": self.input_schema,
        }


class ToolSelection:
    """The selection rules, checked while the identities of ``tools.use`` are resolved.

    For each entry: :meth:`identity` parses it (and refuses one selected twice),
    :meth:`at` gives errors raised while resolving it the entry's ``field`` and ``tool``,
    and :meth:`add` checks the loaded tool against those before it (same folder, same
    model-facing name). :meth:`registry` then holds the tools in order.
    """

    def __init__(self, *, field: str = "$.tools.use") -> None:
        self._field = field
        self._tools: list[LoadedTool] = []
        self._texts: set[str] = set()
        self._folders: dict[Path, str] = {}
        self._names: dict[str, str] = {}

    def where(self, index: int) -> str:
        """The JSON path of entry ``index`` (``$.agents.coder.tools.use[2]``)."""
        return f"{self._field}[{index}]"

    def identity(self, index: int, text: str) -> ToolIdentity:
        """Parse entry ``index``; ``tool_not_found`` for a malformed identity and
        ``tool_selected_twice`` for one already selected, both with ``field``."""
        try:
            identity = parse_identity(text)
        except ValueError as exc:
            raise ToolNotFound(str(exc), field=self.where(index), tool=text) from None
        if text in self._texts:
            raise ToolSelectedTwice(f"{text} is selected twice", tool=text, field=self.where(index))
        self._texts.add(text)
        return identity

    @contextmanager
    def at(self, index: int, text: str) -> Iterator[None]:
        """Errors raised in the block get entry ``index``'s ``field`` and ``tool``."""
        try:
            yield
        except RawError as exc:
            exc.context.setdefault("field", self.where(index))
            exc.context.setdefault("tool", text)
            raise

    def add(self, index: int, tool: LoadedTool) -> None:
        """Add the resolved tool of entry ``index``, after the folder and name checks."""
        where, text = self.where(index), tool.identity
        if tool.folder in self._folders:
            raise ToolSelectedTwice(
                f"{text} and {self._folders[tool.folder]} are the same folder"
                f" ({tool.folder}); a folder can be selected once",
                tool=text,
                field=where,
            )
        if tool.name in self._names:
            raise ToolNameConflict(
                f"{text} and {self._names[tool.name]} both have the model-facing name"
                f" {tool.name!r}; names must be unique among the selected tools",
                tool=text,
                field=where,
            )
        self._folders[tool.folder] = text
        self._names[tool.name] = text
        self._tools.append(tool)

    def registry(self) -> Registry:
        """The registry of the tools added so far, in order."""
        return Registry(self._tools)


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
        load: Callable[[ToolIdentity], LoadedTool],
        field: str = "$.tools.use",
    ) -> Registry:
        """Load every identity of ``use`` with ``load`` (a source's synchronous path);
        errors carry ``field`` with the entry's index."""
        selection = ToolSelection(field=field)
        for index, text in enumerate(use):
            identity = selection.identity(index, text)
            with selection.at(index, text):
                tool = load(identity)
            selection.add(index, tool)
        return selection.registry()

    @classmethod
    async def aselect(
        cls,
        use: Sequence[str],
        *,
        resolve: Callable[[ToolIdentity], Awaitable[LoadedTool]],
        field: str = "$.tools.use",
    ) -> Registry:
        """:meth:`select`, resolving each identity with the awaitable ``resolve``."""
        selection = ToolSelection(field=field)
        for index, text in enumerate(use):
            identity = selection.identity(index, text)
            with selection.at(index, text):
                tool = await resolve(identity)
            selection.add(index, tool)
        return selection.registry()

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
