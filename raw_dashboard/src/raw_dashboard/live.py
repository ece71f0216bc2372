"""Turns the dashboard runs, and the live events its browsers watch.

A turn started from the browser runs in this process, in a task of the server: the
session is opened through the app (as its one writer) for the turn and closed when the
turn ends, so the terminal (or another dashboard) can continue it afterwards. Its events
go to a :class:`DashboardFrontEnd`, which hands each one to :class:`Hub`, the per-session
fan-out to every connected event stream.

The dashboard front end cannot ask on its own (``can_approve`` and ``can_interact`` are
False): an ask, or a tool's form (``ask_user``), is a stored pending request that waits
(``approval_wait`` of the app, or the form's own deadline) until some front end answers it
by id — the browser does, through ``POST /api/requests/{id}``. So a reload, or a second
browser, finds the same request waiting and can answer it.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any

import anyio
from anyio.abc import TaskGroup
from anyio.streams.memory import MemoryObjectSendStream

from raw_core import BaseFrontEnd
from raw_core.errors import RawError

if TYPE_CHECKING:
    from raw_core.app import App

__all__ = ["APPROVAL_WAIT", "DashboardFrontEnd", "Hub", "TurnRunner"]

APPROVAL_WAIT = 24 * 3600.0
"""Seconds an ask waits for a browser's answer (the longest an interaction may wait)."""


class Hub:
    """Per-session fan-out of live events (JSON-ready dicts) to subscribed streams."""

    def __init__(self) -> None:
        self._subscribers: dict[str, set[MemoryObjectSendStream[dict[str, Any]]]] = {}

    def subscribe(self, session_id: str, stream: MemoryObjectSendStream[dict[str, Any]]) -> None:
        """Deliver the session's live events to ``stream`` until :meth:`unsubscribe`."""
        self._subscribers.setdefault(session_id, set()).add(stream)

    def unsubscribe(self, session_id: str, stream: MemoryObjectSendStream[dict[str, Any]]) -> None:
        """Stop delivering to ``stream``."""
        found = self._subscribers.get(session_id)
        if found is not None:
            found.discard(stream)
            if not found:
                del self._subscribers[session_id]

    def publish(self, session_id: str, event: dict[str, Any]) -> None:
        """Hand ``event`` to every stream of the session, never waiting (a full stream
        drops it)."""
        for stream in tuple(self._subscribers.get(session_id, ())):
            try:
                stream.send_nowait(event)
            except anyio.WouldBlock:
                pass
            except (anyio.BrokenResourceError, anyio.ClosedResourceError):
                self.unsubscribe(session_id, stream)

    def subscribers(self, session_id: str) -> int:
        """How many streams watch the session."""
        return len(self._subscribers.get(session_id, ()))


class DashboardFrontEnd(BaseFrontEnd):
    """The front end of a turn the dashboard runs: every event goes to the hub."""

    name = "dashboard"
    can_approve = False
    can_interact = False
    wants_events = True

    def __init__(self, publish: Callable[[dict[str, Any]], None]) -> None:
        self._publish = publish

    def on_event(self, event: Any) -> None:
        """Publish the event's JSON form."""
        self._publish({"type": "live", "event": event.to_dict()})


class TurnRunner:
    """Runs the dashboard's turns and panel actions in the server's task group."""

    def __init__(self, app: App, hub: Hub, group: TaskGroup, *, agent: str | None) -> None:
        self.app = app
        self.hub = hub
        self._group = group
        self._agent = agent
        self._running: set[str] = set()
        self._ended: dict[str, anyio.Event] = {}

    def running(self, session_id: str) -> bool:
        """Whether this process runs a turn of the session now."""
        return session_id in self._running

    async def wait(self, session_id: str) -> None:
        """Return once no turn of the session runs in this process."""
        ended = self._ended.get(session_id)
        if ended is not None and session_id in self._running:
            await ended.wait()

    def front_end(self, session_id: str | None) -> DashboardFrontEnd:
        """A front end publishing to the session's streams (``None``: set once known)."""
        box: dict[str, str | None] = {"id": session_id}

        def publish(event: dict[str, Any]) -> None:
            known = box["id"]
            if known is None and event["event"].get("type") == "turn_started":
                known = box["id"] = event["event"].get("session_id")
            if known is not None:
                self.hub.publish(known, event)

        return DashboardFrontEnd(publish)

    async def start(
        self,
        session_id: str | None,
        prompt: str,
        *,
        cwd: str | None = None,
        agent: str | None = None,
    ) -> str:
        """Open the session (a new one when ``session_id`` is None) and run a turn with
        ``prompt`` in the background, with agent ``agent`` (default: the dashboard's); the
        session's id once it is open. Raises what
        opening raises (``session_locked`` when another writer holds it,
        ``session_not_found``...)."""
        opened = anyio.Event()
        outcome: dict[str, Any] = {}
        front_end = self.front_end(session_id)

        async def run() -> None:
            try:
                async with self.app.open_session(
                    session_id,
                    agent=agent if agent is not None else self._agent,
                    front_end=front_end,
                    cwd=cwd,  # titled by the loop: by its first prompt the hooks let through
                    wait=0,
                ) as session:
                    outcome["id"] = session.id
                    self._running.add(session.id)
                    ended = self._ended[session.id] = anyio.Event()
                    opened.set()
                    try:
                        await session.run_turn(prompt)
                    finally:
                        self._running.discard(session.id)
                        ended.set()
                        self.hub.publish(session.id, {"type": "status", "running": False})
            except Exception as exc:
                if not opened.is_set():  # opening failed: the caller reports it
                    outcome["error"] = exc
                    opened.set()
                    return
                # The turn's own errors end it as turn_ended; this is a failure around it
                # (closing the session): the browsers are told, the server goes on.
                error = (
                    exc.to_dict()
                    if isinstance(exc, RawError)
                    else {"code": "internal_error", "message": "the turn failed unexpectedly"}
                )
                self.hub.publish(
                    outcome["id"], {"type": "status", "running": False, "error": error}
                )

        self._group.start_soon(run)
        await opened.wait()
        if "error" in outcome:
            raise outcome["error"]
        started: str = outcome["id"]
        self.hub.publish(started, {"type": "status", "running": True})
        return started

    async def panel_action(self, session_id: str, panel: str, action: str) -> Any:
        """Run a panel action (``tool.source`` = ``"user_action"``); an ask rule still
        asks, and the request waits for an answer by id like a turn's."""
        return await self.app.panel_action(
            session_id, panel, action, agent=self._agent, front_end=self.front_end(session_id)
        )
