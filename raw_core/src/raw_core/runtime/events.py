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
    "CompactionEnded",
    "CompactionStarted",
    "InteractionEnded",
    "InteractionRequested",
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
    """A pending approval ended: ``state`` is ``approved``, ``denied``, ``expired``,
    ``cancelled`` or ``interrupted``; ``answer`` (``{approved, by, message}``) says who answered."""

    request_id: str
    tool_call_id: str
    state: str
    answer: dict[str, Any] | None

    def to_dict(self) -> dict[str, Any]:
        return _as_dict("approval_answered", self)


@attrs.frozen(kw_only=True)
class InteractionRequested:
    """A tool asks the user (``context.interactions.request``): a pending request,
    answerable by any front end through its ``request_id``; ``panel`` names the tool's
    panel, ``document`` holds one ``form`` block, ``deadline`` is ISO 8601."""

    request_id: str
    tool_call_id: str
    identity: str
    panel: str
    document: Any
    deadline: str | None

    def to_dict(self) -> dict[str, Any]:
        return _as_dict("interaction_requested", self)


@attrs.frozen(kw_only=True)
class InteractionEnded:
    """A pending interaction ended: ``state`` is ``answered``, ``expired``, ``cancelled`` or
    ``interrupted``; ``answer`` (``{values, by}``) says who answered, and with what."""

    request_id: str
    tool_call_id: str
    state: str
    answer: dict[str, Any] | None

    def to_dict(self) -> dict[str, Any]:
        return _as_dict("interaction_ended", self)


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
    """Token counts of one request, as the provider reported them, beside raw's own
    measure of it: ``estimated_input_tokens`` is what raw estimated the request holds
    before sending it (see :mod:`raw_core.runtime.context`), ``context_window`` the model's
    declared window (``None`` when the config declares none). ``input_tokens`` is the
    reported size of the context."""

    input_tokens: int
    output_tokens: int
    cache_read_tokens: int
    cache_write_tokens: int
    step: int
    estimated_input_tokens: int | None = None
    context_window: int | None = None

    def to_dict(self) -> dict[str, Any]:
        return _as_dict("usage", self)


CompactionReason = Literal["threshold", "overflow", "requested"]
CompactionOutcome = Literal["completed", "failed", "cancelled", "nothing_to_compact"]


@attrs.frozen(kw_only=True)
class CompactionStarted:
    """raw asks the model for a summary of the oldest part of the model context: because
    the next request would pass the threshold of the window (``threshold``), because the
    provider refused a request as too long (``overflow``), or because the user asked
    (``requested``). ``estimated_tokens`` is the context's estimated size now;
    ``messages`` how many messages of the model context the summary is to replace."""

    session_id: str
    reason: CompactionReason
    estimated_tokens: int
    context_window: int | None
    messages: int

    def to_dict(self) -> dict[str, Any]:
        return _as_dict("compaction_started", self)


@attrs.frozen(kw_only=True)
class CompactionEnded:
    """The compaction ended: ``completed`` (``replaced`` messages became one summary,
    ``kept`` stay verbatim, the context is now about ``estimated_tokens``), or ``failed``
    or ``cancelled`` (nothing changed; ``error`` says why), or ``nothing_to_compact``."""

    session_id: str
    outcome: CompactionOutcome
    replaced: int = 0
    kept: int = 0
    estimated_tokens: int = 0
    reminders: int = 0
    error: dict[str, Any] | None = None

    def to_dict(self) -> dict[str, Any]:
        return _as_dict("compaction_ended", self)


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
    | InteractionRequested
    | InteractionEnded
    | PanelUpdated
    | Usage
    | CompactionStarted
    | CompactionEnded
    | TurnEnded
)
