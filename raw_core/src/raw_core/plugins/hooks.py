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
from copy import deepcopy
from typing import TYPE_CHECKING, Any, Final, Protocol, cast

import anyio
import attrs

from raw_core.errors import Cancelled, HookDenied, HookFailed, Timeout
from raw_core.plugins import PluginHost
from raw_core.tools.calls import CallInfo, Middleware, Verdict
from raw_core.tools.registry import ToolDefinition

if TYPE_CHECKING:
    from pluggy import HookImpl

__all__ = [
    "DEFAULT_HOOK_TIMEOUT",
    "HookAnswer",
    "Middleware",
    "collect_middlewares",
    "describe_definitions",
    "emit_event",
    "explain_check_hooks",
    "model_definitions",
    "run_check_hooks",
]

DEFAULT_HOOK_TIMEOUT: Final = 10.0

logger = logging.getLogger("raw_core.plugins.hooks")


def _call_impl(impl: HookImpl, **kwargs: object) -> object:
    """Call one implementation with the arguments it names. What it returns is a plug-in's
    answer, unchecked: each caller checks it before use."""
    return impl.function(**{name: kwargs[name] for name in impl.argnames})


def describe_definitions(
    definitions: Sequence[ToolDefinition], host: PluginHost
) -> list[ToolDefinition]:
    """Apply every ``raw_tool_describe`` hook, in registration order, to each definition."""
    impls = list(host.implementations("raw_tool_describe"))
    if not impls:
        return list(definitions)
    result = []
    for definition in definitions:
        description = definition.description
        for impl in impls:
            try:
                # The hook's own copy: only the description it answers is taken.
                copy = attrs.evolve(definition, input_schema=deepcopy(definition.input_schema))
                rewritten = _call_impl(impl, tool=copy, description=description)
            except Exception as exc:
                raise HookFailed(
                    f"plug-in {impl.plugin_name!r}: raw_tool_describe raised"
                    f" {type(exc).__name__}: {exc}",
                    hook=impl.plugin_name,
                ) from exc
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


class ToolSelection(Protocol):
    """What :func:`model_definitions` reads of an agent (a :class:`raw_core.agent.Agent`
    is one); a protocol, because the agent sits above the plug-ins."""

    def definitions(self) -> list[ToolDefinition]: ...


def model_definitions(agent: ToolSelection, host: PluginHost | None) -> list[ToolDefinition]:
    """What the model receives of ``agent``'s tools: the exposed ones in ``tools.use``
    order, with descriptions rewritten by the plug-ins' ``raw_tool_describe`` hooks. A turn
    and ``raw tools list`` both show this."""
    definitions = agent.definitions()
    return describe_definitions(definitions, host) if host is not None else definitions


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
    for impl in host.implementations("raw_tool_check"):
        answer = await _check_one(impl, call, verdict, limit, wait)
        if answer is None:
            continue
        if answer.decision == "deny":
            # The hook's own reason was written for the model, so it reaches it.
            raise HookDenied(
                answer.reason or f"denied by plug-in {impl.plugin_name!r}",
                for_model=answer.reason or None,
                hook=impl.plugin_name,
            )
        verdict = _tightened(verdict, answer, impl.plugin_name)
    return verdict


def _tightened(verdict: Verdict, answer: Verdict, plugin: str) -> Verdict:
    """The verdict after a check hook's answer (not a deny): an ask tightens an allow, and
    an ask with a reason rewords an ask (the person reads the last one); an allow never
    loosens."""
    if answer.tighter_than(verdict):
        return Verdict(decision=answer.decision, reason=answer.reason or f"plug-in {plugin!r} asks")
    if answer.decision == verdict.decision == "ask" and answer.reason:
        return Verdict(decision="ask", reason=answer.reason)
    return verdict


@attrs.frozen(kw_only=True)
class HookAnswer:
    """What one check hook answered about a call, for ``raw policy explain``: its
    decision (``None`` when it passed), its reason, or the error that fails the call
    closed (``{"code", "message"}``)."""

    plugin: str
    decision: str | None
    reason: str | None = None
    error: dict[str, Any] | None = None

    def to_dict(self) -> dict[str, Any]:
        """``{plugin, decision, reason, error}``."""
        return {
            "plugin": self.plugin,
            "decision": self.decision,
            "reason": self.reason,
            "error": self.error,
        }


async def explain_check_hooks(
    host: PluginHost,
    call: CallInfo,
    verdict: Verdict,
    *,
    limit: float = DEFAULT_HOOK_TIMEOUT,
) -> tuple[list[HookAnswer], Verdict]:
    """Ask every ``raw_tool_check`` hook, as a call would, and record each answer; the
    second item is the verdict the call would get (a hook that fails makes it a deny).
    Unlike :func:`run_check_hooks` it asks every hook, also after a deny, so an
    explanation shows them all."""
    answers: list[HookAnswer] = []
    final: Verdict | None = None  # a deny or a failure, which ends a real call
    for impl in host.implementations("raw_tool_check"):
        try:
            # Each hook is asked with the verdict as the hooks before it left it, as in a
            # call (after a deny too, so that the explanation shows every hook).
            answer = await _check_one(impl, call, verdict, limit, None)
        except HookFailed as exc:
            answers.append(HookAnswer(plugin=impl.plugin_name, decision=None, error=exc.to_dict()))
            final = final or Verdict(decision="deny", reason=exc.message)
            continue
        if answer is None:
            answers.append(HookAnswer(plugin=impl.plugin_name, decision=None))
            continue
        answers.append(
            HookAnswer(plugin=impl.plugin_name, decision=answer.decision, reason=answer.reason)
        )
        if answer.decision == "deny":
            final = final or answer
        else:
            verdict = _tightened(verdict, answer, impl.plugin_name)
    return answers, final or verdict


async def _check_one(
    impl: HookImpl,
    call: CallInfo,
    verdict: Verdict,
    limit: float,
    wait: Callable[[Awaitable[Any], float], Awaitable[Any]] | None,
) -> Verdict | None:
    """One check hook's answer (awaited when it is awaitable), or :class:`HookFailed`."""
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
        return None
    if not isinstance(answer, Verdict) or answer.decision not in ("allow", "ask", "deny"):
        raise HookFailed(
            f"check hook of plug-in {name!r} answered {type(answer).__name__}, not a Verdict",
            hook=name,
        )
    return answer


async def _wait_with_limit(awaitable: Awaitable[Any], limit: float) -> Any:
    with anyio.fail_after(limit):
        return await awaitable


def collect_middlewares(host: PluginHost, call: CallInfo) -> list[tuple[str, Middleware]]:
    """The middlewares ``raw_tool_call`` hooks return for ``call``, outermost first
    (registration order)."""
    found: list[tuple[str, Middleware]] = []
    for impl in host.implementations("raw_tool_call"):
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
        # Only callability can be checked here; the signature is the plug-in's promise.
        found.append((impl.plugin_name, cast("Middleware", middleware)))
    return found


def emit_event(
    host: PluginHost | None,
    observers: Sequence[Callable[[dict[str, Any]], object]],
    make_event: Callable[[], dict[str, Any]],
) -> None:
    """Give each observer its own detached copy of an event; failures are logged."""
    for observer in observers:
        try:
            observer(make_event())
        except Exception:
            logger.exception("an event observer failed; the event is dropped for it")
    if host is None:
        return
    for impl in host.implementations("raw_session_event"):
        try:
            _call_impl(impl, event=make_event())
        except Exception:
            logger.exception(
                "raw_session_event of plug-in %r failed; the event is dropped for it",
                impl.plugin_name,
            )
