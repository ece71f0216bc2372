"""The provider protocol: what the agent loop sends a model and the one stream it reads back.

A :class:`ModelRequest` holds only what spec 004 ("What the model receives") allows: the
system prompt, the selected tools' schemas and the conversation. Nothing of the config,
logs, approval text or usage counters. A provider answers with an async iterator of
:data:`ProviderEvent`: text deltas, tool calls (start, argument fragments, end), usage,
opaque provider parts, one stop reason. A failed request raises a
:class:`~raw_core.errors.ProviderError` (``auth_failed``, ``rate_limited``,
``context_too_long``, ``provider_unavailable``, ``provider_error``) from the iterator; the
loop ends the turn with its code. This module imports no SDK; adapters
live in plug-ins (``raw_register_providers``), and :mod:`raw_core.providers.scripted` ships two
providers that need no network.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import AsyncIterator, Callable, Mapping, Sequence
from typing import TYPE_CHECKING, Any, Literal, Protocol

import attrs

from raw_core._json import JsonInputError, loads_strict
from raw_core.sessions.blocks import clean_text
from raw_core.sessions.messages import Message, ProviderPart

if TYPE_CHECKING:
    from raw_core.config import ModelConfig

__all__ = [
    "ModelCheck",
    "ModelRequest",
    "ModelTool",
    "PartEvent",
    "Provider",
    "ProviderEvent",
    "ProviderFactory",
    "ProviderRecord",
    "StopEvent",
    "TextDelta",
    "ToolCallDelta",
    "ToolCallEnd",
    "ToolCallStart",
    "UsageEvent",
    "arguments_object",
    "prompt_cache_key",
]

StopReason = Literal["end_turn", "tool_use", "max_tokens", "refusal", "other"]


@attrs.frozen(kw_only=True)
class ModelTool:
    """One tool as the model sees it: name, description, input schema. Never the identity.
    A lone surrogate in the description (a manifest may escape one, a plug-in or an MCP
    server may send one) reads as U+FFFD, so the request can be encoded."""

    name: str
    description: str = attrs.field(converter=clean_text)
    input_schema: Mapping[str, Any]


@attrs.frozen(kw_only=True)
class ModelRequest:
    """One inference request. ``cache_key`` is a hash of the system prompt and the tools
    (see :func:`prompt_cache_key`), for providers that take a prompt-cache key."""

    system: str | None = attrs.field(converter=attrs.converters.optional(clean_text))
    tools: tuple[ModelTool, ...]
    messages: tuple[Message, ...]
    cache_key: str


# --- the event stream ------------------------------------------------------------------


@attrs.frozen(kw_only=True)
class TextDelta:
    """A fragment of the assistant's text, as it arrives.

    The same record is both a provider's stream event and the agent loop's event: the
    loop hands it on to front ends unchanged (JSON type ``text_delta``)."""

    text: str

    def to_dict(self) -> dict[str, Any]:
        """``{"type": "text_delta", "text": ...}``."""
        return {"type": "text_delta", "text": self.text}


@attrs.frozen(kw_only=True)
class ToolCallStart:
    """The model starts tool call number ``index`` (0, 1, ...) with its id and name."""

    index: int
    id: str
    name: str


@attrs.frozen(kw_only=True)
class ToolCallDelta:
    """A fragment of the JSON text of call ``index``'s arguments."""

    index: int
    arguments: str


@attrs.frozen(kw_only=True)
class ToolCallEnd:
    """Call ``index`` is complete."""

    index: int


@attrs.frozen(kw_only=True)
class UsageEvent:
    """Token counts of this request, as the provider reports them."""

    input_tokens: int = 0
    output_tokens: int = 0
    cache_read_tokens: int = 0
    cache_write_tokens: int = 0


@attrs.frozen(kw_only=True)
class PartEvent:
    """Data the provider needs back unchanged in later requests (a reasoning item, a
    thinking signature); stored opaque beside the assistant message."""

    part: ProviderPart


@attrs.frozen(kw_only=True)
class StopEvent:
    """The response is complete; why it stopped."""

    reason: StopReason


ProviderEvent = (
    TextDelta | ToolCallStart | ToolCallDelta | ToolCallEnd | UsageEvent | PartEvent | StopEvent
)


class Provider(Protocol):
    """A model. ``stream`` returns the events of one response; closing the iterator early
    (``aclose``) must cancel the request."""

    @property
    def name(self) -> str: ...

    def stream(self, request: ModelRequest) -> AsyncIterator[ProviderEvent]: ...


class ProviderFactory(Protocol):
    """What makes a provider: called as ``factory(model, api_key=...)`` with the model's
    :class:`~raw_core.config.ModelConfig` and its resolved credential (None when the model
    names none).

    :func:`raw_core.runtime.models.make_provider` passes its extra keyword ``options`` on as well;
    a factory that takes them declares ``**options`` (any plain function with this
    signature, with or without them, is a factory).
    """

    def __call__(self, model: ModelConfig, /, *, api_key: str | None) -> Provider: ...


ModelCheck = Callable[["ModelConfig"], None]
"""Checks a model's config as its provider would refuse it, before any credential is read:
raises ``config_invalid`` (a model that names no ``api_key`` where the provider needs one,
say), else returns None."""


@attrs.frozen(kw_only=True)
class ProviderRecord:
    """What ``raw_register_providers`` returns: a provider name and its factory, and
    optionally ``check``, the part of the factory's refusals that reads the model's config
    alone (no credential, no network): ``raw config validate`` reports what it raises, as a
    turn would. A factory should refuse through the same check, so both say the same."""

    name: str
    factory: ProviderFactory
    check: ModelCheck | None = None


def prompt_cache_key(system: str | None, tools: Sequence[ModelTool]) -> str:
    """A hash of the system prompt and the model-facing tool definitions: it changes only
    when they change (design.md, "Decisions"). Any string hashes, lone surrogates
    included."""
    canonical = json.dumps(
        {"system": system, "tools": [[t.name, t.description, t.input_schema] for t in tools]},
        sort_keys=True,
        separators=(",", ":"),
        ensure_ascii=False,
    )
    return hashlib.sha256(canonical.encode("utf-8", "surrogatepass")).hexdigest()[:32]


def arguments_object(text: str) -> dict[str, Any] | None:
    """A past call's arguments as the object the dispatcher read from ``text``, or None when
    it refused them (not strict JSON, or not an object), for a service that takes a call's
    arguments back as an object rather than as text. Raises nothing, whatever the text."""
    try:
        value = loads_strict(text)
    except JsonInputError:
        return None
    return value if isinstance(value, dict) else None
