"""The builtin/ tools of raw, registered as the plug-in named ``builtin``.

Each tool is a folder (``tool.json`` + ``tool.py``) under ``tools/``, so it can be copied
out and edited as a local tool. A tool imports only names from ``raw_core`` itself and from
:mod:`raw_builtin_tools.toolkit`, the public helpers the tools share, so a copy keeps
working when this distribution is upgraded.
"""

from pathlib import Path

TOOLS_DIR = Path(__file__).parent / "tools"

__all__ = ["TOOLS_DIR"]
