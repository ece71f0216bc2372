"""Measuring the model context: how many tokens the next request will hold.

Spec 004: the tool schemas count toward the context, and raw measures them together with the
prompt. raw downloads no tokenizer, so it measures in UTF-8 bytes and converts bytes to tokens
with a rate it learns from the provider:

* **bytes**: a message counts the UTF-8 bytes of its text, its tool calls' names and
  arguments, its results' text and JSON, its opaque provider data, plus
  :data:`MESSAGE_OVERHEAD_BYTES` for its framing; an image counts :data:`IMAGE_BYTES`
  (providers bill an image by its size in pixels, not by its base64 text). The system prompt
  and the tools' JSON schemas count once per request (:func:`fixed_bytes`).
* **the rate**: before any report, :data:`DEFAULT_BYTES_PER_TOKEN` bytes make a token (an
  over-estimate for English prose, close for code and JSON: it errs towards compacting
  early). Each request whose usage reports its input tokens sets the rate to what that
  request measured (reported tokens per byte, kept within :data:`RATE_BOUNDS`).
* **the estimate** of the next request (:meth:`ContextMeter.estimate`) is the input tokens
  the provider reported for the last request, plus the bytes appended since at that rate;
  before the first report, and after a compaction replaced part of the context, it is the
  whole request's bytes at the rate.

The figures are kept per open session, in memory: a resumed session starts from the
estimate and takes the provider's figure again with its first request.
"""

from __future__ import annotations

import json
import math
from collections.abc import Iterable, Sequence
from typing import TYPE_CHECKING, Final

import attrs

from raw_core.providers.contract import ModelTool
from raw_core.sessions.blocks import ImageBlock, JsonBlock, TextBlock, VarPlaceholder
from raw_core.sessions.messages import AssistantMessage, Message, UserMessage

if TYPE_CHECKING:
    from raw_core.config import ModelConfig

__all__ = [
    "DEFAULT_BYTES_PER_TOKEN",
    "IMAGE_BYTES",
    "MESSAGE_OVERHEAD_BYTES",
    "RATE_BOUNDS",
    "ContextLimits",
    "ContextMeter",
    "fixed_bytes",
    "message_bytes",
]

DEFAULT_BYTES_PER_TOKEN: Final = 3.0
MESSAGE_OVERHEAD_BYTES: Final = 16
IMAGE_BYTES: Final = 4_800
"""An image counts as this many bytes: 1,600 tokens at the default rate."""
PLACEHOLDER_BYTES: Final = 256
"""A variable's value, which is filled in only when a request is built, counts this much."""
RATE_BOUNDS: Final = (1 / 16, 1.0)
"""The tokens per byte raw accepts from a report; a rate outside is taken at its bound."""


def _utf8(text: str) -> int:
    return len(text) if text.isascii() else len(text.encode("utf-8", "surrogatepass"))


def _block_bytes(block: object) -> int:
    if isinstance(block, TextBlock):
        return _utf8(block.text)
    if isinstance(block, JsonBlock):
        return _utf8(block.json_text)
    if isinstance(block, ImageBlock):
        return IMAGE_BYTES
    if isinstance(block, VarPlaceholder):
        return PLACEHOLDER_BYTES
    return 0


def message_bytes(message: Message) -> int:
    """The bytes ``message`` counts in a request (see the module's rule)."""
    total = MESSAGE_OVERHEAD_BYTES
    if isinstance(message, AssistantMessage):
        total += _utf8(message.text)
        for call in message.tool_calls:
            total += MESSAGE_OVERHEAD_BYTES + _utf8(call.id) + _utf8(call.name)
            total += _utf8(call.arguments)
        for part in message.provider_parts:
            total += _utf8(part.data)
        return total
    if isinstance(message, UserMessage):
        return total + sum(_block_bytes(b) for b in message.content)
    total += _utf8(message.tool_call_id)
    return total + sum(_block_bytes(b) for b in message.content)


def fixed_bytes(system: str | None, tools: Sequence[ModelTool]) -> int:
    """The bytes every request carries whatever the conversation: the system prompt and the
    tools' names, descriptions and JSON schemas."""
    total = _utf8(system or "")
    for tool in tools:
        schema = json.dumps(tool.input_schema, separators=(",", ":"), ensure_ascii=False)
        total += MESSAGE_OVERHEAD_BYTES + _utf8(tool.name) + _utf8(tool.description)
        total += _utf8(schema)
    return total


@attrs.frozen(kw_only=True)
class ContextLimits:
    """A model's context window (tokens; ``None``: not declared, so raw never compacts on
    its own) and the share of it past which raw compacts before the next request."""

    window: int | None = None
    threshold: float = 0.8

    @classmethod
    def of(cls, model: ModelConfig | None) -> ContextLimits:
        """The limits a model's config declares (none for no model)."""
        if model is None:
            return cls()
        return cls(window=model.context_window, threshold=model.compact_threshold)

    @property
    def budget(self) -> int | None:
        """The most tokens a request may hold before raw compacts first."""
        return None if self.window is None else math.floor(self.window * self.threshold)


class ContextMeter:
    """One session's measure of its model context: the bytes of what the next request
    holds, the input tokens the provider reported for the last request, and the rate that
    turns bytes into tokens."""

    def __init__(self, fixed: int) -> None:
        self.fixed = fixed
        self.bytes = fixed  # the next request: the fixed part and every context message
        self.rate = 1 / DEFAULT_BYTES_PER_TOKEN
        self.reported: int | None = None  # input tokens of the last request, as reported
        self._reported_at = 0  # self.bytes when it was reported

    def reset(self, context: Iterable[Message]) -> None:
        """Measure a whole context again (a session opened, a compaction); the last
        report no longer describes it, the rate stays."""
        self.bytes = self.fixed + sum(message_bytes(m) for m in context)
        self.reported = None

    def add(self, messages: Iterable[Message]) -> None:
        """Count messages appended to the context."""
        for message in messages:
            self.bytes += message_bytes(message)

    def report(self, input_tokens: int) -> None:
        """The provider's figure for the request just sent (what :attr:`bytes` measured
        then); a zero (a provider that reports nothing) is ignored."""
        if input_tokens <= 0:
            return
        low, high = RATE_BOUNDS
        self.rate = min(high, max(low, input_tokens / max(self.bytes, 1)))
        self.reported = input_tokens
        self._reported_at = self.bytes

    def tokens(self, size: int) -> int:
        """``size`` bytes in tokens, at the current rate (rounded up)."""
        return math.ceil(size * self.rate)

    def estimate(self) -> int:
        """The estimated input tokens of the next request."""
        if self.reported is None:
            return self.tokens(self.bytes)
        return self.reported + self.tokens(max(self.bytes - self._reported_at, 0))
