"""word_count: an example local tool that counts a text file's lines, words and characters."""

from __future__ import annotations

from pathlib import Path
from typing import Any


def validate_args(args: Any) -> str | None:
    """Refuse a path that names a directory, before anything runs."""
    if str(args["path"]).endswith("/"):
        return "path must name a file, not a directory"
    return None


def handler(args: Any, context: Any) -> dict[str, Any]:
    """Read the file as UTF-8 and count it."""
    path = Path(getattr(context, "cwd", ".") or ".") / args["path"]
    text = path.read_text(encoding="utf-8")
    lines = text.count("\n") + (1 if text and not text.endswith("\n") else 0)
    summary = f"{lines} lines, {len(text.split())} words, {len(text)} characters in {args['path']}"
    return {"content": [{"type": "text", "text": summary}]}
