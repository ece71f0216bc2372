"""Tool identities: the strings in ``tools.use`` and rule globs (``builtin/bash``...).

The first segment names the source (:mod:`raw_core.tools.sources`): ``local``, ``agent``, ``mcp``
and ``pkg`` are reserved — raw serves ``local/`` and ``agent/`` itself, and only a tool
source a plug-in registers may serve ``mcp/`` and ``pkg/``. Any other first segment is the
entry-point name of a plug-in in the ``raw`` group that ships tool folders (``builtin`` is
raw_builtin_tools), or a prefix a plug-in's tool source serves.
"""

from __future__ import annotations

import re
from typing import Final

import attrs

from raw_core._names import RESERVED_SOURCES
from raw_core._names import SEGMENT_RE as SEGMENT_RE

__all__ = ["RESERVED_SOURCES", "ToolIdentity", "parse_identity"]

_MCP_TOOL_RE: Final = re.compile(r"[A-Za-z0-9_][A-Za-z0-9_.-]*")


@attrs.frozen(kw_only=True)
class ToolIdentity:
    """A parsed identity: ``source`` (its first segment) and the rest of its segments."""

    text: str
    source: str
    parts: tuple[str, ...]

    @property
    def folder(self) -> str:
        """The folder or tool name for two-segment identities (``local/<folder>``...)."""
        return self.parts[0]

    def __str__(self) -> str:
        return self.text


_FORMS: Final = (
    "builtin/<name>, local/<folder>, agent/<folder>, <plugin>/<tool>, mcp/<server>/<tool>"
    " or pkg/<alias>/tools/<export>"
)


def parse_identity(text: str) -> ToolIdentity:
    """Parse a tool identity; raise ``ValueError`` saying which forms are accepted."""
    segments = text.split("/")
    source = segments[0]
    rest = tuple(segments[1:])
    if source == "mcp":
        if len(rest) == 2 and SEGMENT_RE.fullmatch(rest[0]) and _MCP_TOOL_RE.fullmatch(rest[1]):
            return ToolIdentity(text=text, source=source, parts=rest)
    elif source == "pkg":
        if (
            len(rest) == 3
            and rest[1] == "tools"
            and SEGMENT_RE.fullmatch(rest[0])
            and SEGMENT_RE.fullmatch(rest[2])
        ):
            return ToolIdentity(text=text, source=source, parts=(rest[0], rest[2]))
    elif SEGMENT_RE.fullmatch(source) and len(rest) == 1 and SEGMENT_RE.fullmatch(rest[0]):
        return ToolIdentity(text=text, source=source, parts=rest)
    raise ValueError(f"expected a tool identity ({_FORMS}), found {text!r}")
