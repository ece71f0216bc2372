"""Opaque display-history cursors: where a page ended, in which direction, in which session.

A cursor names a position in the session's display history (keyset paging: the next page
is the rows after it, found through the primary key, never with ``OFFSET``), so it stays
valid while the session grows and reading at any depth costs the same. It is URL-safe
base64 of ``2:<f|b>:<position>:<session id>``; callers treat it as an opaque string.
"""

from __future__ import annotations

import base64
import binascii

import attrs

from raw_core.errors import InvalidCursor
from raw_core.sessions.sqlite._schema import SEQ_BITS

__all__ = ["Cursor"]

_VERSION = "2"  # 1 named the first layout's file-wide numbers, which no longer exist
_END = 1 << SEQ_BITS  # past every position of a session


@attrs.frozen(kw_only=True)
class Cursor:
    """A page boundary: rows after ``position`` (oldest first) or before it (newest
    first)."""

    session_id: str
    newest_first: bool
    position: int

    def encode(self) -> str:
        """The opaque string handed to callers."""
        direction = "b" if self.newest_first else "f"
        raw = f"{_VERSION}:{direction}:{self.position}:{self.session_id}".encode("ascii")
        return base64.urlsafe_b64encode(raw).decode("ascii").rstrip("=")

    @classmethod
    def decode(cls, text: str, *, session_id: str) -> Cursor:
        """Read a cursor made by :meth:`encode` for ``session_id``.

        Raises :class:`StoreError` (``field="cursor"``) for anything else, including a
        cursor of another session.
        """
        try:
            raw = base64.urlsafe_b64decode(text + "=" * (-len(text) % 4)).decode("ascii")
            version, direction, position_text, owner = raw.split(":")
            position = int(position_text)
        except (ValueError, binascii.Error, UnicodeDecodeError):
            raise InvalidCursor(
                "expected a cursor returned by a page of this session, found an unreadable string",
                field="cursor",
                session_id=session_id,
            ) from None
        if version != _VERSION or direction not in ("f", "b") or not 0 <= position <= _END:
            raise InvalidCursor(
                "expected a cursor returned by a page of this session, found an unknown form",
                field="cursor",
                session_id=session_id,
            )
        if owner != session_id:
            raise InvalidCursor(
                f"expected a cursor of session {session_id}, found one of session {owner}",
                field="cursor",
                session_id=session_id,
            )
        return cls(session_id=owner, newest_first=direction == "b", position=position)
