"""The agent loop: a model, an agent's tools and a session store, turned into an agent.

A turn (spec 004, "The turn") starts with one user message and makes at most ``max_steps``
inference requests. Text streams as it arrives; an assistant message is committed only when
its stream has finished; a message with tool calls is committed whole before any call runs;
the calls run in the order the model listed them, each through the dispatch pipeline, and
each result is committed before the next request. The turn stops when the model answers
without a tool call, when ``max_steps`` is reached (a call asked for in the last permitted
request is recorded as ``max_steps`` and never runs), when a request fails, or when the turn
is cancelled (finished results are kept; every unfinished call gets a ``cancelled`` result).
Every turn emits exactly one :class:`~raw_core.runtime.events.TurnEnded`.

Front ends use it through the session service (:class:`raw_core.app.App`), which builds
the :class:`Runtime` from a config; an embedding app may also build one itself::

    runtime = Runtime(backend, host=host)
    async with runtime.open_session(agent, provider, front_end=front_end) as session:
        ended = await session.run_turn("Fix the failing test")

Why this module is longer than the rest (about 730 lines): :class:`Session` is the turn's
one state machine — stream, commit, run the calls, commit, repeat — and its parts share
that state: the writer, the in-memory model context, the pending and running calls, the
turn's cancel scope. Splitting the class would hand that state around between modules.
What has no share in it lives apart: the streamed draft and the transcript records in
:mod:`raw_core.runtime._transcript`, the :class:`~raw_core.runtime.Runtime` that opens
sessions in :mod:`raw_core.runtime._runtime`, command hooks in ``_hooks``, panels in
``panels``, and what a compaction summarises and keeps in :mod:`raw_core.runtime.compaction`.
"""

from __future__ import annotations

import contextlib
import logging
import time
import types
from collections.abc import AsyncIterator, Callable, Mapping, Sequence
from contextlib import asynccontextmanager
from typing import Any

import anyio
import anyio.lowlevel
import anyio.to_thread
import attrs

from raw_core.agent import Agent
from raw_core.agent.skills import SkillService
from raw_core.dispatch import Dispatcher
from raw_core.errors import (
    Cancelled,
    ContextTooLong,
    InternalError,
    MaxStepsReached,
    ProviderError,
    ProviderFailed,
    RawError,
    TurnInProgress,
)
from raw_core.hooks import HookContext
from raw_core.plugins import PluginHost
from raw_core.providers.contract import (
    ModelRequest,
    ModelTool,
    Provider,
    prompt_cache_key,
)
from raw_core.runtime._hooks import prompt_hooks, session_started, turn_stopped
from raw_core.runtime._transcript import (
    INTERRUPTED,
    Draft,
    error_message,
    has_placeholder,
    interrupted_text,
    result_message,
    tool_digest,
)
from raw_core.runtime.compaction import Compactor
from raw_core.runtime.context import ContextLimits, ContextMeter, fixed_bytes
from raw_core.runtime.events import (
    AssistantCommitted,
    CompactionEnded,
    LoopEvent,
    RuntimeChanged,
    ToolCallStarted,
    TurnEnded,
    TurnStarted,
)
from raw_core.runtime.frontend import FrontEnd
from raw_core.runtime.panels import PanelActionResult, SessionRecorder, run_action
from raw_core.sessions.backend import (
    PanelUpdate,
    PendingRequest,
    SessionState,
    SessionWriter,
    prompt_title,
)
from raw_core.sessions.sqlite import (
    AssistantMessage,
    Message,
    TextBlock,
    ToolCall,
    ToolResultMessage,
    UserMessage,
    VarPlaceholder,
    tool_output_for,
)
from raw_core.tools.calls import CancellationSignal
from raw_core.tools.panels import PanelBoard

__all__ = ["Session", "VarResolver"]

logger = logging.getLogger("raw_core.runtime.loop")

VarResolver = Callable[[str], str]
"""Gives a variable's value by name when a request is built (values never reach the store).
By default the agent's :class:`~raw_core.agent.variables.VarService` reads it."""

YIELD_EVERY = 0.002
"""Seconds a turn may run without giving the event loop to other tasks (see _steps)."""
MEASURE_INLINE = 2_000
"""Messages of a resumed context measured on the event loop; a longer one in a thread."""


def _ignore(event: LoopEvent) -> None:
    """The emitter outside a turn."""


def _cancelled(signal: CancellationSignal) -> bool:
    return signal.cancelled


class Session:
    """One open session of one agent: runs one turn at a time. Made by
    :meth:`Runtime.open_session`, which holds the session's write lock."""

    def __init__(
        self,
        *,
        agent: Agent,
        provider: Provider,
        writer: SessionWriter,
        dispatcher: Dispatcher,
        host: PluginHost | None,
        tools: Sequence[ModelTool],
        resolve_var: VarResolver | None,
        skills: SkillService,
        front_end: FrontEnd,
        panels: PanelBoard | None = None,
        limits: ContextLimits | None = None,
    ) -> None:
        self.agent = agent
        self.provider = provider
        self.dispatcher = dispatcher
        self.front_end = front_end
        self._writer = writer
        self._host = host
        self._tools = tuple(tools)
        self._cache_key = prompt_cache_key(agent.config.system, self._tools)
        self._resolve_var = resolve_var if resolve_var is not None else agent.vars.read
        self._skills = skills
        self._lock = anyio.Lock()
        self._signal: CancellationSignal | None = None
        self._turn_scope: anyio.CancelScope | None = None  # the running turn's (see _turn)
        self._pending_change: RuntimeChanged | None = None
        self._listening = True
        self._context: list[Message] = []
        self._has_placeholders = False
        self._saved_seen: dict[str, str] = {}
        self._tools_state: dict[str, Any] | None = None
        self._state = SessionState()
        self._emit: Callable[[LoopEvent], None] = _ignore
        self._pending_calls: list[ToolCall] = []
        self._running_call: str | None = None  # the id of the call being dispatched
        self._steps_taken = 0
        self._board = panels if panels is not None else dispatcher.panels
        self._board.recorder = SessionRecorder(
            append=writer.append,
            set_panels=lambda keys: self._set_state(panels=keys),
            emit=self.emit_event,
            front_end=front_end,
        )
        self._limits = limits if limits is not None else ContextLimits()
        self._meter = ContextMeter(fixed_bytes(agent.config.system, self._tools))
        self._compactor = Compactor(
            session_id=writer.session_id,
            provider=provider,
            system=agent.config.system,
            tools=self._tools,
            cache_key=self._cache_key,
            writer=writer,
            meter=self._meter,
            limits=self._limits,
            panels=self._board.panels,
            get_context=lambda: self._context,
            set_context=self._set_context,
        )

    @property
    def id(self) -> str:
        """The session's stable id (the same in every front end)."""
        return self._writer.session_id

    @property
    def cache_key(self) -> str:
        """The prompt-cache key requests carry: a hash of the system prompt and tools."""
        return self._cache_key

    @property
    def tools(self) -> tuple[ModelTool, ...]:
        """What the model receives of the tools, in ``tools.use`` order."""
        return self._tools

    @property
    def panels(self) -> tuple[PanelUpdate, ...]:
        """Each of the session's panels at its last revision (its last accepted update),
        least recently changed first."""
        return self._board.panels()

    async def run_panel_action(
        self,
        panel: str,
        action: str,
        *,
        on_event: Callable[[LoopEvent], Any] | None = None,
        signal: CancellationSignal | None = None,
    ) -> PanelActionResult:
        """Run action ``action`` of ``panel`` (its full name ``<identity>:<id>``, or an id
        one selected tool declares): a ``prompt`` action's drafted message, or a ``tool``
        action's call through the whole pipeline as ``source: "user_action"`` (see
        :mod:`raw_core.runtime.panels`). Its events go to ``on_event`` (by default the
        front end's). ``turn_in_progress`` while a turn runs."""
        if self._lock.locked():
            raise TurnInProgress(f"session {self.id} is running a turn", session_id=self.id)
        async with self._lock:
            return await run_action(
                registry=self.agent.registry,
                dispatcher=self.dispatcher,
                board=self._board,
                append=self._writer.append,
                emit=self._emitter(on_event),
                panel=panel,
                action=action,
                signal=signal if signal is not None else CancellationSignal(),
            )

    # --- opening -------------------------------------------------------------------------

    async def _commit(self, messages: Sequence[Message], display: Sequence[Any] = ()) -> None:
        """Append ``messages`` to both streams of the session (and ``display``, display-only
        entries, to its display history) in one transaction, and the messages to the
        in-memory copy of the context (this session holds the write lock, so the copy
        cannot go stale)."""
        await self._writer.append([*messages, *display] if display else messages)
        self._context.extend(messages)
        self._meter.add(messages)
        self._has_placeholders = self._has_placeholders or has_placeholder(messages)

    def _set_context(self, context: Sequence[Message]) -> None:
        """Take the context a compaction left (the store already holds it)."""
        self._context = list(context)
        self._has_placeholders = has_placeholder(context)

    async def _prepare(self, interrupted: Mapping[str, PendingRequest] | None = None) -> None:
        """Repair an interrupted turn (a call that waited for a request, in
        ``interrupted`` by call id, says so), and compare the tools with the ones last
        used."""
        context = await self._writer.read_context()
        self._context = list(context)
        if len(context) > MEASURE_INLINE:  # a deep session: measure it off the event loop
            await anyio.to_thread.run_sync(self._meter.reset, context)
        else:
            self._meter.reset(context)
        self._has_placeholders = has_placeholder(context)
        position = next(
            (
                i
                for i in range(len(context) - 1, -1, -1)
                if isinstance(context[i], AssistantMessage)
            ),
            None,
        )
        if position is not None:
            last = context[position]
            assert isinstance(last, AssistantMessage)
            # Only results after the last assistant message answer it: an id may repeat an
            # earlier turn's (providers that number calls per response do that).
            answered = {
                m.tool_call_id for m in context[position + 1 :] if isinstance(m, ToolResultMessage)
            }
            missing = [c for c in last.tool_calls if c.id not in answered]
            if missing:
                waited = interrupted or {}
                await self._commit(
                    [
                        error_message(
                            c.id,
                            Cancelled.code,
                            interrupted_text(waited[c.id]) if c.id in waited else INTERRUPTED,
                        )
                        for c in missing
                    ]
                )
        state = self._state = await self._writer.state()
        digests = {tool.name: tool_digest(tool) for tool in self._tools}
        before = dict(state.tool_digests) if state.tool_digests is not None else None
        if isinstance(before, dict) and before != digests:
            added = tuple(sorted(set(digests) - set(before)))
            changed = tuple(
                sorted(n for n in set(digests) & set(before) if digests[n] != before[n])
            )
            by_name = {tool.name: tool.identity for tool in self.agent.registry}
            self._pending_change = RuntimeChanged(
                session_id=self.id,
                added=added,
                removed=tuple(sorted(set(before) - set(digests))),
                changed=changed,
                identities={n: by_name[n] for n in (*added, *changed) if n in by_name},
            )
        self._skills.seen = dict(state.skills_seen)
        self._saved_seen = dict(self._skills.seen)
        # The new definitions are recorded when a turn starts and announces the change, so
        # a session opened and closed without a turn still announces it next time.
        self._tools_state = (
            {"tool_digests": digests, "cache_key": self._cache_key}
            if before != digests or state.cache_key != self._cache_key
            else None
        )

    async def set_title(self, title: str) -> None:
        """Name the session (what the session lists show). An untitled session is titled
        by its first prompt that the UserPromptSubmit hooks let through
        (:func:`prompt_title`), so a front end need not. Not conversation activity, so
        expiry is unaffected."""
        await self._set_state(title=title)

    async def _set_state(self, **changes: Any) -> None:
        state = attrs.evolve(self._state, **changes)
        await self._writer.set_state(state)
        self._state = state

    async def _record_tools(self) -> None:
        if self._tools_state is not None:
            await self._set_state(**self._tools_state)
            self._tools_state = None

    async def _save_skills_seen(self) -> None:
        """Record which skill texts the model has read, as soon as that changes (so a crash
        later in the turn does not forget it)."""
        if self._skills.seen != self._saved_seen:
            await self._set_state(skills_seen=dict(self._skills.seen))
            self._saved_seen = dict(self._skills.seen)

    def _user_message(self, prompt: str, lines: Sequence[TextBlock] = ()) -> UserMessage:
        """The turn's one user message; it starts with a notice when a skill the model read
        has changed since (the prompt-cache key does not change for that), and ends with
        the context lines UserPromptSubmit hooks added."""
        changed = self._skills.changed_since_read()
        if not changed:
            if not lines:
                return UserMessage.from_text(prompt)
            return UserMessage(content=(TextBlock(text=prompt), *lines))
        names = ", ".join(skill.name for skill in changed)
        notice = (
            f"[raw] The text of the skill{'s' if len(changed) > 1 else ''} {names} changed"
            " since you loaded it. Load it again with load_skill before relying on it."
        )
        for skill in changed:
            self._skills.seen[skill.name] = skill.digest
        return UserMessage(content=(TextBlock(text=notice), TextBlock(text=prompt), *lines))

    def _hook_context(self) -> HookContext:
        return HookContext(session_id=self.id, cwd=self.dispatcher.cwd)

    async def _started(self, resumed: bool) -> None:
        """Run the agent's SessionStart hooks (observers: a failure is logged)."""
        await session_started(self.agent.hooks, self._hook_context(), resumed=resumed)

    # --- a turn --------------------------------------------------------------------------

    def emit_event(self, event: LoopEvent) -> None:
        """Give ``event`` to the running turn's listeners (ignored outside a turn)."""
        self._emit(event)

    def cancel(self, reason: str = "cancelled by the user") -> None:
        """Cancel the running turn, if any (from the event loop's thread)."""
        if self._signal is not None:
            self._signal.cancel(reason)

    async def run_turn(
        self,
        prompt: str,
        *,
        on_event: Callable[[LoopEvent], Any] | None = None,
        signal: CancellationSignal | None = None,
    ) -> TurnEnded:
        """Run one turn; ``on_event`` (by default the front end's) receives each event
        (its failures are logged, not raised). Returns the terminal event. ``signal`` lets
        the caller cancel the turn (:meth:`cancel` does too). Raises
        ``turn_in_progress`` when a turn is already running in this session."""
        if self._lock.locked():
            raise TurnInProgress(f"session {self.id} is running a turn", session_id=self.id)
        async with self._lock:
            signal = signal if signal is not None else CancellationSignal()
            self._signal = signal
            try:
                return await self._turn(prompt, signal, self._emitter(on_event))
            finally:
                self._signal = None

    @asynccontextmanager
    async def stream_turn(self, prompt: str) -> AsyncIterator[AsyncIterator[LoopEvent]]:
        """Run one turn and iterate over its events::

            async with session.stream_turn("hi") as events:
                async for event in events:
                    ...

        The turn runs in a task of this block; leaving the block early cancels it (calls
        that finished keep their results, the others are recorded as cancelled).
        """
        if self._lock.locked():
            raise TurnInProgress(f"session {self.id} is running a turn", session_id=self.id)
        send, receive = anyio.create_memory_object_stream[LoopEvent](float("inf"))
        signal = CancellationSignal()

        def deliver(event: LoopEvent) -> None:
            with contextlib.suppress(anyio.BrokenResourceError, anyio.ClosedResourceError):
                send.send_nowait(event)

        async with anyio.create_task_group() as group:

            async def run() -> None:
                with send:
                    await self.run_turn(prompt, on_event=deliver, signal=signal)

            group.start_soon(run)
            try:
                with receive:
                    yield receive
            finally:
                signal.cancel("the event stream was closed")

    def _emitter(self, on_event: Callable[[LoopEvent], Any] | None) -> Callable[[LoopEvent], None]:
        hooks = self._host.implementations("raw_session_event") if self._host is not None else []
        if on_event is None and getattr(self.front_end, "wants_events", True):
            on_event = self.front_end.on_event
        # With nobody listening, the events of each step (deltas, calls, results) are not
        # built at all; the terminal event is still returned by run_turn.
        self._listening = on_event is not None or bool(hooks)

        def emit(event: LoopEvent) -> None:
            # Each plug-in's copy is made before the front end sees the event: what the
            # front end does to its own copy's values reaches no plug-in.
            payloads = [event.to_dict() for _ in hooks]
            if on_event is not None:
                try:
                    on_event(event)
                except Exception:
                    logger.exception("an event renderer failed; the turn goes on")
            for impl, payload in zip(hooks, payloads, strict=True):
                try:
                    impl.function(**dict.fromkeys(impl.argnames, payload))
                except Exception:
                    logger.exception("raw_session_event of plug-in %r failed", impl.plugin_name)

        self._emit = emit
        return emit

    async def _turn(
        self, prompt: str, signal: CancellationSignal, emit: Callable[[LoopEvent], None]
    ) -> TurnEnded:
        emit(TurnStarted(session_id=self.id, prompt=prompt))
        if self._pending_change is not None:
            emit(self._pending_change)
            self._pending_change = None
        end: TurnEnded
        if _cancelled(signal):  # cancelled before it began: nothing is committed
            end = TurnEnded(reason="cancelled", steps=0)
            emit(end)
            return end
        # One cancel scope for the whole turn, tied to the signal only while a request
        # streams (see _request): the signal firing then ends the turn here. During a call
        # it is not tied, so the dispatcher's own scope ends the call, with its result.
        with anyio.CancelScope() as scope:
            self._turn_scope = scope
            try:
                end = await self._steps(prompt, signal, emit)
            except BaseException:
                # Cancelled by the signal during a request, or from outside (a cancel scope,
                # a task group, Ctrl-C): record the calls that have no result yet and end
                # the turn properly, then let the cancellation go on (this turn's own scope
                # stops the signal's). The records are written shielded from the
                # cancellation, so they are written whole.
                end = TurnEnded(reason="cancelled", steps=self._steps_taken)
                with anyio.CancelScope(shield=True), contextlib.suppress(RawError):
                    await self._cancel_rest(self._pending_calls)
                    await self._save_skills_seen()
                    await self._writer.end_turn()
                emit(end)
                raise
        if scope.cancelled_caught:
            return end
        try:
            await self._save_skills_seen()
            await self._writer.end_turn()
        except RawError as exc:
            if end.error is None:
                end = TurnEnded(reason="error", steps=end.steps, error=exc.to_dict())
        await turn_stopped(self.agent.hooks, self._hook_context(), end, signal)
        emit(end)
        return end

    async def _steps(
        self, prompt: str, signal: CancellationSignal, emit: Callable[[LoopEvent], None]
    ) -> TurnEnded:
        """The requests and calls of one turn; the terminal event it ended with."""
        steps = 0
        self._steps_taken = 0
        self._pending_calls = []
        self._running_call = None
        last_yield = time.perf_counter()
        end: TurnEnded
        try:
            # Before anything is committed or sent: a blocked prompt leaves no trace.
            blocked, lines = await prompt_hooks(
                self.agent.hooks, prompt, self._hook_context(), signal
            )
            if isinstance(blocked, Cancelled):
                return TurnEnded(reason="cancelled", steps=0)
            if blocked is not None:
                return TurnEnded(reason="error", steps=0, error=blocked.to_dict())
            await self._commit([self._user_message(prompt, lines)])
            await self._record_tools()
            if not self._state.title:  # titled by the first prompt the hooks let through
                await self.set_title(prompt_title(prompt))
            while True:
                if signal.cancelled:
                    end = TurnEnded(reason="cancelled", steps=steps)
                    break
                # Fitted to the context window before the step counts: a request that
                # cannot be made to fit (context_too_long) is never sent.
                scope = self._turn_scope
                assert scope is not None  # a request runs inside _turn
                await self._compactor.fit(signal, scope, emit)
                steps += 1
                self._steps_taken = steps
                # A turn whose model and tools never wait (a scripted or in-process model)
                # would hold up every other session for its whole length: it yields to the
                # event loop once it has run for YIELD_EVERY seconds since it last did.
                now = time.perf_counter()
                if now - last_yield >= YIELD_EVERY:
                    await anyio.lowlevel.checkpoint()
                    last_yield = now
                assistant = await self._answer(steps, signal, emit)
                await self._commit([assistant])
                self._pending_calls = list(assistant.tool_calls)
                if self._listening:
                    emit(
                        AssistantCommitted(
                            text=assistant.text,
                            step=steps,
                            tool_calls=tuple(
                                {"id": c.id, "name": c.name, "arguments": c.arguments}
                                for c in assistant.tool_calls
                            ),
                        )
                    )
                if not assistant.tool_calls:
                    end = TurnEnded(reason="completed", steps=steps)
                    break
                if steps >= self.agent.config.max_steps:
                    await self._commit(
                        [
                            error_message(
                                c.id,
                                MaxStepsReached.code,
                                f"the turn reached max_steps ({steps}) before this call ran",
                            )
                            for c in assistant.tool_calls
                        ]
                    )
                    self._pending_calls = []
                    end = TurnEnded(reason="max_steps", steps=steps)
                    break
                if await self._run_calls(assistant.tool_calls, signal, emit):
                    end = TurnEnded(reason="cancelled", steps=steps)
                    break
        except RawError as exc:
            end = TurnEnded(reason="error", steps=steps, error=exc.to_dict())
        except Exception as exc:  # a fault of raw or a plug-in: still one terminal event
            logger.exception("the turn failed inside raw")
            end = TurnEnded(
                reason="error",
                steps=steps,
                error=InternalError(f"{type(exc).__name__}: {exc}").to_dict(),
            )
        return end

    def _messages(self) -> tuple[Message, ...]:
        context = tuple(self._context)
        if not self._has_placeholders:
            return context
        return tuple(self._fill(m) if isinstance(m, ToolResultMessage) else m for m in context)

    def _fill(self, message: ToolResultMessage) -> ToolResultMessage:
        blocks: list[Any] = []
        for block in message.content:
            if isinstance(block, VarPlaceholder):
                try:
                    value = self._resolve_var(block.name)
                except RawError as exc:
                    value = f"[the value of {block.name} is not available: {exc.code}]"
                blocks.append(TextBlock(text=value))
            else:
                blocks.append(block)
        return attrs.evolve(message, content=tuple(blocks))

    async def _answer(
        self, step: int, signal: CancellationSignal, emit: Callable[[LoopEvent], None]
    ) -> AssistantMessage:
        """One request (already fitted to the context window, see
        :mod:`raw_core.runtime.compaction`); one the provider refuses as too long is sent
        once more after a compaction."""
        scope = self._turn_scope
        assert scope is not None  # a request runs inside _turn
        try:
            return await self._request(step, signal, emit)
        except ContextTooLong as refused:
            try:
                ended = await self._compactor.compact("overflow", signal, scope, emit)
            except ProviderError:
                raise refused from None
            if ended.outcome != "completed":
                raise
        return await self._request(step, signal, emit)

    async def compact(
        self,
        *,
        on_event: Callable[[LoopEvent], Any] | None = None,
        signal: CancellationSignal | None = None,
    ) -> CompactionEnded:
        """Compact the model context now, as ``raw sessions compact`` does: its events go
        to ``on_event`` (by default the front end's); ``signal`` (or :meth:`cancel`) stops
        it, changing nothing. Raises the provider's error when the summary request fails
        (nothing changed), ``turn_in_progress`` while a turn runs."""
        if self._lock.locked():
            raise TurnInProgress(f"session {self.id} is running a turn", session_id=self.id)
        async with self._lock:
            signal = self._signal = signal if signal is not None else CancellationSignal()
            emit = self._emitter(on_event)
            ended = CompactionEnded(session_id=self.id, outcome="cancelled")
            try:
                with anyio.CancelScope() as scope:
                    if not signal.cancelled:
                        ended = await self._compactor.compact("requested", signal, scope, emit)
                        await self._writer.end_turn()
            finally:
                self._signal = None
            return ended

    async def _request(
        self, step: int, signal: CancellationSignal, emit: Callable[[LoopEvent], None]
    ) -> AssistantMessage:
        """One inference request. The signal firing meanwhile cancels the turn's scope,
        which ends the turn (the stream is closed on the way out)."""
        request = ModelRequest(
            system=self.agent.config.system,
            tools=self._tools,
            messages=self._messages(),
            cache_key=self._cache_key,
        )
        draft = Draft(estimate=self._meter.estimate(), window=self._limits.window)
        stream: Any = None
        finished = False
        turn_scope = self._turn_scope
        assert turn_scope is not None  # a request runs inside _turn
        signal.attach(turn_scope)
        try:
            stream = self.provider.stream(request)
            async for event in stream:
                draft.take(event, step, emit, self._listening)
            finished = True
        except ProviderError:
            raise
        except Exception as exc:
            raise ProviderFailed(
                f"the provider failed: {type(exc).__name__}: {exc}", provider=self.provider.name
            ) from exc
        finally:
            signal.detach(turn_scope)
            # A stream left midway (an error, a cancellation) must release what it holds,
            # such as an HTTP response; an async generator that ran to its end is closed.
            done = finished and isinstance(stream, types.AsyncGeneratorType)
            close = None if done else getattr(stream, "aclose", None)
            if close is not None:
                with anyio.CancelScope(shield=True):
                    await close()
        if draft.usage is not None:
            self._meter.report(draft.usage.input_tokens)
        return draft.message(step)

    async def _run_calls(
        self,
        calls: Sequence[ToolCall],
        signal: CancellationSignal,
        emit: Callable[[LoopEvent], None],
    ) -> bool:
        """Run the calls in order; return whether the turn was cancelled."""
        for index, call in enumerate(calls):
            if signal.cancelled:
                await self._cancel_rest(calls[index:])
                return True
            if self._listening:
                emit(
                    ToolCallStarted(tool_call_id=call.id, name=call.name, arguments=call.arguments)
                )
            self._running_call = call.id
            outcome = await self.dispatcher.run(call, signal=signal)
            result = outcome.result
            # What the user saw, when the model received less: the uncapped output, kept in
            # the display history only (the model context holds the capped copy).
            display = (tool_output_for(call.id, result.full_content),) if result.truncated else ()
            await self._commit([result_message(call.id, result)], display)
            self._running_call = None
            self._pending_calls = list(calls[index + 1 :])
            if self._skills.seen != self._saved_seen:
                await self._save_skills_seen()
            if self._listening:
                emit(outcome.event())
            if result.code == Cancelled.code:
                await self._cancel_rest(calls[index + 1 :])
                return True
        return False

    async def _cancel_rest(self, calls: Sequence[ToolCall]) -> None:
        """Record a cancelled result for each call without one (the one running when the
        turn was stopped from outside may have done part of its work)."""
        self._pending_calls = []
        running, self._running_call = self._running_call, None
        if not calls:
            return
        await self._commit(
            [
                error_message(
                    c.id,
                    Cancelled.code,
                    "the turn was stopped while this call was under way; if its handler had"
                    " started, it may have done part of its work"
                    if c.id == running
                    else "the turn was cancelled before this call ran",
                )
                for c in calls
            ]
        )
