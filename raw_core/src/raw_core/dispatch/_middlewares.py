"""The plug-ins' call middlewares (``raw_tool_call``) around a handler's run.

Each middleware gets the call's payload and a ``call_next`` that runs what is inside it
(the next middleware, the handler innermost) and hands back its result as a
:class:`~raw_core.tools.results.ToolResult`. A middleware's failure names its plug-in; a
deny it raises once the handler ran withholds the result instead, since the tool ran.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Sequence
from typing import Any

from raw_core.dispatch._support import PreparedCall, check_sealed, handler_error
from raw_core.dispatch._values import result_of
from raw_core.errors import HandlerError, HookDenied, HookFailed, RawError, ResultWithheld
from raw_core.tools.calls import CallInfo, Middleware
from raw_core.tools.panels import has_panel_blocks
from raw_core.tools.results import ToolResult

__all__ = ["through_middlewares", "wrap_middleware"]


def through_middlewares(
    middlewares: Sequence[tuple[str, Middleware]],
    prepared: PreparedCall,
    sealed: str,
    handler: Callable[[], Awaitable[Any]],
    room: Callable[[], int],
) -> Awaitable[Any]:
    """``handler()`` (the handler's run) inside ``middlewares``, outermost first, to await.
    Each ``call_next`` hands back the handler's result without its panel blocks (taken out
    before any middleware sees them) and what the handler raised as ``handler_error``;
    ``sealed`` is checked first (the middlewares saw the frozen values). ``room()`` is what
    the call's panel note leaves of the result cap, known once the handler ran."""
    tool, context = prepared.tool, prepared.context
    arguments, effects = prepared.arguments, prepared.effects
    started = False

    async def call_handler() -> Any:
        nonlocal started
        if sealed:  # checked already after the hooks and approval
            check_sealed(sealed, arguments, effects, "a call middleware")
        started = True
        try:
            returned = await handler()
        except RawError:
            raise
        except (Exception, SystemExit) as exc:  # as without middlewares
            raise handler_error(tool, exc) from exc
        if has_panel_blocks(returned):
            return await context.panels.take_blocks(returned)
        return returned

    def normalise(returned: Any) -> ToolResult:
        return result_of(returned, effects, room())

    invoke: Callable[[], Awaitable[Any]] = call_handler
    info = prepared.info
    for name, middleware in reversed(middlewares):
        invoke = wrap_middleware(middleware, name, info, invoke, normalise, lambda: started)
    return invoke()


def wrap_middleware(
    middleware: Middleware,
    name: str,
    info: CallInfo,
    inner: Callable[[], Awaitable[Any]],
    normalise: Callable[[Any], ToolResult],
    handler_started: Callable[[], bool],
) -> Callable[[], Awaitable[Any]]:
    """``middleware`` around ``inner``: its ``call_next`` runs ``inner`` and hands back
    what it returned as a :class:`ToolResult` (``normalise``). An error it raises names
    its plug-in; a deny it raises once the handler has started (``handler_started``:
    ``hook_denied``, ``result_withheld``) withholds the result instead, since the tool ran:
    the model reads that it ran, and why. ``call_next`` runs once: a second call is
    ``hook_failed``."""

    async def wrapped() -> Any:
        called = False

        async def call_next() -> ToolResult:
            nonlocal called
            if called:  # one approval, one run
                raise HookFailed(
                    f"call middleware of plug-in {name!r} called call_next twice; a call runs"
                    " its handler once",
                    hook=name,
                )
            called = True
            return normalise(await inner())

        try:
            return await middleware(info, call_next)
        except (HookDenied, ResultWithheld) as error:
            if not handler_started():
                raise
            withheld = ResultWithheld(error.message, for_model=error.for_model, hook=name)
            return ToolResult.withheld(info.name, withheld, by="a plug-in", effects=info.effects)
        except RawError:
            raise
        except Exception as exc:
            raise HandlerError(
                f"call middleware of plug-in {name!r} raised {type(exc).__name__}: {exc}", hook=name
            ) from exc

    return wrapped
