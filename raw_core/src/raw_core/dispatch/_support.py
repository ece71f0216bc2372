"""What the dispatch pipeline uses beside its steps: the view of the policy it asks, the
record of a prepared call, the check that nothing rewrote a call's frozen values, and
:func:`guard`, which bounds what the pipeline awaits by the call's signal and a time
limit."""

from __future__ import annotations

import inspect
import time
import types
from collections.abc import Awaitable
from typing import Any, Final, Protocol

import anyio

from raw_core.dispatch._context import CallContext
from raw_core.dispatch._resume import resume
from raw_core.errors import (
    Cancelled,
    HandlerError,
    HookFailed,
    Timeout,
)
from raw_core.frozen import fingerprint
from raw_core.tools.calls import (
    CallInfo,
    CancellationSignal,
    ToolCall,
    Verdict,
)
from raw_core.tools.loader import LoadedTool

__all__ = [
    "ALLOW",
    "AllowAll",
    "PolicyDecision",
    "PolicyView",
    "PreparedCall",
    "ScopeBinder",
    "check_sealed",
    "guard",
    "handler_error",
]


class PolicyDecision(Protocol):
    """What the policy answers for one call."""

    @property
    def verdict(self) -> str: ...

    @property
    def rule(self) -> int | None: ...

    @property
    def layer(self) -> str: ...

    @property
    def where(self) -> str: ...


class PolicyView(Protocol):
    """The part of :class:`raw_core.policy.Policy` the dispatcher uses."""

    def is_exposed(self, identity: str) -> bool: ...

    def check_exposed(self, identity: str) -> None: ...

    def decide(self, identity: str, arguments: Any, effects: Any = None) -> PolicyDecision: ...


class _Allowed:
    verdict = "allow"
    rule = None
    layer = "agent"
    where = "tools.rules"


_ALLOWED: Final = _Allowed()


class AllowAll:
    """The policy of an agent without rules: everything is exposed and allowed."""

    def is_exposed(self, identity: str) -> bool:
        return True

    def check_exposed(self, identity: str) -> None:
        """Every selected tool is exposed."""

    def decide(self, identity: str, arguments: Any, effects: Any = None) -> PolicyDecision:
        return _ALLOWED


ALLOW: Final = Verdict(decision="allow")


class PreparedCall:
    """A call after steps 1-3: its tool, frozen arguments and effects, the context its
    handler gets, and the payload hooks see (:attr:`info`, made on first use: a call no
    hook, approval or middleware sees never needs it)."""

    __slots__ = ("_info", "arguments", "call", "context", "effects", "tool")

    def __init__(
        self,
        *,
        tool: LoadedTool,
        call: ToolCall,
        arguments: Any,
        effects: Any,
        context: CallContext,
    ) -> None:
        self.tool = tool
        self.call = call
        self.arguments = arguments
        self.effects = effects
        self.context = context
        self._info: CallInfo | None = None

    @property
    def info(self) -> CallInfo:
        """The call as hooks, approval and middlewares see it."""
        info = self._info
        if info is None:
            tool = self.tool
            info = self._info = CallInfo(
                identity=tool.identity,
                name=tool.name,
                tool_call_id=self.call.id,
                arguments=self.arguments,
                effects=self.effects,
                has_effects=tool.describe_effects is not None,
                source=self.call.source,
            )
        return info


def check_sealed(sealed: str, arguments: Any, effects: Any, who: str) -> None:
    """Fail closed when the validated arguments or effects no longer read as they did."""
    if sealed and fingerprint([arguments, effects]) != sealed:
        raise HookFailed(
            f"{who} changed the call's arguments or effects after they were validated;"
            " they are never rewritten, so the call is stopped"
        )


def handler_error(tool: LoadedTool, exc: BaseException) -> HandlerError:
    """What a handler raised (anything but a :class:`RawError`, a cancellation or a
    ``KeyboardInterrupt``), as ``handler_error``."""
    return HandlerError(f"{tool.identity} raised {type(exc).__name__}: {exc}", tool=tool.identity)


class ScopeBinder(Protocol):
    """What :func:`guard` tells of the scope that enforces its limit, once it is set: a
    handler's :class:`~raw_core.dispatch._context.CallContext`, whose interactions pause
    the limit while a request is pending."""

    def bind(self, scope: anyio.CancelScope) -> None: ...


async def guard(
    signal: CancellationSignal,
    limit: float | None,
    awaitable: Awaitable[Any],
    binder: ScopeBinder | None = None,
) -> Any:
    """Await ``awaitable``; stop it when ``signal`` fires or ``limit`` seconds pass (not
    counting the time ``binder`` pauses the scope: a handler's pending interaction
    requests).

    The limit counts from here, but its timer is set only once a coroutine first yields:
    one that returns in its first step never waited, so there was nothing to stop
    (:mod:`raw_core.dispatch._resume`). The start is read from ``time.monotonic``, not the
    event loop's clock (a fifth of the cost of ``anyio.current_time``), and the deadline
    is then set on the loop's clock, less the time already spent."""
    if signal.cancelled:
        if inspect.iscoroutine(awaitable):
            awaitable.close()
        raise Cancelled(f"the call was cancelled ({signal.reason})")
    started = time.monotonic()
    scope = anyio.CancelScope()
    with scope:
        if isinstance(awaitable, types.CoroutineType):
            try:
                yielded = awaitable.send(None)
            except StopIteration as stop:
                return stop.value
            awaitable = resume(awaitable, yielded)
        # Only from here can the signal fire (from the event loop, which runs again when
        # the coroutine waits) or the limit pass.
        signal.attach(scope)
        try:
            if limit is not None:
                scope.deadline = anyio.current_time() + limit - (time.monotonic() - started)
            if binder is not None:
                binder.bind(scope)
            result = await awaitable
        finally:
            signal.detach(scope)
    if not scope.cancelled_caught:
        return result
    if signal.cancelled:
        raise Cancelled(f"the call was cancelled ({signal.reason})")
    raise Timeout(f"the call did not finish within {limit:g} s")
