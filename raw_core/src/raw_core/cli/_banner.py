"""The one line a chat starts with: every config file in use (with its layer), the agent,
its model and the folder."""

from __future__ import annotations

import os
from collections.abc import Sequence
from pathlib import Path

__all__ = ["banner"]


def banner(
    files: Sequence[str | os.PathLike[str]], *, agent: str, model: str | None, cwd: str | None
) -> str:
    """``config: A (user), B (project) · agent X · model M · in DIR`` (``config: none``
    when no file is in use); each of ``files`` is shown as given."""
    parts = [f"config: {', '.join(str(f) for f in files) or 'none'}", f"agent {agent}"]
    if model:
        parts.append(f"model {model}")
    if cwd:
        parts.append(f"in {_home(cwd)}")
    return " · ".join(parts) + " · /help lists the commands"


def _home(path: str) -> str:
    """``path`` with the home folder written as ``~``."""
    home = str(Path.home())
    if home not in ("", "/") and (path == home or path.startswith(home + os.sep)):
        return "~" + path[len(home) :]
    return path
