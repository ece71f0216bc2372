"""The front end: the person's side of a session, as one object.

A front end (the terminal, an ACP client, the dashboard, an embedding app, a test) is
what the session service talks to while a turn runs: it receives every event, it is asked
when a call needs approval, it answers a tool's questions (interaction requests, when its
``can_interact`` is true), and it shows panels as tools update them (``show_panel``).

Implement :class:`FrontEnd` directly, or subclass :class:`BaseFrontEnd` and override only
what you need::

    class Printer(BaseFrontEnd):
        name = "printer"

        def on_event(self, event):
            print(event.to_dict()["type"])

Any front end can also answer a pending request by id through
:meth:`raw_core.app.App.answer_request`, whichever front end started the turn.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Mapping
from typing import TYPE_CHECKING, Any, Protocol, runtime_checkable

if TYPE_CHECKING:
    from raw_core.runtime.events import LoopEvent
    from raw_core.sessions.backend import ApprovalAnswer, InteractionAnswer, PanelUpdate
    from raw_core.tools.calls import ApprovalRequest
    from raw_core.tools.interactions import InteractionRequest

__all__ = ["BaseFrontEnd", "CallbackFrontEnd", "FrontEnd"]


@runtime_checkable
class FrontEnd(Protocol):
    """What the session service needs from a front end.

    ``name`` says who answered an approval (``"terminal"``, ``"acp"``, ...), stored with
    the answer. ``can_approve`` says whether :meth:`approve` can ask a person at all: when
    it cannot (no terminal), an ask ends at once as ``approval_unavailable`` unless the
    service was told to wait for another front end to answer. A front end may also have
    ``can_interact`` (false when missing): whether :meth:`interact` can ask a person; when
    it cannot, a tool's question ends at once as ``interaction_unavailable``, with the same
    exception.
    """

    @property
    def name(self) -> str:
        """Who this front end is, as stored with the answers it gives."""
        ...

    @property
    def can_approve(self) -> bool:
        """Whether :meth:`approve` can ask a person."""
        ...

    def on_event(self, event: LoopEvent) -> None:
        """Receive one event of the running turn (a detached copy). Called on the event
        loop: return quickly; an exception is logged and the turn goes on."""
        ...

    async def approve(self, request: ApprovalRequest) -> ApprovalAnswer | bool:
        """Ask whether the call may run; show ``request.effects`` apart from the
        arguments. Cancelled (and the answer ignored) when another front end answers
        the same request first, or the call is cancelled. An
        :class:`~raw_core.sessions.backend.ApprovalAnswer` declining with a ``message``
        passes the message on to the model."""
        ...

    async def interact(
        self, request: InteractionRequest
    ) -> InteractionAnswer | Mapping[str, Any] | None:
        """Ask the person the request's form (``request.form``: text, single-select and
        multi-select fields) and return the values keyed by field id (or an
        :class:`~raw_core.sessions.backend.InteractionAnswer`); ``None`` when the person
        cancelled the form. Values that do not fit the form are ignored (and logged): the
        request stays pending. Cancelled like :meth:`approve`."""
        ...

    async def show_panel(self, update: PanelUpdate) -> None:
        """Show an accepted panel update (``raw.panel/2``): the panel's ``identity`` and
        id, its ``declaration`` (title, placement...), ``op``, ``revision`` and the
        ``document`` after it (``None`` once closed). Called while the tool's call runs,
        on the event loop; an exception is logged and the call goes on. Every update,
        rejected ones too, also arrives as a ``panel_updated`` event."""
        ...


class BaseFrontEnd:
    """A front end that shows nothing and can ask nobody; override what you support."""

    name = "app"
    can_approve = False
    can_interact = False
    wants_events = True

    def on_event(self, event: LoopEvent) -> None:
        """Ignore the event."""

    async def approve(self, request: ApprovalRequest) -> ApprovalAnswer | bool:
        """Decline: a front end that cannot ask never approves."""
        return False

    async def interact(
        self, request: InteractionRequest
    ) -> InteractionAnswer | Mapping[str, Any] | None:
        """Not asked: ``can_interact`` is false."""
        return None

    async def show_panel(self, update: PanelUpdate) -> None:
        """Panels are not shown here."""


class CallbackFrontEnd(BaseFrontEnd):
    """A front end made of functions, for embedding apps, scripts and tests.

    ``on_event`` receives each event (none given: events are not even built);
    ``approve`` is an async function ``(request) -> bool | ApprovalAnswer`` (none given:
    nobody can be asked, so an ask ends as ``approval_unavailable``); ``interact`` an async
    function ``(request) -> values | InteractionAnswer | None`` (none given: a tool's
    question ends as ``interaction_unavailable``); ``show_panel`` an async function
    ``(update) -> None`` (none given: panels are not shown).
    """

    def __init__(
        self,
        *,
        on_event: Callable[[LoopEvent], Any] | None = None,
        approve: Callable[[ApprovalRequest], Awaitable[ApprovalAnswer | bool]] | None = None,
        show_panel: Callable[[PanelUpdate], Awaitable[None]] | None = None,
        interact: Callable[
            [InteractionRequest], Awaitable[InteractionAnswer | Mapping[str, Any] | None]
        ]
        | None = None,
        name: str = "app",
    ) -> None:
        self._on_event = on_event
        self._approve = approve
        self._interact = interact
        self.can_interact = interact is not None
        self._show_panel = show_panel
        self.name = name
        self.can_approve = approve is not None
        self.wants_events = on_event is not None

    def on_event(self, event: LoopEvent) -> None:
        """Pass the event on, when a callback was given."""
        if self._on_event is not None:
            self._on_event(event)

    async def approve(self, request: ApprovalRequest) -> ApprovalAnswer | bool:
        """Ask the callback; without one, decline."""
        if self._approve is None:
            return False
        return await self._approve(request)

    async def interact(
        self, request: InteractionRequest
    ) -> InteractionAnswer | Mapping[str, Any] | None:
        """Ask the callback; without one, nothing (never called then)."""
        if self._interact is None:
            return None
        return await self._interact(request)

    async def show_panel(self, update: PanelUpdate) -> None:
        """Pass the update on, when a callback was given."""
        if self._show_panel is not None:
            await self._show_panel(update)
