"""Lexical paths: what a tool call names, made absolute without touching the file system.

Intended effects must be computed without reading anything (spec 000, "Dispatch order"), so
the built-in tools resolve a path the way a reader of the call would: relative to the
session's working directory, with ``.``, ``..`` and repeated slashes folded away and
symbolic links left alone. The tools then act on exactly that path, so the effects a rule
inspects name the files the handler touches.

``posixpath.normpath`` is not used: it keeps a leading ``//`` (POSIX lets systems give it a
meaning), and effects must have exactly one leading slash.
"""

from __future__ import annotations

from raw_builtin_tools.toolkit.lines import surrogate_problem

__all__ = ["normalize", "path_problem"]


def normalize(path: str, cwd: str) -> str:
    """``path`` made absolute against ``cwd`` and normalized lexically.

    The result has one leading slash, no ``.``, ``..`` or empty segments and no trailing
    slash; ``..`` at the root stays at the root. Nothing is read from the file system.
    """
    joined = path if path.startswith("/") else f"{cwd}/{path}"
    parts: list[str] = []
    for segment in joined.split("/"):
        if segment in ("", "."):
            continue
        if segment == "..":
            if parts:
                parts.pop()
            continue
        parts.append(segment)
    return "/" + "/".join(parts)


def path_problem(path: str) -> str | None:
    """Why ``path`` cannot name a file, or ``None``: it is empty, holds a NUL character or a
    lone surrogate, or ends with a slash (a folder)."""
    if not path.strip():
        return "must not be empty"
    if "\x00" in path:
        return "must not contain a NUL character"
    surrogate = surrogate_problem(path)
    if surrogate is not None:
        return surrogate
    if path.endswith("/"):
        return "must name a file, not a folder (it ends with '/')"
    return None
