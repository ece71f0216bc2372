"""The only importer of google-re2: compile patterns quietly and translate RE2's errors.

RE2 runs in time linear in the input, so neither a user's rule nor a tool's schema
``pattern`` can hang the dispatcher. RE2 logs an invalid pattern to stderr unless told not
to, and its exception carries bytes and no position: this facade turns both into a
:class:`PatternError` whose message is RE2's own text.
"""

from __future__ import annotations

from functools import lru_cache
from typing import Protocol

import re2

__all__ = ["CompiledPattern", "PatternError", "compile_pattern"]


class CompiledPattern(Protocol):
    """What raw uses of a compiled RE2 pattern: an unanchored search."""

    @property
    def pattern(self) -> str: ...

    def search(self, text: str) -> object | None: ...


class PatternError(ValueError):
    """RE2 rejected a pattern (invalid, or a feature RE2 does not have)."""


def _quiet_options() -> object:
    options = re2.Options()
    options.log_errors = False
    return options


_OPTIONS = _quiet_options()


@lru_cache(maxsize=4096)
def compile_pattern(pattern: str) -> CompiledPattern:
    """Compile ``pattern`` with RE2 (unanchored, case-sensitive, UTF-8).

    Raises :class:`PatternError` with RE2's message, e.g. ``invalid perl operator: (?=``
    for a look-ahead or ``invalid escape sequence: \\1`` for a backreference.
    """
    try:
        compiled: CompiledPattern = re2.compile(pattern, _OPTIONS)
    except re2.error as exc:
        detail = exc.args[0] if exc.args else "invalid pattern"
        if isinstance(detail, bytes):
            detail = detail.decode("utf-8", "replace")
        raise PatternError(str(detail)) from None
    return compiled
