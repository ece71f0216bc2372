"""The MCP client of raw: tools from MCP servers as ``mcp/<server>/<tool>``.

The plug-in (entry point ``mcp-client`` in the ``raw`` group, :mod:`raw_mcp.plugin`)
claims the config's ``mcp`` key (:func:`~raw_mcp.config.parse_mcp_section`) and serves the
``mcp/`` prefix (:class:`~raw_mcp.source.McpSource`). The official MCP SDK is imported
only when a server starts. Public names are imported lazily (PEP 562).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from raw_core import lazy_exports

if TYPE_CHECKING:
    from raw_mcp.config import McpSection, ServerConfig, parse_mcp_section
    from raw_mcp.content import PANEL_META, result_content
    from raw_mcp.names import model_name
    from raw_mcp.source import McpSource, definition_digest

__all__ = [
    "PANEL_META",
    "McpSection",
    "McpSource",
    "ServerConfig",
    "definition_digest",
    "model_name",
    "parse_mcp_section",
    "result_content",
]

_EXPORTS: dict[str, str] = {
    "McpSection": "raw_mcp.config",
    "ServerConfig": "raw_mcp.config",
    "parse_mcp_section": "raw_mcp.config",
    "PANEL_META": "raw_mcp.content",
    "result_content": "raw_mcp.content",
    "model_name": "raw_mcp.names",
    "McpSource": "raw_mcp.source",
    "definition_digest": "raw_mcp.source",
}


# Hidden from the type checker, which would otherwise take any name as existing here: the
# imports above give every public name its real type, and a misspelt one stays an error.
if not TYPE_CHECKING:
    __getattr__, __dir__ = lazy_exports(globals(), _EXPORTS)
