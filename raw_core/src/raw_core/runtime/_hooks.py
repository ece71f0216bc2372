"""The session's command hooks: ``SessionStart`` when it opens, ``UserPromptSubmit`` before
a turn's prompt goes anywhere, ``Stop`` when a turn has ended.

The tool events (``PreToolUse``, ``PostToolUse``) run inside the dispatcher; these three are
the session's. Each runs under the turn's cancellation signal, so Ctrl-C stops a slow hook
(its process group is killed) as it stops a call.
"""

from __future__ import annotations

from typing import Any

from raw_core.errors import Cancelled, RawError
from raw_core.hooks import HookContext, HookSet, observe, user_prompt_submit
from raw_core.runtime.events import TurnEnded
from raw_core.sessions.blocks import TextBlock
from raw_core.tools.calls import CancellationSignal

__all__ = ["prompt_hooks", "session_started", "turn_stopped"]


async def session_started(hooks: HookSet, context: HookContext, *, resumed: bool) -> None:
    """Run the ``SessionStart`` observers (``source``: ``startup`` or ``resume``)."""
    if hooks.for_event("SessionStart"):
        await observe(hooks, "SessionStart", context, source="resume" if resumed else "startup")


async def prompt_hooks(
    hooks: HookSet, prompt: str, context: HookContext, signal: CancellationSignal
) -> tuple[RawError | None, tuple[TextBlock, ...]]:
    """Run the ``UserPromptSubmit`` hooks: the error that blocks the prompt (``None``: it
    goes on) and the context lines they add to it. A cancelled wait is ``cancelled``."""
    if not hooks.for_event("UserPromptSubmit"):
        return None, ()
    found: tuple[RawError | None, tuple[TextBlock, ...]] = (None, ())
    with signal.cancel_scope() as scope:
        found = await user_prompt_submit(hooks, prompt, context)
    if scope.cancelled_caught:
        return Cancelled(f"the turn was cancelled ({signal.reason})"), ()
    return found


async def turn_stopped(
    hooks: HookSet, context: HookContext, end: TurnEnded, signal: CancellationSignal
) -> None:
    """Run the ``Stop`` observers with how the turn ended."""
    if not hooks.for_event("Stop"):
        return
    fields: dict[str, Any] = {"reason": end.reason, "steps": end.steps, "error": end.error}
    with signal.cancel_scope():
        await observe(hooks, "Stop", context, **fields)
