"""The ``builtin`` plug-in: the only module of this distribution with hook implementations."""

from __future__ import annotations

from raw_builtin_tools import TOOLS_DIR
from raw_core import ToolFolder, hookimpl


@hookimpl
def raw_register_tools() -> list[ToolFolder]:
    """Every folder under ``tools/`` that holds a ``tool.json``."""
    return [
        ToolFolder(path=folder)
        for folder in sorted(TOOLS_DIR.iterdir())
        if (folder / "tool.json").is_file()
    ]
