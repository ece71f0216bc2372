"""The value of one Bash word as the shell would pass it, read from its syntax tree.

Quote removal is done the way Bash does it: ``\\rm``, ``"rm"``, ``'rm'``, ``r''m``,
``$'rm'`` and ``$"rm"`` all read ``rm``. Nothing else is expanded: a parameter expansion
or a command, process or arithmetic substitution keeps its source text (``$HOME``,
``$(echo rm)``) and makes the word *dynamic*, its value unknown until the command runs. An
unquoted glob (``*``, ``?``, ``[``), an extended glob or a brace expansion (``{a,b}``,
``{1..3}``) stays as written and makes the word a *pattern*: it may stand for other words.
A leading unquoted ``~`` stays as written too, and is noted (``tilde``), so that a path can
expand it.

The nodes are tree-sitter-bash nodes; only their types, byte ranges and children are read.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any, Final

__all__ = [
    "Word",
    "argument_text",
    "heredoc_value",
    "herestring_value",
    "join_words",
    "piped_heredoc",
    "program_name",
    "word_value",
]

_DYNAMIC_TYPES: Final = frozenset(
    {
        "simple_expansion",
        "expansion",
        "command_substitution",
        "process_substitution",
        "arithmetic_expansion",
    }
)
_PATTERN_TYPES: Final = frozenset({"extglob_pattern", "brace_expression", "regex"})
_GLOB_CHARS: Final = frozenset("*?[")
_SPECIAL: Final = re.compile(r"[\\*?\[]")
# An unquoted brace expansion: {a,b} or {1..3}, with nothing quoted in between.
_BRACES: Final = re.compile(r"\{[^{}]*(,|\.\.)[^{}]*\}")
# Inside double quotes a backslash quotes only these characters.
_DQ_ESCAPES: Final = frozenset('$`"\\\n')
_ANSI_SIMPLE: Final = {
    "a": "\a",
    "b": "\b",
    "e": "\x1b",
    "E": "\x1b",
    "f": "\f",
    "n": "\n",
    "r": "\r",
    "t": "\t",
    "v": "\v",
    "\\": "\\",
    "'": "'",
    '"': '"',
    "?": "?",
}


@dataclass(frozen=True, slots=True)
class Word:
    """One word: ``text`` after quote removal (dynamic parts as written), whether a part
    is ``dynamic`` (an expansion or a substitution), whether an unquoted part is a
    ``pattern`` (a glob or a brace expansion), and whether it starts with an unquoted
    ``tilde``."""

    text: str
    dynamic: bool = False
    pattern: bool = False
    tilde: bool = False
    fixed_from: int = 0
    """Where the text stops changing: everything from this index on is literal (0 for a
    literal word; ``len(text)`` when it ends in an expansion)."""

    @property
    def literal(self) -> bool:
        """Whether the shell passes exactly ``text``: nothing dynamic, no pattern."""
        return not self.dynamic and not self.pattern


def _text(source: bytes, start: int, end: int) -> str:
    return source[start:end].decode("utf-8", "replace")


def _unquoted(raw: str) -> tuple[str, int]:
    """An unquoted word's text with backslashes removed, and the index just past its last
    unescaped glob character (0: none)."""
    if _SPECIAL.search(raw) is None:
        return raw, 0
    out: list[str] = []
    pattern = 0
    index = 0
    while index < len(raw):
        char = raw[index]
        if char == "\\":
            if index + 1 < len(raw):
                following = raw[index + 1]
                if following != "\n":
                    out.append(following)
                index += 2
                continue
            index += 1
            continue
        out.append(char)
        if char in _GLOB_CHARS:
            pattern = len(out)
        index += 1
    return "".join(out), pattern


def _double_quoted(raw: str) -> str:
    """The text of a part of a double-quoted string: a backslash quotes only ``$``, a
    backtick, ``"``, ``\\`` and a newline (which it removes)."""
    if "\\" not in raw:
        return raw
    out: list[str] = []
    index = 0
    while index < len(raw):
        char = raw[index]
        if char == "\\" and index + 1 < len(raw) and raw[index + 1] in _DQ_ESCAPES:
            if raw[index + 1] != "\n":
                out.append(raw[index + 1])
            index += 2
            continue
        out.append(char)
        index += 1
    return "".join(out)


def _ansi_c(raw: str) -> str:
    """The value of the body of ``$'...'``: C-style escapes decoded."""
    out: list[str] = []
    index = 0
    length = len(raw)
    while index < length:
        char = raw[index]
        if char != "\\" or index + 1 >= length:
            out.append(char)
            index += 1
            continue
        code = raw[index + 1]
        index += 2
        if code in _ANSI_SIMPLE:
            out.append(_ANSI_SIMPLE[code])
        elif code in "01234567":
            digits = code
            while len(digits) < 3 and index < length and raw[index] in "01234567":
                digits += raw[index]
                index += 1
            out.append(chr(int(digits, 8) & 0xFF))
        elif code in "xuU":
            width = {"x": 2, "u": 4, "U": 8}[code]
            digits = ""
            while len(digits) < width and index < length and raw[index] in _HEX:
                digits += raw[index]
                index += 1
            value = int(digits, 16) if digits else None
            if value is None:
                out.append("\\" + code)
            elif value > 0x10FFFF or 0xD800 <= value <= 0xDFFF:
                out.append("\ufffd")
            else:
                out.append(chr(value))
        elif code == "c" and index < length:
            out.append(chr(ord(raw[index]) & 0x1F))
            index += 1
        else:
            out.append("\\" + code)
    return "".join(out)


_HEX: Final = frozenset("0123456789abcdefABCDEF")


def _string(node: Any, source: bytes, start: int, end: int) -> Word:
    """A double-quoted string between ``start`` and ``end`` (inside the quotes)."""
    parts: list[str] = []
    size = fixed_from = 0
    position = start
    for child in node.children:
        if child.start_byte < start or child.end_byte > end:
            continue  # the quotes
        if child.start_byte > position:
            parts.append(_double_quoted(_text(source, position, child.start_byte)))
            size += len(parts[-1])
        if child.type in _DYNAMIC_TYPES:
            parts.append(_text(source, child.start_byte, child.end_byte))
            size += len(parts[-1])
            fixed_from = size
        else:
            parts.append(_double_quoted(_text(source, child.start_byte, child.end_byte)))
            size += len(parts[-1])
        position = child.end_byte
    if position < end:
        parts.append(_double_quoted(_text(source, position, end)))
    return Word("".join(parts), dynamic=fixed_from > 0, fixed_from=fixed_from)


def word_value(node: Any, source: bytes) -> Word:
    """The value of the word at ``node`` (a ``word``, ``string``, ``raw_string``,
    ``concatenation``, an expansion...) in ``source``, the bytes the tree was parsed from."""
    kind = node.type
    start, end = node.start_byte, node.end_byte
    if kind == "word":
        raw = _text(source, start, end)
        text, glob_end = _unquoted(raw)
        return Word(text, pattern=glob_end > 0, tilde=raw.startswith("~"), fixed_from=glob_end)
    if kind == "raw_string":
        return Word(_text(source, start + 1, end - 1))
    if kind == "string":
        return _string(node, source, start + 1, end - 1)
    if kind == "ansi_c_string":
        return Word(_ansi_c(_text(source, start + 2, end - 1)))
    if kind == "translated_string":
        inner = node.named_children
        if len(inner) == 1 and inner[0].type == "string":
            return word_value(inner[0], source)
        return Word(_text(source, start, end), dynamic=True)
    if kind == "number":
        return Word(_text(source, start, end))
    if kind == "concatenation" or (kind == "command_name" and node.child_count != 1):
        return _concatenation(node, source)
    if kind == "command_name":
        return word_value(node.children[0], source)
    text = _text(source, start, end)
    if kind in _PATTERN_TYPES:
        return Word(text, pattern=True, fixed_from=len(text))
    return Word(text, dynamic=True, fixed_from=len(text))


def _concatenation(node: Any, source: bytes) -> Word:
    parts: list[Word] = []
    unquoted: list[str] = []  # the unquoted text, to find brace expansions across parts
    position = node.start_byte
    for child in node.children:
        if child.start_byte > position:  # text the grammar left between two parts
            gap, glob_end = _unquoted(_text(source, position, child.start_byte))
            parts.append(Word(gap, pattern=glob_end > 0, fixed_from=glob_end))
            unquoted.append(gap)
        value = word_value(child, source)
        parts.append(value)
        unquoted.append(value.text if child.type == "word" else "\x00" * len(value.text))
        position = child.end_byte
    if not parts:
        return Word("")
    joined = parts[0]
    for part in parts[1:]:
        joined = join_words(joined, part)
    ends = [found.end() for found in _BRACES.finditer("".join(unquoted))]
    if ends:  # "".join(unquoted) has the same length as the text
        end = max(joined.fixed_from, ends[-1])
        return Word(joined.text, joined.dynamic, True, joined.tilde, end)
    return joined


def join_words(first: Word, second: Word) -> Word:
    """Two words the grammar split at a line continuation (``r\\<newline>m``), which Bash
    reads as one."""
    changing = second.dynamic or second.pattern
    return Word(
        first.text + second.text,
        dynamic=first.dynamic or second.dynamic,
        pattern=first.pattern or second.pattern,
        tilde=first.tilde,
        fixed_from=len(first.text) + second.fixed_from if changing else first.fixed_from,
    )


def argument_text(node: Any, source: bytes) -> str:
    """A declaration's argument as a word (``NAME=VALUE`` with its value read so)."""
    if node.type == "variable_assignment":
        value = node.child_by_field_name("value")
        name = source[node.start_byte : value.start_byte if value else node.end_byte]
        rest = word_value(value, source).text if value is not None else ""
        return name.decode("utf-8", "replace") + rest
    return word_value(node, source).text


def herestring_value(node: Any, source: bytes) -> Word:
    """The word a here-string (``<<< WORD``) gives as standard input."""
    parts = [child for child in node.children if child.is_named]
    if not parts:
        return Word("")
    return word_value(parts[-1], source)


def heredoc_value(node: Any, source: bytes) -> Word:
    """A here-document's body; with an unquoted delimiter, its expansions make it
    dynamic."""
    start = body = None
    for child in node.children:
        if child.type == "heredoc_start":
            start = child
        elif child.type == "heredoc_body":
            body = child
    if body is None:
        return Word("")
    text = source[body.start_byte : body.end_byte].decode("utf-8", "replace")
    quoted = start is not None and any(
        char in source[start.start_byte : start.end_byte] for char in b"'\"\\"
    )
    dynamic = not quoted and any(
        child.type not in ("heredoc_content", "heredoc_end") for child in body.named_children
    )
    return Word(text, dynamic=dynamic, fixed_from=len(text) if dynamic else 0)


def program_name(word: Word, placeholder: str | None) -> tuple[str, bool]:
    """The name a program is looked up by (the text after the last ``/``), and whether it
    is dynamic: an expansion, a pattern or a placeholder in that part."""
    text = word.text
    start = text.rfind("/") + 1
    name = text[start:]
    changing = (word.dynamic or word.pattern) and start < word.fixed_from
    if placeholder is not None and placeholder in name:
        changing = True
    return (text if changing else name), changing


def piped_heredoc(node: Any, source: bytes) -> Word | str:
    """What the pipeline after the here-document ``node`` reads (``cat <<EOF | sh``, which
    the grammar nests in the ``heredoc_redirect``): the here-document itself when the
    statement is a bare ``cat`` (``cat`` or ``cat -``), else ``"pipe"``, the output of a
    program."""
    statement = node.parent
    body = statement.child_by_field_name("body") if statement is not None else None
    if body is None or body.type != "command" or body.child_by_field_name("redirect"):
        return "pipe"
    name = body.child_by_field_name("name")
    if name is None or program_name(word_value(name, source), None) != ("cat", False):
        return "pipe"
    arguments = body.children_by_field_name("argument")
    if any(word_value(argument, source).text != "-" for argument in arguments):
        return "pipe"
    return heredoc_value(node, source)
