"""Opaque display-history cursors: where a page ended, in which direction, in which session.

Every session backend hands out the same kind of cursor. A cursor names a position in the
session's display history (keyset paging: the next page is the rows after it, found
through an index, never with ``OFFSET``), so it stays valid while the session grows and
reading at any depth costs the same. It is URL-safe base64 of
``<format>:<f|b>:<position>:<session id>``, where the format tag is the backend's own (a
cursor of one backend's layout is refused by another); callers treat it as an opaque
string. :class:`CursorFormat` is the one codec, and the one place its errors are worded.
"""

from __future__ import annotations

import base64
import binascii

import attrs

from raw_core.errors import InvalidCursor

__all__ = ["Cursor", "CursorFormat"]


@attrs.frozen(kw_only=True)
class Cursor:
    """A page boundary: entries after ``position`` (oldest first) or before it (newest
    first)."""

    session_id: str
    newest_first: bool
    position: int


@attrs.frozen
class CursorFormat:
    """A backend's cursors: its format ``tag`` and ``end``, a position past every entry of
    a session."""

    tag: str
    end: int

    def encode(self, cursor: Cursor) -> str:
        """The opaque string handed to callers."""
        direction = "b" if cursor.newest_first else "f"
        text = f"{self.tag}:{direction}:{cursor.position}:{cursor.session_id}"
        return base64.urlsafe_b64encode(text.encode("ascii")).decode("ascii").rstrip("=")

    def decode(self, text: str, *, session_id: str, newest_first: bool) -> Cursor:
        """The cursor :meth:`encode` made for ``session_id`` in that order;
        ``invalid_cursor`` (``field="cursor"``) for anything else: an unreadable string,
        another format, a cursor of another session or of the other order."""
        try:
            raw = base64.urlsafe_b64decode(text + "=" * (-len(text) % 4)).decode("ascii")
            tag, direction, position_text, owner = raw.split(":")
            position = int(position_text)
        except (ValueError, binascii.Error, UnicodeDecodeError):
            raise InvalidCursor(
                "expected a cursor returned by a page of this session, found an unreadable string",
                field="cursor",
                session_id=session_id,
            ) from None
        if tag != self.tag or direction not in ("f", "b") or not 0 <= position <= self.end:
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
        if (direction == "b") != newest_first:
            found = "newest first" if direction == "b" else "oldest first"
            wanted = "newest first" if newest_first else "oldest first"
            raise InvalidCursor(
                f"expected a cursor that pages {wanted}, found one that pages {found} (a"
                " cursor keeps the order of the page that returned it)",
                field="cursor",
                session_id=session_id,
            )
        return Cursor(session_id=owner, newest_first=newest_first, position=position)
