"""Running the runtime hooks of plug-ins: describe, check (PreToolUse), call, and events.

pluggy calls hooks synchronously and cannot await, so a check hook may return an awaitable
verdict and a call hook returns an async middleware; this module awaits them under anyio
with a timeout. Check hooks fail closed; event observers fail open (logged).

Every hook runs in plug-in registration order (``PluginHost.load_entry_points`` registers in
entry-point order), and the first registered middleware is the outermost. Each
implementation is called on its own, so an error names the plug-in it came from.
"""

from __future__ import annotations

import inspect
import logging
from collections.abc import Awaitable, Callable, Sequence
from typing import Any, Final

import anyio
import attrs

from raw_core.calls import CallInfo, Verdict
from raw_core.errors import Cancelled, HookDenied, HookFailed, Timeout
from raw_core.plugins import PluginHost
from raw_core.registry import ToolDefinition

__all__ = [
    "DEFAULT_HOOK_TIMEOUT",
    "Middleware",
    "collect_middlewares",
    "describe_definitions",
    "emit_event",
    "run_check_hooks",
]

DEFAULT_HOOK_TIMEOUT: Final = 10.0

Middleware = Callable[[CallInfo, Callable[[], Awaitable[Any]]], Awaitable[Any]]

logger = logging.getLogger("raw_core.hooks")


def _call_impl(impl: Any, **kwargs: Any) -> Any:
    return impl.function(**{name: kwargs[name] for name in impl.argnames})


def describe_definitions(
    definitions: Sequence[ToolDefinition], host: PluginHost
) -> list[ToolDefinition]:
    """Apply every ``raw_tool_describe`` hook, in registration order, to each definition."""
    impls = list(host.hook.raw_tool_describe.get_hookimpls())
    if not impls:
        return list(definitions)
    result = []
    for definition in definitions:
        description = definition.description
        for impl in impls:
            rewritten = _call_impl(impl, tool=definition, description=description)
            if rewritten is None:
                continue
            if not isinstance(rewritten, str) or not rewritten.strip():
                raise HookFailed(
                    f"plug-in {impl.plugin_name!r}: raw_tool_describe must return"
                    " a non-empty string or None",
                    hook=impl.plugin_name,
                )
            description = rewritten
        result.append(attrs.evolve(definition, description=description))
    return result


async def run_check_hooks(
    host: PluginHost,
    call: CallInfo,
    verdict: Verdict,
    *,
    limit: float = DEFAULT_HOOK_TIMEOUT,
    wait: Callable[[Awaitable[Any], float], Awaitable[Any]] | None = None,
) -> Verdict:
    """Run every ``raw_tool_check`` hook; return the tightest verdict.

    A hook may only tighten: a looser answer is ignored. A deny raises
    :class:`~raw_core.errors.HookDenied` at once with the hook's reason. A hook that
    raises, takes longer than ``limit`` seconds or answers something that is not a
    :class:`Verdict` (or None) raises :class:`~raw_core.errors.HookFailed` naming it.
    ``wait(awaitable, limit)`` awaits an asynchronous answer (the dispatcher passes one
    that also honours the call's cancellation signal); by default ``anyio.fail_after``.
    """
    for impl in host.hook.raw_tool_check.get_hookimpls():
        name = impl.plugin_name
        try:
            answer = _call_impl(impl, call=call, verdict=verdict)
            if inspect.isawaitable(answer):
                answer = await (wait or _wait_with_limit)(answer, limit)
        except (TimeoutError, Timeout):
            raise HookFailed(
                f"check hook of plug-in {name!r} did not answer within {limit:g} s", hook=name
            ) from None
        except Cancelled:
            raise
        except Exception as exc:
            raise HookFailed(
                f"check hook of plug-in {name!r} raised {type(exc).__name__}: {exc}", hook=name
            ) from exc
        if answer is None:
            continue
        if not isinstance(answer, Verdict) or answer.decision not in ("allow", "ask", "deny"):
            raise HookFailed(
                f"check hook of plug-in {name!r} answered {type(answer).__name__}, not a Verdict",
                hook=name,
            )
        if answer.decision == "deny":
            raise HookDenied(answer.reason or f"denied by plug-in {name!r}", hook=name)
        if answer.tighter_than(verdict):
            verdict = Verdict(
                decision=answer.decision, reason=answer.reason or f"plug-in {name!r} asks"
            )
    return verdict


async def _wait_with_limit(awaitable: Awaitable[Any], limit: float) -> Any:
    with anyio.fail_after(limit):
        return await awaitable


def collect_middlewares(host: PluginHost, call: CallInfo) -> list[tuple[str, Middleware]]:
    """The middlewares ``raw_tool_call`` hooks return for ``call``, outermost first
    (registration order)."""
    found = []
    for impl in host.hook.raw_tool_call.get_hookimpls():
        try:
            middleware = _call_impl(impl, call=call)
        except Exception as exc:
            raise HookFailed(
                f"raw_tool_call of plug-in {impl.plugin_name!r} raised {type(exc).__name__}: {exc}",
                hook=impl.plugin_name,
            ) from exc
        if middleware is None:
            continue
        if not callable(middleware):
            raise HookFailed(
                f"raw_tool_call of plug-in {impl.plugin_name!r} returned"
                f" {type(middleware).__name__}, not a middleware",
                hook=impl.plugin_name,
            )
        found.append((impl.plugin_name, middleware))
    return found


def emit_event(
    host: PluginHost | None,
    observers: Sequence[Callable[[Any], Any]],
    make_event: Callable[[], Any],
) -> None:
    """Give each observer its own detached copy of an event; failures are logged."""
    for observer in observers:
        try:
            observer(make_event())
        except Exception:
            logger.exception("an event observer failed; the event is dropped for it")
    if host is None:
        return
    for impl in host.hook.raw_session_event.get_hookimpls():
        try:
            _call_impl(impl, event=make_event())
        except Exception:
            logger.exception(
                "raw_session_event of plug-in %r failed; the event is dropped for it",
                impl.plugin_name,
            )
