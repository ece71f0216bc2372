"""The only importer of google-re2: compile patterns quietly and translate RE2's errors.

RE2 runs in time linear in the input, so neither a user's rule nor a tool's schema
``pattern`` can hang the dispatcher. RE2 logs an invalid pattern to stderr unless told not
to, and its exception carries bytes and no position: this facade turns both into a
:class:`PatternError` whose message is RE2's own text.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from functools import lru_cache
from typing import Protocol

import re2
from re2 import _re2

__all__ = ["CompiledPattern", "PatternError", "compile_any", "compile_pattern"]


class CompiledPattern(Protocol):
    """What raw uses of a compiled RE2 pattern: an unanchored search."""

    @property
    def pattern(self) -> str: ...

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


class _Pattern:
    """A pattern compiled straight onto RE2's C++ binding.

    google-re2's Python ``search`` builds match objects and maps byte offsets back to
    characters; raw only needs a yes or no, so this calls ``RE2::Match`` on the UTF-8
    bytes once. A lone surrogate (possible in a JSON string) is read as U+FFFD, the
    replacement character, rather than raising.
    """

    __slots__ = ("_match", "pattern")

    def __init__(self, pattern: str) -> None:
        compiled = _re2.RE2(pattern.encode("utf-8", "surrogatepass"), _OPTIONS)
        if not compiled.ok():
            detail = compiled.error()
            if isinstance(detail, bytes):
                detail = detail.decode("utf-8", "replace")
            raise PatternError(str(detail))
        self.pattern = pattern
        self._match = compiled.Match

    def test(self, text: str) -> bool:
        """Whether the pattern matches anywhere in ``text``."""
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
    return _Pattern(pattern)


@lru_cache(maxsize=256)
def _compile_joined(patterns: tuple[str, ...]) -> CompiledPattern:
    return _Pattern("|".join(f"(?:{pattern})" for pattern in patterns))


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
