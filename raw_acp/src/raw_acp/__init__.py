"""The ACP server of raw: ``raw acp`` serves raw's sessions over the Agent Client
Protocol on stdio, for editors (Zed) and parent agents (acpx).

The plug-in (entry point ``acp`` in the ``raw`` group, :mod:`raw_acp.plugin`) adds the
command through ``raw_register_commands`` and claims the config's ``acp`` key. The
protocol's SDK (``agent-client-protocol``, import ``acp``) is imported only when the
command starts serving. Public names are imported lazily (PEP 562).
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

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


def __getattr__(name: str) -> Any:
    module = _EXPORTS.get(name)
    if module is None:
        raise AttributeError(f"module 'raw_acp' has no attribute {name!r}")
    return getattr(importlib.import_module(module), name)


def __dir__() -> list[str]:
    return sorted(__all__)
