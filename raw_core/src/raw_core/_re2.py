"""The only importer of google-re2: compile patterns quietly and translate RE2's errors.

RE2 runs in time linear in the input, so neither a user's rule nor a tool's schema
``pattern`` can hang the dispatcher. RE2 logs an invalid pattern to stderr unless told not
to, and its exception carries bytes and no position: this facade turns both into a
:class:`PatternError` whose message is RE2's own text. A text that lacks a literal every
match of a pattern must contain (``push`` for ``\\bgit\\s+push\\b``) is answered without
calling RE2: an optimisation that never changes an answer.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from functools import lru_cache
from typing import Final, Protocol

import re2
from re2 import _re2

__all__ = [
    "CompiledPattern",
    "PatternError",
    "compile_any",
    "compile_pattern",
    "required_literal",
]


class CompiledPattern(Protocol):
    """What raw uses of a compiled RE2 pattern: an unanchored search."""

    @property
    def pattern(self) -> str: ...

    @property
    def required(self) -> tuple[str, ...]:
        """Strings of which every match contains one (empty: none known). A text holding
        none of them cannot match; a caller may answer it without calling :meth:`test`."""
        ...

    def search(self, text: str) -> object | None: ...

    def test(self, text: str) -> bool: ...


class PatternError(ValueError):
    """RE2 rejected a pattern (invalid, or a feature RE2 does not have)."""


_UNANCHORED = _re2.RE2.Anchor.UNANCHORED
_LONE_SURROGATE = re.compile("[\ud800-\udfff]")
_NO_MATCH = (-1, -1)


def _options() -> object:
    options = re2.Options()
    options.log_errors = False  # RE2 would print every rejected pattern to stderr
    options.never_capture = True  # raw only asks whether a pattern matches
    return options


_OPTIONS = _options()


# Characters that stand for themselves, unescaped, outside a class in RE2's syntax:
# printable ASCII minus the metacharacters, and minus ``]`` and ``}`` (RE2 reads them as
# themselves alone, this reading does not try).
_PLAIN: Final = frozenset(chr(code) for code in range(0x20, 0x7F)) - frozenset("\\.+*?()|[]{}^$")
# Escaped punctuation stands for the character itself.
_ESCAPED_PLAIN: Final = frozenset("\\.+*?()|[]{}^$-#/!\"%&',:;<=>@_`~")
# Escapes of classes, assertions and control characters: one atom that is no plain
# character, so it ends a run (and a quantifier after it finds the run empty).
_ESCAPED_OTHER: Final = frozenset("bBsSdDwWAzntrfva")
_QUANTIFIERS: Final = frozenset("?*+")
_JOINED_LITERALS: Final = 4
"""The most literals a joined alternation looks for before it calls RE2."""


def _escape_end(pattern: str, position: int) -> int | None:
    """Past the escape at ``position`` inside a class or a group (its ``\\`` and the
    character after it), or None for ``\\Q`` (it quotes on past any bracket) or a ``\\``
    that ends the pattern."""
    if position + 1 >= len(pattern) or pattern[position + 1] == "Q":
        return None
    return position + 2


def _class_end(pattern: str, position: int) -> int | None:
    """Where the character class opened just before ``position`` ends (the index after its
    ``]``), or None for one this reading does not follow: a ``[`` inside it other than a
    ``[:name:]`` class at the start of an item (not after a ``-``), ``\\Q``, or no closing
    ``]``."""
    length = len(pattern)
    if position < length and pattern[position] == "^":
        position += 1
    if position < length and pattern[position] == "]":  # a first ] stands for itself
        position += 1
    while position < length:
        char = pattern[position]
        if char == "\\":
            escaped = _escape_end(pattern, position)
            if escaped is None:
                return None
            position = escaped
        elif char == "[":
            # RE2 reads [:name:] only where an item starts; after a - it ends a range
            # ([A-[:]|:]] is the class A-[ and ':', then |), so give up there.
            if pattern[position - 1] == "-" or not pattern.startswith("[:", position):
                return None
            close = pattern.find(":]", position + 2)
            if close < 0:
                return None
            position = close + 2
        elif char == "]":
            return position + 1
        else:
            position += 1
    return None


def _group_end(pattern: str, position: int) -> int | None:
    """Where the group opened just before ``position`` ends (the index after its ``)``),
    or None for one this reading does not follow: flags or a name (``(?`` other than
    ``(?:``, since ``(?i)`` changes what the rest matches), ``\\Q``, or no closing
    ``)``. Anything inside it — alternations included — stays inside it."""
    length = len(pattern)
    if pattern.startswith("?", position) and not pattern.startswith("?:", position):
        return None
    depth = 1
    while position < length:
        char = pattern[position]
        if char == "\\":
            escaped = _escape_end(pattern, position)
            if escaped is None:
                return None
            position = escaped
            continue
        if char == "[":
            end = _class_end(pattern, position + 1)
            if end is None:
                return None
            position = end
            continue
        if char == "(":
            if pattern.startswith("?", position + 1) and not pattern.startswith("?:", position + 1):
                return None
            depth += 1
        elif char == ")":
            depth -= 1
            if depth == 0:
                return position + 1
        position += 1
    return None


def required_literal(pattern: str) -> str | None:
    """A string every match of ``pattern`` contains, or ``None`` when none is known.

    Reads the pattern's top level as a sequence of atoms, each perhaps followed by ``?``,
    ``*`` or ``+`` (lazy forms included): plain characters, escaped punctuation, ``.``,
    ``^``, ``$``, the escapes ``\\b \\B \\s \\S \\d \\D \\w \\W \\A \\z``, a
    character class ``[...]``, and a group ``(...)`` or ``(?:...)`` whatever is inside it.
    A run of plain characters none of which a quantifier follows must occur, in order and
    unbroken, in every match; the longest such run is returned (ASCII only, so containment
    in a ``str`` equals containment in the UTF-8 bytes RE2 searches). It gives up
    (``None``) on anything else: an alternation at the top level, flags or a named group
    (``(?i)``), a counted repetition (``{``), ``\\Q``, ``\\x``, ``\\p``, a digit or
    another letter escape, a ``]`` or ``)`` alone, a character outside printable ASCII.
    """
    runs: list[str] = []
    run: list[str] = []
    position = 0
    length = len(pattern)
    while position < length:
        char = pattern[position]
        position += 1
        if char in _PLAIN:
            run.append(char)
        elif char == "\\":
            if position == length:
                return None
            escaped = pattern[position]
            position += 1
            if escaped in _ESCAPED_PLAIN:
                run.append(escaped)
            elif escaped in _ESCAPED_OTHER:
                runs.append("".join(run))
                run = []
            else:
                return None
        elif char in _QUANTIFIERS:
            # The atom before it may be absent or repeated: it ends the run and is not
            # part of it (if it was a literal character). A second quantifier (``+?``)
            # finds the run empty, as does one after a class or a group.
            if run:
                run.pop()
            runs.append("".join(run))
            run = []
        elif char in ".^$":
            runs.append("".join(run))
            run = []
        elif char in "([":  # one atom, read past whole: it ends the run
            end = _group_end(pattern, position) if char == "(" else _class_end(pattern, position)
            if end is None:
                return None
            position = end
            runs.append("".join(run))
            run = []
        else:  # | ) ] { }, or any character outside printable ASCII
            return None
    runs.append("".join(run))
    best = max(runs, key=len)
    return best or None


class _Pattern:
    """A pattern compiled straight onto RE2's C++ binding.

    google-re2's Python ``search`` builds match objects and maps byte offsets back to
    characters; raw only needs a yes or no, so this calls ``RE2::Match`` on the UTF-8
    bytes once. A lone surrogate (possible in a JSON string) is read as U+FFFD, the
    replacement character, rather than raising.

    ``required`` holds ASCII strings of which every match contains at least one (see
    :func:`required_literal`); a text that contains none of them cannot match, and is
    answered without encoding it or calling RE2. This only saves time: the answer is
    RE2's in every case.
    """

    __slots__ = ("_match", "pattern", "required")

    def __init__(self, pattern: str, required: tuple[str, ...] = ()) -> None:
        compiled = _re2.RE2(pattern.encode("utf-8", "surrogatepass"), _OPTIONS)
        if not compiled.ok():
            detail = compiled.error()
            if isinstance(detail, bytes):
                detail = detail.decode("utf-8", "replace")
            raise PatternError(str(detail))
        self.pattern = pattern
        self._match = compiled.Match
        self.required = required

    def test(self, text: str) -> bool:
        """Whether the pattern matches anywhere in ``text``."""
        required = self.required
        if required:
            if len(required) == 1:
                if required[0] not in text:
                    return False
            else:
                for literal in required:
                    if literal in text:
                        break
                else:
                    return False
        try:
            data = text.encode("utf-8")
        except UnicodeEncodeError:
            data = _LONE_SURROGATE.sub("\ufffd", text).encode("utf-8")
        return bool(self._match(_UNANCHORED, data, 0, len(data))[0] != _NO_MATCH)

    def search(self, text: str) -> object | None:
        """``True`` when the pattern matches anywhere in ``text``, else ``None``."""
        return True if self.test(text) else None


@lru_cache(maxsize=4096)
def compile_pattern(pattern: str) -> CompiledPattern:
    """Compile ``pattern`` with RE2 (unanchored, case-sensitive, UTF-8).

    Raises :class:`PatternError` with RE2's message, e.g. ``invalid perl operator: (?=``
    for a look-ahead or ``invalid escape sequence: \\1`` for a backreference.
    """
    literal = required_literal(pattern)
    return _Pattern(pattern, (literal,) if literal is not None else ())


@lru_cache(maxsize=256)
def _compile_joined(patterns: tuple[str, ...]) -> CompiledPattern:
    # A match of the alternation is a match of one part, so it contains that part's
    # literal: the alternation may skip RE2 when no part's literal is in the text, which
    # is only known when every part has one. Past a few literals, looking for each would
    # cost more than the one RE2 pass it may save.
    literals = [required_literal(pattern) for pattern in patterns]
    found = tuple(dict.fromkeys(literal for literal in literals if literal is not None))
    complete = len(found) <= _JOINED_LITERALS and None not in literals
    required = found if complete else ()
    return _Pattern("|".join(f"(?:{pattern})" for pattern in patterns), required)


def compile_any(patterns: Sequence[str]) -> CompiledPattern:
    """One pattern that matches wherever any of ``patterns`` matches: one RE2 pass where
    each of them would take one.

    Each pattern is compiled alone first (so an invalid one raises its own error), then all
    are joined as alternatives, each in a group of its own, which keeps an inline flag such
    as ``(?i)`` to its pattern; an unanchored search of the alternation finds a match exactly
    when one of the parts would. Raises :class:`PatternError` when they cannot be joined:
    RE2 refuses the alternation (too large, a group name used twice), or a part quotes with
    ``\\Q`` (an unterminated quote would run on past its group and swallow the next part).
    """
    parts = tuple(patterns)
    if not parts:
        raise PatternError("no patterns to join")
    for pattern in parts:
        compile_pattern(pattern)
        if "\\Q" in pattern:
            raise PatternError(f"{pattern!r} quotes with \\Q and is not joined with others")
    if len(parts) == 1:
        return compile_pattern(parts[0])
    return _compile_joined(parts)
