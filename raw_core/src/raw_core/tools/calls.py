"""The values that travel with one tool call: the call (the one
:class:`~raw_core.sessions.messages.ToolCall` record, re-exported here), its signal, its
context, the approval request, verdicts, and the payload hooks receive.

These are plain records; the dispatcher (:mod:`raw_core.dispatch`) builds and uses them.
The protocols :class:`VarReader` and :class:`SkillReader` say what a tool may call on its
context's services, and :data:`CheckAnswer`, :data:`CallNext` and :data:`Middleware` name
what the runtime hooks return, so that mypy checks tool and plug-in code against them.
"""

from __future__ import annotations

import math
import threading
from collections.abc import Awaitable, Callable, Mapping, Sequence
from types import TracebackType
from typing import TYPE_CHECKING, Any, Final, Literal, Protocol, TypeAlias

import anyio
import attrs

from raw_core.frozen import thaw
from raw_core.sessions.messages import CallSource, ToolCall
from raw_core.tools.progress import BatchProgress
from raw_core.tools.results import ToolResult

if TYPE_CHECKING:  # a call's services, built by the dispatcher: their types alone here
    from raw_core.tools.interactions import CallInteractions
    from raw_core.tools.panels import CallPanels
    from raw_core.tools.resources import SessionResources

__all__ = [
    "HOOK_PROTOCOL_VERSION",
    "ApprovalCallback",
    "ApprovalRequest",
    "CallInfo",
    "CallNext",
    "CancellationSignal",
    "CheckAnswer",
    "Decision",
    "Middleware",
    "SkillReader",
    "SkillText",
    "ToolCall",
    "ToolContext",
    "VarReader",
    "Verdict",
]

HOOK_PROTOCOL_VERSION: Final = 2

Decision = Literal["allow", "ask", "deny"]
Source = CallSource

_SEVERITY: Final = {"allow": 0, "ask": 1, "deny": 2}


class CancellationSignal:
    """Fires once when a call (or the turn it belongs to) is cancelled.

    The dispatcher cancels the running step when it fires. Tools and approval callbacks can
    poll :attr:`cancelled` or ``await signal.wait()``. Call :meth:`cancel` from the event
    loop's thread (from another thread, go through ``anyio.from_thread``).
    """

    __slots__ = ("_event", "_fired", "_scopes", "reason")

    def __init__(self) -> None:
        self._event: anyio.Event | None = None  # made by the first wait: most never wait
        self._fired = False  # read on every step of a turn: cheaper than the event's state
        self._scopes: set[anyio.CancelScope] = set()
        self.reason: str | None = None

    @property
    def cancelled(self) -> bool:
        """Whether the signal has fired."""
        return self._fired

    def cancel(self, reason: str = "cancelled") -> None:
        """Fire the signal (idempotent)."""
        if not self._fired:
            self._fired = True
            self.reason = reason
            if self._event is not None:
                self._event.set()
            for scope in list(self._scopes):
                scope.cancel()

    async def wait(self) -> None:
        """Return once the signal fires."""
        if self._event is None:
            self._event = anyio.Event()
            if self._fired:
                self._event.set()
        await self._event.wait()

    def attach(self, scope: anyio.CancelScope) -> None:
        """Cancel ``scope`` when the signal fires (at once if it has fired), until
        :meth:`detach`. For a scope that outlives what the signal should stop."""
        self._scopes.add(scope)
        if self._fired:
            scope.cancel()

    def detach(self, scope: anyio.CancelScope) -> None:
        """Stop cancelling ``scope`` when the signal fires."""
        self._scopes.discard(scope)

    def cancel_scope(self, deadline: float = math.inf) -> _SignalScope:
        """A cancel scope that this signal cancels when it fires (and that ``deadline``
        ends), as a context manager. Check ``scope.cancelled_caught`` after the block."""
        return _SignalScope(self, deadline)


class _SignalScope:
    """``with signal.cancel_scope(...) as scope``: an anyio cancel scope registered with
    the signal for the block (a class, not a generator: it runs twice per step)."""

    __slots__ = ("_scope", "_signal")

    def __init__(self, signal: CancellationSignal, deadline: float) -> None:
        self._signal = signal
        self._scope = anyio.CancelScope(deadline=deadline)

    def __enter__(self) -> anyio.CancelScope:
        scope = self._scope.__enter__()
        self._signal.attach(scope)
        return scope

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        traceback: TracebackType | None,
    ) -> bool:
        self._signal.detach(self._scope)
        return bool(self._scope.__exit__(exc_type, exc, traceback))


class VarReader(Protocol):
    """What a tool may ask of the agent's variables (``context.vars``); raw passes a
    :class:`raw_core.agent.variables.VarService`."""

    def listing(self) -> Sequence[tuple[str, str]]:
        """``(name, description)`` of each selected variable, in ``vars.use`` order."""
        ...

    def read(self, name: str) -> str:
        """The value of a selected variable; ``var_not_selected`` for any other name and
        ``var_unavailable`` when it cannot be read."""
        ...


class SkillText(Protocol):
    """What a tool reads of one skill (a :class:`raw_core.agent.skills.Skill`)."""

    @property
    def name(self) -> str: ...

    @property
    def description(self) -> str: ...

    @property
    def body(self) -> str: ...


class SkillReader(Protocol):
    """What a tool may ask of the agent's skills (``context.skills``); raw passes the
    session's :class:`raw_core.agent.skills.SkillService`."""

    def listing(self) -> Sequence[SkillText]:
        """The selected skills, in ``skills.use`` order."""
        ...

    def load(self, name: str) -> SkillText:
        """A selected skill, recorded as read by the model; ``skill_not_selected``
        otherwise."""
        ...


class ToolContext:
    """What a handler and ``describe_effects`` receive beside the arguments: the session's
    working directory, the call's id, identity and result cap, its cancellation signal, and
    the agent's variables (a :class:`VarReader`) and skills (a :class:`SkillReader`), or
    None where the caller has none (a dispatcher built without them). ``progress`` is where
    a batch handler announces its entries (:class:`~raw_core.tools.progress.BatchProgress`),
    so a call stopped at its time limit still reports the rows that finished. ``panels``
    is the call's view of its tool's panels (:class:`~raw_core.tools.panels.CallPanels`:
    ``await context.panels.update(panel, body)``, ``context.panels.get(panel)``);
    ``interactions`` asks the user a question
    (:class:`~raw_core.tools.interactions.CallInteractions`: ``await
    context.interactions.request(panel=..., document=...)``). Both are None only where no
    dispatcher made the context. ``resources`` is what tools keep for the length of the
    session (:class:`~raw_core.tools.resources.SessionResources`, closed when it ends);
    None where the caller keeps none (a dispatcher built without one).

    Read-only: every attribute is a property without a setter. A plain slotted class, not
    an attrs one, because one is made for every call (the dispatcher's own makes
    ``progress``, ``panels`` and ``interactions`` only when the handler first reads them).
    """

    __slots__ = (
        "_cwd",
        "_identity",
        "_interactions",
        "_max_output_bytes",
        "_panels",
        "_progress",
        "_resources",
        "_signal",
        "_skills",
        "_tool_call_id",
        "_vars",
    )

    def __init__(
        self,
        *,
        cwd: str,
        tool_call_id: str,
        identity: str,
        max_output_bytes: int,
        signal: CancellationSignal,
        vars: VarReader | None = None,
        skills: SkillReader | None = None,
        progress: BatchProgress | None = None,
        panels: CallPanels | None = None,
        resources: SessionResources | None = None,
        interactions: CallInteractions | None = None,
    ) -> None:
        self._cwd = cwd
        self._tool_call_id = tool_call_id
        self._identity = identity
        self._max_output_bytes = max_output_bytes
        self._signal = signal
        self._vars = vars
        self._skills = skills
        self._progress = progress
        self._panels = panels
        self._resources = resources
        self._interactions = interactions

    def __repr__(self) -> str:
        return (
            f"ToolContext(cwd={self._cwd!r}, tool_call_id={self._tool_call_id!r},"
            f" identity={self._identity!r})"
        )

    @property
    def cwd(self) -> str:
        """The session's working directory (absolute)."""
        return self._cwd

    @property
    def tool_call_id(self) -> str:
        """The id of the call, as the model gave it."""
        return self._tool_call_id

    @property
    def identity(self) -> str:
        """The called tool's identity."""
        return self._identity

    @property
    def max_output_bytes(self) -> int:
        """The result cap, in UTF-8 bytes of what the model reads."""
        return self._max_output_bytes

    @property
    def signal(self) -> CancellationSignal:
        """The call's cancellation signal."""
        return self._signal

    @property
    def vars(self) -> VarReader | None:
        """The agent's variables, or None."""
        return self._vars

    @property
    def skills(self) -> SkillReader | None:
        """The agent's skills, or None."""
        return self._skills

    @property
    def resources(self) -> SessionResources | None:
        """What tools keep for the session's length, or None."""
        return self._resources

    @property
    def progress(self) -> BatchProgress:
        """Where a batch handler announces its entries (made on first use)."""
        progress = self._progress
        if progress is None:
            with _MAKING:  # a sync handler reads it from a worker thread
                progress = self._progress
                if progress is None:
                    progress = self._progress = BatchProgress()
        return progress

    @property
    def panels(self) -> CallPanels | None:
        """The call's view of its tool's panels, or None."""
        return self._panels

    @property
    def interactions(self) -> CallInteractions | None:
        """Where the handler asks the user, or None."""
        return self._interactions


_MAKING: Final = threading.Lock()
"""Held while a context makes a part on first use, so that two threads share one."""


@attrs.frozen(kw_only=True)
class Verdict:
    """A decision about one call, with the reason the model reads on a deny."""

    decision: Decision = attrs.field(validator=attrs.validators.in_(("allow", "ask", "deny")))
    reason: str | None = None

    def tighter_than(self, other: Verdict) -> bool:
        """Whether this verdict is stricter than ``other`` (allow < ask < deny)."""
        return _SEVERITY[self.decision] > _SEVERITY[other.decision]


@attrs.frozen(kw_only=True)
class ApprovalRequest:
    """What the approval callback receives (spec 000, "Approval").

    ``arguments`` and ``effects`` are the frozen values the handler will see; show the
    effects apart from the raw arguments. Approving changes neither.
    """

    identity: str
    name: str
    arguments: Mapping[str, Any]
    effects: Any
    tool_call_id: str
    signal: CancellationSignal
    reason: str | None = None


ApprovalCallback = Callable[[ApprovalRequest], Awaitable[bool]]


@attrs.frozen(kw_only=True)
class CallInfo:
    """One call as hooks see it: the frozen arguments and effects, never a copy to edit.

    :meth:`payload` gives the JSON form of spec 000, "Hook payloads".
    """

    identity: str
    name: str
    tool_call_id: str
    arguments: Mapping[str, Any]
    effects: Any
    has_effects: bool
    source: Source = "model"

    def payload(self) -> dict[str, Any]:
        """``{protocol_version, tool: {identity, name, tool_call_id, arguments, effects?,
        source}}`` as a detached JSON value."""
        tool: dict[str, Any] = {
            "identity": self.identity,
            "name": self.name,
            "tool_call_id": self.tool_call_id,
            "arguments": thaw(self.arguments),
            "source": self.source,
        }
        if self.has_effects:
            tool["effects"] = thaw(self.effects)
        return {"protocol_version": HOOK_PROTOCOL_VERSION, "tool": tool}


CheckAnswer: TypeAlias = Verdict | Awaitable[Verdict | None] | None
"""What a ``raw_tool_check`` hook returns: a verdict, an awaitable of one (or of None), or
None to pass."""

CallNext: TypeAlias = Callable[[], Awaitable[ToolResult]]
"""What a middleware calls to run the rest of the chain (the next middleware, finally the
handler); it takes no arguments, so a middleware cannot change them. It returns the
result so far as a :class:`~raw_core.tools.results.ToolResult`, whatever the handler (or
the middleware inside) returned: a batch tool's rows rendered, a content dict as blocks,
capped as the model would read it, the full output kept in ``full_content``."""

Middleware: TypeAlias = Callable[[CallInfo, CallNext], Awaitable[Any]]
"""What a ``raw_tool_call`` hook returns: an async function ``(call, call_next) -> result``
composed around the handler. Its result is a ``ToolResult`` (the one ``call_next``
returned, or a new one) or anything a handler may return."""
