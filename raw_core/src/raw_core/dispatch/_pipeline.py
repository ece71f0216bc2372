"""The dispatch pipeline: every tool call goes through seven steps, in order.

1. the tool is selected (``tool_unknown``) and exposed (``tool_not_exposed``);
2. the arguments are parsed strictly and validated: JSON Schema, then ``validate_args``
   (``invalid_arguments``); then they are frozen;
3. intended effects, when the tool declares them: ``describe_effects`` must be synchronous
   and must not raise, and its result must satisfy ``effects_schema`` (``effects_invalid``);
   a tool outside raw gets ``effects_timeout`` seconds, off the event loop
   (:mod:`raw_core.dispatch._effects`);
4. policy: the agent's rules, last match wins (``denied``; an ask goes on);
5. PreToolUse hooks, which may only tighten: the plug-ins' check hooks, then the command
   hooks subscribed to the call (``hook_denied``, ``hook_failed``);
6. approval, when a rule or hook asks (``approval_denied``, ``approval_unavailable``);
7. the handler, wrapped in the plug-ins' call middlewares (``handler_error``, ``tool_error``,
   ``cancelled``, ``timeout``); a batch stopped at the time limit or cancelled still
   reports the rows that finished (:mod:`raw_core.dispatch._partial`). The handler's panel
   blocks are taken out of its result before the middlewares see it. Once the handler
   returned (not for a stopped batch), the PostToolUse command hooks see the result and
   may withhold it (``result_withheld``, ``hook_failed``) or add a line. The call's panel
   updates (both ways, :mod:`raw_core.tools.panels`) travel with its result, errors
   included (a withheld result too).

A failure at any step stops the call before the next and becomes a :class:`ToolResult` the
model can read; no exception escapes to the caller except a cancellation of the caller's
own scope. Hooks, approval and the handler all see the same frozen arguments; observers get
detached copies.
"""

from __future__ import annotations

import inspect
import logging
import os
from collections.abc import Awaitable, Callable, Sequence
from typing import Any, Final

from raw_core.config import DEFAULT_HANDLER_TIMEOUT_MS
from raw_core.dispatch._context import CallContext
from raw_core.dispatch._daemon import call_in_daemon
from raw_core.dispatch._effects import DEFAULT_EFFECTS_TIMEOUT, describe
from raw_core.dispatch._middlewares import through_middlewares
from raw_core.dispatch._panel_notes import call_note, with_panels
from raw_core.dispatch._partial import stopped_batch
from raw_core.dispatch._support import (
    ALLOW,
    AllowAll,
    PolicyDecision,
    PolicyView,
    PreparedCall,
    check_sealed,
    guard,
    handler_error,
)
from raw_core.dispatch._values import parsed_arguments, result_of
from raw_core.dispatch.finished import CallOutcome
from raw_core.errors import (
    ApprovalDenied,
    ApprovalUnavailable,
    Cancelled,
    Denied,
    HandlerError,
    RawError,
    Timeout,
)
from raw_core.frozen import fingerprint
from raw_core.hooks import HookContext, HookSet, post_tool_use, pre_tool_use
from raw_core.plugins import PluginHost
from raw_core.plugins.hooks import (
    DEFAULT_HOOK_TIMEOUT,
    collect_middlewares,
    emit_event,
    run_check_hooks,
)
from raw_core.tools.calls import (
    ApprovalCallback,
    ApprovalRequest,
    CallInfo,
    CancellationSignal,
    SkillReader,
    ToolCall,
    VarReader,
    Verdict,
)
from raw_core.tools.interactions import InteractionCallback
from raw_core.tools.loader import LoadedTool
from raw_core.tools.panels import PanelBoard, has_panel_blocks
from raw_core.tools.registry import Registry
from raw_core.tools.resources import SessionResources
from raw_core.tools.results import (
    DEFAULT_MAX_OUTPUT_BYTES,
    ToolResult,
)

__all__ = [
    "DEFAULT_EFFECTS_TIMEOUT",
    "DEFAULT_HANDLER_TIMEOUT",
    "DEFAULT_MAX_ARGUMENT_BYTES",
    "Dispatcher",
    "PolicyDecision",
    "PolicyView",
    "PreparedCall",
]

logger = logging.getLogger("raw_core.dispatch")

DEFAULT_MAX_ARGUMENT_BYTES: Final = 4 * 1024 * 1024
DEFAULT_HANDLER_TIMEOUT: Final = DEFAULT_HANDLER_TIMEOUT_MS / 1000  # seconds, as config's


class Dispatcher:
    """Runs tool calls for one agent's registry under its policy.

    ``approval`` is the async callback asked when a call needs approval; without one (a
    non-interactive run) an ask ends as ``approval_unavailable``. ``vars`` and ``skills``
    are the agent's services, handed to tools in their context. A handler may raise any
    :class:`~raw_core.errors.RawError`: the call then ends with that error's code.
    ``observers`` receive a detached copy of each finished call, as do plug-ins'
    ``raw_session_event`` hooks unless ``hook_events`` is false (the agent loop turns it off:
    it reports calls to those hooks in its own events). ``effects_timeout`` bounds the
    ``describe_effects`` of a tool outside raw (seconds; None: no deadline). ``hooks`` are
    the agent's command hooks, bound to its tools; ``session_id`` is what their payloads
    name (None outside a session). ``interactions`` is the session's interaction
    callback (``context.interactions.request`` goes to it; without one a request is
    ``interaction_unavailable``), and while a request is pending the handler's time limit
    is paused. ``panels`` is the session's
    :class:`~raw_core.tools.panels.PanelBoard` (by default one of this dispatcher's own,
    kept in memory). ``resources`` is what tools keep for the session's length
    (:class:`~raw_core.tools.resources.SessionResources`), handed to them in their context;
    the caller closes it (None: tools get none).
    """

    def __init__(
        self,
        registry: Registry,
        policy: PolicyView | None = None,
        *,
        host: PluginHost | None = None,
        approval: ApprovalCallback | None = None,
        cwd: str | os.PathLike[str] | None = None,
        max_output_bytes: int = DEFAULT_MAX_OUTPUT_BYTES,
        max_argument_bytes: int = DEFAULT_MAX_ARGUMENT_BYTES,
        handler_timeout: float | None = DEFAULT_HANDLER_TIMEOUT,
        hook_timeout: float = DEFAULT_HOOK_TIMEOUT,
        observers: Sequence[Callable[[dict[str, Any]], Any]] = (),
        vars: VarReader | None = None,
        skills: SkillReader | None = None,
        hook_events: bool = True,
        effects_timeout: float | None = DEFAULT_EFFECTS_TIMEOUT,
        hooks: HookSet | None = None,
        session_id: str | None = None,
        panels: PanelBoard | None = None,
        resources: SessionResources | None = None,
        interactions: InteractionCallback | None = None,
    ) -> None:
        self.registry = registry
        self.interactions = interactions
        self.panels = panels if panels is not None else PanelBoard()
        self.resources = resources
        self.policy: PolicyView = policy if policy is not None else AllowAll()
        self.host = host
        self.approval = approval
        self.cwd = os.path.abspath(cwd) if cwd is not None else os.getcwd()
        self.max_output_bytes = max_output_bytes
        self.max_argument_bytes = max_argument_bytes
        self.handler_timeout = handler_timeout
        self.hook_timeout = hook_timeout
        self.observers = tuple(observers)
        self.vars = vars
        self.skills = skills
        self._async_handlers: dict[str, bool] = {}
        self.hook_events = hook_events
        self.effects_timeout = effects_timeout
        self.hooks = hooks if hooks else None
        self.session_id = session_id

    def _is_async(self, tool: LoadedTool) -> bool:
        """Whether the handler is ``async def`` (asked once per tool, then remembered)."""
        known = self._async_handlers.get(tool.identity)
        if known is None:
            known = self._async_handlers[tool.identity] = inspect.iscoroutinefunction(tool.handler)
        return known

    # --- the pipeline --------------------------------------------------------------------

    async def dispatch(
        self, call: ToolCall, *, signal: CancellationSignal | None = None
    ) -> ToolResult:
        """Run ``call`` through the seven steps, report its ``tool_call_finished`` event to
        the observers (and plug-ins, unless ``hook_events`` is off), and return its result
        (never raises a :class:`~raw_core.errors.RawError`)."""
        outcome = await self.run(call, signal=signal)
        if self.observers or (self.host is not None and self.hook_events):
            emit_event(
                self.host if self.hook_events else None,
                self.observers,
                lambda: outcome.event().to_dict(),
            )
        return outcome.result

    async def run(self, call: ToolCall, *, signal: CancellationSignal | None = None) -> CallOutcome:
        """Run ``call`` through the seven steps; report nothing. The caller reports
        ``outcome.event()`` when it has done what must come first (the agent loop commits
        the result)."""
        signal = signal if signal is not None else CancellationSignal()
        effects: Any = None
        tool: LoadedTool | None = None
        arguments: Any = None
        context: CallContext | None = None
        try:
            if signal.cancelled:
                raise Cancelled("the call was cancelled before it started")
            tool = self.select(call.name)
            prepared = await self.prepare(tool, call, signal)
            context = prepared.context
            arguments, effects = prepared.arguments, prepared.effects
            verdict = self._decide(tool, arguments, effects)
            # Hooks, approval and middlewares receive the frozen values; a dict can still be
            # changed through dict's own methods, so check nothing did before each use.
            guarded = self.host is not None or verdict.decision == "ask"
            sealed = fingerprint([arguments, effects]) if guarded else ""
            if self.host is not None:
                verdict = await run_check_hooks(
                    self.host,
                    prepared.info,
                    verdict,
                    limit=self.hook_timeout,
                    wait=lambda answer, limit: guard(signal, limit, answer),
                )
                check_sealed(sealed, arguments, effects, "a check hook")
            hooks = self.hooks
            chosen = (
                hooks.for_call("PreToolUse", tool.identity, arguments, effects)
                if hooks is not None
                else ()
            )
            if chosen:
                assert hooks is not None
                verdict = await guard(
                    signal,
                    None,
                    pre_tool_use(hooks, chosen, prepared.info, verdict, self._hook_context()),
                )
            if verdict.decision == "ask":
                await self._approve(prepared.info, verdict, signal)
                check_sealed(sealed, arguments, effects, "the approval callback")
            result, returned = await self._run(prepared, signal, sealed)
            # Only after a handler returned: not for a batch stopped at its time limit or
            # cancelled, whose rows are the dispatcher's report of a call that did not end.
            chosen = (
                hooks.for_call("PostToolUse", tool.identity, arguments, effects)
                if hooks is not None and returned
                else ()
            )
            if chosen:
                assert hooks is not None
                # The hooks see the result without its panel blocks; their lines and the
                # result share what the panel note leaves of the cap.
                room = self._room(context)
                result = await guard(
                    signal,
                    None,
                    post_tool_use(
                        hooks,
                        chosen,
                        prepared.info,
                        result,
                        self._hook_context(),
                        max_bytes=room,
                    ),
                )
        except RawError as error:  # DispatchError, or a RawError a handler raised
            result = ToolResult.from_error(error, effects=effects)
        except Exception as exc:  # a fault of raw's own or of a plug-in: still a result
            logger.exception("dispatching %s failed", call.name)
            result = ToolResult.from_error(
                HandlerError(f"the call failed inside raw: {type(exc).__name__}: {exc}"),
                effects=effects,
            )
        panels = context.end() if context is not None else None
        if panels is not None:  # made: the handler used its panels
            note = call_note(panels, self.max_output_bytes)
            if result.is_error:  # an error's text meets the cap too (content already has)
                result = result.capped(self.max_output_bytes - len(note.encode()))
            if panels.updates:
                result = with_panels(result, panels, note)
        elif result.is_error:
            result = result.capped(self.max_output_bytes)
        return CallOutcome(
            call=call,
            identity=tool.identity if tool is not None else None,
            arguments=arguments,
            result=result,
        )

    def _room(self, context: CallContext) -> int:
        """What the call's panel note leaves of the result cap, in bytes (all of it when
        the handler made no panel update)."""
        panels = context.made_panels()
        if panels is None:
            return self.max_output_bytes
        return self.max_output_bytes - len(call_note(panels, self.max_output_bytes).encode())

    async def prepare(
        self, tool: LoadedTool, call: ToolCall, signal: CancellationSignal | None = None
    ) -> PreparedCall:
        """Steps 2 and 3 for ``tool``: the arguments parsed, validated and frozen, the
        context the handler will get, and the intended effects, validated. Raises
        ``invalid_arguments``, ``effects_invalid`` (also when a descriptor outside raw
        runs past ``effects_timeout``) or ``cancelled``. A turn, ``raw tools call`` and
        ``raw policy explain`` all prepare calls here."""
        arguments = parsed_arguments(tool, call.arguments, self.max_argument_bytes)
        signal = signal if signal is not None else CancellationSignal()
        context = CallContext(
            tool,
            call.id,
            self.cwd,
            self.max_output_bytes,
            signal,
            self.vars,
            self.skills,
            self.resources,
            self.panels,
            self.interactions,
        )
        effects = None
        if tool.describe_effects is not None:
            effects = await describe(
                tool, arguments, context, limit=self.effects_timeout, signal=signal
            )
        return PreparedCall(
            tool=tool, call=call, arguments=arguments, effects=effects, context=context
        )

    def select(self, name: str) -> LoadedTool:
        """Step 1: the selected tool with model-facing ``name``, if the model is offered
        it. Raises ``tool_unknown`` when no selected tool has that name and
        ``tool_not_exposed`` (with the deciding ``rule``) when an unconditional deny hides
        it. The one exposure check: the policy's."""
        tool = self.registry.by_name(name)
        self.policy.check_exposed(tool.identity)
        return tool

    def _hook_context(self) -> HookContext:
        return HookContext(session_id=self.session_id, cwd=self.cwd)

    def _decide(self, tool: LoadedTool, arguments: Any, effects: Any) -> Verdict:
        decision = self.policy.decide(tool.identity, arguments, effects)
        if decision.verdict == "allow":
            return ALLOW
        rule = decision.rule
        where = decision.where
        if decision.verdict == "deny":
            raise Denied(
                f"{tool.identity} is denied by rule {rule} of {where}",
                rule=rule,
                tool=tool.identity,
                layer=None if where == "tools.rules" else decision.layer,
            )
        return Verdict(decision="ask", reason=f"rule {rule} of {where} asks")

    async def _approve(self, info: CallInfo, verdict: Verdict, signal: CancellationSignal) -> None:
        if self.approval is None:
            raise ApprovalUnavailable(
                f"{info.identity} needs approval ({verdict.reason}) and nobody can be asked",
                tool=info.identity,
            )
        request = ApprovalRequest(
            identity=info.identity,
            name=info.name,
            arguments=info.arguments,
            effects=info.effects,
            tool_call_id=info.tool_call_id,
            signal=signal,
            reason=verdict.reason,
        )
        try:
            approved = await guard(signal, None, self.approval(request))
        except (Cancelled, ApprovalUnavailable, ApprovalDenied):
            raise
        except Exception as exc:
            raise ApprovalDenied(
                f"the approval callback failed: {type(exc).__name__}: {exc}",
                for_model="asking the user for approval failed, so the call did not run",
                tool=info.identity,
            ) from exc
        if approved is not True:
            raise ApprovalDenied(f"{info.identity} was not approved", tool=info.identity)

    async def _run(
        self, prepared: PreparedCall, signal: CancellationSignal, sealed: str
    ) -> tuple[ToolResult, bool]:
        """Step 7: the result, and whether the handler returned it (``False``: a batch
        stopped at its time limit or cancelled, reported with the rows it finished)."""
        tool, context, effects = prepared.tool, prepared.context, prepared.effects
        middlewares = collect_middlewares(self.host, prepared.info) if self.host is not None else []
        try:
            try:
                returned = await guard(
                    signal,
                    self.handler_timeout,
                    through_middlewares(
                        middlewares,
                        prepared,
                        sealed,
                        lambda: self._handler(tool, prepared.arguments, context),
                        lambda: self._room(context),
                    )
                    if middlewares
                    else self._handler(tool, prepared.arguments, context),
                    context,
                )
            except RawError:
                raise
            # The handler's own (a middleware's are RawErrors); sys.exit() in a tool ends
            # the call, never raw. (A KeyboardInterrupt is the user's: it goes on.)
            except (Exception, SystemExit) as exc:
                raise handler_error(tool, exc) from exc
        except (Timeout, Cancelled) as error:  # a batch still reports the rows it finished
            progress = context.made_progress()
            if progress is None:
                raise
            stopped = stopped_batch(
                error,
                progress,
                limit=self.handler_timeout,
                effects=effects,
                max_output_bytes=self.max_output_bytes,
            )
            if stopped is None:
                raise
            return stopped, False
        # The handler returned: its panel blocks leave the result (under the call's signal;
        # inside the middlewares' chain when there is one, which must not see them).
        if not middlewares and has_panel_blocks(returned):
            returned = await guard(signal, None, context.panels.take_blocks(returned))
        room = self._room(context)
        return result_of(returned, effects, room), True

    def _handler(self, tool: LoadedTool, arguments: Any, context: CallContext) -> Awaitable[Any]:
        """The handler's run, to await: an ``async def`` handler's own coroutine (the
        common call: no coroutine of raw's around it), a plain one's in a worker thread.
        What it raises is the handler's."""
        if self._is_async(tool):
            return tool.handler(arguments, context)  # type: ignore[no-any-return]
        return self._in_thread(tool, arguments, context)

    async def _in_thread(self, tool: LoadedTool, arguments: Any, context: CallContext) -> Any:
        """A plain ``def`` handler's run in a worker thread (and what it returned, awaited,
        when that is awaitable)."""
        returned = await call_in_daemon(
            tool.handler, arguments, context, name=f"raw handler {tool.identity}"
        )
        if inspect.isawaitable(returned):
            returned = await returned
        return returned
