"""Waking readers: LISTEN on one dedicated connection per backend, events per key.

A commit that adds to a session (or ends a request) also runs ``pg_notify`` with the
session's (or request's) id on :data:`~raw_store_postgres._schema.CHANNEL`; the
notification carries nothing else, and is delivered when the commit is, to every backend
listening, in any process on any host. A woken waiter reads the tables.

There is no background task: the waiters take turns reading the connection. Whoever waits
and finds no one reading becomes the reader, dispatches every notification to the events
of its key, and hands over (the next waiter takes the lock) once its own event is set. A
commit of this backend sets its events at once, without the round trip.

The connection is made (and ``LISTEN`` run) before a waiter first looks at the tables, so
a commit after that look is never missed. When the connection breaks, every waiter is
woken to look again, and the next wait makes a new connection; one that cannot be made is
``store_unavailable``.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from contextlib import aclosing
from typing import Final

import anyio

from raw_store_postgres._errors import database_errors
from raw_store_postgres._rows import Connection
from raw_store_postgres._schema import CHANNEL

__all__ = ["SAFETY_LOOK", "Wakeups"]

SAFETY_LOOK: Final = 30.0
"""Seconds after which a waiter looks at the tables again even if nothing woke it (a
notification cannot be lost while the connection holds; this bounds the damage if one
were)."""


class Wakeups:
    """The events waiters sleep on, and the connection whose notifications set them."""

    def __init__(self, connect: Callable[[], Awaitable[Connection]]) -> None:
        self._connect = connect
        self._connection: Connection | None = None
        self._connecting = anyio.Lock()
        self._reading = anyio.Lock()
        self._events: dict[str, anyio.Event] = {}
        self._closed = False

    def event(self, key: str) -> anyio.Event:
        """The event the next commit about ``key`` (a session or request id) sets."""
        event = self._events.get(key)
        if event is None:
            event = self._events[key] = anyio.Event()
        return event

    def notify(self, key: str) -> None:
        """Wake the waiters on ``key``."""
        event = self._events.pop(key, None)
        if event is not None:
            event.set()

    def wake_all(self) -> None:
        """Wake every waiter (they look again)."""
        events, self._events = self._events, {}
        for event in events.values():
            event.set()

    async def listening(self) -> None:
        """Make sure the connection is there and listens (before a waiter looks)."""
        if self._connection is not None and not self._connection.closed:
            return
        async with self._connecting:
            if self._connection is not None and not self._connection.closed:
                return
            if self._closed:
                return
            connection = await self._connect()
            try:
                with database_errors("listening for commits"):
                    await connection.execute(f"LISTEN {CHANNEL}")
            except BaseException:
                with anyio.CancelScope(shield=True):
                    await connection.close()
                raise
            self._connection = connection
        self.wake_all()  # a new connection: whatever came meanwhile was missed

    async def wait(self, event: anyio.Event) -> None:
        """Until ``event`` is set (or :data:`SAFETY_LOOK` passed): read notifications
        while no other waiter does."""
        with anyio.move_on_after(SAFETY_LOOK):
            async with anyio.create_task_group() as group:

                async def read() -> None:
                    async with self._reading:
                        while not event.is_set():
                            await self._read_until(event)
                    group.cancel_scope.cancel()

                group.start_soon(read)
                await event.wait()
                group.cancel_scope.cancel()

    async def _read_until(self, event: anyio.Event) -> None:
        connection = self._connection
        if connection is None or connection.closed:
            self.wake_all()  # the connection is gone: look again, reconnecting first
            return
        try:
            async with aclosing(connection.notifies(timeout=SAFETY_LOOK)) as notifications:
                async for notification in notifications:
                    self.notify(notification.payload)
                    if event.is_set():
                        break
        except Exception:
            # The connection broke (the server restarted, say): drop it and wake every
            # waiter; their next look reconnects, or says the store is unavailable.
            self._connection = None
            with anyio.CancelScope(shield=True):
                await connection.close()
            self.wake_all()

    async def aclose(self) -> None:
        """Close the connection and wake every waiter."""
        self._closed = True
        connection, self._connection = self._connection, None
        self.wake_all()
        if connection is not None:
            with anyio.CancelScope(shield=True):
                await connection.close()
