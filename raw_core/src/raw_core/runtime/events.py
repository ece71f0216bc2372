"""The events of one turn, as renderers and plug-ins receive them.

Each event is a frozen record built from detached copies of the loop's data, so a renderer
cannot change the arguments or results that were authorized. Every run of a turn ends with
exactly one :class:`TurnEnded`. ``to_dict()`` gives the JSON form (``{"type": ...}``) used
by ``--json`` output and the ``raw_session_event`` hook. Streamed text is the provider's own
:class:`~raw_core.providers.contract.TextDelta`, handed on unchanged (one record, no copy
per fragment); a finished call is the dispatcher's own
:class:`~raw_core.dispatch.finished.ToolCallFinished`.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Literal

import attrs

from raw_core.dispatch.finished import ToolCallFinished
from raw_core.frozen import thaw
from raw_core.providers.contract import TextDelta
from raw_core.sessions.backend import PanelUpdate

__all__ = [
    "ApprovalAnswered",
    "ApprovalRequested",
    "AssistantCommitted",
    "LoopEvent",
    "PanelUpdated",
    "RuntimeChanged",
    "TextDelta",
    "ToolCallFinished",
    "ToolCallStarted",
    "TurnEnded",
    "TurnStarted",
    "Usage",
]

EndReason = Literal["completed", "max_steps", "cancelled", "error"]


def _as_dict(kind: str, record: Any) -> dict[str, Any]:
    return {"type": kind, **{k: thaw(v) for k, v in attrs.asdict(record, recurse=False).items()}}


@attrs.frozen(kw_only=True)
class TurnStarted:
    """A turn began with the user's message."""

    session_id: str
    prompt: str

    def to_dict(self) -> dict[str, Any]:
        return _as_dict("turn_started", self)


@attrs.frozen(kw_only=True)
class RuntimeChanged:
    """The session resumed with other model-facing tool definitions than it last used: the
    prompt-cache key changed once, and the conversation continues with the new tools.

    ``added``, ``removed`` and ``changed`` are model-facing names; ``identities`` gives the
    identity of each added or changed tool (``echo`` → ``mcp/search/echo``), so a front end
    can say which tool changed under the user — how MCP tool poisoning would show."""

    session_id: str
    added: tuple[str, ...]
    removed: tuple[str, ...]
    changed: tuple[str, ...]
    identities: Mapping[str, str] = attrs.field(factory=dict)

    def to_dict(self) -> dict[str, Any]:
        return _as_dict("runtime_changed", self)


@attrs.frozen(kw_only=True)
class AssistantCommitted:
    """A completed assistant message was committed: its text and tool calls."""

    text: str
    tool_calls: tuple[dict[str, Any], ...]
    step: int

    def to_dict(self) -> dict[str, Any]:
        return _as_dict("assistant_committed", self)


@attrs.frozen(kw_only=True)
class ToolCallStarted:
    """A call goes into the dispatch pipeline."""

    tool_call_id: str
    name: str
    arguments: str

    def to_dict(self) -> dict[str, Any]:
        return _as_dict("tool_call_started", self)


@attrs.frozen(kw_only=True)
class ApprovalRequested:
    """A call waits for approval: a pending request, answerable by any front end through
    its ``request_id`` (``deadline`` is ISO 8601, or ``None`` while the session's own
    front end is asking)."""

    request_id: str
    tool_call_id: str
    identity: str
    name: str
    arguments: Any
    effects: Any
    reason: str | None
    deadline: str | None

    def to_dict(self) -> dict[str, Any]:
        return _as_dict("approval_requested", self)


@attrs.frozen(kw_only=True)
class ApprovalAnswered:
    """A pending approval ended: ``state`` is ``approved``, ``denied``, ``expired`` or
    ``cancelled``; ``answer`` (``{approved, by, message}``) says who answered."""

    request_id: str
    tool_call_id: str
    state: str
    answer: dict[str, Any] | None

    def to_dict(self) -> dict[str, Any]:
        return _as_dict("approval_answered", self)


@attrs.frozen(kw_only=True)
class PanelUpdated:
    """A tool updated one of its panels (accepted) or tried to (rejected), while its call
    runs: ``{"type": "panel_updated", ...}`` with the fields of
    :meth:`~raw_core.sessions.backend.PanelUpdate.to_dict`."""

    update: PanelUpdate

    def to_dict(self) -> dict[str, Any]:
        return {"type": "panel_updated", **self.update.to_dict()}


@attrs.frozen(kw_only=True)
class Usage:
    """Token counts of one request."""

    input_tokens: int
    output_tokens: int
    cache_read_tokens: int
    cache_write_tokens: int
    step: int

    def to_dict(self) -> dict[str, Any]:
        return _as_dict("usage", self)


@attrs.frozen(kw_only=True)
class TurnEnded:
    """The one terminal event of a turn: why it ended, after how many requests, and the
    error (``{"code", "message", ...}``) when it ended in one."""

    reason: EndReason
    steps: int
    error: dict[str, Any] | None = None

    def to_dict(self) -> dict[str, Any]:
        return _as_dict("turn_ended", self)


LoopEvent = (
    TurnStarted
    | RuntimeChanged
    | TextDelta
    | AssistantCommitted
    | ToolCallStarted
    | ToolCallFinished
    | ApprovalRequested
    | ApprovalAnswered
    | PanelUpdated
    | Usage
    | TurnEnded
)
