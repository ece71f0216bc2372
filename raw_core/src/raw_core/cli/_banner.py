"""The one line a chat starts with: which config file(s), agent, model and folder."""

from __future__ import annotations

import os
from collections.abc import Sequence
from pathlib import Path

__all__ = ["banner"]


def banner(
    files: Sequence[str | os.PathLike[str]], *, agent: str, model: str | None, cwd: str | None
) -> str:
    """``raw · config A, B · agent X · model M · in DIR`` (``no config file`` when none)."""
    shown = ", ".join(_home(str(f)) for f in files) or "no config file"
    parts = [f"config {shown}" if files else shown, f"agent {agent}"]
    if model:
        parts.append(f"model {model}")
    if cwd:
        parts.append(f"in {_home(cwd)}")
    return "raw · " + " · ".join(parts) + " · /help lists the commands"


def _home(path: str) -> str:
    """``path`` with the home folder written as ``~``."""
    home = str(Path.home())
    if home not in ("", "/") and (path == home or path.startswith(home + os.sep)):
        return "~" + path[len(home) :]
    return path
