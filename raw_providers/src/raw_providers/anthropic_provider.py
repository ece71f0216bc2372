"""The ``anthropic`` provider: the Messages API through the official ``anthropic`` SDK.

Request: the system prompt as a text block; tools with their input schemas; user turns
with text and base64 ``image`` blocks (for a model with vision); assistant turns as their
stored thinking blocks (signatures included, sent back unchanged), text and ``tool_use``
blocks; tool results as ``tool_result`` blocks (``is_error`` for error results; images
inside for a model with vision), all results of one step in one user turn. Prompt caching:
``cache_control`` breakpoints on the system prompt, the last tool and the last block of the
last message, so each request reuses the previous one's prefix.

Stream: ``message_start`` (input usage), ``content_block_start`` / ``_delta`` / ``_stop``
(text, ``tool_use`` with ``input_json_delta`` fragments, ``thinking`` with
``thinking_delta`` and ``signature_delta``, ``redacted_thinking``), ``message_delta`` (stop
reason, output usage), ``message_stop``. An ``error`` event (such as ``overloaded_error``)
becomes a raw error through :mod:`raw_providers._errors`.

The credential comes from the model definition only (``ANTHROPIC_API_KEY``, profiles and
``ANTHROPIC_BASE_URL`` are not consulted). ``max_tokens`` is required by the API; 8192 when
the model definition sets none. The SDK's Messages methods no longer take ``temperature``
(current models reject it), so a configured temperature is sent as an extra body field.
"""

from __future__ import annotations

import re
from collections.abc import AsyncIterator, Sequence
from typing import TYPE_CHECKING, Any, Final

import attrs

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
    arguments_object,
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
    client_options,
    encode_part,
    image_note,
    json_value,
    parts_of,
    request_names,
)
from raw_providers._names import WireNames
from raw_providers._requirements import needs_credential
from raw_providers._stream import run_stream

if TYPE_CHECKING:
    from anthropic import AsyncAnthropic

__all__ = [
    "ANTHROPIC_BASE_URL",
    "DEFAULT_MAX_TOKENS",
    "AnthropicProvider",
    "anthropic_events",
    "anthropic_messages",
    "anthropic_params",
    "make_anthropic",
]

ANTHROPIC_BASE_URL: Final = "https://api.anthropic.com"
DEFAULT_MAX_TOKENS: Final = 8192
DEFAULT_MAX_RETRIES: Final = 2
_CACHE: Final = {"type": "ephemeral"}
_THINKING: Final = frozenset({"thinking", "redacted_thinking"})

_STOP: dict[str, StopReason] = {
    "end_turn": "end_turn",
    "stop_sequence": "end_turn",
    "tool_use": "tool_use",
    "max_tokens": "max_tokens",
    "model_context_window_exceeded": "max_tokens",
    "refusal": "refusal",
}


# --- the request ---------------------------------------------------------------------------


def _image(block: ImageBlock, *, vision: bool) -> dict[str, Any]:
    if not vision:
        return {"type": "text", "text": image_note(block)}
    return {
        "type": "image",
        "source": {"type": "base64", "media_type": block.media_type, "data": block.data},
    }


def _blocks(blocks: Sequence[ContentBlock | UserBlock], *, vision: bool) -> list[dict[str, Any]]:
    out: list[dict[str, Any]] = []
    for block in blocks:
        if isinstance(block, ImageBlock):
            out.append(_image(block, vision=vision))
        else:
            text = block_text(block)
            if text:  # the API refuses empty text blocks
                out.append({"type": "text", "text": text})
    return out


class _CallIds:
    """Tool call ids as Anthropic accepts them: ``[A-Za-z0-9_-]+`` and unique in a request.

    A conversation may hold ids another provider made (``call_0`` in every turn, or
    ``functions.read:0``); each is rewritten, deterministically, and a result is mapped to
    the rewritten id of the call it answers, which is the latest call with that id.
    """

    def __init__(self) -> None:
        self._used: set[str] = set()
        self._latest: dict[str, str] = {}
        self._message = 0

    def next_message(self) -> None:
        self._message += 1

    def of(self, original: str) -> str:
        safe = re.sub(r"[^A-Za-z0-9_-]", "_", original)[:60] or "call"
        candidate = safe
        if candidate in self._used:
            candidate = f"{safe}_m{self._message}"
        number = 2
        while candidate in self._used:
            candidate = f"{safe}_m{self._message}_{number}"
            number += 1
        self._used.add(candidate)
        self._latest[original] = candidate
        return candidate

    def answering(self, original: str) -> str:
        return self._latest.get(original) or re.sub(r"[^A-Za-z0-9_-]", "_", original) or "call"


def _arguments(text: str) -> dict[str, Any]:
    """A call's JSON text as the object ``tool_use.input`` needs ({} when the model's
    text was not strict JSON or not an object: the call's result already told it so)."""
    value = arguments_object(text)
    return value if value is not None else {}


def anthropic_messages(
    request: ModelRequest, names: WireNames, *, provider: str, vision: bool
) -> list[dict[str, Any]]:
    """The ``messages`` of a Messages API request (consecutive turns of one role merged)."""
    turns: list[dict[str, Any]] = []

    def add(role: str, content: list[dict[str, Any]]) -> None:
        if not content:
            return
        if turns and turns[-1]["role"] == role:
            turns[-1]["content"].extend(content)
        else:
            turns.append({"role": role, "content": content})

    ids = _CallIds()
    for message in request.messages:
        if isinstance(message, UserMessage):
            add("user", _blocks(message.content, vision=vision))
        elif isinstance(message, AssistantMessage):
            ids.next_message()
            content = list(parts_of(message, provider))
            if message.text:
                content.append({"type": "text", "text": message.text})
            content.extend(
                {
                    "type": "tool_use",
                    "id": ids.of(call.id),
                    "name": names.to_wire(call.name),
                    "input": _arguments(call.arguments),
                }
                for call in message.tool_calls
            )
            add("assistant", content)
        elif isinstance(message, ToolResultMessage):
            result: dict[str, Any] = {
                "type": "tool_result",
                "tool_use_id": ids.answering(message.tool_call_id),
                "content": _blocks(message.content, vision=vision)
                or [{"type": "text", "text": "(empty)"}],
            }
            if message.status == "error":
                result["is_error"] = True
            add("user", [result])
    if turns:
        last = [b for b in turns[-1]["content"] if b.get("type") not in _THINKING]
        if last:
            last[-1]["cache_control"] = dict(_CACHE)
    return turns


def anthropic_params(request: ModelRequest, model: ModelConfig, *, provider: str) -> dict[str, Any]:
    """Every parameter of the streamed request."""
    names = request_names(request)
    params: dict[str, Any] = {
        "model": model.model,
        "max_tokens": model.max_tokens or DEFAULT_MAX_TOKENS,
        "messages": anthropic_messages(request, names, provider=provider, vision=model.vision),
        "stream": True,
    }
    if request.system:
        params["system"] = [{"type": "text", "text": request.system, "cache_control": dict(_CACHE)}]
    if request.tools:
        tools = [
            {
                "name": names.to_wire(tool.name),
                "description": tool.description,
                "input_schema": json_value(tool.input_schema),
            }
            for tool in request.tools
        ]
        tools[-1]["cache_control"] = dict(_CACHE)
        params["tools"] = tools
    if model.temperature is not None:
        params["extra_body"] = {"temperature": model.temperature}
    return params


# --- the stream ----------------------------------------------------------------------------


@attrs.define
class _Block:
    kind: str  # "text", "tool", "thinking" or "part"
    call: int = -1
    has_arguments: bool = False
    data: dict[str, Any] = attrs.Factory(dict)


@attrs.define
class _Usage:
    input: int = 0
    output: int = 0
    cache_read: int = 0
    cache_write: int = 0

    def update(self, usage: Any) -> None:
        for field, attribute in (
            ("input", "input_tokens"),
            ("output", "output_tokens"),
            ("cache_read", "cache_read_input_tokens"),
            ("cache_write", "cache_creation_input_tokens"),
        ):
            value = getattr(usage, attribute, None)
            if isinstance(value, int):
                setattr(self, field, value)

    def event(self) -> UsageEvent:
        # input_tokens counts every input token, cached or not, as OpenAI's do.
        return UsageEvent(
            input_tokens=self.input + self.cache_read + self.cache_write,
            output_tokens=self.output,
            cache_read_tokens=self.cache_read,
            cache_write_tokens=self.cache_write,
        )


async def anthropic_events(
    events: AsyncIterator[Any], names: WireNames, *, provider: str
) -> AsyncIterator[ProviderEvent]:
    """raw's events for a stream of Messages API events."""
    blocks: dict[int, _Block] = {}
    calls = 0
    usage = _Usage()
    stop: str | None = None
    async for event in events:
        kind = getattr(event, "type", None)
        if kind == "message_start":
            usage.update(getattr(event.message, "usage", None))
        elif kind == "content_block_start":
            block = event.content_block
            block_type = getattr(block, "type", None)
            if block_type == "tool_use":
                blocks[event.index] = _Block(kind="tool", call=calls)
                yield ToolCallStart(index=calls, id=block.id, name=names.from_wire(block.name))
                calls += 1
            elif block_type == "thinking":
                data = {
                    "type": "thinking",
                    "thinking": getattr(block, "thinking", "") or "",
                    "signature": getattr(block, "signature", "") or "",
                }
                blocks[event.index] = _Block(kind="thinking", data=data)
            elif block_type == "redacted_thinking":
                data = block.model_dump(mode="json", exclude_unset=True)
                blocks[event.index] = _Block(kind="part", data=data)
            else:
                blocks[event.index] = _Block(kind="text")
                if block_type == "text" and getattr(block, "text", None):
                    yield TextDelta(text=block.text)
        elif kind == "content_block_delta":
            state = blocks.get(event.index)
            if state is None:
                raise ProviderFailed(
                    f"a delta for content block {event.index}, which never started"
                )
            delta = event.delta
            delta_type = getattr(delta, "type", None)
            if delta_type == "text_delta":
                if delta.text:
                    yield TextDelta(text=delta.text)
            elif delta_type == "input_json_delta":
                if delta.partial_json and state.kind == "tool":
                    state.has_arguments = True
                    yield ToolCallDelta(index=state.call, arguments=delta.partial_json)
            elif delta_type == "thinking_delta" and state.kind == "thinking":
                state.data["thinking"] += delta.thinking
            elif delta_type == "signature_delta" and state.kind == "thinking":
                state.data["signature"] += delta.signature
        elif kind == "content_block_stop":
            state = blocks.pop(event.index, None)
            if state is None:
                continue
            if state.kind == "tool":
                if not state.has_arguments:
                    yield ToolCallDelta(index=state.call, arguments="{}")
                yield ToolCallEnd(index=state.call)
            elif state.kind in ("thinking", "part"):
                yield PartEvent(part=encode_part(provider, state.data))
        elif kind == "message_delta":
            stop = getattr(event.delta, "stop_reason", None) or stop
            usage.update(getattr(event, "usage", None))
        elif kind == "message_stop":
            yield usage.event()
            yield StopEvent(reason=_STOP.get(stop or "", "other"))
            return
    raise ProviderFailed("the response stream ended before the response was complete")


# --- the provider --------------------------------------------------------------------------


class AnthropicProvider:
    """A Claude model behind the Anthropic SDK. Build it with :func:`make_anthropic` (or
    directly, e.g. with an ``http_client`` for tests)."""

    def __init__(
        self,
        model: ModelConfig,
        *,
        api_key: str,
        name: str = "anthropic",
        http_client: Any = None,
        max_retries: int = DEFAULT_MAX_RETRIES,
        timeout: float | None = None,
    ) -> None:
        from anthropic import AsyncAnthropic

        self._name = name
        self._model = model
        self._retries = max_retries
        self._secrets = (api_key,)
        options = client_options(http_client, timeout)
        self._client: AsyncAnthropic = AsyncAnthropic(
            api_key=api_key,
            base_url=model.base_url or ANTHROPIC_BASE_URL,
            max_retries=max_retries,
            **options,
        )

    @property
    def name(self) -> str:
        """``anthropic``; also the owner of the thinking blocks it stores."""
        return self._name

    @property
    def model(self) -> ModelConfig:
        """The model definition this provider serves."""
        return self._model

    def __repr__(self) -> str:
        return f"<AnthropicProvider {self._model.model!r}>"

    def stream(self, request: ModelRequest) -> AsyncIterator[ProviderEvent]:
        """Stream one response; closing the iterator early closes the HTTP response."""
        names = request_names(request)
        params = anthropic_params(request, self._model, provider=self._name)
        return run_stream(
            provider=self._name,
            secrets=self._secrets,
            retries=self._retries,
            open_stream=lambda: self._client.messages.create(**params),
            events=lambda stream: anthropic_events(stream, names, provider=self._name),
        )

    async def aclose(self) -> None:
        """Close the HTTP client (its connection pool)."""
        await self._client.close()

    async def __aenter__(self) -> AnthropicProvider:
        return self

    async def __aexit__(self, *exc_info: object) -> None:
        await self.aclose()


def make_anthropic(
    model: ModelConfig, api_key: str | None = None, **options: Any
) -> AnthropicProvider:
    """The ``anthropic`` provider's factory: ``factory(model, api_key=...)``."""
    if not api_key:
        raise needs_credential(model, "anthropic", "ANTHROPIC_API_KEY")
    return AnthropicProvider(model, api_key=api_key, **options)
