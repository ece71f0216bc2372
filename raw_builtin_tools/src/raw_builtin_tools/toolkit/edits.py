"""The edits write_file offers: each checks its entry against a :class:`Workspace` plan.

An edit is a function ``(workspace, entry_index) -> summary``: it reads the planned state of
its file, checks that it applies, changes the plan (never the disk) and returns a one-line
summary for the model, or raises :class:`~raw_builtin_tools.toolkit.EditError` with a
stable code and leaves the plan as it was. The factories here build one edit from a call's
fields: :func:`overwrite`, :func:`append`, :func:`replace_text` and :func:`replace_lines`
for the ``operations`` form, :func:`patch_add`, :func:`patch_delete` and
:func:`patch_update` for the three operations of a ``*** Begin Patch`` text. Running every
edit of a call against one workspace and then calling :meth:`Workspace.commit` writes all
of them or none.
"""

from __future__ import annotations

from collections.abc import Callable

from raw_builtin_tools.toolkit.hunks import apply_hunks
from raw_builtin_tools.toolkit.lines import join_lines, split_lines
from raw_builtin_tools.toolkit.patch import Hunk, HunkMismatch
from raw_builtin_tools.toolkit.workspace import EditError, Workspace

__all__ = [
    "Edit",
    "append",
    "overwrite",
    "patch_add",
    "patch_delete",
    "patch_update",
    "replace_lines",
    "replace_text",
]

Edit = Callable[[Workspace, int], str]
"""One planned entry: ``edit(workspace, entry_index)`` returns its summary."""


def _lines_phrase(count: int) -> str:
    return f"{count} line" if count == 1 else f"{count} lines"


def overwrite(path: str, content: str) -> Edit:
    """Replace the whole file (or create it)."""

    def run(space: Workspace, entry: int) -> str:
        existed = space.kind(path) == "file"
        space.write(path, content, entry)
        lines, _ = split_lines(content)
        verb = "overwrote" if existed else "created"
        return f"{verb}: {_lines_phrase(len(lines))}, {len(content.encode())} bytes"

    return run


def append(path: str, content: str) -> Edit:
    """Add ``content`` at the end of the file as written (create it when missing)."""

    def run(space: Workspace, entry: int) -> str:
        kind = space.kind(path)
        if kind not in ("file", "missing"):
            raise space.refusal(path, kind)
        before = space.read(path) if kind == "file" else ""
        text = before + content
        space.write(path, text, entry)
        lines, _ = split_lines(text)
        verb = "appended" if kind == "file" else "created"
        return f"{verb} {len(content.encode())} bytes; the file now has {_lines_phrase(len(lines))}"

    return run


def _line_of(text: str, offset: int) -> int:
    return text.count("\n", 0, offset) + 1


def replace_text(path: str, old: str, new: str) -> Edit:
    """Replace the one occurrence of ``old``; none or several is an error."""

    def run(space: Workspace, entry: int) -> str:
        text = space.read(path)
        first = text.find(old)
        if first < 0:
            raise EditError(
                "no_match",
                f"`old` does not occur in {path}; read the file again and copy the text"
                " exactly, including white space and line breaks",
            )
        second = text.find(old, first + 1)
        if second >= 0:
            where = [first]
            position = second
            while position >= 0:
                where.append(position)
                position = text.find(old, position + 1)
            lines = ", ".join(str(_line_of(text, p)) for p in where[:10])
            raise EditError(
                "ambiguous_match",
                f"`old` occurs {len(where)} times in {path} (starting at lines {lines}); add"
                " surrounding text so that it matches exactly once",
            )
        space.write(path, text[:first] + new + text[first + len(old) :], entry)
        return f"replaced 1 occurrence at line {_line_of(text, first)}"

    return run


def replace_lines(path: str, start: int, end: int, content: str) -> Edit:
    """Replace lines ``start``..``end`` (1-based, inclusive) with the lines of ``content``;
    ``end = start - 1`` inserts before ``start``."""

    def run(space: Workspace, entry: int) -> str:
        lines, ends_with_newline = split_lines(space.read(path))
        total = len(lines)
        if end > total or start > total + 1:
            raise EditError(
                "line_out_of_range",
                f"{path} has {_lines_phrase(total)}; lines {start}-{end} are not all in it",
            )
        new_lines, content_newline = split_lines(content)
        if not lines:
            ends_with_newline = content_newline or bool(new_lines)
        lines[start - 1 : end] = new_lines
        space.write(path, join_lines(lines, ends_with_newline), entry)
        if end < start:
            return f"inserted {_lines_phrase(len(new_lines))} before line {start}"
        if not new_lines:
            return f"deleted lines {start}-{end}"
        return (
            f"replaced lines {start}-{end} with {_lines_phrase(len(new_lines))}"
            f" (now lines {start}-{start + len(new_lines) - 1})"
        )

    return run


def patch_add(path: str, content: str) -> Edit:
    """``*** Add File:``: create a file that must not exist yet."""

    def run(space: Workspace, entry: int) -> str:
        kind = space.kind(path)
        if kind == "file":
            raise EditError(
                "file_exists",
                f"{path} already exists; use '*** Update File:' to change it",
            )
        if kind != "missing":
            raise space.refusal(path, kind)
        space.write(path, content, entry)
        return f"created: {_lines_phrase(len(split_lines(content)[0]))}"

    return run


def patch_delete(path: str) -> Edit:
    """``*** Delete File:``: remove a file that must exist."""

    def run(space: Workspace, entry: int) -> str:
        kind = space.kind(path)
        if kind != "file":
            raise space.refusal(path, kind)
        space.delete(path, entry)
        return "deleted"

    return run


def patch_update(path: str, hunks: tuple[Hunk, ...], move_to: str | None) -> Edit:
    """``*** Update File:``: apply the hunks, then move the file when ``move_to`` is set."""

    def run(space: Workspace, entry: int) -> str:
        text = space.read(path)
        try:
            updated = apply_hunks(text, hunks)
        except HunkMismatch as exc:
            raise EditError("context_not_found", f"{path}: {exc}") from None
        done = f"applied {len(hunks)} hunk{'s' if len(hunks) != 1 else ''}"
        if move_to is None:
            space.write(path, updated, entry)
            return done
        if move_to == path:
            raise EditError("same_path", f"'*** Move to:' names {path} itself")
        kind = space.kind(move_to)
        if kind == "file":
            raise EditError("destination_exists", f"cannot move {path}: {move_to} exists")
        if kind != "missing":
            raise space.refusal(move_to, kind)
        space.write(move_to, updated, entry, mode=space.mode_of(path))
        space.delete(path, entry)
        return (done + "; " if hunks else "") + f"moved to {move_to}"

    return run
