"""When a session expires, by the store's clock.

A session expires ``expire_after`` after its last conversation activity (an append or a
compaction). From then on it is not listed, and reading it or opening it for writing
raises ``session_expired`` naming when it expired, so nothing revives it; the first write
of a store object (creating a session, opening one for writing) deletes the expired
sessions' data. The clock is the store's one source of "now": every time the store stamps
and every expiry it judges come from it, so a test (or an embedder) can move time without
waiting for it.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from datetime import datetime, timedelta

from raw_core.errors import SessionExpired
from raw_core.sessions.sqlite._rows import from_ms, to_ms

__all__ = ["Clock", "Expiry"]

Clock = Callable[[], datetime]
"""The current time as an aware datetime."""


def _system_ms() -> int:
    return time.time_ns() // 1_000_000


class Expiry:
    """``expire_after`` and the clock of one store; its times are milliseconds since the
    epoch, as stored."""

    __slots__ = ("_after_ms", "after", "now_ms")

    def __init__(self, after: timedelta, clock: Clock | None = None) -> None:
        self.after = after
        self._after_ms = int(after.total_seconds() * 1000)
        # The clock's time; a plain function, since every append calls it.
        self.now_ms: Callable[[], int] = _system_ms if clock is None else lambda: to_ms(clock())

    def cutoff(self, now_ms: int | None = None) -> int:
        """The oldest last activity of a session that has not expired at ``now_ms``
        (default: the clock's time); one whose last activity is before it has expired."""
        return (self.now_ms() if now_ms is None else now_ms) - self._after_ms

    def check(self, session_id: str, last_activity_ms: int) -> None:
        """Raise ``session_expired`` when the session has expired by now."""
        if last_activity_ms < self.cutoff():
            raise self.expired(session_id, last_activity_ms)

    def expired(self, session_id: str, last_activity_ms: int) -> SessionExpired:
        """The error for a session that expired."""
        when = from_ms(last_activity_ms + self._after_ms)
        days = self.after.total_seconds() / 86400
        return SessionExpired(
            f"session {session_id} expired at {when:%Y-%m-%d %H:%M:%S} UTC, {days:g} days"
            " after its last activity: an expired session cannot be opened or resumed, and"
            " its data is deleted the next time the store is opened for writing",
            session_id=session_id,
            expired_at=when.isoformat(),
        )
