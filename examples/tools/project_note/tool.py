"""project_note: an example local tool that describes the session's working directory.

It is the tool contract's example of a local tool, not a built-in: copy this folder into
``~/.config/raw/tools/`` and select it as ``local/project_note``.
"""

from __future__ import annotations

import os
from typing import Any


def handler(args: dict[str, Any], context: Any) -> dict[str, Any]:
    """Name the project directory and count its entries."""
    cwd = str(getattr(context, "cwd", None) or os.getcwd())
    entries = len(os.listdir(cwd))
    return {"content": [{"type": "text", "text": f"Project directory: {cwd} ({entries} entries)"}]}
