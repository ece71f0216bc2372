"""The ``mcp-client`` plug-in: the config's ``mcp`` key and the ``mcp/`` tool source.

Registering imports nothing heavy: the MCP SDK (seconds to import) is imported when a
session first starts a server, so a config without ``mcp/`` tools never pays for it; and
raw's config records and tool sources are imported when the plug-ins' records are first
asked for, so loading the plug-ins for ``raw --help`` does not pay for them either.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from raw_core import hookimpl

if TYPE_CHECKING:
    from raw_core import ConfigSection, ToolSourceRecord

__all__ = ["raw_register_config_sections", "raw_register_tool_sources"]


def _validate(value: Any, field: str) -> Any:
    from raw_mcp.config import parse_mcp_section

    return parse_mcp_section(value, field)


def _source(context: Any) -> Any:
    from raw_mcp.source import McpSource

    return McpSource(context)


@hookimpl
def raw_register_config_sections() -> list[ConfigSection]:
    """The ``mcp`` key (``mcp.servers``)."""
    from raw_core import ConfigSection

    return [ConfigSection(name="mcp", validate=_validate)]


@hookimpl
def raw_register_tool_sources() -> list[ToolSourceRecord]:
    """``mcp/<server>/<tool>``, fed the validated ``mcp`` key."""
    from raw_core import ToolSourceRecord

    return [ToolSourceRecord(prefix="mcp", factory=_source, section="mcp")]
