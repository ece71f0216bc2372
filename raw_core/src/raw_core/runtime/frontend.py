"""The front end: the person's side of a session, as one object.

A front end (the terminal, an ACP client, the dashboard, an embedding app, a test) is
what the session service talks to while a turn runs: it receives every event, it is asked
when a call needs approval, and it shows panels as tools update them (``show_panel``).
Later it also answers interaction requests; that extension point is named here already,
with a default that says "not available", so a front end written today keeps working when
it arrives.

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

from collections.abc import Awaitable, Callable
from typing import TYPE_CHECKING, Any, Protocol, runtime_checkable

if TYPE_CHECKING:
    from raw_core.runtime.events import LoopEvent
    from raw_core.sessions.backend import ApprovalAnswer, PanelUpdate
    from raw_core.tools.calls import ApprovalRequest

__all__ = ["BaseFrontEnd", "CallbackFrontEnd", "FrontEnd"]


@runtime_checkable
class FrontEnd(Protocol):
    """What the session service needs from a front end.

    ``name`` says who answered an approval (``"terminal"``, ``"acp"``, ...), stored with
    the answer. ``can_approve`` says whether :meth:`approve` can ask a person at all: when
    it cannot (no terminal), an ask ends at once as ``approval_unavailable`` unless the
    service was told to wait for another front end to answer.
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
        the same request first, or the call is cancelled."""
        ...

    # --- extension points for later capabilities ---------------------------------------

    async def interact(self, request: Any) -> Any:
        """Answer an interaction request (``ask_user``); ``None`` when this front end
        cannot. Reserved for the interaction requests of spec 000."""
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
    wants_events = True

    def on_event(self, event: LoopEvent) -> None:
        """Ignore the event."""

    async def approve(self, request: ApprovalRequest) -> ApprovalAnswer | bool:
        """Decline: a front end that cannot ask never approves."""
        return False

    async def interact(self, request: Any) -> Any:
        """Interactions are not available here."""
        return None

    async def show_panel(self, update: PanelUpdate) -> None:
        """Panels are not shown here."""


class CallbackFrontEnd(BaseFrontEnd):
    """A front end made of functions, for embedding apps, scripts and tests.

    ``on_event`` receives each event (none given: events are not even built);
    ``approve`` is an async function ``(request) -> bool | ApprovalAnswer`` (none given:
    nobody can be asked, so an ask ends as ``approval_unavailable``); ``show_panel`` an
    async function ``(update) -> None`` (none given: panels are not shown).
    """

    def __init__(
        self,
        *,
        on_event: Callable[[LoopEvent], Any] | None = None,
        approve: Callable[[ApprovalRequest], Awaitable[ApprovalAnswer | bool]] | None = None,
        show_panel: Callable[[PanelUpdate], Awaitable[None]] | None = None,
        name: str = "app",
    ) -> None:
        self._on_event = on_event
        self._approve = approve
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

    async def show_panel(self, update: PanelUpdate) -> None:
        """Pass the update on, when a callback was given."""
        if self._show_panel is not None:
            await self._show_panel(update)
