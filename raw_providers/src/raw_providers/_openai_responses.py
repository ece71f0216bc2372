"""The Responses API: raw's request as ``input`` items, and its stream events as raw's.

Request: the system prompt as ``instructions``; user messages with ``input_text`` and
``input_image`` (a data URL, for a model with vision); an assistant message as its stored
reasoning items (sent back unchanged, as the API asks of stateless callers), its text, and
one ``function_call`` item per call; a tool result as a ``function_call_output`` whose
output is text, or text and ``input_image`` parts for a model with vision.

Stream: ``response.output_text.delta`` is text; a ``function_call`` output item starts a
call, ``response.function_call_arguments.delta`` carries its arguments, and its
``output_item.done`` ends it; a ``reasoning`` item's ``output_item.done`` (the complete
item, with its encrypted content) becomes a :class:`~raw_core.providers.contract.PartEvent`.
``response.completed`` / ``response.incomplete`` give usage and the stop reason;
``response.failed`` and ``error`` events become raw errors.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Sequence
from typing import Any

from raw_core.config import ModelConfig
from raw_core.errors import ProviderFailed
from raw_core.providers.contract import (
    ModelRequest,
    PartEvent,
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
    ContentBlock,
    ImageBlock,
    ToolResultMessage,
    UserBlock,
    UserMessage,
)
from raw_providers._content import (
    block_text,
    data_url,
    encode_part,
    image_note,
    json_value,
    parts_of,
    request_names,
    result_text,
)
from raw_providers._errors import error_from_body
from raw_providers._names import WireNames

__all__ = ["responses_events", "responses_input", "responses_params"]

_INCOMPLETE: dict[str, StopReason] = {
    "max_output_tokens": "max_tokens",
    "content_filter": "refusal",
}


def _user_content(blocks: Sequence[UserBlock], *, vision: bool) -> list[dict[str, Any]]:
    content: list[dict[str, Any]] = []
    for block in blocks:
        if isinstance(block, ImageBlock):
            if vision:
                content.append(
                    {"type": "input_image", "image_url": data_url(block), "detail": "auto"}
                )
            else:
                content.append({"type": "input_text", "text": image_note(block)})
        else:
            content.append({"type": "input_text", "text": block_text(block) or ""})
    return content


def _tool_output(blocks: Sequence[ContentBlock], *, vision: bool) -> str | list[dict[str, Any]]:
    if not vision or not any(isinstance(b, ImageBlock) for b in blocks):
        return result_text(blocks, vision=vision)
    output: list[dict[str, Any]] = []
    for block in blocks:
        if isinstance(block, ImageBlock):
            output.append({"type": "input_image", "image_url": data_url(block), "detail": "auto"})
        else:
            output.append({"type": "input_text", "text": block_text(block) or ""})
    return output


def responses_input(
    request: ModelRequest, names: WireNames, *, provider: str, vision: bool
) -> list[dict[str, Any]]:
    """The ``input`` items of a Responses API request."""
    items: list[dict[str, Any]] = []
    for message in request.messages:
        if isinstance(message, UserMessage):
            items.append({"role": "user", "content": _user_content(message.content, vision=vision)})
        elif isinstance(message, AssistantMessage):
            if message.text or message.tool_calls:
                # A reasoning item must be followed by the output it led to; a reply cut
                # off while reasoning (max_tokens) has none, and the API refuses it alone.
                items.extend(parts_of(message, provider))
            if message.text:
                items.append({"role": "assistant", "content": message.text})
            items.extend(
                {
                    "type": "function_call",
                    "call_id": call.id,
                    "name": names.to_wire(call.name),
                    "arguments": call.arguments,
                }
                for call in message.tool_calls
            )
        elif isinstance(message, ToolResultMessage):
            items.append(
                {
                    "type": "function_call_output",
                    "call_id": message.tool_call_id,
                    "output": _tool_output(message.content, vision=vision),
                }
            )
    return items


def responses_params(
    request: ModelRequest, model: ModelConfig, *, provider: str, official: bool
) -> dict[str, Any]:
    """Every parameter of the streamed request (``prompt_cache_key`` for OpenAI itself)."""
    names = request_names(request)
    params: dict[str, Any] = {
        "model": model.model,
        "input": responses_input(request, names, provider=provider, vision=model.vision),
        "stream": True,
    }
    if request.system:
        params["instructions"] = request.system
    if request.tools:
        params["tools"] = [
            {
                "type": "function",
                "name": names.to_wire(tool.name),
                "description": tool.description,
                "parameters": json_value(tool.input_schema),
                "strict": False,
            }
            for tool in request.tools
        ]
    if model.max_tokens is not None:
        params["max_output_tokens"] = model.max_tokens
    if model.temperature is not None:
        params["temperature"] = model.temperature
    if official:
        params["prompt_cache_key"] = request.cache_key
    return params


def _usage(response: Any) -> UsageEvent | None:
    usage = getattr(response, "usage", None)
    if usage is None:
        return None
    details = getattr(usage, "input_tokens_details", None)
    cached = getattr(details, "cached_tokens", None) or 0
    written = getattr(details, "cache_write_tokens", None) or 0
    return UsageEvent(
        input_tokens=getattr(usage, "input_tokens", None) or 0,
        output_tokens=getattr(usage, "output_tokens", None) or 0,
        cache_read_tokens=cached,
        cache_write_tokens=written,
    )


def _dump(item: Any) -> dict[str, Any]:
    """An output item as the JSON the service sent (fields it left out stay out)."""
    data: dict[str, Any] = item.model_dump(mode="json", exclude_unset=True, by_alias=True)
    return data


async def responses_events(
    events: AsyncIterator[Any], names: WireNames, *, provider: str
) -> AsyncIterator[ProviderEvent]:
    """raw's events for a stream of Responses API events."""
    calls: dict[str, int] = {}  # output item id (or output index) -> raw's call index
    with_arguments: set[int] = set()
    refused = False
    async for event in events:
        kind = getattr(event, "type", None)
        if kind == "response.output_text.delta":
            if event.delta:
                yield TextDelta(text=event.delta)
        elif kind == "response.refusal.delta":
            refused = True
            if event.delta:
                yield TextDelta(text=event.delta)
        elif kind == "response.output_item.added":
            item = event.item
            if getattr(item, "type", None) == "function_call":
                index = len(calls)
                calls[_item_key(item, event)] = index
                yield ToolCallStart(
                    index=index,
                    id=getattr(item, "call_id", None)
                    or getattr(item, "id", None)
                    or f"call_{index}",
                    name=names.from_wire(item.name),
                )
                if getattr(item, "arguments", None):
                    with_arguments.add(index)
                    yield ToolCallDelta(index=index, arguments=item.arguments)
        elif kind == "response.function_call_arguments.delta":
            index = _call_index(calls, event)
            if event.delta:
                with_arguments.add(index)
                yield ToolCallDelta(index=index, arguments=event.delta)
        elif kind == "response.output_item.done":
            item = event.item
            item_type = getattr(item, "type", None)
            if item_type == "function_call":
                index = _call_index(calls, event, item)
                if index not in with_arguments:
                    yield ToolCallDelta(
                        index=index, arguments=getattr(item, "arguments", "") or "{}"
                    )
                    with_arguments.add(index)
                yield ToolCallEnd(index=index)
            elif item_type == "reasoning":
                yield PartEvent(part=encode_part(provider, _dump(item)))
        elif kind in ("response.completed", "response.incomplete"):
            usage = _usage(event.response)
            if usage is not None:
                yield usage
            yield StopEvent(reason=_stop(event.response, kind, refused, bool(calls)))
            return
        elif kind == "response.failed":
            error = getattr(event.response, "error", None)
            body = _dump(error) if error is not None else {"message": "the response failed"}
            raise error_from_body(body, provider=provider)
        elif kind == "error":
            body = {
                "code": getattr(event, "code", None),
                "message": getattr(event, "message", None),
            }
            raise error_from_body(body, provider=provider)
    raise ProviderFailed("the response stream ended before the response was complete")


def _item_key(item: Any, event: Any) -> str:
    item_id = getattr(item, "id", None)
    return item_id if item_id else f"#{event.output_index}"


def _call_index(calls: dict[str, int], event: Any, item: Any = None) -> int:
    for key in (
        getattr(item, "id", None) if item is not None else getattr(event, "item_id", None),
        f"#{getattr(event, 'output_index', '')}",
    ):
        if key and key in calls:
            return calls[key]
    raise ProviderFailed("arguments arrived for a function call that never started")


def _stop(response: Any, kind: str, refused: bool, has_calls: bool) -> StopReason:
    if kind == "response.incomplete":
        details = getattr(response, "incomplete_details", None)
        return _INCOMPLETE.get(getattr(details, "reason", None) or "", "other")
    if refused:
        return "refusal"
    return "tool_use" if has_calls else "end_turn"
