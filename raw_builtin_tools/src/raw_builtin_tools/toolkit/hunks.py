"""Applying the hunks of one ``*** Update File:`` to the text of a file.

Placing a hunk (``docs/tools/write_file.md``, "Matching"):

1. each anchor (``@@ text``) is the first later line equal to ``text``, white space around
   both ignored, found after the previous hunk and anchor;
2. the hunk's old lines (context and ``-``) are looked for after that, in passes of growing
   tolerance: exactly, then ignoring trailing white space, then, as a last resort, also
   reading Unicode dashes, quotes and spaces as their ASCII forms. The first pass that finds
   them wins, and within a pass the first place;
3. context lines keep the file's own text. Added lines take the file's line ending, not the
   patch's: ``\\r\\n`` when most of the file's lines end so, else ``\\n``. A file keeps
   whether it ended with a newline.

A :class:`~raw_builtin_tools.toolkit.HunkMismatch` speaks of the file as the model read it:
its line numbers and line count are those of the text before this update, not of the text
that the earlier hunks of the update have already changed.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Final, Literal

from raw_builtin_tools.toolkit.lines import join_lines, split_lines
from raw_builtin_tools.toolkit.patch import Hunk, HunkMismatch, indented_marker

__all__ = ["apply_hunks"]

# Typographic characters a model tends to write in their ASCII form.
_ASCII: Final = str.maketrans(
    {
        **dict.fromkeys("\u2010\u2011\u2012\u2013\u2014\u2015\u2212\ufe58\ufe63\uff0d", "-"),
        **dict.fromkeys("\u2018\u2019\u201a\u201b", "'"),
        **dict.fromkeys("\u201c\u201d\u201e\u201f", '"'),
        **dict.fromkeys(
            "\u00a0\u2000\u2001\u2002\u2003\u2004\u2005\u2006\u2007\u2008\u2009\u200a"
            "\u202f\u205f\u3000",
            " ",
        ),
    }
)

Key = Callable[[str], str]


def _exact(line: str) -> str:
    return line


def _no_trailing(line: str) -> str:
    return line.rstrip()


def _as_ascii(line: str) -> str:
    return line.rstrip().translate(_ASCII)


def _stripped(line: str) -> str:
    return line.strip()


def _stripped_ascii(line: str) -> str:
    return line.strip().translate(_ASCII)


_BLOCK_PASSES: Final[tuple[Key, ...]] = (_exact, _no_trailing, _as_ascii)
_ANCHOR_PASSES: Final[tuple[Key, ...]] = (_stripped, _stripped_ascii)


def _find_block(
    lines: Sequence[str],
    block: Sequence[str],
    start: int,
    *,
    at_end: bool,
    passes: tuple[Key, ...] = _BLOCK_PASSES,
) -> int | None:
    """Where ``block`` first occurs at or after ``start``, by the first of ``passes`` that
    finds it; with ``at_end`` it must end the file."""
    last = len(lines) - len(block)
    if last < start:
        return None
    candidates = [last] if at_end else range(start, last + 1)
    for key in passes:
        wanted = [key(line) for line in block]
        have = [key(line) for line in lines[start:]]
        for index in candidates:
            if have[index - start : index - start + len(block)] == wanted:
                return index
    return None


def _find_anchor(lines: Sequence[str], anchor: str, start: int) -> int | None:
    for key in _ANCHOR_PASSES:
        wanted = key(anchor)
        for index in range(start, len(lines)):
            if key(lines[index]) == wanted:
                return index
    return None


def _mostly_crlf(lines: list[str], ends_with_newline: bool) -> bool:
    """Whether most of the file's line endings are ``\\r\\n`` (a tie is ``\\n``)."""
    ended = lines if ends_with_newline else lines[:-1]
    return 2 * sum(1 for line in ended if line.endswith("\r")) > len(ended)


def _added(text: str, crlf: bool) -> str:
    """An added line with the file's ending: a ``\\r`` the patch sent is replaced."""
    body = text[:-1] if text.endswith("\r") else text
    return body + "\r" if crlf else body


def _quote(text: str, limit: int = 60) -> str:
    return repr(text if len(text) <= limit else text[:limit] + "…")


def _count(number: int) -> str:
    return f"{number} line" if number == 1 else f"{number} lines"


@dataclass(frozen=True, slots=True)
class _After:
    """What a hunk or anchor is looked for after, with lines of the file as read."""

    kind: Literal["file", "hunk", "anchor"]
    line: int = 0
    anchor: str = ""

    def where(self) -> str:
        if self.kind == "anchor":
            return f"after the anchor {_quote(self.anchor)} at line {self.line}"
        if self.kind == "hunk" and self.line > 0:
            return f"after line {self.line}, where the previous hunk ends"
        return "in the file"


def apply_hunks(text: str, hunks: tuple[Hunk, ...]) -> str:
    """Apply ``hunks`` to ``text`` in order; raises
    :class:`~raw_builtin_tools.toolkit.HunkMismatch`.

    Each hunk is looked for after the previous one (and after its anchors). A hunk without
    context or removed lines inserts after its last anchor, or at the end of the file when it
    has no anchor.
    """
    read, ends_with_newline = split_lines(text)  # the file as the model read it
    if not read:
        ends_with_newline = True
    lines = list(read)
    crlf = _mostly_crlf(lines, ends_with_newline)
    unterminated = crlf and not ends_with_newline
    if unterminated:
        lines[-1] += "\r"  # so that it ends as the others do if lines come after it
    cursor = 0  # where the next hunk may start, in ``lines``
    shift = 0  # len(lines) - len(read), for the lines from ``cursor`` on
    after = _After("file")
    for hunk in hunks:
        position = cursor
        where = after
        for anchor in hunk.anchors:
            found = _find_anchor(lines, anchor, position)
            if found is None:
                raise HunkMismatch(
                    hunk.line, _anchor_missing(read, anchor, where, position - shift)
                )
            position = found + 1
            where = _After("anchor", found - shift + 1, anchor)
        old = hunk.old
        if not old:
            at = position if hunk.anchors and not hunk.end_of_file else len(lines)
        else:
            located = _find_block(lines, old, position, at_end=hunk.end_of_file)
            if located is None:
                context = _Context(read, lines, position, shift)
                raise HunkMismatch(hunk.line, context.block_missing(hunk, where))
            at = located
        replacement: list[str] = []
        matched = iter(lines[at : at + len(old)])
        for kind, line_text in hunk.lines:
            if kind == "+":
                replacement.append(_added(line_text, crlf))
            elif kind == " ":
                replacement.append(next(matched))
            else:
                next(matched)
        lines[at : at + len(old)] = replacement
        after = _After("hunk", at - shift + len(old))
        cursor = at + len(replacement)
        shift += len(replacement) - len(old)
    if unterminated and lines and lines[-1].endswith("\r"):
        lines[-1] = lines[-1][:-1]
    return join_lines(lines, ends_with_newline)


def _anchor_missing(read: list[str], anchor: str, where: _After, position: int) -> str:
    message = f"the anchor {_quote(anchor)} does not occur {where.where()}"
    earlier = _find_anchor(read, anchor, 0)
    if earlier is not None and earlier < position:
        return (
            f"{message}; it occurs earlier, at line {earlier + 1}, but hunks must follow the"
            " file's order"
        )
    return (
        f"{message}; the file has {_count(len(read))}. Read the file again and copy the"
        " anchor line exactly"
    )


def _preview(block: list[str]) -> str:
    shown = "\n".join(f"    {line}" for line in block[:3])
    more = f"\n    … ({len(block) - 3} more lines)" if len(block) > 3 else ""
    return shown + more


@dataclass(frozen=True, slots=True)
class _Context:
    """The state a mismatch is explained from: the file as read, the half-updated lines,
    where the hunk was looked for, and the shift between the two numberings there."""

    read: list[str]
    lines: list[str]
    position: int
    shift: int

    def block_missing(self, hunk: Hunk, where: _After) -> str:
        old = hunk.old
        verb = "does" if len(old) == 1 else "do"
        what = "end the file" if hunk.end_of_file else f"occur {where.where()}"
        message = (
            f"the {_count(len(old))} this hunk expects (its context and '-' lines) {verb} not"
            f" {what}; the file has {_count(len(self.read))}. Expected:\n{_preview(old)}"
        )
        hints = self.hints(old, hunk.end_of_file)
        note = indented_marker(hunk)
        if note is not None:
            hints.append(f"Note: {note}.")
        return (
            message + "\n" + ("\n".join(hints) or "Read the file again and copy the lines exactly.")
        )

    def hints(self, old: list[str], at_end: bool) -> list[str]:
        """At most one hint: where the lines occur earlier, occur but not at the end, or
        match once indentation is ignored."""
        they, occur, match = (
            ("It", "occurs", "matches") if len(old) == 1 else ("They", "occur", "match")
        )
        earlier = _find_block(self.read, old, 0, at_end=False)
        if earlier is not None and earlier < self.position - self.shift:
            return [
                f"{they} {occur} earlier, at line {earlier + 1}: hunks must follow the file's"
                " order."
            ]
        if at_end:
            inside = _find_block(self.lines, old, self.position, at_end=False)
            if inside is not None:
                return [
                    f"{they} {occur} at line {inside - self.shift + 1}, which is not the end of"
                    " the file: '*** End of File' pins a hunk to the end."
                ]
        near = _find_block(
            self.lines, old, self.position, at_end=at_end, passes=(_stripped, _stripped_ascii)
        )
        if near is not None:
            return [
                f"{they} {match} at line {near - self.shift + 1} if leading white space is"
                " ignored: copy each line's indentation exactly."
            ]
        return []
