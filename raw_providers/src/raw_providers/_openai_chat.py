"""The Chat Completions API: raw's request as ``messages``, and its chunks as raw's events.

Request: the system prompt as a ``system`` message; user text (and images as ``image_url``
data URLs for a model with vision); assistant text and ``tool_calls``; one ``tool`` message
per result (text only: this API takes no images in tool results, so a vision model gets
them in one ``user`` message after the run of results, and other models get a note).

Stream: ``delta.content`` is text; ``delta.tool_calls`` arrive in fragments keyed by
``index`` (the first carries id and name, later ones pieces of the arguments); the usage
chunk (``stream_options.include_usage``) comes last; ``finish_reason`` gives the stop.
Servers that send a call's name late, or several calls under one ``index`` with distinct
ids, are handled too.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Sequence
from typing import TYPE_CHECKING, Any

import attrs

from raw_core.config import ModelConfig
from raw_core.errors import ProviderFailed
from raw_core.providers.contract import (
    ModelRequest,
    ProviderEvent,
    StopEvent,
    StopReason,
    TextDelta,
    ToolCallDelta,
    ToolCallEnd,
    ToolCallStart,
    UsageEvent,
)
from raw_core.sessions.messages import (
    AssistantMessage,
    ImageBlock,
    ToolResultMessage,
    UserBlock,
    UserMessage,
)
from raw_providers._content import (
    block_text,
    data_url,
    image_note,
    json_value,
    request_names,
    result_text,
)
from raw_providers._names import WireNames

if TYPE_CHECKING:
    from openai.types.chat import ChatCompletionChunk

__all__ = ["chat_events", "chat_messages", "chat_params"]

IMAGES_NOTE = "The images the tool calls above returned, each after its label:"
"""The first part of the user message that carries tool results' images."""

_FINISH: dict[str, StopReason] = {
    "stop": "end_turn",
    "tool_calls": "tool_use",
    "function_call": "tool_use",
    "length": "max_tokens",
    "content_filter": "refusal",
}


def _user_content(blocks: Sequence[UserBlock], *, vision: bool) -> str | list[dict[str, Any]]:
    parts: list[dict[str, Any]] = []
    for block in blocks:
        if isinstance(block, ImageBlock):
            if vision:
                parts.append({"type": "image_url", "image_url": {"url": data_url(block)}})
            else:
                parts.append({"type": "text", "text": image_note(block)})
        else:
            parts.append({"type": "text", "text": block_text(block) or ""})
    if all(part["type"] == "text" for part in parts):
        # Plain text as a string: what every OpenAI-compatible server understands.
        return "\n\n".join(part["text"] for part in parts)
    return parts


def chat_messages(request: ModelRequest, names: WireNames, *, vision: bool) -> list[dict[str, Any]]:
    """The ``messages`` of a Chat Completions request."""
    messages: list[dict[str, Any]] = []
    if request.system:
        messages.append({"role": "system", "content": request.system})
    # A tool message takes text only: each image of a run of tool results is numbered, its
    # result points to it by number, and one user message right after the run carries
    # them, each after its label. Built from the stored results alone, so the same history
    # always gives the same messages and the request prefix stays stable.
    images: list[dict[str, Any]] = []

    def flush_images() -> None:
        if images:
            note = {"type": "text", "text": IMAGES_NOTE}
            messages.append({"role": "user", "content": [note, *images]})
            images.clear()

    for message in request.messages:
        if isinstance(message, ToolResultMessage):
            text = result_text(message.content, vision=vision)
            if vision:
                numbers: list[str] = []
                for block in message.content:
                    if isinstance(block, ImageBlock):
                        numbers.append(str(len(images) // 2 + 1))
                        label = f"image {numbers[-1]} (tool call {message.tool_call_id}):"
                        images.append({"type": "text", "text": label})
                        images.append({"type": "image_url", "image_url": {"url": data_url(block)}})
                if numbers:
                    which = "image " if len(numbers) == 1 else "images "
                    pointer = (
                        f"[{which}{', '.join(numbers)}: in the user message after the tool results]"
                    )
                    text = f"{text}\n{pointer}".strip()
            messages.append(
                {"role": "tool", "tool_call_id": message.tool_call_id, "content": text or "(empty)"}
            )
            continue
        flush_images()
        if isinstance(message, UserMessage):
            messages.append(
                {"role": "user", "content": _user_content(message.content, vision=vision)}
            )
        elif isinstance(message, AssistantMessage):
            entry: dict[str, Any] = {"role": "assistant", "content": message.text or None}
            if message.tool_calls:
                entry["tool_calls"] = [
                    {
                        "id": call.id,
                        "type": "function",
                        "function": {"name": names.to_wire(call.name), "arguments": call.arguments},
                    }
                    for call in message.tool_calls
                ]
            elif not message.text:
                entry["content"] = ""
            messages.append(entry)
    flush_images()
    return _merge_user_runs(messages)


def _as_parts(content: Any) -> list[dict[str, Any]]:
    if isinstance(content, str):
        return [{"type": "text", "text": content}] if content else []
    return list(content)


def _merge_user_runs(messages: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """One user message where raw's transcript has several in a row (a turn cancelled
    before its reply, tool images followed by the next prompt): many local servers render
    chat templates that insist on alternating roles."""
    merged: list[dict[str, Any]] = []
    for message in messages:
        previous = merged[-1] if merged else None
        if previous is not None and previous["role"] == "user" and message["role"] == "user":
            parts = _as_parts(previous["content"]) + _as_parts(message["content"])
            if all(part.get("type") == "text" for part in parts):
                previous["content"] = "\n\n".join(part["text"] for part in parts)
            else:
                previous["content"] = parts
            continue
        merged.append(dict(message))
    return merged


def chat_params(request: ModelRequest, model: ModelConfig, *, official: bool) -> dict[str, Any]:
    """Every parameter of the streamed request. ``official``: OpenAI itself (takes
    ``max_completion_tokens`` and ``prompt_cache_key``); otherwise the dialect
    OpenAI-compatible servers share (``max_tokens``)."""
    names = request_names(request)
    params: dict[str, Any] = {
        "model": model.model,
        "messages": chat_messages(request, names, vision=model.vision),
        "stream": True,
        "stream_options": {"include_usage": True},
    }
    if request.tools:
        params["tools"] = [
            {
                "type": "function",
                "function": {
                    "name": names.to_wire(tool.name),
                    "description": tool.description,
                    "parameters": json_value(tool.input_schema),
                },
            }
            for tool in request.tools
        ]
    if model.max_tokens is not None:
        params["max_completion_tokens" if official else "max_tokens"] = model.max_tokens
    if model.temperature is not None:
        params["temperature"] = model.temperature
    if official:
        params["prompt_cache_key"] = request.cache_key
    return params


@attrs.define
class _Call:
    index: int
    id: str | None
    name: str = ""
    started: bool = False
    pending: list[str] = attrs.Factory(list)
    has_arguments: bool = False


async def chat_events(
    chunks: AsyncIterator[ChatCompletionChunk], names: WireNames
) -> AsyncIterator[ProviderEvent]:
    """raw's events for a stream of Chat Completions chunks."""
    calls: list[_Call] = []
    by_key: dict[int, _Call] = {}
    finish: str | None = None
    usage: UsageEvent | None = None
    async for chunk in chunks:
        if chunk.usage is not None:
            details = chunk.usage.prompt_tokens_details
            usage = UsageEvent(
                input_tokens=chunk.usage.prompt_tokens or 0,
                output_tokens=chunk.usage.completion_tokens or 0,
                cache_read_tokens=(details.cached_tokens or 0) if details is not None else 0,
            )
        for choice in chunk.choices or ():
            if choice.index:  # raw asks for one choice
                continue
            delta = choice.delta
            if delta is not None:
                if delta.content:
                    yield TextDelta(text=delta.content)
                if delta.refusal:
                    yield TextDelta(text=delta.refusal)
                    finish = finish or "content_filter"
                for fragment in delta.tool_calls or ():
                    key = fragment.index if fragment.index is not None else len(calls)
                    call = by_key.get(key)
                    if call is None or (fragment.id and call.id and fragment.id != call.id):
                        call = _Call(index=len(calls), id=fragment.id)
                        calls.append(call)
                        by_key[key] = call
                    function = fragment.function
                    if call.id is None and fragment.id:
                        call.id = fragment.id
                    if function is not None and function.name and not call.started:
                        call.name += function.name
                    if function is not None and function.arguments:
                        call.pending.append(function.arguments)
                    for event in _advance(call, names):
                        yield event
            if choice.finish_reason:
                finish = choice.finish_reason
    for call in calls:
        if not call.started and not call.name:
            raise ProviderFailed(f"tool call {call.index} arrived without a name")
        for event in _advance(call, names, final=True):
            yield event
        yield ToolCallEnd(index=call.index)
    if finish is None:
        raise ProviderFailed("the response stream ended before the response was complete")
    if usage is not None:
        yield usage
    reason = _FINISH.get(finish, "other")
    if calls and reason == "end_turn":
        reason = "tool_use"  # some servers say "stop" after tool calls
    yield StopEvent(reason=reason)


def _advance(call: _Call, names: WireNames, *, final: bool = False) -> list[ProviderEvent]:
    """Start ``call`` once its name is known; give out the argument text it holds."""
    events: list[ProviderEvent] = []
    if not call.started and call.name:
        call.started = True
        call_id = call.id or f"call_{call.index}"
        events.append(ToolCallStart(index=call.index, id=call_id, name=names.from_wire(call.name)))
    if call.started and call.pending:
        events.extend(ToolCallDelta(index=call.index, arguments=text) for text in call.pending)
        call.has_arguments = True
        call.pending.clear()
    if final and call.started and not call.has_arguments:
        events.append(ToolCallDelta(index=call.index, arguments="{}"))  # a call without arguments
    return events
