"""The ``*** Begin Patch`` format: a strict parser, a renderer, and the hunk applier.

The grammar (``docs/tools/write_file.md`` explains it with examples)::

    patch       = blank* "*** Begin Patch" NL operation+ "*** End Patch" NL? blank*
    operation   = blank* (add | delete | update)
    add         = "*** Add File: " path NL ("+" text NL)*
    delete      = "*** Delete File: " path NL
    update      = "*** Update File: " path NL ["*** Move to: " path NL] hunk*
    hunk        = anchor* hunk_line+ ["*** End of File" NL]
    anchor      = "@@" NL | "@@ " text NL
    hunk_line   = (" " | "-" | "+") text NL | NL              (an empty line is empty context)

A hunk starts with one or more ``@@`` lines; only the first hunk of an update may leave them
out. ``@@ text`` names an anchor: a line (compared without surrounding white space) that must
be found, in order, before the hunk's lines are looked for. The range header of a unified
diff (``@@ -12,5 +12,6 @@ def f():``) is accepted and only its trailing text is an anchor.
A hunk needs at least one ``-`` or ``+`` line. Empty lines at the very end of a hunk are
separators, not context. Marker lines may carry trailing white space; paths are stripped.
An update needs hunks, a ``*** Move to:``, or both. A patch holds at most
:data:`MAX_OPERATIONS` file operations.

Every :class:`PatchSyntaxError` carries the 1-based line number of the patch text it is
about. Parsing is pure and cached (the dispatcher's ``validate_args`` and
``describe_effects`` and the handler all parse the same text).
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from functools import lru_cache
from typing import Final, Literal

from raw_builtin_tools.toolkit.lines import join_lines, split_lines

__all__ = [
    "MAX_OPERATIONS",
    "AddFile",
    "DeleteFile",
    "Hunk",
    "HunkMismatch",
    "LineKind",
    "Operation",
    "Patch",
    "PatchSyntaxError",
    "UpdateFile",
    "apply_hunks",
    "parse_patch",
    "render_patch",
]

MAX_OPERATIONS: Final = 16

BEGIN: Final = "*** Begin Patch"
END: Final = "*** End Patch"
ADD: Final = "*** Add File: "
DELETE: Final = "*** Delete File: "
UPDATE: Final = "*** Update File: "
MOVE: Final = "*** Move to: "
END_OF_FILE: Final = "*** End of File"

_UNIFIED_RANGE: Final = re.compile(r"-\d+(?:,\d+)? \+\d+(?:,\d+)? @@(?: (?P<context>.*))?")

LineKind = Literal[" ", "-", "+"]
_KINDS: Final[dict[str, LineKind]] = {" ": " ", "-": "-", "+": "+"}


class PatchSyntaxError(ValueError):
    """The patch text does not follow the grammar; ``line`` is the 1-based line at fault."""

    def __init__(self, line: int, message: str) -> None:
        super().__init__(f"patch line {line}: {message}")
        self.line = line
        self.message = message


class HunkMismatch(ValueError):
    """A hunk does not fit the file it updates; ``line`` is the hunk's patch line."""

    def __init__(self, line: int, message: str) -> None:
        super().__init__(f"hunk at patch line {line}: {message}")
        self.line = line
        self.message = message


@dataclass(frozen=True, slots=True)
class Hunk:
    """One change to a file: anchors to find first, then context, removed and added lines.

    ``lines`` holds ``(kind, text)`` pairs with kind ``" "`` (context), ``"-"`` or ``"+"``.
    ``end_of_file`` means the hunk's old lines end at the end of the file.
    """

    lines: tuple[tuple[LineKind, str], ...]
    anchors: tuple[str, ...] = ()
    end_of_file: bool = False
    line: int = field(default=0, compare=False)

    @property
    def old(self) -> list[str]:
        """The lines the hunk expects in the file (context and removed lines)."""
        return [text for kind, text in self.lines if kind != "+"]


@dataclass(frozen=True, slots=True)
class AddFile:
    """Create ``path`` with ``lines`` (each ends with a newline in the file)."""

    path: str
    lines: tuple[str, ...] = ()
    line: int = field(default=0, compare=False)

    @property
    def text(self) -> str:
        """The new file's content."""
        return "".join(f"{line}\n" for line in self.lines)


@dataclass(frozen=True, slots=True)
class DeleteFile:
    """Delete ``path``."""

    path: str
    line: int = field(default=0, compare=False)


@dataclass(frozen=True, slots=True)
class UpdateFile:
    """Apply ``hunks`` to ``path``, then move it to ``move_to`` when given."""

    path: str
    hunks: tuple[Hunk, ...] = ()
    move_to: str | None = None
    line: int = field(default=0, compare=False)


Operation = AddFile | DeleteFile | UpdateFile


@dataclass(frozen=True, slots=True)
class Patch:
    """A parsed patch: its file operations, in order."""

    operations: tuple[Operation, ...]


def _quote(text: str, limit: int = 60) -> str:
    return repr(text if len(text) <= limit else text[:limit] + "…")


class _Parser:
    """One pass over the patch's lines; ``index`` is the 0-based line being looked at."""

    def __init__(self, text: str) -> None:
        lines = text.split("\n")
        if lines[-1] == "":
            lines.pop()
        self.lines = lines
        self.index = 0

    def fail(self, message: str, index: int | None = None) -> PatchSyntaxError:
        return PatchSyntaxError((self.index if index is None else index) + 1, message)

    def at_end(self) -> bool:
        return self.index >= len(self.lines)

    def current(self) -> str:
        return self.lines[self.index]

    def skip_blank(self) -> None:
        while not self.at_end() and not self.current().strip():
            self.index += 1

    def path(self, prefix: str) -> str:
        value = self.current()[len(prefix) :].strip()
        if not value:
            raise self.fail(f"{prefix.strip()!r} needs a path")
        if "\x00" in value:
            raise self.fail("a path must not contain a NUL character")
        if value.endswith("/"):
            raise self.fail(f"{value!r} names a folder; a patch operates on files")
        return value

    def parse(self) -> Patch:
        self.skip_blank()
        if self.at_end():
            raise self.fail("the patch is empty; it must start with '*** Begin Patch'")
        if self.current().rstrip() != BEGIN:
            raise self.fail(f"expected '*** Begin Patch', found {_quote(self.current())}")
        self.index += 1
        operations: list[Operation] = []
        while True:
            self.skip_blank()
            if self.at_end():
                raise self.fail("the patch ends without '*** End Patch'")
            line = self.current()
            if line.rstrip() == END:
                break
            if len(operations) == MAX_OPERATIONS:
                raise self.fail(f"a patch holds at most {MAX_OPERATIONS} file operations")
            operations.append(self.operation(line))
        end = self.index
        self.index += 1
        self.skip_blank()
        if not self.at_end():
            raise self.fail(f"unexpected text after '*** End Patch': {_quote(self.current())}")
        if not operations:
            raise self.fail("the patch has no file operations", end)
        return Patch(operations=tuple(operations))

    def operation(self, line: str) -> Operation:
        start = self.index + 1
        if line.startswith(ADD):
            path = self.path(ADD)
            self.index += 1
            body: list[str] = []
            while not self.at_end() and self.current().startswith("+"):
                body.append(self.current()[1:])
                self.index += 1
            return AddFile(path=path, lines=tuple(body), line=start)
        if line.startswith(DELETE):
            path = self.path(DELETE)
            self.index += 1
            return DeleteFile(path=path, line=start)
        if line.startswith(UPDATE):
            return self.update(start)
        if line.startswith(MOVE.rstrip()):
            raise self.fail("'*** Move to:' must directly follow an '*** Update File:' line")
        if line.rstrip() == END_OF_FILE:
            raise self.fail("'*** End of File' must end a hunk of an '*** Update File:'")
        if line.startswith("*** "):
            raise self.fail(
                f"unknown header {_quote(line)}; expected '*** Add File: ',"
                " '*** Update File: ', '*** Delete File: ' or '*** End Patch'"
            )
        if line.startswith("+"):
            raise self.fail(
                "a '+' line outside an '*** Add File:' section (a blank line ends the"
                " section; write '+' alone for an empty line of the new file)"
            )
        if line.startswith(("@@", " ", "-")):
            raise self.fail(f"a hunk line outside an '*** Update File:' section: {_quote(line)}")
        raise self.fail(
            f"expected a file header ('*** Add File: ', '*** Update File: ',"
            f" '*** Delete File: ') or '*** End Patch', found {_quote(line)}"
        )

    def update(self, start: int) -> UpdateFile:
        path = self.path(UPDATE)
        self.index += 1
        move_to: str | None = None
        if not self.at_end() and self.current().startswith(MOVE):
            move_to = self.path(MOVE)
            if move_to == path:
                raise self.fail(f"'*** Move to:' names the file being updated, {path!r}")
            self.index += 1
        hunks: list[Hunk] = []
        while not self.at_end():
            line = self.current()
            if line.startswith("*** ") and line.rstrip() != END_OF_FILE:
                break
            if not hunks and not line.strip():
                # Blank lines before the first hunk: an update with no hunks (a pure move)
                # may be followed by a separator line.
                self.skip_blank()
                continue
            hunks.append(self.hunk(first=not hunks))
        if not hunks and move_to is None:
            raise self.fail(
                f"'*** Update File: {path}' has no hunks and no '*** Move to:'", start - 1
            )
        return UpdateFile(path=path, hunks=tuple(hunks), move_to=move_to, line=start)

    def anchor(self) -> str | None:
        rest = self.current()[2:]
        if not rest.strip():
            return None
        if not rest.startswith(" "):
            raise self.fail(
                f"expected '@@' or '@@ <line of context>', found {_quote(self.current())}"
            )
        text = rest.strip()
        unified = _UNIFIED_RANGE.fullmatch(text)
        if unified is not None:
            text = (unified.group("context") or "").strip()
        return text or None

    def hunk(self, *, first: bool) -> Hunk:
        start = self.index
        anchors: list[str] = []
        while not self.at_end() and self.current().startswith("@@"):
            anchor = self.anchor()
            if anchor is not None:
                anchors.append(anchor)
            self.index += 1
        if self.index == start and not first:
            raise self.fail(
                "expected '@@' to start the next hunk, or a file header, found"
                f" {_quote(self.current())}"
            )
        if self.index == start and self.current()[:1] not in (" ", "-", "+"):
            raise self.fail(
                f"expected '@@' or a hunk line starting with ' ', '-' or '+', found"
                f" {_quote(self.current())}"
            )
        lines: list[tuple[LineKind, str]] = []
        blank: list[bool] = []  # whether each line was an empty line of the patch
        end_of_file = False
        while not self.at_end():
            line = self.current()
            kind = line[:1]
            if kind in (" ", "-", "+"):
                lines.append((_KINDS[kind], line[1:]))
            elif not line:
                lines.append((" ", ""))
            elif line.rstrip() == END_OF_FILE:
                end_of_file = True
                self.index += 1
                break
            elif line.startswith(("@@", "*** ")):
                break
            else:
                raise self.fail(
                    f"expected a hunk line starting with ' ', '-' or '+', found {_quote(line)}"
                )
            blank.append(not line)
            self.index += 1
        if not end_of_file:
            # Empty lines that end a hunk separate it from what follows; not context.
            while blank and blank[-1]:
                blank.pop()
                lines.pop()
        if not lines:
            raise self.fail("this hunk has no lines after its '@@'", start)
        if all(kind == " " for kind, _ in lines):
            raise self.fail("this hunk changes nothing: it has no '-' or '+' line", start)
        return Hunk(
            lines=tuple(lines), anchors=tuple(anchors), end_of_file=end_of_file, line=start + 1
        )


@lru_cache(maxsize=32)
def parse_patch(text: str) -> Patch:
    """Parse ``text``; raises :class:`PatchSyntaxError` with the line at fault."""
    return _Parser(text).parse()


def render_patch(patch: Patch) -> str:
    """The text of ``patch``; ``parse_patch(render_patch(p)) == p``."""
    out = [BEGIN]
    for operation in patch.operations:
        if isinstance(operation, AddFile):
            out.append(ADD + operation.path)
            out.extend("+" + line for line in operation.lines)
        elif isinstance(operation, DeleteFile):
            out.append(DELETE + operation.path)
        else:
            out.append(UPDATE + operation.path)
            if operation.move_to is not None:
                out.append(MOVE + operation.move_to)
            for hunk in operation.hunks:
                out.extend(f"@@ {anchor}" for anchor in hunk.anchors)
                if not hunk.anchors:
                    out.append("@@")
                out.extend(kind + text for kind, text in hunk.lines)
                if hunk.end_of_file:
                    out.append(END_OF_FILE)
    out.append(END)
    return "\n".join(out) + "\n"


# --- applying the hunks of one update ------------------------------------------------------


def _find_anchor(lines: list[str], anchor: str, start: int) -> int | None:
    for index in range(start, len(lines)):
        if lines[index].strip() == anchor:
            return index
    return None


def _find_block(lines: list[str], block: list[str], start: int, *, at_end: bool) -> int | None:
    """Where ``block`` first occurs at or after ``start``: exactly, else ignoring trailing
    white space (a ``\\r``, stray spaces). With ``at_end`` it must end the file."""
    last = len(lines) - len(block)
    if last < start:
        return None
    candidates = [last] if at_end else range(start, last + 1)
    for strict in (True, False):
        for index in candidates:
            if strict:
                if lines[index : index + len(block)] == block:
                    return index
            elif all(
                a.rstrip() == b.rstrip()
                for a, b in zip(lines[index : index + len(block)], block, strict=True)
            ):
                return index
    return None


def _preview(block: list[str]) -> str:
    shown = "\n".join(f"    {line}" for line in block[:3])
    more = f"\n    … ({len(block) - 3} more lines)" if len(block) > 3 else ""
    return shown + more


def apply_hunks(text: str, hunks: tuple[Hunk, ...]) -> str:
    """Apply ``hunks`` to ``text`` in order; raises :class:`HunkMismatch`.

    Each hunk is looked for after the previous one (and after its anchors). Context lines
    keep the file's own text, so a match that ignored trailing white space changes nothing
    but the ``-``/``+`` lines. A hunk without context or removed lines inserts after its
    last anchor, or at the end of the file when it has no anchor.
    """
    lines, ends_with_newline = split_lines(text)
    if not lines:
        ends_with_newline = True
    cursor = 0
    for hunk in hunks:
        position = cursor
        for anchor in hunk.anchors:
            found = _find_anchor(lines, anchor, position)
            if found is None:
                earlier = _find_anchor(lines, anchor, 0)
                where = (
                    f"; it occurs earlier, at line {earlier + 1}, but hunks must follow the"
                    " file's order"
                    if earlier is not None
                    else ""
                )
                raise HunkMismatch(
                    hunk.line,
                    f"the anchor line {_quote(anchor)} was not found after line {position}{where}",
                )
            position = found + 1
        old = hunk.old
        if not old:
            at = position if hunk.anchors and not hunk.end_of_file else len(lines)
        else:
            located = _find_block(lines, old, position, at_end=hunk.end_of_file)
            if located is None:
                raise HunkMismatch(hunk.line, _mismatch(lines, old, position, hunk.end_of_file))
            at = located
        replacement: list[str] = []
        matched = iter(lines[at : at + len(old)])
        for kind, line_text in hunk.lines:
            if kind == "+":
                replacement.append(line_text)
            elif kind == " ":
                replacement.append(next(matched))
            else:
                next(matched)
        lines[at : at + len(old)] = replacement
        cursor = at + len(replacement)
    return join_lines(lines, ends_with_newline)


def _mismatch(lines: list[str], old: list[str], position: int, at_end: bool) -> str:
    what = "end the file" if at_end else f"occur after line {position}"
    message = (
        f"the hunk's {len(old)} context and '-' lines do not {what}; the file has"
        f" {len(lines)} lines. Expected:\n{_preview(old)}"
    )
    earlier = _find_block(lines, old, 0, at_end=False)
    if earlier is not None and earlier < position:
        message += (
            f"\nThey occur earlier, at line {earlier + 1}: hunks must follow the file's order."
        )
    else:
        message += "\nRead the file again and copy the lines exactly."
    return message
