"""The tree-sitter-bash parser of each thread, and a parse stopped at a deadline."""

from __future__ import annotations

import threading
import time
from typing import Any, Final

__all__ = ["parse_within"]

_ASCII_ONLY: Final = bytes(range(0x80)) + b"a" * 0x80
"""Every byte of a multi-byte UTF-8 character read as ``a``, before parsing.

Bash reads such bytes as word characters, like ``a``, so the tree is the same and every
byte offset in it still points into the real text, which the words are read from. The
grammar's scanner, given a character past U+007F in some places (``{`` then U+376A8),
passes it to a C character-class function that only accepts values up to 255, which can
crash the process; it never sees one this way."""

_local = threading.local()


def _parser() -> Any:
    """This thread's parser (a parser must not be shared between threads), made on first
    use so that importing the toolkit does not load the grammar."""
    parser = getattr(_local, "parser", None)
    if parser is None:
        import tree_sitter
        import tree_sitter_bash

        parser = tree_sitter.Parser(tree_sitter.Language(tree_sitter_bash.language()))
        _local.parser = parser
    return parser


def parse_within(data: bytes, seconds: float) -> tuple[Any, float]:
    """The tree of ``data`` (``None`` when the parse ran past ``seconds``), and the
    seconds it took. The bytes past U+007F are read as ``a`` (:data:`_ASCII_ONLY`)."""
    view = memoryview(data.translate(_ASCII_ONLY))
    started = time.perf_counter()
    deadline = started + seconds

    def read(offset: int, _point: Any) -> memoryview:
        return view[offset:]

    def progress(_offset: int, _has_error: bool) -> bool:
        return time.perf_counter() > deadline  # True stops the parse

    parser = _parser()
    try:
        tree = parser.parse(read, progress_callback=progress)
    except ValueError:  # stopped by progress()
        tree = None
        parser.reset()  # else the next parse would resume this one, on other text
    return tree, time.perf_counter() - started
