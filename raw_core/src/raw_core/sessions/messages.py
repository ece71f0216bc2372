"""The messages a session keeps, as frozen records with one JSON form.

Every provider adapter converts to and from this shape, and the store writes exactly this
JSON, so stored sessions never need converting when a provider is added or changed:

* :class:`UserMessage`: what the user sent (text and image blocks);
* :class:`AssistantMessage`: the model's text, its tool calls (``arguments`` is the JSON text
  the model produced, kept byte for byte), and :class:`ProviderPart` blobs (reasoning items,
  thinking signatures) that must go back to the same provider unchanged;
* :class:`ToolResultMessage`: the outcome of one tool call, ``ok`` or ``error`` with its code,
  and content blocks (:mod:`raw_core.sessions.blocks`, re-exported here): text, JSON,
  image, or a :class:`VarPlaceholder`.

A ``read_var`` result is stored as a :class:`VarPlaceholder` naming the variable; the loop
puts the value in only when it builds a request, so a variable's value never reaches the
database (spec 004, "Variables").

The stored JSON form tags each message with ``role`` and each block with ``type`` (a JSON
block as ``{"type": "json", "json_text"}``, a placeholder as ``{"type": "var_placeholder",
"name"}``: the form of format 1, kept so stored sessions read unchanged), leaves out fields
that hold their default, and is written and read here and nowhere else: written directly
(the hot path), read directly when it is exactly that form and otherwise by one
configured converter that checks every field and names every problem.
:data:`MESSAGE_FORMAT` is stored beside every row, so a raw that meets a row from a newer
format refuses it instead of misreading it.
"""

from __future__ import annotations

import functools
import json
from collections.abc import Callable, Mapping
from typing import TYPE_CHECKING, Any, Final, Literal

import attrs

from raw_core._field_error import FieldValueError
from raw_core.sessions.blocks import (
    ContentBlock,
    ImageBlock,
    JsonBlock,
    TextBlock,
    UserBlock,
    VarPlaceholder,
)

if TYPE_CHECKING:
    import cattrs

__all__ = [
    "MESSAGE_FORMAT",
    "AssistantMessage",
    "CallSource",
    "ContentBlock",
    "ImageBlock",
    "JsonBlock",
    "Message",
    "ProviderPart",
    "TextBlock",
    "ToolCall",
    "ToolResultMessage",
    "UserBlock",
    "UserMessage",
    "VarPlaceholder",
    "dumps_message",
    "loads_message",
    "message_from_dict",
    "message_to_dict",
]

MESSAGE_FORMAT = 1
"""The version of the JSON form below; stored with every row."""


# --- messages ----------------------------------------------------------------------------


CallSource = Literal["model", "user_action"]
"""Who made a call: the model, or the user through a panel action."""


@attrs.frozen(kw_only=True)
class ToolCall:
    """One tool call: as the model asked for it (stored in its assistant message) and as
    the dispatcher runs it. ``arguments`` is JSON text, unparsed: the dispatcher parses
    it strictly, whoever made the call. ``source`` is ``"model"`` or ``"user_action"``.
    """

    id: str
    name: str
    arguments: str
    source: CallSource = "model"

    @classmethod
    def with_arguments(
        cls, *, id: str, name: str, arguments: Any, source: CallSource = "model"
    ) -> ToolCall:
        """A call whose arguments an application holds as a JSON value (a dict): written
        as JSON text, so it goes through the same strict parsing and size limit as a
        model's. Raises ``invalid_arguments`` when the value is not JSON."""
        from raw_core.errors import InvalidArguments

        try:
            text = json.dumps(arguments, ensure_ascii=False, allow_nan=False)
        except (TypeError, ValueError) as exc:
            problem = f"the arguments are not a JSON value: {exc}"
            raise InvalidArguments(problem, field="$") from None
        return cls(id=id, name=name, arguments=text, source=source)


@attrs.frozen(kw_only=True)
class ProviderPart:
    """Data a provider needs back unchanged (e.g. a reasoning item), opaque to raw."""

    provider: str
    data: str


@attrs.frozen(kw_only=True)
class UserMessage:
    """What the user sent. JSON role ``user``."""

    content: tuple[UserBlock, ...]

    @classmethod
    def from_text(cls, text: str) -> UserMessage:
        """A message of one text block."""
        return cls(content=(TextBlock(text=text),))


@attrs.frozen(kw_only=True)
class AssistantMessage:
    """A completed model answer. JSON role ``assistant``."""

    text: str = ""
    tool_calls: tuple[ToolCall, ...] = ()
    provider_parts: tuple[ProviderPart, ...] = ()


def _check_error_code(instance: ToolResultMessage, attribute: Any, value: str | None) -> None:
    if instance.status == "error" and not value:
        raise FieldValueError("error_code", "an error result needs an error code")
    if instance.status == "ok" and value is not None:
        raise FieldValueError("error_code", "an ok result has no error code")


@attrs.frozen(kw_only=True)
class ToolResultMessage:
    """The outcome of the tool call ``tool_call_id``. JSON role ``tool``.

    ``error_code`` is set exactly when ``status`` is ``"error"``.
    """

    tool_call_id: str
    status: Literal["ok", "error"]
    error_code: str | None = attrs.field(default=None, validator=_check_error_code)
    content: tuple[ContentBlock, ...] = ()


Message = UserMessage | AssistantMessage | ToolResultMessage
"""Any message of a session."""


# --- the one JSON form -------------------------------------------------------------------

_TAGS: Mapping[type, str] = {
    TextBlock: "text",
    JsonBlock: "json",
    ImageBlock: "image",
    VarPlaceholder: "var_placeholder",
    UserMessage: "user",
    AssistantMessage: "assistant",
    ToolResultMessage: "tool",
}
"""The tag of each tagged record: ``type`` of a block, ``role`` of a message."""


def _tagged_union(converter: cattrs.Converter, union: Any, tag_name: str) -> None:
    from raw_core._convert import json_kind

    """Structure ``union`` from objects carrying their class's tag under ``tag_name``."""
    classes: dict[str, type] = {_TAGS[cls]: cls for cls in union.__args__}
    listed = ", ".join(json.dumps(tag) for tag in classes)

    def structure_hook(value: Any, _type: Any) -> Any:
        if not isinstance(value, dict):
            raise ValueError(f"expected an object, found {json_kind(value)}")
        tag = value.get(tag_name)
        cls = classes.get(tag) if isinstance(tag, str) else None
        if cls is None:
            found = "nothing" if tag is None else json.dumps(tag)
            raise FieldValueError(tag_name, f"expected one of {listed}, found {found}")
        rest = {key: item for key, item in value.items() if key != tag_name}
        return converter.structure(rest, cls)

    converter.register_structure_hook_func(lambda t: t == union, structure_hook)


@functools.cache
def _message_converter() -> cattrs.Converter:
    """The reader's converter. Built on first use: importing cattrs and generating its code
    takes tens of ms that commands which read no message (``raw sessions list``) should
    not pay."""
    from raw_core._convert import make_converter

    converter = make_converter()
    # The unions first: each record's generated hook looks up its fields' hooks once.
    _tagged_union(converter, ContentBlock, "type")
    _tagged_union(converter, UserBlock, "type")
    _tagged_union(converter, Message, "role")
    return converter


def message_to_dict(message: Message) -> dict[str, Any]:
    """The JSON-ready form of ``message``: ``{"role": ..., ...}``, defaults left out (the
    parsed text of :func:`dumps_message`, the one writer)."""
    data: dict[str, Any] = json.loads(dumps_message(message))
    return data


def message_from_dict(data: Any, *, root: str = "$") -> Message:
    """Read a message from its JSON-ready form.

    Raises :class:`raw_core._convert.StructureFailed` (a ``ValueError``) listing every
    problem with its JSON path (``$.content[0].type``); unknown fields are refused.
    """
    message = _read_exact(data)
    if message is not None:
        return message
    from raw_core._convert import structure

    checked: Message = structure(_message_converter(), data, Message, root=root)  # type: ignore[arg-type]
    return checked


# Reading is the hot path of resuming a session and of every page of its display items, so
# the form the writer writes is read directly: each function below accepts a value only
# when every key is known, every required one is there and every field has exactly its
# JSON type, and builds the records (their validators run); on anything else it answers
# None and the converter reads the value instead, which names every problem. So the
# direct reader never accepts what the converter refuses, and builds what it would build
# (tests/raw_core/store/test_message_reading.py compares the two on generated documents).

_TEXT_KEYS: Final = frozenset({"type", "text"})
_JSON_KEYS: Final = frozenset({"type", "json_text"})
_IMAGE_KEYS: Final = frozenset({"type", "media_type", "data"})
_PLACEHOLDER_KEYS: Final = frozenset({"type", "name"})
_CALL_KEYS: Final = frozenset({"id", "name", "arguments", "source"})
_PART_KEYS: Final = frozenset({"provider", "data"})
_USER_KEYS: Final = frozenset({"role", "content"})
_ASSISTANT_KEYS: Final = frozenset({"role", "text", "tool_calls", "provider_parts"})
_TOOL_KEYS: Final = frozenset({"role", "tool_call_id", "status", "error_code", "content"})
_SOURCES: Final = frozenset({"model", "user_action"})
_STATUSES: Final = frozenset({"ok", "error"})


def _exact_block(value: Any, *, user: bool) -> ContentBlock | None:
    if type(value) is not dict:
        return None
    tag = value.get("type")
    if tag == "text":
        text = value.get("text")
        if type(text) is str and value.keys() <= _TEXT_KEYS:
            return TextBlock(text=text)
    elif tag == "image":
        media_type, data = value.get("media_type"), value.get("data")
        if type(media_type) is str and type(data) is str and value.keys() <= _IMAGE_KEYS:
            return ImageBlock(media_type=media_type, data=data)
    elif user:
        return None
    elif tag == "json":
        json_text = value.get("json_text")
        if type(json_text) is str and value.keys() <= _JSON_KEYS:
            return JsonBlock(json_text=json_text)
    elif tag == "var_placeholder":
        name = value.get("name")
        if type(name) is str and value.keys() <= _PLACEHOLDER_KEYS:
            return VarPlaceholder(name=name)
    return None


def _exact_blocks(value: Any, *, user: bool) -> tuple[Any, ...] | None:
    if type(value) is not list:
        return None
    blocks = []
    for item in value:
        block = _exact_block(item, user=user)
        if block is None:
            return None
        blocks.append(block)
    return tuple(blocks)


def _exact_call(value: Any) -> ToolCall | None:
    if type(value) is not dict or not value.keys() <= _CALL_KEYS:
        return None
    id_, name, arguments = value.get("id"), value.get("name"), value.get("arguments")
    source = value.get("source", "model")
    if type(id_) is not str or type(name) is not str or type(arguments) is not str:
        return None
    if type(source) is not str or source not in _SOURCES:
        return None
    return ToolCall(id=id_, name=name, arguments=arguments, source=source)  # type: ignore[arg-type]


def _exact_records(value: Any, read: Callable[[Any], Any]) -> tuple[Any, ...] | None:
    if type(value) is not list:
        return None
    records = []
    for item in value:
        record = read(item)
        if record is None:
            return None
        records.append(record)
    return tuple(records)


def _exact_part(value: Any) -> ProviderPart | None:
    if type(value) is not dict or not value.keys() <= _PART_KEYS:
        return None
    provider, data = value.get("provider"), value.get("data")
    if type(provider) is not str or type(data) is not str:
        return None
    return ProviderPart(provider=provider, data=data)


def _read_exact(data: Any) -> Message | None:
    """``data`` as a message when it is exactly in the stored form, else None."""
    if type(data) is not dict:
        return None
    role = data.get("role")
    if role == "user":
        if not data.keys() <= _USER_KEYS or "content" not in data:
            return None
        content = _exact_blocks(data["content"], user=True)
        return None if content is None else UserMessage(content=content)
    if role == "assistant":
        if not data.keys() <= _ASSISTANT_KEYS:
            return None
        text = data.get("text", "")
        calls = _exact_records(data.get("tool_calls", []), _exact_call)
        parts = _exact_records(data.get("provider_parts", []), _exact_part)
        if type(text) is not str or calls is None or parts is None:
            return None
        return AssistantMessage(text=text, tool_calls=calls, provider_parts=parts)
    if role == "tool":
        if not data.keys() <= _TOOL_KEYS:
            return None
        call_id, status = data.get("tool_call_id"), data.get("status")
        code = data.get("error_code")
        blocks = _exact_blocks(data.get("content", []), user=False)
        if type(call_id) is not str or type(status) is not str or status not in _STATUSES:
            return None
        if (code is not None and type(code) is not str) or blocks is None:
            return None
        try:
            return ToolResultMessage(
                tool_call_id=call_id,
                status=status,  # type: ignore[arg-type]
                error_code=code,
                content=blocks,
            )
        except FieldValueError:  # the converter names the problem
            return None
    return None


# Writing is the hot path (every message of a turn is committed), so the text is put
# together directly: every field of every record is a string, a tuple of blocks or a tuple
# of records of strings. Each string goes through the escaper json.dumps itself uses with
# ensure_ascii, so any string survives the round trip, lone surrogates included (but not a
# high surrogate directly followed by a low one: JSON cannot tell them from the escape of
# the character they pair into, and reads them back as it). Tags come first, then the
# fields in their declared order; a field that holds its default is left out, as the
# reader expects.
_quote: Callable[[str], str] = json.encoder.encode_basestring_ascii


def _block_json(block: ContentBlock) -> str:
    if isinstance(block, TextBlock):
        return '{"type":"text","text":' + _quote(block.text) + "}"
    if isinstance(block, JsonBlock):
        return '{"type":"json","json_text":' + _quote(block.json_text) + "}"
    if isinstance(block, ImageBlock):
        media_type, data = _quote(block.media_type), _quote(block.data)
        return '{"type":"image","media_type":' + media_type + ',"data":' + data + "}"
    if isinstance(block, VarPlaceholder):
        return '{"type":"var_placeholder","name":' + _quote(block.name) + "}"
    raise TypeError(f"expected a content block, found {type(block).__name__}")


def _blocks_json(blocks: tuple[ContentBlock, ...]) -> str:
    return "[" + ",".join([_block_json(block) for block in blocks]) + "]"


def _call_json(call: ToolCall) -> str:
    name, arguments = _quote(call.name), _quote(call.arguments)
    source = "" if call.source == "model" else ',"source":' + _quote(call.source)
    return (
        '{"id":' + _quote(call.id) + ',"name":' + name + ',"arguments":' + arguments + source + "}"
    )


def _part_json(part: ProviderPart) -> str:
    return '{"provider":' + _quote(part.provider) + ',"data":' + _quote(part.data) + "}"


def dumps_message(message: Message) -> str:
    """``message`` as compact JSON text (ASCII, so lone surrogates survive the round
    trip)."""
    if isinstance(message, AssistantMessage):
        text = '{"role":"assistant"'
        if message.text:
            text += ',"text":' + _quote(message.text)
        if message.tool_calls:
            text += ',"tool_calls":[' + ",".join([_call_json(c) for c in message.tool_calls]) + "]"
        if message.provider_parts:
            parts = ",".join([_part_json(part) for part in message.provider_parts])
            text += ',"provider_parts":[' + parts + "]"
        return text + "}"
    if isinstance(message, ToolResultMessage):
        text = '{"role":"tool","tool_call_id":' + _quote(message.tool_call_id)
        text += ',"status":' + _quote(message.status)
        if message.error_code is not None:
            text += ',"error_code":' + _quote(message.error_code)
        if message.content:
            text += ',"content":' + _blocks_json(message.content)
        return text + "}"
    if isinstance(message, UserMessage):
        return '{"role":"user","content":' + _blocks_json(message.content) + "}"
    raise TypeError(f"expected a message, found {type(message).__name__}")


def loads_message(text: str) -> Message:
    """The message whose JSON text is ``text`` (as :func:`dumps_message` wrote it).

    Raises ``ValueError`` when the text is not JSON or not a message.
    """
    return message_from_dict(json.loads(text))
