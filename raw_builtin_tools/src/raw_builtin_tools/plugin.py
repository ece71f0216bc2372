"""The ``builtin`` plug-in: the only module of this distribution with hook implementations.

Importing it imports no more of raw than the hook marker: :class:`raw_core.ToolFolder`
(with the tool loader behind it) is imported when the tools are first asked for, so
loading the plug-ins for ``raw --help`` does not pay for it.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from raw_builtin_tools import TOOLS_DIR
from raw_core import hookimpl

if TYPE_CHECKING:
    from raw_core import ToolFolder


@hookimpl
def raw_register_tools() -> list[ToolFolder]:
    """Every folder under ``tools/`` that holds a ``tool.json``."""
    from raw_core import ToolFolder

    return [
        ToolFolder(path=folder)
        for folder in sorted(TOOLS_DIR.iterdir())
        if (folder / "tool.json").is_file()
    ]
