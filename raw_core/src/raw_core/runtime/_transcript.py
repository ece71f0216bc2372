"""The turn's transcript records: the assistant message as it streams, the result
messages a call's result and an interruption become, and the digests that tell when a
session's tools changed. Pure functions and one mutable draft; no I/O."""

from __future__ import annotations

import hashlib
import json
from collections.abc import Callable, Sequence
from typing import Any

import attrs

from raw_core.errors import ProviderFailed
from raw_core.providers.contract import (
    ModelTool,
    PartEvent,
    StopEvent,
    TextDelta,
    ToolCallDelta,
    ToolCallEnd,
    ToolCallStart,
    UsageEvent,
)
from raw_core.runtime.events import LoopEvent, Usage
from raw_core.sessions.backend import PendingRequest
from raw_core.sessions.messages import (
    AssistantMessage,
    Message,
    ProviderPart,
    TextBlock,
    ToolCall,
    ToolResultMessage,
    VarPlaceholder,
)
from raw_core.tools.results import ToolResult

__all__ = [
    "INTERRUPTED",
    "Draft",
    "error_message",
    "has_placeholder",
    "interrupted_text",
    "result_message",
    "tool_digest",
]

INTERRUPTED = (
    "raw stopped before this call finished (the process ended during the turn);"
    " it may or may not have run"
)


def interrupted_text(request: PendingRequest) -> str:
    """What a call reads that waited for a request when raw stopped."""
    what = "the user's answer" if request.kind == "interaction" else "approval"
    return (
        f"raw stopped while this call waited for {what}: the request {request.id} was"
        " interrupted, so the call was cancelled"
        + (" before it ran" if request.kind == "approval" else " before it finished")
    )


def result_message(call_id: str, result: ToolResult) -> ToolResultMessage:
    return ToolResultMessage(
        tool_call_id=call_id,
        status=result.status,
        error_code=result.code if result.is_error else None,
        content=result.content,
    )


def error_message(call_id: str, code: str, text: str) -> ToolResultMessage:
    return ToolResultMessage(
        tool_call_id=call_id,
        status="error",
        error_code=code,
        content=(TextBlock(text=f"error [{code}]: {text}"),),
    )


def has_placeholder(messages: Sequence[Message]) -> bool:
    return any(
        isinstance(m, ToolResultMessage) and any(isinstance(b, VarPlaceholder) for b in m.content)
        for m in messages
    )


def tool_digest(tool: ModelTool) -> str:
    text = json.dumps([tool.description, tool.input_schema], sort_keys=True)
    return hashlib.sha256(text.encode("utf-8")).hexdigest()[:16]


@attrs.define
class Draft:
    """The assistant message being streamed; committed only when the stream completes."""

    text: list[str] = attrs.Factory(list)
    calls: dict[int, list[Any]] = attrs.Factory(dict)  # index -> [id, name, [args], ended]
    parts: list[ProviderPart] = attrs.Factory(list)
    stop: str | None = None
    usage: UsageEvent | None = None  # the last one the provider reported
    estimate: int | None = None  # raw's estimate of the request's input tokens
    window: int | None = None  # the model's declared context window

    def message(self, step: int) -> AssistantMessage:
        if self.stop is None:
            raise ProviderFailed("the response stream ended without a stop reason")
        calls = []
        taken: set[str] = set()
        for index in sorted(self.calls):
            call_id, name, pieces, ended = self.calls[index]
            if not ended:
                raise ProviderFailed(f"tool call {index} ({name}) never ended")
            # Each call's result is paired with it by id, in the history and in the next
            # request (which providers refuse with two calls of one id): a missing or
            # repeated id gets one of raw's own.
            if not call_id or call_id in taken:
                call_id = f"call_{step}_{index}"
                while call_id in taken:
                    call_id += "_"
            taken.add(call_id)
            calls.append(ToolCall(id=call_id, name=name, arguments="".join(pieces)))
        return AssistantMessage(
            text="".join(self.text), tool_calls=tuple(calls), provider_parts=tuple(self.parts)
        )

    def take(
        self, event: Any, step: int, emit: Callable[[LoopEvent], None], listening: bool
    ) -> None:
        """Add one provider event to the draft; text and usage are also given to ``emit``
        (when someone listens). A malformed stream is ``provider_error``."""
        draft = self
        if isinstance(event, TextDelta):
            draft.text.append(event.text)
            if listening:
                emit(event)
        elif isinstance(event, ToolCallStart):
            draft.calls[event.index] = [event.id, event.name, [], False]
        elif isinstance(event, ToolCallDelta):
            if event.index not in draft.calls:
                raise ProviderFailed(f"arguments for tool call {event.index}, which never started")
            draft.calls[event.index][2].append(event.arguments)
        elif isinstance(event, ToolCallEnd):
            if event.index not in draft.calls:
                raise ProviderFailed(f"tool call {event.index} ended but never started")
            draft.calls[event.index][3] = True
        elif isinstance(event, PartEvent):
            draft.parts.append(event.part)
        elif isinstance(event, UsageEvent):
            draft.usage = event
            if listening:
                emit(
                    Usage(
                        input_tokens=event.input_tokens,
                        output_tokens=event.output_tokens,
                        cache_read_tokens=event.cache_read_tokens,
                        cache_write_tokens=event.cache_write_tokens,
                        step=step,
                        estimated_input_tokens=self.estimate,
                        context_window=self.window,
                    )
                )
        elif isinstance(event, StopEvent):
            draft.stop = event.reason
        else:
            raise ProviderFailed(f"unknown provider event {type(event).__name__}")
