"""The session service: :class:`App`, the one composition every front end uses."""

from __future__ import annotations

import os
from collections.abc import AsyncIterator, Awaitable, Callable, Mapping
from contextlib import asynccontextmanager
from typing import TYPE_CHECKING, Any

from raw_core.app._reads import StoreReads
from raw_core.errors import ConfigNotFound

# Everything else is imported when first used: importing this module (what a front end
# does first) costs little more than ``import raw_core``; opening a service imports the
# config, the plug-in host and the backend protocol, and what only sessions, calls and
# explanations need is imported by them, so that a
# command that only lists sessions starts fast (no schema compiler, RE2 or loop).
if TYPE_CHECKING:
    from pathlib import Path

    from raw_core.agent import Agent
    from raw_core.agent.variables import VarCache
    from raw_core.app._examples import ExampleRun
    from raw_core.app._explain import Explanation
    from raw_core.app._listing import ToolListing
    from raw_core.app._probe import ModelCheck
    from raw_core.config import Config, ConfigLayer
    from raw_core.hooks import LoadedHook
    from raw_core.plugins import PluginHost
    from raw_core.providers.contract import Provider
    from raw_core.runtime import Runtime, Session
    from raw_core.runtime.events import CompactionEnded
    from raw_core.runtime.frontend import FrontEnd
    from raw_core.runtime.panels import PanelActionResult
    from raw_core.sessions.backend import (
        PanelUpdate,
        PendingRequest,
        SessionBackend,
    )
    from raw_core.tools.calls import CancellationSignal
    from raw_core.tools.loader import ToolLoader
    from raw_core.tools.results import ToolResult

__all__ = ["App"]


class App(StoreReads):
    """The session service: one config, one plug-in host, one session backend, and every
    operation a front end needs. Make one with :meth:`open`::

        async with App.open("raw.json") as app:
            async with app.open_session(front_end=my_front_end) as session:
                ended = await session.run_turn("Fix the failing test")

    Each session loads its agent (opening the tool sources it selects) when it opens and
    closes them when it ends; ``call_tool``, ``explain`` and ``tool_definitions`` load it
    the same way, through the same dispatcher factory, so they match a real turn.
    """

    def __init__(
        self,
        *,
        config: Config,
        host: PluginHost,
        backend: SessionBackend | None = None,
        open_backend: Callable[[], Awaitable[SessionBackend]] | None = None,
        provider: Provider | None = None,
        local_dir: Path | None = None,
        approval_wait: float = 0.0,
    ) -> None:
        """``backend``: the session backend to use; or ``open_backend``, which opens it
        when first needed (exactly one of the two)."""
        import anyio

        if (backend is None) == (open_backend is None):
            raise TypeError("App takes either backend or open_backend")
        self.config = config
        self.host = host
        self._backend: SessionBackend | None = backend
        self._open_backend = open_backend
        self._backend_lock = anyio.Lock()
        self._provider = provider
        self._local_dir = local_dir
        self._loader: ToolLoader | None = None  # one for every session: imports once
        self._approval_wait = approval_wait
        self._runtime: Runtime | None = None
        self._live: dict[str, Session] = {}
        self._var_cache: VarCache | None = None

    async def backend(self) -> SessionBackend:
        """The session backend, opened on first use (commands that need no sessions, such
        as ``call_tool`` or ``explain``, never open it)."""
        if self._backend is None:
            async with self._backend_lock:
                if self._backend is None:
                    assert self._open_backend is not None
                    self._backend = await self._open_backend()
        return self._backend

    def var_cache(self) -> VarCache:
        """The variables' values read so far: one cache, in memory, for all the sessions,
        calls and credentials of this service (the runtime of spec 004's "Variables")."""
        if self._var_cache is None:
            from raw_core.agent.variables import VarCache

            self._var_cache = VarCache()
        return self._var_cache

    async def runtime(self) -> Runtime:
        """The runtime every session of this service runs in."""
        from raw_core.runtime import Runtime

        if self._runtime is None:
            self._runtime = Runtime(
                await self.backend(), host=self.host, approval_wait=self._approval_wait
            )
        return self._runtime

    # --- composition ---------------------------------------------------------------------

    @classmethod
    @asynccontextmanager
    async def open(
        cls,
        config: Config | str | os.PathLike[str] | None = None,
        *,
        host: PluginHost | None = None,
        backend: SessionBackend | None = None,
        store_dir: str | os.PathLike[str] | None = None,
        provider: Provider | None = None,
        local_dir: Path | None = None,
        approval_wait: float = 0.0,
        config_optional: bool = False,
        expire_after_days: float | None = None,
    ) -> AsyncIterator[App]:
        """Build the service and close what it opened at the end of the block.

        ``config``: a :class:`~raw_core.config.Config`, used as it is (an embedding app
        composes its own layers with :func:`~raw_core.config.compose_layers`, or passes
        none); a config file's path, which takes the project layer's place under the
        user's config and the managed one; or None for the layers
        :func:`~raw_core.config.find_layers` finds (the managed config, the user's and a
        trusted ``./raw.json``). ``host``: the plug-in host (default: one with the installed
        plug-ins loaded). ``backend``: the session backend (default: the one
        ``sessions.backend`` names; ``store_dir`` puts raw's SQLite store in another
        folder). ``provider``: one provider for every session instead of the agents'
        configured models (a recording, a test double). ``approval_wait``: seconds an
        approval waits for an answer by id when the session's front end cannot ask.
        ``config_optional``: with no config file at all, go on with an empty one (for what
        needs only the sessions). ``expire_after_days`` overrides
        ``sessions.expire_after_days``. The backend is opened when first needed. Raises a
        :class:`~raw_core.errors.RawError` (``config_invalid``, ...) when the config, a
        plug-in or the backend cannot be used.
        """
        import anyio

        from raw_core.config import Config
        from raw_core.config.layers import find_layers, load_layers
        from raw_core.plugins import PluginHost

        if host is None:
            host = PluginHost()
            host.load_entry_points()
        if not isinstance(config, Config):
            try:
                config = load_layers(find_layers(config), host=host)
            except ConfigNotFound:
                if not config_optional:
                    raise
                config = Config(agents={})
        resolved = config

        async def open_configured() -> SessionBackend:
            # Imported here: a command that needs no sessions never imports the store.
            from raw_core.app._backends import open_backend

            return await open_backend(
                resolved, host, store_dir, expire_after_days, var_cache=app.var_cache()
            )

        app = cls(
            config=config,
            host=host,
            backend=backend,
            open_backend=open_configured if backend is None else None,
            provider=provider,
            local_dir=local_dir,
            approval_wait=approval_wait,
        )
        try:
            yield app
        finally:
            if backend is None and app._backend is not None:
                with anyio.CancelScope(shield=True):
                    await app._backend.aclose()

    @asynccontextmanager
    async def agent(self, name: str | None = None) -> AsyncIterator[Agent]:
        """Agent ``name`` (default: the only one, or ``default_agent``) with its tool
        sources open for the block."""
        from raw_core.agent import open_agent
        from raw_core.tools.loader import ToolLoader

        if self._loader is None:
            self._loader = ToolLoader()
        async with open_agent(
            self.config,
            name,
            host=self.host,
            loader=self._loader,
            local_dir=self._local_dir,
            var_cache=self.var_cache(),
        ) as agent:
            yield agent

    def _make_provider(self, agent: Agent) -> Provider:
        from raw_core.app._probe import agent_provider

        if self._provider is not None:
            return self._provider
        return agent_provider(self.config, self.host, agent)

    # --- sessions ------------------------------------------------------------------------

    @asynccontextmanager
    async def open_session(
        self,
        session_id: str | None = None,
        *,
        agent: str | None = None,
        front_end: FrontEnd | None = None,
        cwd: str | os.PathLike[str] | None = None,
        title: str = "",
        max_output_bytes: int | None = None,
        wait: float | None = None,
    ) -> AsyncIterator[Session]:
        """Start a session (``session_id`` None) or resume one, as its one writer for the
        block: ``session.run_turn(prompt)`` runs a turn (its events go to ``front_end``),
        ``session.stream_turn(prompt)`` iterates over them, ``session.cancel()`` stops it.
        ``session_locked`` when another writer holds it, ``session_not_found`` for an
        unknown id."""
        import anyio

        from raw_core.runtime.context import ContextLimits
        from raw_core.runtime.frontend import CallbackFrontEnd

        front_end = front_end if front_end is not None else CallbackFrontEnd()
        async with self.agent(agent) as loaded:
            provider = self._make_provider(loaded)
            try:
                runtime = await self.runtime()
                model = self.config.models.get(loaded.config.model or "")
                async with runtime.open_session(
                    loaded,
                    provider,
                    front_end=front_end,
                    session_id=session_id,
                    title=title,
                    cwd=cwd,
                    max_output_bytes=max_output_bytes,
                    wait=wait,
                    limits=ContextLimits.of(model),
                ) as session:
                    self._live[session.id] = session
                    try:
                        yield session
                    finally:
                        self._live.pop(session.id, None)
            finally:
                if provider is not self._provider:
                    close = getattr(provider, "aclose", None)  # providers holding HTTP clients
                    if close is not None:
                        with anyio.CancelScope(shield=True):
                            await close()

    def cancel(self, session_id: str, reason: str = "cancelled by the user") -> bool:
        """Cancel the turn running in session ``session_id`` in this process; whether one
        was running."""
        session = self._live.get(session_id)
        if session is None:
            return False
        session.cancel(reason)
        return True

    async def answer_request(
        self,
        request_id: str,
        *,
        by: str,
        approved: bool | None = None,
        message: str | None = None,
        values: Mapping[str, Any] | None = None,
    ) -> PendingRequest:
        """Answer a pending request by id, from any front end (in any process): the
        waiting call goes on at once. An approval takes ``approved`` (and, declining, a
        ``message`` the model reads); an interaction takes ``values``, the form's values
        keyed by field id (a string for a text or single-select field, a list of strings
        for a multi-select one), checked against its form first. Answering never grants a
        tool permission. ``answer_invalid`` (the request stays pending) for values that do
        not fit the form or an answer of the other kind; ``request_not_found``, or
        ``request_not_pending`` when it was answered first or ended."""
        from raw_core.app._calls import checked_answer

        backend = await self.backend()
        request = await backend.get_request(request_id)
        answer = checked_answer(request, approved=approved, values=values, by=by, message=message)
        return await backend.answer_request(request_id, answer)

    async def cancel_request(self, request_id: str, *, by: str) -> PendingRequest:
        """Cancel a pending interaction request by id, from any front end in any process
        (``by`` names it): the request and the tool's waiting call end ``cancelled``.
        ``answer_invalid`` (it stays pending) for an approval, which is declined with
        ``approved=False``; ``request_not_found``; ``request_not_pending`` once ended."""
        from raw_core.app._calls import check_cancellable

        backend = await self.backend()
        check_cancellable(await backend.get_request(request_id))
        return await backend.cancel_request(request_id, by=by)

    async def panels(self, session_id: str) -> tuple[PanelUpdate, ...]:
        """Each panel of the session at its last revision (its last accepted update:
        identity, panel id, declaration, revision, document), least recently changed
        first — live when the session is open in this app, else read from the store."""
        from raw_core.runtime.panels import restore_panels

        session = self._live.get(session_id)
        if session is not None:
            return session.panels
        backend = await self.backend()
        state = await backend.state(session_id)
        return await restore_panels(backend, session_id, state.panels)

    async def panel_action(
        self,
        session_id: str,
        panel: str,
        action: str,
        *,
        agent: str | None = None,
        front_end: FrontEnd | None = None,
    ) -> PanelActionResult:
        """Run action ``action`` of ``panel`` (``<identity>:<id>``) in session
        ``session_id``: a ``prompt`` action returns its drafted message; a ``tool`` action
        runs the declaring tool again through the whole pipeline with ``tool.source`` =
        ``"user_action"`` — rules, hooks and approval apply, so an ask rule still asks
        (``front_end``, or the session's own when it is open here). A session open in this
        app runs it there (``turn_in_progress`` during a turn); any other is opened for the
        action, with agent ``agent``."""
        session = self._live.get(session_id)
        if session is not None:
            return await session.run_panel_action(panel, action)
        async with self.open_session(session_id, agent=agent, front_end=front_end) as opened:
            return await opened.run_panel_action(panel, action)

    async def compact_session(
        self,
        session_id: str,
        *,
        agent: str | None = None,
        front_end: FrontEnd | None = None,
        signal: CancellationSignal | None = None,
    ) -> CompactionEnded:
        """Compact session ``session_id`` now: its model asks for a summary of the oldest
        part of the model context, which replaces it (the display history keeps
        everything). A session open in this app is compacted there (``turn_in_progress``
        during a turn); any other is opened for it, with agent ``agent``. ``signal``
        cancels it (nothing changes). The provider's error when the summary request fails
        (nothing changed)."""
        session = self._live.get(session_id)
        if session is not None:
            return await session.compact(signal=signal)
        async with self.open_session(session_id, agent=agent, front_end=front_end) as opened:
            return await opened.compact(signal=signal)

    # --- tools ---------------------------------------------------------------------------

    async def list_tools(self, agent: str | None = None) -> ToolListing:
        """What the agent's model receives (descriptions rewritten by plug-ins, as in a
        turn), and the selected tools hidden by an unconditional deny."""
        from raw_core.app._listing import tool_listing

        async with self.agent(agent) as loaded:
            return tool_listing(loaded, self.host)

    async def list_hooks(self, agent: str | None = None) -> tuple[LoadedHook, ...]:
        """The command hooks the agent selects, in the order they run (each folder loaded
        and checked, each ``when`` bound to the tools its ``match`` selects)."""
        async with self.agent(agent) as loaded:
            return loaded.hooks.hooks

    async def call_tool(
        self,
        identity: str,
        arguments: str | Mapping[str, Any],
        *,
        agent: str | None = None,
        front_end: FrontEnd | None = None,
        cwd: str | os.PathLike[str] | None = None,
        max_output_bytes: int | None = None,
    ) -> ToolResult:
        """Run one call of ``identity`` through the seven dispatch steps, exactly as a turn
        of the agent would (its variables, skills, result cap and handler time limit;
        plug-ins' check hooks and middlewares; its PreToolUse and PostToolUse command
        hooks); ``front_end`` approves an ask and answers the tool's questions (a
        front end that cannot ask makes a question ``interaction_unavailable``).

        The result is what the model would receive: a variable's placeholder (from
        ``read_var``) is filled in with the value, as a turn does when it builds a
        request. Nothing is stored, and nothing the call started outlives it (a process
        ``builtin/process`` starts is stopped when the call returns)."""
        from raw_core.app._calls import call_one

        async with self.agent(agent) as loaded:
            return await call_one(
                loaded,
                self.host,
                identity,
                arguments,
                front_end=front_end,
                cwd=cwd,
                max_output_bytes=max_output_bytes,
            )

    async def explain(
        self,
        identity: str,
        arguments: str | Mapping[str, Any],
        *,
        agent: str | None = None,
        cwd: str | os.PathLike[str] | None = None,
    ) -> Explanation:
        """How the agent's rules and the plug-ins' check hooks decide one call: the call
        prepared as a turn would (validated arguments, intended effects), every rule as
        matched or not and why, each hook's answer, the verdicts, and which command hooks
        would run (their subscriptions evaluated; none is run). Raises
        ``tool_unknown``, ``invalid_arguments`` or ``effects_invalid``."""
        from raw_core.app._explain import explain_call

        async with self.agent(agent) as loaded:
            dispatcher = loaded.dispatcher(host=self.host, cwd=cwd)
            return await explain_call(dispatcher, loaded, identity, arguments, host=self.host)

    @property
    def files(self) -> tuple[ConfigLayer, ...]:
        """The config files in use, each with its layer (``managed``, ``user``,
        ``project``; ``config`` for one passed as it is): what ``raw config validate`` and
        the terminal's banner name."""
        return self.config.layers

    def rule_examples(self) -> tuple[ExampleRun, ...]:
        """Every rule example of every agent's ``tools.rules`` and of each floor, run
        through its rule's predicate (no tool is loaded; ``raw policy test``). Raises
        ``config_invalid`` for a rule whose ``when`` does not compile."""
        from raw_core.app._examples import run_config_examples

        return run_config_examples(self.config)

    def describe_models(self) -> list[dict[str, Any]]:
        """The config's models, by name: provider (and whether a plug-in provides it),
        model, address, API, vision, and where the credential comes from and whether it
        is there — never its value."""
        from raw_core.app._probe import describe_models

        return describe_models(self.config, self.host)

    async def check_model(self, name: str, *, seconds: float = 60.0) -> ModelCheck:
        """Send one tiny streamed request to model ``name`` and report what worked.
        ``config_invalid`` for an unknown model; provider and credential errors raise."""
        from raw_core.app._probe import check_model

        return await check_model(self.config, self.host, name, seconds, self.var_cache())
