"""One writer per session: a session-level advisory lock on the writer's own connection.

``pg_try_advisory_lock(LOCK_SPACE, session key)`` is held by the writer's dedicated
connection (never a pooled one: advisory locks belong to a connection and are re-entrant,
so behind a pool two writers could share one). The server releases it when that
connection ends — a closed connection, a killed process, a host whose connection the
server drops. Every write of the writer goes through the same connection, so a writer
whose connection died can write nothing until it holds the lock again.

Deleting and pruning take the transaction-level lock of the same key
(``pg_try_advisory_xact_lock``), which conflicts with the writer's: a session being
written is neither deleted nor pruned.

Waiting for another writer polls ``pg_try_advisory_lock`` with growing pauses (never a
blocking ``pg_advisory_lock``, which would hold a server backend and a statement open for
the whole wait).
"""

from __future__ import annotations

import time
from collections.abc import Awaitable, Callable
from typing import Final

import anyio

from raw_core.errors import SessionLocked
from raw_store_postgres._errors import database_errors
from raw_store_postgres._rows import Connection
from raw_store_postgres._schema import LOCK_SPACE

__all__ = ["locked", "poll", "try_lock", "unlock"]

_FIRST_PAUSE: Final = 0.005
_LONGEST_PAUSE: Final = 0.1


async def poll(attempt: Callable[[], Awaitable[bool]], wait: float) -> bool:
    """Call ``attempt`` until it returns True or ``wait`` seconds have passed (at least
    once); whether it succeeded. Sleeps without blocking the event loop."""
    deadline = time.monotonic() + wait
    pause = _FIRST_PAUSE
    while True:
        if await attempt():
            return True
        left = deadline - time.monotonic()
        if left <= 0:
            return False
        await anyio.sleep(min(pause, left))
        pause = min(pause * 2, _LONGEST_PAUSE)


async def try_lock(connection: Connection, key: int, session_id: str) -> bool:
    """One try at the session's writer lock on ``connection``."""
    with database_errors(f"locking session {session_id}"):
        cursor = await connection.execute("SELECT pg_try_advisory_lock(%s, %s)", (LOCK_SPACE, key))
        row = await cursor.fetchone()
    return bool(row and row[0])


async def unlock(connection: Connection, key: int, session_id: str) -> None:
    """Release the writer lock now (closing the connection would too, but the server
    ends a closed connection's backend a moment later)."""
    with database_errors(f"unlocking session {session_id}"):
        await connection.execute("SELECT pg_advisory_unlock(%s, %s)", (LOCK_SPACE, key))


def locked(session_id: str, wait: float, why: str = "") -> SessionLocked:
    """What a writer that did not get the session raises."""
    return SessionLocked(
        f"session {session_id} is being written by another raw (waited {wait:g} s)"
        + (f": {why}" if why else ""),
        session_id=session_id,
    )
