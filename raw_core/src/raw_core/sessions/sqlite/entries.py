"""The display-only entries a session keeps beside its messages, and their one JSON form.

* :class:`~raw_core.sessions.backend.ToolOutput`: a call's output as the user saw it, when the model
  received less. Made with :func:`tool_output_for`, which cuts it at
  :data:`~raw_core.sessions.backend.MAX_TOOL_OUTPUT_BYTES`;
* :class:`~raw_core.sessions.backend.RequestEntry`: a pending request (an approval or an
  interaction) as it opened, and as it ended;
* :class:`~raw_core.sessions.backend.PanelUpdate`: one update of a panel, accepted or rejected.

Each is written to the display table with their own row kind (so they never enter the
model context) and :data:`ENTRY_FORMAT`. The JSON form, as strict as the messages' (every
key checked, unknown keys refused):

* tool output: ``{"tool_call_id", "content": [block, ...], "truncated": true}``
  (``truncated`` only when true); a block in the JSON form of
  :mod:`raw_core.sessions.blocks`, the tool result blocks' own shape;
* request: ``{"request_id", "request_kind", "tool_call_id", "state", "show", "deadline",
  "answer"}``, every key present (``deadline`` in milliseconds since the epoch or null;
  ``answer`` ``{"approved", "by", "message"}`` for an approval, ``{"values", "by"}`` for an
  interaction, or null);
* panel update: the object of :meth:`~raw_core.sessions.backend.PanelUpdate.to_dict`, every key
  present.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping
from datetime import UTC, datetime
from typing import Any, Final

from raw_core.sessions.backend import (
    MAX_TOOL_OUTPUT_BYTES,
    REQUEST_STATES,
    ApprovalAnswer,
    InteractionAnswer,
    ModelOnly,
    PanelUpdate,
    PendingRequest,
    RequestAnswer,
    RequestEntry,
    RequestKind,
    RequestState,
    ToolOutput,
    document_json,
)
from raw_core.sessions.blocks import (
    ContentBlock,
    ImageBlock,
    JsonBlock,
    TextBlock,
    block_from_dict,
    block_to_dict,
)
from raw_core.sessions.messages import (
    MESSAGE_FORMAT,
    AssistantMessage,
    ToolResultMessage,
    UserMessage,
    dumps_message,
)
from raw_core.sessions.sqlite._schema import (
    KIND_MESSAGE,
    KIND_MODEL_ONLY,
    KIND_PANEL,
    KIND_REQUEST,
    KIND_TOOL_OUTPUT,
)

__all__ = [
    "ENTRY_FORMAT",
    "REQUEST_STATES",
    "answer_from_dict",
    "answer_state",
    "check_cancelling",
    "check_closing",
    "decode_request_columns",
    "dumps_json",
    "dumps_panel",
    "dumps_request",
    "dumps_tool_output",
    "encode_entry",
    "loads_panel",
    "loads_request",
    "loads_tool_output",
    "tool_output_for",
]

ENTRY_FORMAT: Final = 1
"""The version of the JSON form of display-only entries; stored with every such row."""


def _plain(value: Any) -> Any:
    """``json.dumps`` ``default``: read-only mappings and sequences as plain JSON."""
    if isinstance(value, Mapping):
        return dict(value)
    if isinstance(value, tuple | list):
        return list(value)
    raise TypeError(f"expected a JSON value, found {type(value).__name__}")


def dumps_json(value: Any) -> str:
    """Compact, ASCII JSON text (lone surrogates survive), NaN refused."""
    return json.dumps(value, separators=(",", ":"), allow_nan=False, default=_plain)


def _block_size(block: ContentBlock) -> int:
    """What a block counts toward :data:`MAX_TOOL_OUTPUT_BYTES` (what it takes to store):
    UTF-8 bytes of its text, of its JSON text, of an image's base64 data, of a variable's
    name."""
    if isinstance(block, TextBlock):
        return len(block.text.encode("utf-8", "surrogatepass"))
    if isinstance(block, JsonBlock):
        return len(block.json_text.encode("utf-8", "surrogatepass"))
    if isinstance(block, ImageBlock):
        return len(block.data)
    return len(block.name.encode("utf-8", "surrogatepass"))


def _cut_text(text: str, limit: int) -> str:
    """The longest prefix of ``text`` of at most ``limit`` UTF-8 bytes, never splitting a
    character."""
    data = text.encode("utf-8", "surrogatepass")
    if len(data) <= limit:
        return text
    end = limit
    while end > 0 and data[end] & 0xC0 == 0x80:  # a continuation byte: back to its start
        end -= 1
    return data[:end].decode("utf-8", "surrogatepass")


def _marker(total: int) -> str:
    return f"\n[output truncated: {MAX_TOOL_OUTPUT_BYTES:,} of {total:,} bytes kept]"


def tool_output_for(tool_call_id: str, blocks: Iterable[ContentBlock]) -> ToolOutput:
    """A call's output for the display history, cut at
    :data:`~raw_core.sessions.backend.MAX_TOOL_OUTPUT_BYTES`.

    Past the cap the output is cut — inside a text block at a character boundary, before a
    JSON or image block that does not fit — and ends with a text marker saying how much
    was kept; ``truncated`` is then true. The marker is counted in the cap.
    """
    checked = tuple(blocks)
    sizes = [_block_size(block) for block in checked]
    total = sum(sizes)
    if total <= MAX_TOOL_OUTPUT_BYTES:
        return ToolOutput(tool_call_id=tool_call_id, content=checked)
    marker = _marker(total)
    budget = MAX_TOOL_OUTPUT_BYTES - len(marker.encode("ascii"))
    kept: list[ContentBlock] = []
    for block, size in zip(checked, sizes, strict=True):
        if size <= budget:
            kept.append(block)
            budget -= size
            continue
        if isinstance(block, TextBlock):
            kept.append(TextBlock(text=_cut_text(block.text, budget) + marker))
        else:
            kept.append(TextBlock(text=marker.lstrip("\n")))
        break
    return ToolOutput(tool_call_id=tool_call_id, content=tuple(kept), truncated=True)


# --- the JSON form -----------------------------------------------------------------------


def dumps_tool_output(entry: ToolOutput) -> str:
    """``entry`` as JSON text; ``ValueError`` for content past the cap or a malformed
    block (make it with :func:`tool_output_for`)."""
    content = [block_to_dict(block) for block in entry.content]
    size = sum(_block_size(block) for block in entry.content)
    if size > MAX_TOOL_OUTPUT_BYTES:
        raise ValueError(
            f"expected tool output of at most {MAX_TOOL_OUTPUT_BYTES:,} bytes, found "
            f"{size:,}: make it with tool_output_for(), which cuts it"
        )
    data: dict[str, Any] = {"tool_call_id": entry.tool_call_id, "content": content}
    if entry.truncated:
        data["truncated"] = True
    return dumps_json(data)


def _object(text: str, what: str) -> dict[str, Any]:
    value = json.loads(text)
    if not isinstance(value, dict):
        raise ValueError(f"expected {what} object, found {type(value).__name__}")
    return value


def _keys(data: Mapping[str, Any], required: set[str], optional: set[str], what: str) -> None:
    missing = required - set(data)
    unknown = set(data) - required - optional
    if missing or unknown:
        parts = [f"missing {sorted(missing)}"] if missing else []
        parts += [f"unknown {sorted(unknown)}"] if unknown else []
        raise ValueError(f"{what}: expected the keys {sorted(required)}, found {', '.join(parts)}")


def _string(data: Mapping[str, Any], key: str, what: str) -> str:
    value = data[key]
    if not isinstance(value, str):
        raise ValueError(f"{what}.{key}: expected a string, found {type(value).__name__}")
    return value


def loads_tool_output(text: str) -> ToolOutput:
    """The entry :func:`dumps_tool_output` wrote; ``ValueError`` for anything else."""
    data = _object(text, "a tool output")
    _keys(data, {"tool_call_id", "content"}, {"truncated"}, "tool output")
    content = data["content"]
    if not isinstance(content, list):
        raise ValueError("tool output.content: expected a list of blocks")
    truncated = data.get("truncated", False)
    if truncated is not True and "truncated" in data:
        raise ValueError("tool output.truncated: expected true (or no key)")
    return ToolOutput(
        tool_call_id=_string(data, "tool_call_id", "tool output"),
        content=tuple(
            block_from_dict(block, f"tool output.content[{i}]") for i, block in enumerate(content)
        ),
        truncated=truncated,
    )


def answer_from_dict(data: Any, kind: str, what: str = "answer") -> RequestAnswer:
    """The answer to a request of ``kind``: an :class:`ApprovalAnswer` from ``{approved,
    by, message}``, an :class:`InteractionAnswer` from ``{values, by}``; ``ValueError``
    else."""
    if not isinstance(data, dict):
        raise ValueError(f"{what}: expected an object, found {type(data).__name__}")
    if kind == "interaction":
        _keys(data, {"values", "by"}, set(), what)
        if not isinstance(data["values"], dict):
            raise ValueError(f"{what}.values: expected an object")
        return InteractionAnswer(values=data["values"], by=_string(data, "by", what))
    if kind != "approval":
        raise ValueError(f"{what}: expected a request of kind approval or interaction")
    _keys(data, {"approved", "by"}, {"message"}, what)
    if not isinstance(data["approved"], bool):
        raise ValueError(f"{what}.approved: expected true or false")
    message = data.get("message")
    if message is not None and not isinstance(message, str):
        raise ValueError(f"{what}.message: expected a string or null")
    return ApprovalAnswer(approved=data["approved"], by=_string(data, "by", what), message=message)


def answer_state(answer: RequestAnswer) -> RequestState:
    """The state an answer ends its request in: ``approved``, ``denied`` or ``answered``."""
    if isinstance(answer, InteractionAnswer):
        return "answered"
    return "approved" if answer.approved else "denied"


def check_closing(kind: str, state: RequestState, answer: RequestAnswer | None) -> None:
    """``ValueError`` unless ``state`` ends a request of ``kind`` and ``answer`` fits it:
    an answer of the kind's type saying the same for ``approved`` / ``denied`` (approvals)
    and ``answered`` (interactions), none for ``expired``, ``cancelled`` and
    ``interrupted``."""
    answered = ("approved", "denied") if kind == "approval" else ("answered",)
    allowed = (*answered, "expired", "cancelled", "interrupted")
    if state not in allowed:
        raise ValueError(
            f"expected one of {', '.join(allowed)} to close a request of kind {kind}, found"
            f" {state!r}"
        )
    if state in answered:
        expected = ApprovalAnswer if kind == "approval" else InteractionAnswer
        if not isinstance(answer, expected) or answer_state(answer) != state:
            raise ValueError(f"expected an {expected.__name__} saying {state} for {state}")
    elif answer is not None:
        raise ValueError(f"expected no answer for a request that is {state}")


def decode_request_columns(
    kind: str, show: str, state: str, answer: str | None
) -> tuple[dict[str, Any], RequestAnswer | None]:
    """A stored request's ``show`` object and its answer, decoded from their JSON columns
    (both backends store them alike); ``ValueError`` naming the column when one is not
    what raw wrote."""
    shown = json.loads(show)
    if not isinstance(shown, dict):
        raise ValueError("show: expected an object")
    if state not in REQUEST_STATES:
        raise ValueError(f"state: expected one of {sorted(REQUEST_STATES)}, found {state!r}")
    if kind not in ("approval", "interaction"):
        raise ValueError(f"kind: expected approval or interaction, found {kind!r}")
    decoded = None if answer is None else answer_from_dict(json.loads(answer), kind)
    return shown, decoded


def check_cancelling(request: PendingRequest) -> None:
    """``ValueError`` unless ``request`` can be cancelled by id: an interaction (an approval
    is declined with an answer instead)."""
    if request.kind != "interaction":
        raise ValueError(
            f"expected an interaction request to cancel, found request {request.id} of kind"
            f" {request.kind} (decline it with approved=false instead)"
        )


_REQUEST_KEYS: Final = frozenset(
    {"request_id", "request_kind", "tool_call_id", "state", "show", "deadline", "answer"}
)


def dumps_request(entry: RequestEntry) -> str:
    """``entry`` as JSON text."""
    if entry.state not in REQUEST_STATES:
        raise ValueError(f"expected a request state, found {entry.state!r}")
    if entry.state != "pending":
        check_closing(entry.request_kind, entry.state, entry.answer)
    deadline = entry.deadline
    return dumps_json(
        {
            "request_id": entry.request_id,
            "request_kind": entry.request_kind,
            "tool_call_id": entry.tool_call_id,
            "state": entry.state,
            "show": entry.show,
            "deadline": None if deadline is None else int(deadline.timestamp() * 1000),
            "answer": None if entry.answer is None else entry.answer.to_dict(),
        }
    )


def loads_request(text: str) -> RequestEntry:
    """The entry :func:`dumps_request` wrote; ``ValueError`` for anything else."""
    data = _object(text, "a request")
    _keys(data, set(_REQUEST_KEYS), set(), "request")
    kind = _string(data, "request_kind", "request")
    if kind not in ("approval", "interaction"):
        raise ValueError("request.request_kind: expected approval or interaction")
    state = _request_state(_string(data, "state", "request"))
    if not isinstance(data["show"], dict):
        raise ValueError("request.show: expected an object")
    deadline = data["deadline"]
    if deadline is not None and type(deadline) is not int:
        raise ValueError("request.deadline: expected milliseconds or null")
    answer = data["answer"]
    decoded = None if answer is None else answer_from_dict(answer, kind, "request.answer")
    if state != "pending":
        check_closing(kind, state, decoded)
    return RequestEntry(
        request_id=_string(data, "request_id", "request"),
        request_kind=_kind(kind),
        tool_call_id=_string(data, "tool_call_id", "request"),
        state=state,
        show=data["show"],
        deadline=None if deadline is None else datetime.fromtimestamp(deadline / 1000, UTC),
        answer=decoded,
    )


def _kind(value: str) -> RequestKind:
    return "interaction" if value == "interaction" else "approval"


_PANEL_KEYS: Final = frozenset(
    {
        "tool_call_id",
        "identity",
        "panel",
        "op",
        "source",
        "revision",
        "document",
        "error",
        "declaration",
    }
)
_PANEL_SOURCES: Final = ("result", "context")


def dumps_panel(entry: PanelUpdate) -> str:
    """``entry`` as JSON text (the document's own text put in as it is: it is not
    serialized again)."""
    head = dumps_json(
        {
            "tool_call_id": entry.tool_call_id,
            "identity": entry.identity,
            "panel": entry.panel,
            "op": entry.op,
            "source": entry.source,
            "revision": entry.revision,
            "error": entry.error,
            "declaration": entry.declaration,
        }
    )
    document = entry.document_text if entry.document_text is not None else "null"
    return f'{head[:-1]},"document":{document}}}'


def loads_panel(text: str) -> PanelUpdate:
    """The entry :func:`dumps_panel` wrote; ``ValueError`` for anything else."""
    data = _object(text, "a panel update")
    _keys(data, set(_PANEL_KEYS), set(), "panel update")
    revision = data["revision"]
    if revision is not None and (type(revision) is not int or revision < 1):
        raise ValueError("panel update.revision: expected a positive integer or null")
    source = _string(data, "source", "panel update")
    if source not in _PANEL_SOURCES:
        raise ValueError(f"panel update.source: expected one of {list(_PANEL_SOURCES)}")
    error = data["error"]
    if error is not None and not (
        isinstance(error, dict)
        and isinstance(error.get("code"), str)
        and isinstance(error.get("message"), str)
    ):
        raise ValueError("panel update.error: expected {code, message} or null")
    declaration = data["declaration"]
    if declaration is not None and not isinstance(declaration, dict):
        raise ValueError("panel update.declaration: expected an object or null")
    return PanelUpdate(
        tool_call_id=_string(data, "tool_call_id", "panel update"),
        identity=_string(data, "identity", "panel update"),
        panel=_string(data, "panel", "panel update"),
        op=_string(data, "op", "panel update"),
        source=source,  # type: ignore[arg-type]
        revision=revision,
        document_text=None if data["document"] is None else document_json(data["document"]),
        error=error,
        declaration=declaration,
    )


def _request_state(value: str) -> RequestState:
    if value not in REQUEST_STATES:
        raise ValueError(f"expected one of {sorted(REQUEST_STATES)}, found {value!r}")
    return value  # type: ignore[return-value]


# --- the display row an entry becomes ----------------------------------------------------

_MESSAGES = (UserMessage, AssistantMessage, ToolResultMessage)


def encode_entry(entry: Any) -> tuple[int, int, str]:
    """``(kind, format, body)`` of the display row an entry becomes: the kinds and bodies
    every backend that keeps raw's rows stores (the PostgreSQL one too). ``TypeError`` for
    anything that is not an entry, ``ValueError`` for tool output past the cap."""
    if isinstance(entry, _MESSAGES):
        return KIND_MESSAGE, MESSAGE_FORMAT, dumps_message(entry)
    if isinstance(entry, ModelOnly):
        if not isinstance(entry.message, _MESSAGES):
            raise TypeError(
                f"expected a message in ModelOnly, found {type(entry.message).__name__}"
            )
        return KIND_MODEL_ONLY, MESSAGE_FORMAT, dumps_message(entry.message)
    if isinstance(entry, ToolOutput):
        return KIND_TOOL_OUTPUT, ENTRY_FORMAT, dumps_tool_output(entry)
    if isinstance(entry, RequestEntry):
        return KIND_REQUEST, ENTRY_FORMAT, dumps_request(entry)
    if isinstance(entry, PanelUpdate):
        return KIND_PANEL, ENTRY_FORMAT, dumps_panel(entry)
    raise TypeError(
        "expected a message, ModelOnly, ToolOutput, RequestEntry or PanelUpdate, found"
        f" {type(entry).__name__}"
    )
