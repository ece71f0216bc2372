"""What a finished call reports: the :class:`ToolCallFinished` event, built once.

The dispatcher makes one :class:`CallOutcome` per call. Whoever sequences the call reports
it: :meth:`~raw_core.dispatch.Dispatcher.dispatch` to its observers and plug-ins at once,
the agent loop to its front end after it has committed the result. Both send the same
record, and its ``to_dict()`` is the one JSON form (``--json`` output, the
``raw_session_event`` hook, observers).
"""

from __future__ import annotations

from typing import Any

import attrs

from raw_core.frozen import thaw
from raw_core.sessions.backend import PanelUpdate
from raw_core.sessions.blocks import ContentBlock, block_to_dict
from raw_core.sessions.messages import ToolCall
from raw_core.tools.results import ToolResult

__all__ = ["CallOutcome", "ToolCallFinished"]


@attrs.frozen(kw_only=True)
class ToolCallFinished:
    """A call's result (``content`` is what the model receives; ``full_content`` what the
    terminal shows). ``identity`` is ``None`` when no selected tool had the name;
    ``arguments`` are the validated arguments (``None`` when they were not valid);
    ``panels`` are the call's panel updates, accepted and rejected; ``truncated`` says
    whether ``content`` was cut to the result cap (an error's reworded model copy, or a
    call the model never receives, is not)."""

    tool_call_id: str
    name: str
    identity: str | None
    arguments: Any
    status: str
    code: str | None
    effects: Any
    content: tuple[ContentBlock, ...]
    full_content: tuple[ContentBlock, ...]
    panels: tuple[PanelUpdate, ...] = ()
    truncated: bool = False  # the model's copy was cut to the result cap

    def to_dict(self) -> dict[str, Any]:
        """``{"type": "tool_call_finished", ...}``: every field, blocks in their JSON form,
        as a detached copy."""
        return {
            "type": "tool_call_finished",
            "tool_call_id": self.tool_call_id,
            "name": self.name,
            "identity": self.identity,
            "arguments": thaw(self.arguments),
            "status": self.status,
            "code": self.code,
            "effects": thaw(self.effects),
            "content": [block_to_dict(block) for block in self.content],
            "full_content": [block_to_dict(block) for block in self.full_content],
            "panels": [update.to_dict() for update in self.panels],
            "truncated": self.truncated,
        }


class CallOutcome:
    """One call's result with what its event needs; :meth:`event` builds the event (only
    when someone listens: the arguments are copied). Made once per call, read-only by
    convention: a plain slotted class, cheaper to make than an attrs one."""

    __slots__ = ("arguments", "call", "identity", "result")

    def __init__(
        self, *, call: ToolCall, identity: str | None, arguments: Any, result: ToolResult
    ) -> None:
        self.call = call
        self.identity = identity
        self.arguments = arguments
        self.result = result

    def __repr__(self) -> str:
        return (
            f"CallOutcome(call={self.call!r}, identity={self.identity!r}, result={self.result!r})"
        )

    def event(self) -> ToolCallFinished:
        """The call's :class:`ToolCallFinished` event (arguments and effects detached)."""
        result = self.result
        return ToolCallFinished(
            tool_call_id=self.call.id,
            name=self.call.name,
            identity=self.identity,
            arguments=thaw(self.arguments),
            status=result.status,
            code=result.code,
            effects=thaw(result.effects),
            content=result.content,
            full_content=result.full_content,
            panels=result.panels,
            truncated=result.truncated,
        )
