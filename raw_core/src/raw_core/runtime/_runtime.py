"""The runtime: a session backend and a plug-in host running any number of sessions."""

from __future__ import annotations

import os
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager

import attrs

from raw_core.agent import Agent
from raw_core.plugins import PluginHost
from raw_core.plugins.hooks import model_definitions
from raw_core.providers.contract import ModelTool, Provider
from raw_core.runtime.approvals import ApprovalBroker
from raw_core.runtime.context import ContextLimits
from raw_core.runtime.frontend import CallbackFrontEnd, FrontEnd
from raw_core.runtime.interactions import InteractionBroker, can_interact, interrupt_pending
from raw_core.runtime.loop import Session, VarResolver
from raw_core.runtime.panels import restore_panels
from raw_core.sessions.backend import SessionBackend
from raw_core.tools.calls import ApprovalCallback
from raw_core.tools.panels import PanelBoard
from raw_core.tools.resources import SessionResources

__all__ = ["Runtime"]


def _absolute(path: str | os.PathLike[str] | None) -> str | None:
    """``path`` made absolute (against the current directory), or None."""
    return os.path.abspath(path) if path is not None else None


class Runtime:
    """Runs sessions: one session backend and one plug-in host, any number of sessions at
    once (each session one turn at a time).

    ``approval_wait``: when a session's front end cannot ask anybody, how many seconds an
    approval request waits for another front end to answer it by id before it ends as
    ``approval_unavailable`` (0, the default: at once, without storing a request). When it
    is above 0, a tool's interaction request is stored and waits for another front end
    too, until its own deadline; at 0 such a front end's sessions answer every interaction
    request with ``interaction_unavailable`` at once.
    """

    def __init__(
        self,
        backend: SessionBackend,
        *,
        host: PluginHost | None = None,
        approval_wait: float = 0.0,
    ) -> None:
        self.backend = backend
        self.host = host
        self.approval_wait = approval_wait

    @asynccontextmanager
    async def open_session(
        self,
        agent: Agent,
        provider: Provider,
        *,
        front_end: FrontEnd | None = None,
        session_id: str | None = None,
        title: str = "",
        cwd: str | os.PathLike[str] | None = None,
        resolve_var: VarResolver | None = None,
        max_output_bytes: int | None = None,
        wait: float | None = None,
        limits: ContextLimits | None = None,
    ) -> AsyncIterator[Session]:
        """Start a session (``session_id`` None) or resume one, holding its write lock for
        the block. Raises ``session_locked`` when another writer holds it, and
        ``session_not_found`` for an unknown id.

        ``front_end`` receives the events and approves calls (default: nobody, so an ask
        ends as ``approval_unavailable``). ``cwd`` is where tools run: by default the
        directory the session was started in (a resumed session keeps it), else the
        current one. The agent's ``SessionStart`` command hooks run once the session is
        open (``source``: ``startup`` or ``resume``). ``limits``: the model's context
        window and compaction threshold (default: none declared, so the session is
        compacted only when asked). What the session's tools keep across its turns
        (``context.resources``: the processes ``builtin/process`` started) is closed when
        the block ends, however it ends.
        """
        front_end = front_end if front_end is not None else CallbackFrontEnd()
        backend = self.backend
        given_cwd = _absolute(cwd)
        resumed = session_id is not None
        if session_id is None:
            session_id = (await backend.create(title=title, cwd=given_cwd or _absolute("."))).id
        async with backend.open_writer(session_id, wait=wait) as writer:
            state = await writer.state()
            session_cwd = given_cwd or state.cwd or _absolute(".")
            if state.cwd != session_cwd:
                state = attrs.evolve(state, cwd=session_cwd)
                await writer.set_state(state)
            # What the session's tools keep (builtin/process's processes) ends with it.
            resources = SessionResources()
            try:
                broker: ApprovalCallback | None = None
                if front_end.can_approve or self.approval_wait > 0:
                    broker = ApprovalBroker(
                        session_id=session_id,
                        writer=writer,
                        backend=backend,
                        front_end=front_end,
                        wait=self.approval_wait,
                    )
                interactions: InteractionBroker | None = None
                if can_interact(front_end) or self.approval_wait > 0:
                    interactions = InteractionBroker(
                        session_id=session_id, writer=writer, backend=backend, front_end=front_end
                    )
                skills = agent.skills.for_session()
                board = PanelBoard(await restore_panels(backend, session_id, state.panels))
                dispatcher = agent.dispatcher(
                    host=self.host,
                    approval=broker,
                    cwd=session_cwd,
                    max_output_bytes=max_output_bytes,
                    skills=skills,
                    hook_events=False,
                    session_id=session_id,
                    panels=board,
                    resources=resources,
                    interactions=interactions,
                )
                tools = [
                    ModelTool(name=d.name, description=d.description, input_schema=d.input_schema)
                    for d in model_definitions(agent, self.host)
                ]
                session = Session(
                    agent=agent,
                    provider=provider,
                    writer=writer,
                    dispatcher=dispatcher,
                    host=self.host,
                    tools=tools,
                    resolve_var=resolve_var,
                    skills=skills,
                    front_end=front_end,
                    panels=board,
                    limits=limits,
                )
                if isinstance(broker, ApprovalBroker):
                    broker.emit = session.emit_event
                if interactions is not None:
                    interactions.emit = session.emit_event
                # Requests a stopped raw left pending end as interrupted; their calls'
                # results say so (the transcript repair in _prepare).
                interrupted = await interrupt_pending(writer, backend, session.emit_event)
                await session._prepare(interrupted)
                await session._started(resumed)
                yield session
            finally:
                await resources.aclose()
