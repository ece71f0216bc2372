"""The records a session backend stores and hands back: session info and state, the
display history's entries and pages, and pending requests.

They are plain frozen values shared by every backend; the protocols that store them are in
:mod:`raw_core.sessions.backend`, which re-exports them.
"""

from __future__ import annotations

import json
import re
import secrets
import time
from collections.abc import Mapping
from datetime import datetime
from typing import TYPE_CHECKING, Any, Final, Literal

import attrs

from raw_core.frozen import freeze, thaw
from raw_core.sessions.blocks import ContentBlock, block_to_dict

if TYPE_CHECKING:
    from raw_core.sessions.messages import Message

__all__ = [
    "MAX_TITLE_CHARS",
    "MAX_TOOL_OUTPUT_BYTES",
    "REQUEST_STATES",
    "ApprovalAnswer",
    "DisplayEntry",
    "DisplayItem",
    "DisplayPage",
    "InteractionAnswer",
    "ModelOnly",
    "PanelKey",
    "PanelSource",
    "PanelUpdate",
    "PendingRequest",
    "RequestAnswer",
    "RequestEntry",
    "RequestKind",
    "RequestState",
    "SessionInfo",
    "SessionState",
    "ToolOutput",
    "document_json",
    "new_request_id",
    "prompt_title",
    "title_text",
]

MAX_TOOL_OUTPUT_BYTES: Final = 1024 * 1024
"""How much of one call's output the display history keeps (UTF-8 bytes of its text and
serialized JSON); past it the output is cut and ends with a truncation marker."""

RequestKind = Literal["approval", "interaction"]
"""What a pending request waits for: a call's ``approval``, or the answer to a tool's
``interaction`` request (a form)."""

RequestState = Literal[
    "pending", "approved", "denied", "answered", "expired", "cancelled", "interrupted"
]
"""A pending request's state: ``pending`` until it ends — an approval as ``approved`` or
``denied``, an interaction as ``answered`` — or until its deadline passed (``expired``),
its call or turn was cancelled or the person cancelled the form (``cancelled``), or raw
stopped while it waited (``interrupted``, set when the session is next opened)."""

REQUEST_STATES: Final = frozenset(
    {"pending", "approved", "denied", "answered", "expired", "cancelled", "interrupted"}
)

PanelKey = tuple[str, str]
"""How a session keys a panel: ``(tool identity, panel id)``."""


# --- sessions ----------------------------------------------------------------------------

_UNSTORABLE = re.compile("[\x00\ud800-\udfff]")


def title_text(title: str) -> str:
    """A session title as every backend stores it: ``title`` with each code point a store
    cannot keep as text replaced by U+FFFD — a lone surrogate (JSON allows one in a prompt,
    UTF-8 cannot encode it) and NUL (PostgreSQL text refuses it). A title is for people
    to read, so a first prompt holding either still makes one."""
    return _UNSTORABLE.sub("\ufffd", title)


MAX_TITLE_CHARS: Final = 80


def prompt_title(prompt: str) -> str:
    """The title a prompt gives an untitled session (the loop titles one by its first
    prompt the hooks let through): the prompt on one line (its white space runs made single
    spaces), at most :data:`MAX_TITLE_CHARS` characters."""
    line = " ".join(prompt.split())
    return line if len(line) <= MAX_TITLE_CHARS else line[: MAX_TITLE_CHARS - 1] + "…"


@attrs.frozen(kw_only=True)
class SessionInfo:
    """One session as a list shows it. ``last_activity`` is the last committed append or
    compaction (or the creation); reading and listing never change it. ``cwd`` is the
    working directory the session's tools run in (``None`` when it was never recorded)."""

    id: str
    title: str
    created_at: datetime
    last_activity: datetime
    cwd: str | None = None


@attrs.frozen(kw_only=True)
class SessionState:
    """What the runtime keeps about a session between runs, typed.

    ``title`` and ``cwd`` are the session's; ``tool_digests`` (model-facing name -> hash of
    its description and schema) and ``cache_key`` are the tool definitions the session last
    sent, so a resume with other tools is announced; ``skills_seen`` (skill name -> hash of
    the text the model read) lets the loop say when a read skill has changed; ``panels``
    are the session's panels (``(tool identity, panel id)``, oldest first), whose last
    revisions are the newest :class:`PanelUpdate` items of each in the display history.
    """

    title: str = attrs.field(default="", converter=title_text)
    cwd: str | None = None
    tool_digests: Mapping[str, str] | None = None
    cache_key: str | None = None
    skills_seen: Mapping[str, str] = attrs.field(factory=dict)
    panels: tuple[PanelKey, ...] = ()


# --- display history ---------------------------------------------------------------------


@attrs.frozen(kw_only=True)
class ToolOutput:
    """Display-only: one call's output as the user saw it, when the model received less
    (its result was capped). ``content`` holds content blocks
    (:mod:`raw_core.sessions.blocks`), at most :data:`MAX_TOOL_OUTPUT_BYTES`; ``truncated``
    says it was cut there (the last text block then ends with a marker)."""

    tool_call_id: str
    content: tuple[ContentBlock, ...]
    truncated: bool = False

    @property
    def kind(self) -> str:
        return "tool_output"


@attrs.frozen(kw_only=True)
class ApprovalAnswer:
    """An answer to an approval request: approved or not, who gave it (the front end's
    name, such as ``"terminal"``), and optionally a message of the user's."""

    approved: bool
    by: str
    message: str | None = None

    def to_dict(self) -> dict[str, Any]:
        """``{approved, by, message}``."""
        return {"approved": self.approved, "by": self.by, "message": self.message}


@attrs.frozen(kw_only=True)
class InteractionAnswer:
    """An answer to an interaction request: the form's values keyed by field id (a string
    for a text or single-select field, an array of strings for a multi-select one), frozen
    as a call's arguments are (a read-only mapping, the array a tuple; :meth:`to_dict`
    gives lists), and who gave it (the front end's name). It never grants a tool
    permission."""

    values: Mapping[str, Any] = attrs.field(converter=freeze)
    by: str

    def to_dict(self) -> dict[str, Any]:
        """``{values, by}``, detached."""
        return {"values": thaw(self.values), "by": self.by}


RequestAnswer = ApprovalAnswer | InteractionAnswer
"""What answers a request: an :class:`ApprovalAnswer` for an approval, an
:class:`InteractionAnswer` for an interaction."""


@attrs.frozen(kw_only=True)
class RequestEntry:
    """Display-only: a pending request as it opened (``state`` ``pending``) and, a second
    entry with the same ``request_id``, as it ended — its final state and ``answer``
    (``None`` unless approved, denied or answered; the answer says who gave it).

    ``request_kind`` is ``approval`` or ``interaction``; ``show`` is what was shown (an
    approval: ``identity``, ``name``, ``arguments``, ``effects`` apart, ``reason``; an
    interaction: ``identity``, ``panel``, ``document``); ``deadline`` when it expires."""

    request_id: str
    request_kind: RequestKind
    tool_call_id: str
    state: RequestState
    show: Mapping[str, Any] = attrs.field(converter=freeze)
    deadline: datetime | None = None
    answer: RequestAnswer | None = None

    @property
    def kind(self) -> str:
        return "request"

    @classmethod
    def of(cls, request: PendingRequest) -> RequestEntry:
        """The entry for ``request`` as it is now."""
        return cls(
            request_id=request.id,
            request_kind=request.kind,
            tool_call_id=request.tool_call_id,
            state=request.state,
            show=request.show,
            deadline=request.deadline,
            answer=request.answer,
        )

    def to_dict(self) -> dict[str, Any]:
        """``{request_id, request_kind, tool_call_id, state, show, deadline (ISO 8601 or
        null), answer ({approved, by, message}, {values, by} or null)}``, detached."""
        return {
            "request_id": self.request_id,
            "request_kind": self.request_kind,
            "tool_call_id": self.tool_call_id,
            "state": self.state,
            "show": thaw(self.show),
            "deadline": self.deadline.isoformat() if self.deadline is not None else None,
            "answer": self.answer.to_dict() if self.answer is not None else None,
        }


PanelSource = Literal["result", "context"]


def _plain(value: Any) -> Any:
    if isinstance(value, Mapping):
        return dict(value)
    if isinstance(value, tuple | list):
        return list(value)
    raise TypeError(f"{type(value).__name__} is not a JSON value")


def document_json(document: Any) -> str:
    """A panel document's compact JSON text, UTF-8 where it can be (a lone surrogate is
    written as its ``\\u`` escape); ``TypeError`` or ``ValueError`` for a value that is not
    JSON."""
    text = json.dumps(
        document, separators=(",", ":"), ensure_ascii=False, allow_nan=False, default=_plain
    )
    if not text.isascii():
        try:
            text.encode("utf-8")
        except UnicodeEncodeError:
            text = json.dumps(document, separators=(",", ":"), allow_nan=False, default=_plain)
    return text


@attrs.frozen(kw_only=True)
class PanelUpdate:
    """Display-only, and what front ends and events receive: one update of a panel
    (``raw.panel/2``), accepted or rejected.

    ``identity`` and ``panel`` key the panel (its full name is ``<identity>:<panel>``);
    ``op`` is ``replace``, ``patch`` or ``close`` (as given, when a rejected update named
    another); ``source`` says how the tool sent it (a ``result`` block or a ``context``
    call). An accepted update has the new ``revision`` and the document after it
    (``None`` after a close); a rejected one has ``error`` (``{code, message, field?}``) and
    the panel's revision then (``None`` when it was not open). ``declaration`` is the
    panel's declaration as JSON (``None`` when the tool declares no such panel).

    The document is kept as its compact JSON text (``document_text``, made by
    :func:`document_json`), serialized once: what its size counts, what the store writes,
    and immutable. :attr:`document` and :meth:`to_dict` parse a detached copy.
    """

    tool_call_id: str
    identity: str
    panel: str
    op: str
    source: PanelSource
    revision: int | None = None
    document_text: str | None = None
    error: Mapping[str, Any] | None = attrs.field(default=None, converter=freeze)
    declaration: Mapping[str, Any] | None = attrs.field(default=None, converter=freeze)

    @property
    def kind(self) -> str:
        return "panel"

    @property
    def accepted(self) -> bool:
        """Whether the update was applied."""
        return self.error is None

    @property
    def document(self) -> Any:
        """The document after the update (a detached copy), or ``None``."""
        return None if self.document_text is None else json.loads(self.document_text)

    @property
    def key(self) -> PanelKey:
        """``(identity, panel)``."""
        return (self.identity, self.panel)

    @property
    def closed(self) -> bool:
        """Whether this accepted update closed the panel."""
        return self.error is None and self.op == "close"

    def to_dict(self) -> dict[str, Any]:
        """``{tool_call_id, identity, panel, op, source, revision, document, error,
        declaration}`` (every key present, ``null`` when absent), detached."""
        return {
            "tool_call_id": self.tool_call_id,
            "identity": self.identity,
            "panel": self.panel,
            "op": self.op,
            "source": self.source,
            "revision": self.revision,
            "document": self.document,
            "error": thaw(self.error),
            "declaration": thaw(self.declaration),
        }


@attrs.frozen(kw_only=True)
class ModelOnly:
    """A message for the model context only (a reminder the runtime adds, say); it never
    appears in the display history."""

    message: Message


DisplayEntry = ToolOutput | RequestEntry | PanelUpdate
"""The display-only entries a writer can append beside messages."""


@attrs.frozen(kw_only=True)
class DisplayItem:
    """One entry of the display history. ``seq`` is its position in the session (1 for
    the first entry, then 2, ...): stable, and it grows with time. ``entry`` is a message
    or a display-only entry; :attr:`kind` says which (``message``, ``tool_output``,
    ``request``, ``panel``)."""

    seq: int
    created_at: datetime
    entry: Any  # Message | ToolOutput | RequestEntry | PanelUpdate

    @property
    def kind(self) -> str:
        """``message``, ``tool_output``, ``request`` or ``panel``."""
        kind = getattr(self.entry, "kind", None)
        return kind if isinstance(kind, str) else "message"

    @property
    def message(self) -> Message | None:
        """The message, for a ``message`` item (``None`` for a display-only entry)."""
        entry = self.entry
        return None if isinstance(entry, ToolOutput | RequestEntry | PanelUpdate) else entry

    def to_dict(self) -> dict[str, Any]:
        """The JSON form front ends share (``raw sessions show --json``): ``seq``,
        ``created_at`` (ISO 8601), ``kind``, and the entry's fields — ``message`` for a
        message; ``tool_call_id``, ``content``, ``truncated`` for a tool output;
        the fields of :meth:`RequestEntry.to_dict` for a request (approval or
        interaction); the fields of :meth:`PanelUpdate.to_dict` for a panel update."""
        head: dict[str, Any] = {
            "seq": self.seq,
            "created_at": self.created_at.isoformat(),
            "kind": self.kind,
        }
        entry = self.entry
        if isinstance(entry, ToolOutput):
            return {
                **head,
                "tool_call_id": entry.tool_call_id,
                "content": [block_to_dict(block) for block in entry.content],
                "truncated": entry.truncated,
            }
        if isinstance(entry, RequestEntry):
            return {**head, **entry.to_dict()}
        if isinstance(entry, PanelUpdate):
            return {**head, **entry.to_dict()}
        from raw_core.sessions.messages import message_to_dict

        return {**head, "message": message_to_dict(entry)}


@attrs.frozen(kw_only=True)
class DisplayPage:
    """A page of display history.

    Oldest first, ``next_cursor`` is always set: it continues after this page, also once
    the session has grown (an empty page means "nothing new yet"). Newest first, it is
    ``None`` when the page reached the first item. ``has_more`` says whether more items
    were there when the page was read.
    """

    items: tuple[DisplayItem, ...]
    next_cursor: str | None
    has_more: bool


# --- pending requests --------------------------------------------------------------------


@attrs.frozen(kw_only=True)
class PendingRequest:
    """A request that waits for a person: a call's approval or a tool's interaction.

    ``kind`` says which. ``show`` is what a front end shows (an approval: ``identity``,
    ``name``, ``arguments``, ``effects``, ``reason``; an interaction: ``identity``,
    ``panel``, ``document`` — a panel document holding one ``form`` block); ``deadline`` is
    when it expires (``None``: it waits as long as its call does); ``answer`` is set once
    ``state`` is ``approved``, ``denied`` (an :class:`ApprovalAnswer`) or ``answered`` (an
    :class:`InteractionAnswer`).
    """

    id: str
    session_id: str
    kind: RequestKind
    tool_call_id: str
    show: Mapping[str, Any]
    created_at: datetime
    deadline: datetime | None = None
    state: RequestState = "pending"
    answer: RequestAnswer | None = None
    answered_at: datetime | None = None


def new_request_id() -> str:
    """A fresh pending-request id: ``req_``, then 32 lowercase hex digits (the creation
    time in milliseconds, then 80 random bits), so ids sort by creation and are unique
    across processes. Every backend stores ids of this form."""
    return f"req_{time.time_ns() // 1_000_000:012x}{secrets.token_hex(10)}"
