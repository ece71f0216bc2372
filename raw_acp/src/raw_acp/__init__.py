"""The ACP server of raw: ``raw acp`` serves raw's sessions over the Agent Client
Protocol on stdio, for editors (Zed) and parent agents (acpx).

The plug-in (entry point ``acp`` in the ``raw`` group, :mod:`raw_acp.plugin`) adds the
command through ``raw_register_commands`` and claims the config's ``acp`` key. The
protocol's SDK (``agent-client-protocol``, import ``acp``) is imported only when the
command starts serving. Public names are imported lazily (PEP 562).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from raw_core import lazy_exports

if TYPE_CHECKING:
    from raw_acp.client_mcp import AcpSection, parse_acp_section
    from raw_acp.command import serve
    from raw_acp.frontend import AcpFrontEnd
    from raw_acp.server import RawAgent

__version__ = "0.1.0"

__all__ = [
    "AcpFrontEnd",
    "AcpSection",
    "RawAgent",
    "__version__",
    "parse_acp_section",
    "serve",
]

_EXPORTS: dict[str, str] = {
    "AcpFrontEnd": "raw_acp.frontend",
    "AcpSection": "raw_acp.client_mcp",
    "parse_acp_section": "raw_acp.client_mcp",
    "serve": "raw_acp.command",
    "RawAgent": "raw_acp.server",
}


# Hidden from the type checker, which would otherwise take any name as existing here: the
# imports above give every public name its real type, and a misspelt one stays an error.
if not TYPE_CHECKING:
    __getattr__, __dir__ = lazy_exports(globals(), _EXPORTS)
