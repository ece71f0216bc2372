"""A session's panels at the runtime: restored from the store when it opens, recorded as
display-only items and shown to the front end as they change, and panel actions.

* :func:`restore_panels` reads each panel's last revision back: the session's state names
  its panels (``SessionState.panels``) and the newest accepted :class:`PanelUpdate` of
  each in the display history is its last revision (the history is read newest first, and
  only as far as it takes);
* :class:`SessionRecorder` is the :class:`~raw_core.tools.panels.PanelRecorder` of a
  session's board: it stores the set of panels when it changes, appends each update to the
  display history, emits a :class:`~raw_core.runtime.events.PanelUpdated` event and hands
  an accepted update to the front end's ``show_panel``;
* :func:`run_action` runs a panel action (spec 000, "Panel actions"): a ``prompt`` action
  comes back as a drafted message; a ``tool`` action runs the declaring tool again through
  the whole dispatch pipeline as ``source: "user_action"`` (rules, hooks and approval
  apply: a click is never approval). Its output is display-only: the model did not ask for
  the call, so its context does not hold it.
"""

from __future__ import annotations

import logging
import secrets
from collections.abc import Awaitable, Callable, Sequence
from typing import TYPE_CHECKING, Any, Literal

import attrs

from raw_core.errors import PanelInvalid, PanelUndeclared, PanelUnknown, ToolUnknown
from raw_core.frozen import thaw
from raw_core.runtime.events import LoopEvent, PanelUpdated, ToolCallStarted
from raw_core.runtime.frontend import FrontEnd
from raw_core.sessions.backend import PanelKey, PanelUpdate, SessionBackend
from raw_core.sessions.sqlite import tool_output_for
from raw_core.tools.calls import CancellationSignal, ToolCall
from raw_core.tools.panels import PanelBoard, split_name

if TYPE_CHECKING:
    from raw_core.dispatch import Dispatcher
    from raw_core.tools.loader import LoadedTool
    from raw_core.tools.manifest import PanelDeclaration
    from raw_core.tools.registry import Registry
    from raw_core.tools.results import ToolResult

__all__ = ["PanelActionResult", "SessionRecorder", "restore_panels", "run_action"]

logger = logging.getLogger("raw_core.runtime.panels")

_PAGE = 500


async def restore_panels(
    backend: SessionBackend, session_id: str, keys: Sequence[PanelKey]
) -> tuple[PanelUpdate, ...]:
    """The last accepted update of each panel ``keys`` names, least recently changed
    first. A panel whose update was never stored (a crash between the two writes) is left
    out."""
    wanted = set(keys)
    found: dict[PanelKey, tuple[int, PanelUpdate]] = {}
    cursor: str | None = None
    while len(found) < len(wanted):
        page = await backend.page(session_id, cursor, limit=_PAGE, newest_first=True)
        for item in page.items:
            entry = item.entry
            if (
                isinstance(entry, PanelUpdate)
                and entry.accepted
                and entry.key in wanted
                and entry.key not in found
            ):
                found[entry.key] = (item.seq, entry)
        if page.next_cursor is None:
            break
        cursor = page.next_cursor
    return tuple(update for _, update in sorted(found.values(), key=lambda pair: pair[0]))


@attrs.frozen(kw_only=True)
class SessionRecorder:
    """Records a session board's updates (see the module docstring). ``append`` writes
    display-only entries, ``set_panels`` stores the set of panels, ``emit`` gives the
    running turn's listeners an event."""

    append: Callable[[Sequence[Any]], Awaitable[None]]
    set_panels: Callable[[tuple[PanelKey, ...]], Awaitable[None]]
    emit: Callable[[LoopEvent], None]
    front_end: FrontEnd

    async def record(self, update: PanelUpdate, panels: tuple[PanelKey, ...] | None) -> None:
        if panels is not None:  # first, so a stored update always belongs to a known panel
            await self.set_panels(panels)
        await self.append([update])
        self.emit(PanelUpdated(update=update))
        if update.accepted:
            try:
                await self.front_end.show_panel(update)
            except Exception:
                logger.exception("the front end failed to show a panel update; the call goes on")


@attrs.frozen(kw_only=True)
class PanelActionResult:
    """What a panel action did. ``kind`` is ``prompt`` (``prompt`` is the message drafted
    for the user, who sends it or not) or ``tool`` (``result`` is the call's result, as its
    ``tool_call_finished`` event carried it). ``panel`` is the panel's full name."""

    kind: Literal["prompt", "tool"]
    panel: str
    action: str
    prompt: str | None = None
    result: ToolResult | None = None

    def to_dict(self) -> dict[str, Any]:
        """``{kind, panel, action, prompt, result}`` (``result`` in the form of
        :meth:`~raw_core.tools.results.ToolResult.to_dict`, or null)."""
        return {
            "kind": self.kind,
            "panel": self.panel,
            "action": self.action,
            "prompt": self.prompt,
            "result": self.result.to_dict() if self.result is not None else None,
        }


def _declaring_tool(registry: Registry, panel: str) -> tuple[LoadedTool, PanelDeclaration]:
    """The selected tool that declares ``panel`` (a full name, or an id only one selected
    tool declares) and its declaration."""
    owner, panel_id = split_name(panel)
    if owner is None:
        tools = [t for t in registry if any(d.id == panel_id for d in t.manifest.panels)]
        if len(tools) > 1:
            names = ", ".join(f"{t.identity}:{panel_id}" for t in tools)
            raise PanelInvalid(
                f"several tools declare a panel {panel_id!r}: name one of {names}", panel=panel
            )
        if not tools:
            raise PanelUndeclared(f"no selected tool declares a panel {panel_id!r}", panel=panel)
        tool = tools[0]
    else:
        tool_or_none = next((t for t in registry if t.identity == owner), None)
        if tool_or_none is None:
            raise ToolUnknown(f"{owner} is not selected by this session's agent", tool=owner)
        tool = tool_or_none
    declaration = next((d for d in tool.manifest.panels if d.id == panel_id), None)
    if declaration is None:
        raise PanelUndeclared(
            f"{tool.identity} declares no panel {panel_id!r}", panel=panel, tool=tool.identity
        )
    return tool, declaration


async def run_action(
    *,
    registry: Registry,
    dispatcher: Dispatcher,
    board: PanelBoard,
    append: Callable[[Sequence[Any]], Awaitable[None]],
    emit: Callable[[LoopEvent], None],
    panel: str,
    action: str,
    signal: CancellationSignal,
) -> PanelActionResult:
    """Run action ``action`` of ``panel`` (see the module docstring). Raises
    ``tool_unknown``, ``panel_undeclared``, ``panel_unknown`` (the panel is not open in the
    session) or ``panel_invalid`` (no such action)."""
    tool, declaration = _declaring_tool(registry, panel)
    name = f"{tool.identity}:{declaration.id}"
    chosen = next((a for a in declaration.actions if a.id == action), None)
    if chosen is None:
        offered = ", ".join(a.id for a in declaration.actions) or "none"
        raise PanelInvalid(
            f"panel {name} has no action {action!r} (it offers: {offered})", panel=name
        )
    current = board.get((tool.identity, declaration.id))
    if current is None or current.closed:
        raise PanelUnknown(f"panel {name} is not open in this session", panel=name)
    if chosen.type == "prompt":
        return PanelActionResult(kind="prompt", panel=name, action=action, prompt=chosen.prompt)
    call = ToolCall.with_arguments(
        id=f"action_{secrets.token_hex(8)}",
        name=tool.name,
        arguments=thaw(chosen.arguments) if chosen.arguments is not None else {},
        source="user_action",
    )
    emit(ToolCallStarted(tool_call_id=call.id, name=call.name, arguments=call.arguments))
    outcome = await dispatcher.run(call, signal=signal)
    await append([tool_output_for(call.id, outcome.result.full_content)])
    emit(outcome.event())
    return PanelActionResult(kind="tool", panel=name, action=action, result=outcome.result)
