"""Rule globs over tool identities: ``*`` is any run of characters, ``?`` is one character.

Nothing else is special: ``/`` is an ordinary character (so ``mcp/*`` matches
``mcp/search/query``), and ``[``, ``]``, ``{``, ``}`` and ``\\`` stand for themselves. There
is no escape, and none is needed: identities never contain ``*`` or ``?``.

Matching is the classic two-pointer algorithm with one backtrack point (the last ``*``
seen), so it runs in time proportional to the product of the two lengths at worst and never
recurses.
"""

from __future__ import annotations

from typing import Final

__all__ = ["Glob"]

_STAR: Final = "*"
_ONE: Final = "?"


class Glob:
    """A compiled rule glob. ``Glob("builtin/*").matches("builtin/bash")`` is true."""

    __slots__ = ("_literal", "pattern")

    def __init__(self, pattern: str) -> None:
        self.pattern = pattern
        has_wildcard = _STAR in pattern or _ONE in pattern
        self._literal: str | None = None if has_wildcard else pattern

    def __repr__(self) -> str:
        return f"Glob({self.pattern!r})"

    @property
    def is_literal(self) -> bool:
        """Whether the glob has no wildcard and so matches exactly one identity."""
        return self._literal is not None

    def matches(self, text: str) -> bool:
        """Whether the whole of ``text`` matches the glob."""
        if self._literal is not None:
            return text == self._literal
        pattern = self.pattern
        p = t = 0
        star = -1  # index in pattern just after the last '*' seen
        resume = 0  # index in text where that '*' would take one more character
        while t < len(text):
            if p < len(pattern) and pattern[p] == _STAR:
                star = p + 1
                resume = t
                p += 1
            elif p < len(pattern) and (pattern[p] == _ONE or pattern[p] == text[t]):
                p += 1
                t += 1
            elif star >= 0:
                resume += 1
                t = resume
                p = star
            else:
                return False
        while p < len(pattern) and pattern[p] == _STAR:
            p += 1
        return p == len(pattern)
