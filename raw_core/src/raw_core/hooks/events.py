"""Running the command hooks of one event, and what each event does with their answers.

* ``PreToolUse``: dispatch step 5, after the plug-ins' check hooks; may ask or deny.
* ``PostToolUse``: after the handler returned (not for a batch the dispatcher stopped),
  before the result is committed; may withhold the result or add one context line.
* ``UserPromptSubmit``: before a turn's prompt is committed or sent; may block it or add
  one context line.
* ``SessionStart`` (a session opened) and ``Stop`` (a turn ended): observe only.

Hooks of one event run one after another in ``hooks.use`` order; the first deny ends the
step. Every failure of a hook that decides fails closed: ``hook_failed`` (for PostToolUse:
the result is withheld). ``allow`` never loosens what the rules or an earlier hook decided.
Observers' failures are logged and change nothing.

The payload is one JSON object on stdin (docs/reference/hooks.md has its JSON Schema for
every event): ``protocol_version``, ``event``, ``session_id``, ``cwd`` and, for tool
events, ``tool`` (spec 000, "Hook payloads"), with ``hook_event_name``, ``tool_name`` and
``tool_input`` as aliases for scripts written for other agents.
"""

from __future__ import annotations

import json
import logging
from collections.abc import Sequence
from typing import Any, Final

import attrs

from raw_core.errors import HookDenied, HookFailed, RawError, ResultWithheld
from raw_core.hooks._environment import hook_environment
from raw_core.hooks._process import Finished, run_process
from raw_core.hooks.loader import LoadedHook
from raw_core.hooks.replies import Reply, outcome_problem, read_reply
from raw_core.hooks.subscriptions import HookSet
from raw_core.sessions.blocks import TextBlock, cut_utf8
from raw_core.tools.calls import HOOK_PROTOCOL_VERSION, CallInfo, Verdict
from raw_core.tools.results import ToolResult, cap_blocks, model_bytes

__all__ = [
    "MAX_CONTEXT_BYTES",
    "HookContext",
    "observe",
    "post_tool_use",
    "pre_tool_use",
    "user_prompt_submit",
]

logger = logging.getLogger("raw_core.hooks")

MAX_CONTEXT_BYTES: Final = 1000
"""The most UTF-8 bytes of the one context line a hook may add."""


@attrs.frozen(kw_only=True)
class HookContext:
    """Where hooks run: the session (``None`` outside one, as for ``raw tools call``) and
    its working directory, which is also the hooks' working directory."""

    session_id: str | None
    cwd: str


def _payload(event: str, context: HookContext, **fields: Any) -> dict[str, Any]:
    return {
        "protocol_version": HOOK_PROTOCOL_VERSION,
        "event": event,
        "hook_event_name": event,
        "session_id": context.session_id,
        "cwd": context.cwd,
        **fields,
    }


def _tool_payload(
    event: str, call: CallInfo, context: HookContext, **fields: Any
) -> dict[str, Any]:
    tool = call.payload()["tool"]
    return _payload(
        event, context, tool=tool, tool_name=call.name, tool_input=tool["arguments"], **fields
    )


async def _run(hooks: HookSet, hook: LoadedHook, payload: dict[str, Any], cwd: str) -> Finished:
    # ASCII-only JSON: a lone surrogate in an argument is written as its escape, which
    # UTF-8 could not encode.
    data = json.dumps(payload, ensure_ascii=True, separators=(",", ":")).encode("ascii")
    return await run_process(
        hook.argv,
        stdin=data,
        cwd=cwd,
        env=hook_environment(str(hook.folder), hooks.withheld_env),
        timeout=hooks.timeout(hook),
    )


async def _ask(
    hooks: HookSet, hook: LoadedHook, event: str, payload: dict[str, Any], cwd: str
) -> Reply:
    finished = await _run(hooks, hook, payload, cwd)
    return read_reply(hook, event, finished, hooks.timeout(hook))


def _refuse(hook: LoadedHook, event: str, what: str) -> HookFailed:
    return HookFailed(
        f"hook {hook.identity} ({event}) answered {what}, which {event} does not take",
        hook=hook.identity,
        event=event,
    )


def _line(hook: LoadedHook, text: str) -> TextBlock:
    """The one bounded context line a hook adds, naming the hook."""
    line = " ".join(text.split())
    cut = cut_utf8(line, MAX_CONTEXT_BYTES)
    return TextBlock(text=f"[hook {hook.identity}] {cut}{'…' if cut != line else ''}")


async def pre_tool_use(
    hooks: HookSet,
    chosen: Sequence[LoadedHook],
    call: CallInfo,
    verdict: Verdict,
    context: HookContext,
) -> Verdict:
    """Dispatch step 5 for command hooks: run ``chosen`` (the hooks subscribed to this
    call) in order; return the verdict, tightened. Raises ``hook_denied`` at the first deny
    and ``hook_failed`` at the first failure."""
    for hook in chosen:
        payload = _tool_payload("PreToolUse", call, context, verdict=verdict.decision)
        reply = await _ask(hooks, hook, "PreToolUse", payload, context.cwd)
        if reply.context is not None:
            raise _refuse(hook, "PreToolUse", "a context line")
        if reply.decision == "deny":
            # The hook's own reason was written for the model, so it reaches it.
            raise HookDenied(
                reply.reason or f"denied by hook {hook.identity}",
                for_model=reply.reason,
                hook=hook.identity,
                event="PreToolUse",
            )
        # An ask tightens an allow; an ask with a reason rewords an ask (the person reads
        # the last one). The verdict is never a deny here: a deny ends the call first.
        if reply.decision == "ask" and (verdict.decision == "allow" or reply.reason):
            verdict = Verdict(decision="ask", reason=reply.reason or f"hook {hook.identity} asks")
    return verdict


def _withheld(call: CallInfo, result: ToolResult, error: RawError) -> ToolResult:
    """The result in place of one a hook withheld: the model reads that the tool ran and
    why (a hook's reason, or a failure's plain sentence); the host gets the whole message."""
    why = "a check the user set up failed" if isinstance(error, HookFailed) else None
    return ToolResult.withheld(call.name, error, by="a hook", why=why, effects=result.effects)


def _with_lines(result: ToolResult, lines: Sequence[TextBlock], max_bytes: int) -> ToolResult:
    """``result`` with the hooks' context lines after it, all under the result cap: when
    they do not fit beside it, the lines get at most half the cap and the result is cut
    (from its full output) to what is left."""
    extra = model_bytes(lines)
    if model_bytes(result.content) + extra <= max_bytes:
        return attrs.evolve(result, content=(*result.content, *lines))
    if extra > max_bytes // 2:
        share = max_bytes // 2 // len(lines)
        lines = [TextBlock(text=cut_utf8(line.text, share)) for line in lines]
        extra = model_bytes(lines)
    content, _ = cap_blocks(result.full_content, max_bytes - extra)
    return attrs.evolve(result, content=(*content, *lines), truncated=True)


async def post_tool_use(
    hooks: HookSet,
    chosen: Sequence[LoadedHook],
    call: CallInfo,
    result: ToolResult,
    context: HookContext,
    *,
    max_bytes: int,
) -> ToolResult:
    """After the handler: run ``chosen`` in order with the result as the model would read
    it. A deny withholds the result (``result_withheld``), a failure too (``hook_failed``);
    otherwise each hook may add one context line after the result, the whole under the
    result cap ``max_bytes``."""
    payload = _tool_payload(
        "PostToolUse",
        call,
        context,
        result={"status": result.status, "code": result.code, "text": result.text()},
    )
    lines: list[TextBlock] = []
    for hook in chosen:
        try:
            reply = await _ask(hooks, hook, "PostToolUse", payload, context.cwd)
            if reply.decision == "ask":
                raise _refuse(hook, "PostToolUse", "ask (the handler has run)")
        except HookFailed as error:
            return _withheld(call, result, error)
        if reply.decision == "deny":
            reason = reply.reason or f"hook {hook.identity} gave no reason"
            withheld = ResultWithheld(
                reason, for_model=reply.reason, hook=hook.identity, event="PostToolUse"
            )
            return _withheld(call, result, withheld)
        if reply.context is not None:
            lines.append(_line(hook, reply.context))
    return _with_lines(result, lines, max_bytes) if lines else result


async def user_prompt_submit(
    hooks: HookSet, prompt: str, context: HookContext
) -> tuple[RawError | None, tuple[TextBlock, ...]]:
    """Before a turn's prompt goes anywhere: ``(error, lines)``. ``error`` is the
    ``hook_denied`` or ``hook_failed`` that blocks the prompt (``None``: it goes on);
    ``lines`` the context lines the hooks add to it."""
    payload = _payload("UserPromptSubmit", context, prompt=prompt)
    lines: list[TextBlock] = []
    for hook in hooks.for_event("UserPromptSubmit"):
        try:
            reply = await _ask(hooks, hook, "UserPromptSubmit", payload, context.cwd)
            if reply.decision == "ask":
                raise _refuse(hook, "UserPromptSubmit", "ask")
        except HookFailed as error:
            return error, ()
        if reply.decision == "deny":
            reason = reply.reason or f"the prompt was blocked by hook {hook.identity}"
            denied = HookDenied(
                reason, for_model=reply.reason, hook=hook.identity, event="UserPromptSubmit"
            )
            return denied, ()
        if reply.context is not None:
            lines.append(_line(hook, reply.context))
    return None, tuple(lines)


async def observe(hooks: HookSet, event: str, context: HookContext, **fields: Any) -> None:
    """Run the hooks of an observer event (``SessionStart``, ``Stop``); their answers are
    not read, and a failure is logged, never raised."""
    chosen = hooks.for_event(event)
    if not chosen:
        return
    payload = _payload(event, context, **fields)
    for hook in chosen:
        try:
            finished = await _run(hooks, hook, payload, context.cwd)
        except Exception:  # raw's own fault: still only an observer
            logger.exception("hook %s (%s) could not be run", hook.identity, event)
            continue
        problem = outcome_problem(hook, finished, hooks.timeout(hook))
        if problem is not None:
            logger.warning(
                "hook %s (%s) %s; it only observes, so nothing changes",
                hook.identity,
                event,
                problem,
            )
