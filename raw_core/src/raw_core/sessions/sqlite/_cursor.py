"""The SQLite backend's cursor format (:mod:`raw_core.sessions.cursors` is the codec): a
position is a row's number within its session's own range of display rows."""

from __future__ import annotations

from typing import Final

from raw_core.sessions.cursors import CursorFormat
from raw_core.sessions.sqlite._schema import SEQ_BITS

__all__ = ["CURSORS"]

CURSORS: Final = CursorFormat("2", 1 << SEQ_BITS)
"""Format 2 (format 1 named the first layout's file-wide numbers, which no longer exist)."""
