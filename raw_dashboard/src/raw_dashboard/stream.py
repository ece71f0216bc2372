"""The event stream of one session, as server-sent events.

``GET /api/sessions/{id}/events?cursor=C`` streams, as ``data:`` lines of JSON (each with
a ``type``):

* ``item``: a display item appended after cursor ``C`` (what the user saw: messages, full
  tool output, approvals and their answers, panel updates), read from the store — so a
  turn that the terminal or another process runs shows up too, once committed. ``cursor``
  is the cursor after it, for reconnecting.
* ``live``: an event of a turn this process runs (``text_delta``, ``tool_call_started``,
  ``approval_requested``, ``turn_ended``...), as it happens.
* ``requests``: the session's pending requests, whenever they change (approvals waiting
  for an answer — also ones a turn in another process waits on).
* ``status``: whether this process runs a turn of the session (``running``).

The stream opens with the session's state: ``status`` first, then ``requests``; then
the rest as it comes.

A comment line is sent every 15 seconds so proxies and browsers keep the stream open.
The stream ends when the browser goes away; nothing the session does waits for it.
"""

from __future__ import annotations

import json
from typing import TYPE_CHECKING, Any

import anyio
from anyio.streams.memory import MemoryObjectReceiveStream, MemoryObjectSendStream
from starlette.types import Receive, Scope, Send

from raw_core.errors import RawError

if TYPE_CHECKING:
    from raw_core.app import App
    from raw_dashboard.live import Hub, TurnRunner

__all__ = ["EventStream", "request_json"]

_QUEUE = 1024
"""Events buffered per stream: a browser that falls this far behind misses live events
(it still gets every committed item from the store) rather than slowing the turn."""
_REQUESTS_EVERY = 1.0
"""Seconds between reads of the pending requests (a turn in another process adds one
without any event reaching this one)."""
_KEEPALIVE = 15.0


def request_json(request: Any) -> dict[str, Any]:
    """A :class:`PendingRequest` as the API shows it."""
    return {
        "id": request.id,
        "session_id": request.session_id,
        "kind": request.kind,
        "tool_call_id": request.tool_call_id,
        "show": request.show,
        "created_at": request.created_at.isoformat(),
        "deadline": request.deadline.isoformat() if request.deadline is not None else None,
        "state": request.state,
        "answer": request.answer.to_dict() if request.answer is not None else None,
    }


def encode(event: dict[str, Any]) -> bytes:
    """One server-sent event."""
    return b"data: " + json.dumps(event, default=str).encode() + b"\n\n"


class EventStream:
    """An ASGI response streaming one session's events (see the module docstring)."""

    def __init__(
        self, app: App, hub: Hub, runner: TurnRunner, session_id: str, cursor: str
    ) -> None:
        self._app = app
        self._hub = hub
        self._runner = runner
        self._session_id = session_id
        self._cursor = cursor

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        sender, events = anyio.create_memory_object_stream[dict[str, Any]](_QUEUE)
        try:
            await send(
                {
                    "type": "http.response.start",
                    "status": 200,
                    "headers": [
                        (b"content-type", b"text/event-stream; charset=utf-8"),
                        (b"cache-control", b"no-store"),
                        (b"x-accel-buffering", b"no"),
                    ],
                }
            )
            # The state first, in this order: status, then the pending requests; then
            # items, live events and request changes as they come. Live events are taken
            # only once the state is sent, so none comes before it (they are best-effort:
            # what a turn commits comes as items); a turn that started or ended while the
            # requests were read shows in a second status.
            running = self._runner.running(self._session_id)
            sender.send_nowait({"type": "status", "running": running})
            pending = await self._pending(sender)
            self._hub.subscribe(self._session_id, sender)
            if self._runner.running(self._session_id) != running:
                sender.send_nowait({"type": "status", "running": not running})
            async with anyio.create_task_group() as group:
                group.start_soon(self._items, sender.clone())
                if pending is not None:
                    group.start_soon(self._requests, sender.clone(), pending)
                group.start_soon(self._relay, events, send, group.cancel_scope)
                group.start_soon(self._until_gone, receive, group.cancel_scope)
        finally:
            self._hub.unsubscribe(self._session_id, sender)
            sender.close()
            events.close()

    async def _relay(
        self,
        events: MemoryObjectReceiveStream[dict[str, Any]],
        send: Send,
        scope: anyio.CancelScope,
    ) -> None:
        try:
            while True:
                with anyio.move_on_after(_KEEPALIVE):
                    event = await events.receive()
                    await send(
                        {"type": "http.response.body", "body": encode(event), "more_body": True}
                    )
                    continue
                await send(
                    {"type": "http.response.body", "body": b": keep-alive\n\n", "more_body": True}
                )
        except OSError:  # the client went away mid-write
            scope.cancel()

    async def _until_gone(self, receive: Receive, scope: anyio.CancelScope) -> None:
        while (await receive())["type"] != "http.disconnect":
            pass
        scope.cancel()

    async def _items(self, sender: MemoryObjectSendStream[dict[str, Any]]) -> None:
        """Every display item appended after the cursor, as the store commits it."""
        cursor = self._cursor
        with sender:
            while True:
                try:
                    page = await self._app.follow(self._session_id, cursor)
                except RawError as error:
                    await sender.send({"type": "error", "error": error.to_dict()})
                    return
                for item in page.items:
                    await sender.send({"type": "item", "item": item.to_dict()})
                if page.next_cursor is not None:
                    cursor = page.next_cursor
                    await sender.send({"type": "cursor", "cursor": cursor})

    async def _pending(self, sender: MemoryObjectSendStream[dict[str, Any]]) -> list[str] | None:
        """Send the pending requests; their ids (``None``: the session cannot be read)."""
        try:
            found = await self._app.pending_requests(self._session_id)
        except RawError:
            return None
        await sender.send({"type": "requests", "requests": [request_json(r) for r in found]})
        return [request.id for request in found]

    async def _requests(
        self, sender: MemoryObjectSendStream[dict[str, Any]], last: list[str]
    ) -> None:
        """The pending requests whenever they change (``last``: the ids sent first)."""
        with sender:
            while True:
                await anyio.sleep(_REQUESTS_EVERY)
                try:
                    found = await self._app.pending_requests(self._session_id)
                except RawError:
                    return
                ids = [request.id for request in found]
                if ids != last:
                    last = ids
                    await sender.send(
                        {"type": "requests", "requests": [request_json(r) for r in found]}
                    )
