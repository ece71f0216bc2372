"""What every adapter does alike with raw's messages: text of blocks, images for models
without vision, tool names in history, and the opaque parts of one provider."""

from __future__ import annotations

import json
from collections.abc import Iterator, Mapping, Sequence
from typing import Any

from raw_core.providers.contract import ModelRequest
from raw_core.sessions.messages import (
    AssistantMessage,
    ContentBlock,
    ImageBlock,
    JsonBlock,
    ProviderPart,
    TextBlock,
    UserBlock,
)
from raw_providers._names import WireNames

__all__ = [
    "block_text",
    "client_options",
    "data_url",
    "encode_part",
    "image_note",
    "json_value",
    "parts_of",
    "request_names",
    "result_text",
]


def json_value(value: Any) -> Any:
    """``value`` (a schema, possibly read-only mappings and tuples) as plain dicts and lists,
    which every JSON encoder takes."""
    if isinstance(value, Mapping):
        return {str(key): json_value(item) for key, item in value.items()}
    if isinstance(value, (list, tuple)):
        return [json_value(item) for item in value]
    return value


def image_note(block: ImageBlock) -> str:
    """What a model without vision reads instead of an image."""
    size = len(block.data) * 3 // 4
    amount = f"{size / 1024:.0f} KB" if size >= 1024 else f"{size} bytes"
    return (
        f"[an image ({block.media_type}, {amount}) was left out: this model does not accept images]"
    )


def data_url(block: ImageBlock) -> str:
    """``block`` as a ``data:`` URL."""
    return f"data:{block.media_type};base64,{block.data}"


def block_text(block: ContentBlock | UserBlock) -> str | None:
    """The text form of a non-image block (None for an image)."""
    if isinstance(block, TextBlock):
        return block.text
    if isinstance(block, JsonBlock):
        return block.json_text
    if isinstance(block, ImageBlock):
        return None
    # The loop fills placeholders before a request; one left over names its variable only.
    return f"[the value of variable {block.name} is not available]"


def result_text(blocks: Sequence[ContentBlock], *, vision: bool) -> str:
    """All blocks of a tool result as one text; images become notes (for APIs whose tool
    results carry text only, or for models without vision)."""
    pieces: list[str] = []
    for block in blocks:
        text = block_text(block)
        if text is not None:
            pieces.append(text)
        elif isinstance(block, ImageBlock) and not vision:
            pieces.append(image_note(block))
    return "\n".join(pieces)


def parts_of(message: AssistantMessage, provider: str) -> Iterator[dict[str, Any]]:
    """The opaque parts ``provider`` stored on ``message``, decoded (parts of another
    provider, or not JSON objects, are left out: they mean nothing to this one)."""
    for part in message.provider_parts:
        data = _decode(part, provider)
        if data is not None:
            yield data


def _decode(part: ProviderPart, provider: str) -> dict[str, Any] | None:
    if part.provider != provider:
        return None
    try:
        value = json.loads(part.data)
    except (ValueError, RecursionError):  # a damaged store's data is left out too
        return None
    return value if isinstance(value, dict) else None


def encode_part(provider: str, data: Any) -> ProviderPart:
    """A part holding ``data`` as compact JSON text."""
    return ProviderPart(
        provider=provider, data=json.dumps(data, separators=(",", ":"), ensure_ascii=False)
    )


def request_names(request: ModelRequest) -> WireNames:
    """The wire-name table of ``request``: its tools, then every name in its history."""
    names = [tool.name for tool in request.tools]
    for message in request.messages:
        if isinstance(message, AssistantMessage):
            names.extend(call.name for call in message.tool_calls)
    return WireNames(names)


def client_options(http_client: Any, timeout: float | None) -> dict[str, Any]:
    """The optional keyword arguments both SDK clients take: a transport (tests pass one
    built on ``httpx2.MockTransport``) and a request timeout."""
    options: dict[str, Any] = {}
    if http_client is not None:
        options["http_client"] = http_client
    if timeout is not None:
        options["timeout"] = timeout
    return options
