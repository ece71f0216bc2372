"""The context the dispatcher hands a handler: a :class:`ToolContext` whose call services
are made when the handler first reads them.

Most calls never touch ``context.panels``, ``context.interactions`` or
``context.progress``, and making the three for every call cost about as much as parsing
its arguments. So :class:`CallContext` makes each on first read, then keeps it; what the
dispatcher needs of them afterwards it asks without making them (:meth:`made_panels`,
:meth:`made_progress`). Its :meth:`bind` takes the cancel scope that enforces the
handler's time limit, for the interactions' clock (which pauses that limit while a request
is pending), whether the interactions are made before the scope is bound or after.
"""

from __future__ import annotations

import threading
from typing import Final

import anyio

from raw_core.tools.calls import CancellationSignal, SkillReader, ToolContext, VarReader
from raw_core.tools.interactions import CallInteractions, InteractionCallback
from raw_core.tools.loader import LoadedTool
from raw_core.tools.panels import CallPanels, PanelBoard
from raw_core.tools.progress import BatchProgress
from raw_core.tools.resources import SessionResources

__all__ = ["CallContext"]

_MAKING: Final = threading.Lock()
"""Held while a context makes a part on first read, so that two threads share one."""


class CallContext(ToolContext):
    """One call's context, as the dispatcher makes it (see the module docstring)."""

    __slots__ = ("_ask", "_board", "_ended", "_scope", "_tool")

    def __init__(
        self,
        tool: LoadedTool,
        tool_call_id: str,
        cwd: str,
        max_output_bytes: int,
        signal: CancellationSignal,
        vars: VarReader | None,
        skills: SkillReader | None,
        resources: SessionResources | None,
        board: PanelBoard,
        ask: InteractionCallback | None,
    ) -> None:
        # ToolContext's slots set here, not through its keyword constructor: one context
        # is made per call, and that call costs twice as much as the assignments.
        self._cwd = cwd
        self._tool_call_id = tool_call_id
        self._identity = tool.identity
        self._max_output_bytes = max_output_bytes
        self._signal = signal
        self._vars = vars
        self._skills = skills
        self._resources = resources
        self._progress = None
        self._panels = None
        self._interactions = None
        self._tool = tool
        self._board = board
        self._ask = ask
        self._scope: anyio.CancelScope | None = None
        self._ended = False

    @property
    def panels(self) -> CallPanels:
        """The call's view of its tool's panels (made on first read; once the call has
        ended, one that refuses every use)."""
        panels = self._panels
        if panels is None:
            with _MAKING:
                panels = self._panels
                if panels is None:
                    panels = self._panels = CallPanels(
                        self._board,
                        identity=self._identity,
                        declarations=self._tool.manifest.panels,
                        tool_call_id=self._tool_call_id,
                    )
                    # Stored before the flag is read, as end() sets the flag before it
                    # reads this: one of the two sees the other, so the panels end.
                    if self._ended:
                        panels.end()
        return panels

    @property
    def interactions(self) -> CallInteractions:
        """Where the handler asks the user (made on first read, its clock bound to the
        handler's time limit once that is set)."""
        interactions = self._interactions
        if interactions is None:
            with _MAKING:
                interactions = self._interactions
                if interactions is None:
                    interactions = CallInteractions(
                        self._ask,
                        identity=self._identity,
                        tool_call_id=self._tool_call_id,
                        declarations=self._tool.manifest.panels,
                        signal=self._signal,
                    )
                    if self._scope is not None:
                        interactions.clock.bind(self._scope)
                    self._interactions = interactions
        return interactions

    def bind(self, scope: anyio.CancelScope) -> None:
        """Enforce the handler's time limit with ``scope``; the interactions' clock pauses
        it while a request is pending."""
        with _MAKING:
            self._scope = scope
            interactions = self._interactions
        if interactions is not None:
            interactions.clock.bind(scope)

    def made_panels(self) -> CallPanels | None:
        """The call's panels if the handler made them, else None."""
        return self._panels

    def made_progress(self) -> BatchProgress | None:
        """The call's batch progress if the handler made it, else None."""
        return self._progress

    def end(self) -> CallPanels | None:
        """End the call: its panels (made or made later) refuse every use from now on.
        Returns them if the handler made them."""
        self._ended = True
        panels = self._panels
        if panels is not None:
            panels.end()
        return panels
