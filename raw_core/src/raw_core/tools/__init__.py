"""Tools: identities, manifests, loading a tool folder, tool sources, the registry of an
agent's tools, and results.

Public names are imported lazily (PEP 562): importing the package imports none of
its modules, so a module of it can be imported without the others.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from raw_core._lazy import lazy_exports

if TYPE_CHECKING:
    from raw_core.tools.identity import (
        RESERVED_SOURCES,
        ToolIdentity,
        parse_identity,
    )
    from raw_core.tools.loader import (
        MANIFEST_FILE,
        LoadedTool,
        ToolLoader,
        define_tool,
    )
    from raw_core.tools.manifest import (
        KNOWN_PANEL_ICONS,
        MAX_PANELS,
        ConditionSource,
        PanelAction,
        PanelDeclaration,
        PanelIconWarning,
        ToolManifest,
        parse_manifest,
    )
    from raw_core.tools.progress import BatchProgress
    from raw_core.tools.registry import (
        Registry,
        ToolDefinition,
        ToolSelection,
        user_tools_dir,
    )
    from raw_core.tools.resources import SessionResources
    from raw_core.tools.results import (
        DEFAULT_MAX_OUTPUT_BYTES,
        IMAGE_MIME_TYPES,
        BatchEntry,
        BatchResult,
        ToolResult,
        cap_blocks,
        normalize_content,
    )
    from raw_core.tools.sources import (
        CLOSE_TIMEOUT,
        FolderSource,
        PluginFolderSource,
        SessionSources,
        SourceContext,
        SyncToolSource,
        ToolSource,
        ToolSourceRecord,
    )

_EXPORTS: dict[str, str] = {
    "BatchEntry": "raw_core.tools.results",
    "BatchProgress": "raw_core.tools.progress",
    "BatchResult": "raw_core.tools.results",
    "CLOSE_TIMEOUT": "raw_core.tools.sources",
    "ConditionSource": "raw_core.tools.manifest",
    "DEFAULT_MAX_OUTPUT_BYTES": "raw_core.tools.results",
    "FolderSource": "raw_core.tools.sources",
    "IMAGE_MIME_TYPES": "raw_core.tools.results",
    "KNOWN_PANEL_ICONS": "raw_core.tools.manifest",
    "LoadedTool": "raw_core.tools.loader",
    "MANIFEST_FILE": "raw_core.tools.loader",
    "MAX_PANELS": "raw_core.tools.manifest",
    "PanelAction": "raw_core.tools.manifest",
    "PanelDeclaration": "raw_core.tools.manifest",
    "PanelIconWarning": "raw_core.tools.manifest",
    "PluginFolderSource": "raw_core.tools.sources",
    "RESERVED_SOURCES": "raw_core.tools.identity",
    "Registry": "raw_core.tools.registry",
    "SessionResources": "raw_core.tools.resources",
    "SessionSources": "raw_core.tools.sources",
    "SourceContext": "raw_core.tools.sources",
    "SyncToolSource": "raw_core.tools.sources",
    "ToolDefinition": "raw_core.tools.registry",
    "ToolIdentity": "raw_core.tools.identity",
    "ToolLoader": "raw_core.tools.loader",
    "ToolManifest": "raw_core.tools.manifest",
    "ToolResult": "raw_core.tools.results",
    "ToolSelection": "raw_core.tools.registry",
    "ToolSource": "raw_core.tools.sources",
    "ToolSourceRecord": "raw_core.tools.sources",
    "cap_blocks": "raw_core.tools.results",
    "define_tool": "raw_core.tools.loader",
    "normalize_content": "raw_core.tools.results",
    "parse_identity": "raw_core.tools.identity",
    "parse_manifest": "raw_core.tools.manifest",
    "user_tools_dir": "raw_core.tools.registry",
}


# Hidden from the type checker, which would otherwise take any name as existing here: the
# imports above give every public name its real type, and a misspelt one stays an error.
if not TYPE_CHECKING:
    __getattr__, __dir__ = lazy_exports(globals(), _EXPORTS)


__all__ = [
    "CLOSE_TIMEOUT",
    "DEFAULT_MAX_OUTPUT_BYTES",
    "IMAGE_MIME_TYPES",
    "KNOWN_PANEL_ICONS",
    "MANIFEST_FILE",
    "MAX_PANELS",
    "RESERVED_SOURCES",
    "BatchEntry",
    "BatchProgress",
    "BatchResult",
    "ConditionSource",
    "FolderSource",
    "LoadedTool",
    "PanelAction",
    "PanelDeclaration",
    "PanelIconWarning",
    "PluginFolderSource",
    "Registry",
    "SessionResources",
    "SessionSources",
    "SourceContext",
    "SyncToolSource",
    "ToolDefinition",
    "ToolIdentity",
    "ToolLoader",
    "ToolManifest",
    "ToolResult",
    "ToolSelection",
    "ToolSource",
    "ToolSourceRecord",
    "cap_blocks",
    "define_tool",
    "normalize_content",
    "parse_identity",
    "parse_manifest",
    "user_tools_dir",
]
