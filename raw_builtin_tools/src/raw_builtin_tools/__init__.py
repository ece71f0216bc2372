"""The builtin/ tools of raw, registered as the plug-in named ``builtin``.

Each tool is a folder (``tool.json`` + ``tool.py``) under ``tools/``, so it can be copied
out and edited as a local tool.
"""

from pathlib import Path

TOOLS_DIR = Path(__file__).parent / "tools"

__all__ = ["TOOLS_DIR"]
