"""The pending requests of :class:`raw_store_postgres.backend.PostgresBackend`: reading
them, ending one by id (an answer or a cancel, in one compare-and-set), and waiting for
the end of one, in any process.

A request ends exactly once: the ``UPDATE`` only takes a row that is still pending and
whose deadline has not passed; past its deadline the row is marked expired instead. Every
end is announced on the backend's channel, so waiters in other processes wake.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import Protocol, TypeVar

from raw_core.sessions.backend import PendingRequest, RequestAnswer
from raw_store_postgres._queries import list_requests_of, request_on
from raw_store_postgres._rows import (
    Connection,
    Expiry,
    is_request_id,
    is_session_id,
    not_found,
    not_pending,
    request_not_found,
)
from raw_store_postgres._schema import CHANNEL, SCHEMA
from raw_store_postgres._wakeups import Wakeups

__all__ = ["Requests"]

T = TypeVar("T")

_ANSWER = (
    f"UPDATE {SCHEMA}.requests SET state = %(state)s, answer = %(answer)s,"
    " answered_at = %(now)s WHERE id = %(id)s AND state = 'pending'"
    " AND (deadline IS NULL OR deadline > %(now)s)"
)
_EXPIRE = (
    f"UPDATE {SCHEMA}.requests SET state = 'expired', answered_at = %(now)s"
    " WHERE id = %(id)s AND state = 'pending'"
)


class _OnPool(Protocol):
    async def __call__(self, doing: str, run: Callable[[Connection], Awaitable[T]]) -> T: ...


class _Until(Protocol):
    async def __call__(self, key: str, look: Callable[[], Awaitable[T | None]]) -> T: ...


class Requests:
    """The request operations of one backend, on its pool (``on_pool``), its wake-ups and
    its clock (``expiry``); ``until`` waits for a commit about a key."""

    def __init__(self, on_pool: _OnPool, until: _Until, wakeups: Wakeups, expiry: Expiry) -> None:
        self._on_pool = on_pool
        self._until = until
        self._wakeups = wakeups
        self._expiry = expiry

    async def get(self, request_id: str) -> PendingRequest:
        """One request; ``request_not_found`` when there is none."""
        if not is_request_id(request_id):
            raise request_not_found(request_id)
        found = await self._on_pool(
            f"reading request {request_id}",
            lambda connection: request_on(connection, request_id),
        )
        if found is None:
            raise request_not_found(request_id)
        return found

    async def listing(
        self, session_id: str, *, pending_only: bool = True
    ) -> tuple[PendingRequest, ...]:
        """A session's requests, oldest first."""
        if not is_session_id(session_id):
            raise not_found(session_id)
        return await self._on_pool(
            f"reading the requests of session {session_id}",
            lambda connection: list_requests_of(
                connection, session_id, pending_only=pending_only, expiry=self._expiry
            ),
        )

    async def answer(self, request_id: str, answer: RequestAnswer) -> PendingRequest:
        """Answer a pending request: the first end wins."""
        from raw_core.sessions.sqlite.entries import answer_state, check_closing, dumps_json

        state = answer_state(answer)
        return await self._close_pending(
            request_id,
            state,
            dumps_json(answer.to_dict()),
            lambda current: check_closing(current.kind, state, answer),
            "answering",
        )

    async def cancel(self, request_id: str) -> PendingRequest:
        """Cancel a pending interaction request (it stores no answer): the first end wins;
        ``ValueError`` for an approval request."""
        from raw_core.sessions.sqlite.entries import check_cancelling

        return await self._close_pending(
            request_id, "cancelled", None, check_cancelling, "cancelling"
        )

    async def _close_pending(
        self,
        request_id: str,
        state: str,
        answer: str | None,
        check: Callable[[PendingRequest], None],
        doing: str,
    ) -> PendingRequest:
        """End a pending request as ``state`` (with its stored ``answer`` JSON) after
        ``check`` accepts it (``ValueError`` else), and wake its waiters: the first end
        wins; past its deadline it is marked expired instead (``request_not_pending``)."""
        if not is_request_id(request_id):
            raise request_not_found(request_id)
        values = {"id": request_id, "state": state, "answer": answer, "now": self._expiry.now()}

        async def run(connection: Connection) -> tuple[PendingRequest | None, bool]:
            async with connection.transaction():
                current = await request_on(connection, request_id)
                if current is None:
                    return None, False
                check(current)
                taken = (await connection.execute(_ANSWER, values)).rowcount > 0
                if not taken:
                    await connection.execute(_EXPIRE, values)
                await connection.execute("SELECT pg_notify(%s, %s)", (CHANNEL, request_id))
                return await request_on(connection, request_id), taken

        try:
            request, taken = await self._on_pool(f"{doing} request {request_id}", run)
        finally:
            self._wakeups.notify(request_id)
        if request is None:
            raise request_not_found(request_id)
        if not taken:
            raise not_pending(request)
        return request

    async def wait_for_answer(self, request_id: str) -> PendingRequest:
        """The request once it is no longer pending, ended in any process."""

        async def look() -> PendingRequest | None:
            request = await self.get(request_id)
            return None if request.state == "pending" else request

        return await self._until(request_id, look)
