"""Step 3, the intended effects: ``describe_effects``, checked against ``effects_schema``,
then frozen.

Spec 000: "Effect descriptors must be synchronous and bounded". raw's own built-in tools
(identities ``builtin/...``, the tools of the ``builtin`` plug-in, raw_builtin_tools) have
descriptors that are bounded by construction — they read only their arguments, which step
2 bounds (docs/pipeline.md, "Built-in descriptors") — and run inline. The descriptor of
any other tool cannot be trusted to be: it runs in a daemon thread
(:mod:`raw_core.dispatch._daemon`), and the call waits for it at most ``limit`` seconds
without blocking the event loop, so a slow descriptor stalls neither the other sessions
of the process nor, past its deadline, its own call, which stops before the handler as
``effects_invalid``. A thread cannot be
interrupted: a late descriptor is left to finish and its result is dropped; a daemon
thread does not keep the process from exiting. The call's cancellation signal also ends
the wait (``cancelled``).
"""

from __future__ import annotations

import inspect
import math
from typing import Any, Final

import anyio

from raw_core.dispatch._daemon import call_in_daemon
from raw_core.errors import Cancelled, EffectsInvalid
from raw_core.frozen import freeze
from raw_core.tools._schema import SchemaValidationError
from raw_core.tools.calls import CancellationSignal, ToolContext
from raw_core.tools.loader import LoadedTool

__all__ = ["DEFAULT_EFFECTS_TIMEOUT", "INLINE_SOURCE", "describe", "describe_inline"]

DEFAULT_EFFECTS_TIMEOUT: Final = 2.0
"""Seconds a descriptor outside raw may take before its call stops as ``effects_invalid``."""

INLINE_SOURCE: Final = "builtin"
"""The identity prefix whose descriptors run inline: raw's own built-in tools."""

THREAD_NAME: Final = "raw effect descriptor"


def describe_inline(tool: LoadedTool, arguments: Any, context: ToolContext) -> Any:
    """Ask ``tool`` for its effects on this thread; validate and freeze them. Raises
    ``effects_invalid`` when the descriptor raises, returns an awaitable, or returns effects
    that break ``effects_schema``."""
    assert tool.describe_effects is not None
    try:
        effects = tool.describe_effects(arguments, context)
    except Exception as exc:
        raise EffectsInvalid(
            f"describe_effects raised {type(exc).__name__}: {exc}", field="$"
        ) from None
    if inspect.isawaitable(effects):
        if inspect.iscoroutine(effects):
            effects.close()
        raise EffectsInvalid(
            "describe_effects must be synchronous; it returned an awaitable", field="$"
        )
    assert tool.effects_validator is not None  # the loader guarantees it
    try:
        tool.effects_validator.validate(effects)
    except SchemaValidationError as exc:
        raise EffectsInvalid(
            f"the effects break effects_schema: {exc.path}: {exc.message}", field=exc.path
        ) from None
    return freeze(effects)


async def describe(
    tool: LoadedTool,
    arguments: Any,
    context: ToolContext,
    *,
    limit: float | None,
    signal: CancellationSignal,
) -> Any:
    """The call's frozen effects (None when the tool declares none): inline for a built-in
    tool, else in a daemon thread for at most ``limit`` seconds (None: no deadline)."""
    if tool.describe_effects is None:
        return None
    if tool.identity.partition("/")[0] == INLINE_SOURCE:
        return describe_inline(tool, arguments, context)
    if signal.cancelled:
        raise Cancelled(f"the call was cancelled ({signal.reason})")
    deadline = anyio.current_time() + limit if limit is not None else math.inf
    with signal.cancel_scope(deadline) as scope:
        return await call_in_daemon(_describe_in_thread, tool, arguments, context, name=THREAD_NAME)
    assert scope.cancelled_caught
    if signal.cancelled:
        raise Cancelled(f"the call was cancelled ({signal.reason})")
    raise EffectsInvalid(
        f"describe_effects did not return within its deadline of {limit:g} s; a descriptor"
        " must be synchronous and bounded, so the call was stopped before the handler",
        field="$",
    )


def _describe_in_thread(tool: LoadedTool, arguments: Any, context: ToolContext) -> Any:
    """:func:`describe_inline` in a descriptor's thread, where a ``SystemExit`` or the
    like is the descriptor's failure, not the process's."""
    try:
        return describe_inline(tool, arguments, context)
    except Exception:
        raise
    except BaseException as exc:
        raise EffectsInvalid(
            f"describe_effects raised {type(exc).__name__}: {exc}", field="$"
        ) from None
