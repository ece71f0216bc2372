"""The ``*** Begin Patch`` format: a strict parser and a renderer (the applier of an update's
hunks is :func:`raw_builtin_tools.toolkit.apply_hunks`).

The grammar (``docs/tools/write_file.md`` explains it with examples)::

    patch       = blank* "*** Begin Patch" NL operation+ "*** End Patch" NL? blank*
    operation   = blank* (add | delete | update)
    add         = "*** Add File: " path NL ("+" text NL)*
    delete      = "*** Delete File: " path NL
    update      = "*** Update File: " path NL ["*** Move to: " path NL] hunk*
    hunk        = anchor* hunk_line+ ["*** End of File" NL blank*]
    anchor      = "@@" NL | "@@ " text NL
    hunk_line   = (" " | "-" | "+") text NL | NL              (an empty line is empty context)

A hunk starts with one or more ``@@`` lines; only the first hunk of an update may leave them
out. ``@@ text`` names an anchor: a line (compared without surrounding white space) that must
be found, in order, before the hunk's lines are looked for. The range header of a unified
diff (``@@ -12,5 +12,6 @@ def f():``) is accepted and only its trailing text is an anchor.
A hunk needs at least one ``-`` or ``+`` line. Empty lines at the very end of a hunk are
separators, not context. Marker lines may carry trailing white space; paths are stripped.
Where no hunk line can stand (the ``*** Begin Patch`` line, a file header that follows an
Add or Delete section or an ``*** End of File``, and the last line, ``*** End Patch``),
markers may also carry leading white space, as models sometimes write them. Elsewhere a line
that starts with a space is a context line; when such a line looks like a marker, the
errors about its hunk say so.
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
    "indented_marker",
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
    ``end_of_file`` means the hunk's old lines end at the end of the file. ``line`` is the
    patch line the hunk starts at, ``body_line`` the patch line of ``lines[0]`` (the others
    follow it, one per patch line).
    """

    lines: tuple[tuple[LineKind, str], ...]
    anchors: tuple[str, ...] = ()
    end_of_file: bool = False
    line: int = field(default=0, compare=False)
    body_line: int = field(default=0, compare=False)

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


_MARKERS: Final = (BEGIN, END, ADD, DELETE, UPDATE, MOVE, END_OF_FILE, "@@")


def indented_marker(hunk: Hunk) -> str | None:
    """A note on the first context line of ``hunk`` that looks like a marker written with
    leading white space (``"  *** Update File: b"``), or ``None``. Such a line is context,
    since it starts with a space; the note says so, for an error about the hunk."""
    for index, (kind, text) in enumerate(hunk.lines):
        if kind == " " and text.lstrip().startswith(_MARKERS):
            return (
                f"{_quote(kind + text)} on patch line {hunk.body_line + index} starts with"
                " white space, so it is read as a context line of this hunk, not as a marker:"
                " write '***' and '@@' lines at the start of their line"
            )
    return None


class _Parser:
    """One pass over the patch's lines; ``index`` is the 0-based line being looked at."""

    def __init__(self, text: str) -> None:
        lines = text.split("\n")
        if lines[-1] == "":
            lines.pop()
        self.lines = lines
        self.index = 0
        # The last non-blank line ends the patch when it is '*** End Patch', however indented.
        last = len(lines) - 1
        while last >= 0 and not lines[last].strip():
            last -= 1
        self.final_end = last if last >= 0 and lines[last].strip() == END else -1

    def fail(self, message: str, index: int | None = None) -> PatchSyntaxError:
        return PatchSyntaxError((self.index if index is None else index) + 1, message)

    def at_end(self) -> bool:
        return self.index >= len(self.lines)

    def current(self) -> str:
        return self.lines[self.index]

    def skip_blank(self) -> None:
        while not self.at_end() and not self.current().strip():
            self.index += 1

    def at_final_end(self) -> bool:
        return self.index == self.final_end

    def path(self, prefix: str) -> str:
        value = self.current().lstrip()[len(prefix) :].strip()
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
        if self.current().strip() != BEGIN:
            raise self.fail(f"expected '*** Begin Patch', found {_quote(self.current())}")
        self.index += 1
        operations: list[Operation] = []
        while True:
            self.skip_blank()
            if self.at_end():
                raise self.fail("the patch ends without '*** End Patch'")
            line = self.current()
            if line.strip() == END:
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
        head = line.lstrip()  # no hunk line can stand here: a header may be indented
        if head.startswith(ADD):
            path = self.path(ADD)
            self.index += 1
            body: list[str] = []
            while not self.at_end() and self.current().startswith("+"):
                body.append(self.current()[1:])
                self.index += 1
            return AddFile(path=path, lines=tuple(body), line=start)
        if head.startswith(DELETE):
            path = self.path(DELETE)
            self.index += 1
            return DeleteFile(path=path, line=start)
        if head.startswith(UPDATE):
            return self.update(start)
        if head.startswith(MOVE.rstrip()):
            raise self.fail("'*** Move to:' must directly follow an '*** Update File:' line")
        if head.rstrip() == END_OF_FILE:
            raise self.fail("'*** End of File' must end a hunk of an '*** Update File:'")
        if head.startswith("*** "):
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
        while not self.at_end() and not self.at_final_end():
            line = self.current()
            if line.startswith("*** ") and line.rstrip() != END_OF_FILE:
                break
            if not line.strip() and (not hunks or hunks[-1].end_of_file):
                # Blank lines before the first hunk (a pure move may be followed by a
                # separator) or after '*** End of File', where no hunk line can stand.
                self.skip_blank()
                continue
            if hunks and hunks[-1].end_of_file and line.lstrip().startswith("*** "):
                break  # an indented header after '*** End of File'
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
        body = self.index
        lines: list[tuple[LineKind, str]] = []
        blank: list[bool] = []  # whether each line was an empty line of the patch
        end_of_file = False
        while not self.at_end() and not self.at_final_end():
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
        hunk = Hunk(
            lines=tuple(lines),
            anchors=tuple(anchors),
            end_of_file=end_of_file,
            line=start + 1,
            body_line=body + 1,
        )
        if all(kind == " " for kind, _ in lines):
            note = indented_marker(hunk)
            raise self.fail(
                "this hunk changes nothing: it has no '-' or '+' line"
                + (f"; {note}" if note else ""),
                start,
            )
        return hunk


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
