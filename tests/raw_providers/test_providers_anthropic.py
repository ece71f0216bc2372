"""The anthropic provider through the real SDK, served by an httpx2 mock transport speaking
the Messages API's SSE wire format."""

from __future__ import annotations

import base64
import json
from collections.abc import Callable, Sequence
from typing import Any

import anyio
import httpx2
import pytest

from raw_core.config import ModelConfig
from raw_core.errors import (
    AuthFailed,
    ConfigInvalid,
    ContextTooLong,
    ProviderError,
    ProviderFailed,
    ProviderUnavailable,
    RateLimited,
)
from raw_core.providers.contract import (
    ModelRequest,
    ModelTool,
    PartEvent,
    ProviderEvent,
    StopEvent,
    TextDelta,
    ToolCallDelta,
    ToolCallEnd,
    ToolCallStart,
    UsageEvent,
)
from raw_core.sessions.messages import (
    AssistantMessage,
    ImageBlock,
    ProviderPart,
    TextBlock,
    ToolCall,
    ToolResultMessage,
    UserMessage,
)
from raw_providers._names import wire_alias
from raw_providers.anthropic_provider import AnthropicProvider, make_anthropic
from tests.raw_providers.scripted_http import Answer, Body, Service

pytestmark = pytest.mark.anyio

KEY = "sk-ant-test-SECRET-0123456789"
PNG = base64.b64encode(b"\x89PNG\r\n\x1a\n" + b"\0" * 64).decode()
SLASHED = "mcp/github/search_issues"
THINKING = {"type": "thinking", "thinking": "The user wants a file.", "signature": "EqQBCkYsig=="}


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


def sse(events: Sequence[dict[str, Any]]) -> list[bytes]:
    return [f"event: {e['type']}\ndata: {json.dumps(e)}\n\n".encode() for e in events]


def stream_response(events: Sequence[dict[str, Any]], **body: Any) -> httpx2.Response:
    return httpx2.Response(
        200, headers={"content-type": "text/event-stream"}, stream=Body(sse(events), **body)
    )


def start(**usage: int) -> dict[str, Any]:
    return {
        "type": "message_start",
        "message": {
            "id": "msg_1",
            "type": "message",
            "role": "assistant",
            "model": "claude-test",
            "content": [],
            "stop_reason": None,
            "stop_sequence": None,
            "usage": {"input_tokens": 10, "output_tokens": 1, **usage},
        },
    }


def finish(reason: str, output_tokens: int = 5) -> list[dict[str, Any]]:
    return [
        {
            "type": "message_delta",
            "delta": {"stop_reason": reason, "stop_sequence": None},
            "usage": {"output_tokens": output_tokens},
        },
        {"type": "message_stop"},
    ]


def text_reply(text: str = "ok", reason: str = "end_turn") -> list[dict[str, Any]]:
    return [
        start(),
        {"type": "content_block_start", "index": 0, "content_block": {"type": "text", "text": ""}},
        {"type": "content_block_delta", "index": 0, "delta": {"type": "text_delta", "text": text}},
        {"type": "content_block_stop", "index": 0},
        *finish(reason),
    ]


TOOL_STREAM = [
    start(cache_read_input_tokens=200, cache_creation_input_tokens=30),
    {"type": "ping"},
    {
        "type": "content_block_start",
        "index": 0,
        "content_block": {"type": "thinking", "thinking": "", "signature": ""},
    },
    {
        "type": "content_block_delta",
        "index": 0,
        "delta": {"type": "thinking_delta", "thinking": "The user wants "},
    },
    {
        "type": "content_block_delta",
        "index": 0,
        "delta": {"type": "thinking_delta", "thinking": "a file."},
    },
    {
        "type": "content_block_delta",
        "index": 0,
        "delta": {"type": "signature_delta", "signature": "EqQBCkYsig=="},
    },
    {"type": "content_block_stop", "index": 0},
    {"type": "content_block_start", "index": 1, "content_block": {"type": "text", "text": ""}},
    {
        "type": "content_block_delta",
        "index": 1,
        "delta": {"type": "text_delta", "text": "Reading."},
    },
    {"type": "content_block_stop", "index": 1},
    {
        "type": "content_block_start",
        "index": 2,
        "content_block": {"type": "tool_use", "id": "toolu_1", "name": "read_file", "input": {}},
    },
    {
        "type": "content_block_delta",
        "index": 2,
        "delta": {"type": "input_json_delta", "partial_json": ""},
    },
    {
        "type": "content_block_delta",
        "index": 2,
        "delta": {"type": "input_json_delta", "partial_json": '{"path": '},
    },
    {
        "type": "content_block_delta",
        "index": 2,
        "delta": {"type": "input_json_delta", "partial_json": '"a.py"}'},
    },
    {"type": "content_block_stop", "index": 2},
    {
        "type": "content_block_start",
        "index": 3,
        "content_block": {
            "type": "tool_use",
            "id": "toolu_2",
            "name": wire_alias(SLASHED),
            "input": {},
        },
    },
    {"type": "content_block_stop", "index": 3},
    *finish("tool_use", output_tokens=42),
]

TOOLS = (
    ModelTool(
        name="read_file",
        description="Read a file.",
        input_schema={"type": "object", "properties": {"path": {"type": "string"}}},
    ),
    ModelTool(name=SLASHED, description="Search issues.", input_schema={"type": "object"}),
)


def provider(service: Service, *, retries: int = 0, **fields: Any) -> AnthropicProvider:
    client = httpx2.AsyncClient(transport=httpx2.MockTransport(service))
    config = ModelConfig(provider="anthropic", model="claude-test", **fields)
    return AnthropicProvider(config, api_key=KEY, http_client=client, max_retries=retries)


def request(*messages: Any) -> ModelRequest:
    return ModelRequest(
        system="Be brief.",
        tools=TOOLS,
        messages=messages or (UserMessage.from_text("hi"),),
        cache_key="k",
    )


async def collect(source: AnthropicProvider, req: ModelRequest) -> list[ProviderEvent]:
    return [event async for event in source.stream(req)]


async def test_streams_thinking_text_tool_calls_usage_and_stop() -> None:
    events = await collect(provider(Service(stream_response(TOOL_STREAM))), request())
    assert events == [
        PartEvent(
            part=ProviderPart(
                provider="anthropic", data=json.dumps(THINKING, separators=(",", ":"))
            )
        ),
        TextDelta(text="Reading."),
        ToolCallStart(index=0, id="toolu_1", name="read_file"),
        ToolCallDelta(index=0, arguments='{"path": '),
        ToolCallDelta(index=0, arguments='"a.py"}'),
        ToolCallEnd(index=0),
        ToolCallStart(index=1, id="toolu_2", name=SLASHED),
        ToolCallDelta(index=1, arguments="{}"),
        ToolCallEnd(index=1),
        UsageEvent(
            input_tokens=240, output_tokens=42, cache_read_tokens=200, cache_write_tokens=30
        ),
        StopEvent(reason="tool_use"),
    ]


async def test_request_body_has_tools_aliases_cache_breakpoints_and_settings() -> None:
    service = Service(stream_response(text_reply()))
    await collect(provider(service, max_tokens=300, temperature=0.5), request())
    body = service.body()
    request_sent = service.requests[0]
    assert str(request_sent.url) == "https://api.anthropic.com/v1/messages"
    credential = request_sent.headers.get("x-api-key") or request_sent.headers["authorization"]
    assert KEY in credential
    assert body["model"] == "claude-test"
    assert body["max_tokens"] == 300
    assert body["temperature"] == 0.5
    assert body["stream"] is True
    assert body["system"] == [
        {"type": "text", "text": "Be brief.", "cache_control": {"type": "ephemeral"}}
    ]
    assert [t["name"] for t in body["tools"]] == ["read_file", wire_alias(SLASHED)]
    assert "cache_control" not in body["tools"][0]
    assert body["tools"][1]["cache_control"] == {"type": "ephemeral"}
    assert body["messages"] == [
        {
            "role": "user",
            "content": [{"type": "text", "text": "hi", "cache_control": {"type": "ephemeral"}}],
        }
    ]


async def test_default_max_tokens_and_no_temperature() -> None:
    service = Service(stream_response(text_reply()))
    await collect(provider(service), request())
    assert service.body()["max_tokens"] == 8192
    assert "temperature" not in service.body()


async def test_history_sends_thinking_back_unchanged_aliases_and_merged_results() -> None:
    thinking = ProviderPart(provider="anthropic", data=json.dumps(THINKING))
    foreign = ProviderPart(provider="openai", data=json.dumps({"type": "reasoning", "id": "rs"}))
    history = (
        UserMessage.from_text("go"),
        AssistantMessage(
            text="Reading.",
            tool_calls=(
                ToolCall(id="toolu_1", name="read_file", arguments='{"path": "a.py"}'),
                ToolCall(id="toolu_2", name=SLASHED, arguments="not json"),
            ),
            provider_parts=(thinking, foreign),
        ),
        ToolResultMessage(tool_call_id="toolu_1", status="ok", content=(TextBlock(text="x = 1"),)),
        ToolResultMessage(
            tool_call_id="toolu_2",
            status="error",
            error_code="invalid_arguments",
            content=(TextBlock(text="error [invalid_arguments]: not JSON"),),
        ),
    )
    service = Service(stream_response(text_reply()))
    await collect(provider(service), request(*history))
    messages = service.body()["messages"]
    assert [m["role"] for m in messages] == ["user", "assistant", "user"]
    assert messages[1]["content"] == [
        THINKING,
        {"type": "text", "text": "Reading."},
        {"type": "tool_use", "id": "toolu_1", "name": "read_file", "input": {"path": "a.py"}},
        {"type": "tool_use", "id": "toolu_2", "name": wire_alias(SLASHED), "input": {}},
    ]
    assert messages[2]["content"] == [
        {
            "type": "tool_result",
            "tool_use_id": "toolu_1",
            "content": [{"type": "text", "text": "x = 1"}],
        },
        {
            "type": "tool_result",
            "tool_use_id": "toolu_2",
            "content": [{"type": "text", "text": "error [invalid_arguments]: not JSON"}],
            "is_error": True,
            "cache_control": {"type": "ephemeral"},
        },
    ]


HOSTILE_ARGUMENTS = [
    "[" * 100_000 + "]" * 100_000,
    '{"a": NaN}',
    '{"a": 1e999}',
    '{"a": ' + "1" * 5000 + "}",
    '{"a": 1, "a": 2}',
    '{"a": 1} x',
    "[1]",
]


async def test_history_sends_arguments_dispatch_refused_as_an_empty_object() -> None:
    calls = tuple(
        ToolCall(id=f"toolu_{i}", name="read_file", arguments=text)
        for i, text in enumerate(HOSTILE_ARGUMENTS)
    )
    results = tuple(
        ToolResultMessage(
            tool_call_id=call.id,
            status="error",
            error_code="invalid_arguments",
            content=(TextBlock(text="error [invalid_arguments]: not strict JSON"),),
        )
        for call in calls
    )
    damaged = ProviderPart(provider="anthropic", data="[" * 100_000)  # left out, as not JSON
    history = (
        UserMessage.from_text("go"),
        AssistantMessage(tool_calls=calls, provider_parts=(damaged,)),
        *results,
    )
    service = Service(stream_response(text_reply()))
    await collect(provider(service), request(*history))
    sent = service.body()["messages"][1]["content"]
    assert [block["input"] for block in sent] == [{}] * len(HOSTILE_ARGUMENTS)


async def test_images_for_a_vision_model_and_notes_otherwise() -> None:
    image = ImageBlock(media_type="image/png", data=PNG)
    history = (
        UserMessage(content=(TextBlock(text="see"), image)),
        AssistantMessage(tool_calls=(ToolCall(id="t1", name="read_file", arguments="{}"),)),
        ToolResultMessage(tool_call_id="t1", status="ok", content=(image,)),
    )
    service = Service(stream_response(text_reply()), stream_response(text_reply()))
    await collect(provider(service, vision=True), request(*history))
    messages = service.body()["messages"]
    source = {"type": "base64", "media_type": "image/png", "data": PNG}
    assert messages[0]["content"][1] == {"type": "image", "source": source}
    assert messages[2]["content"][0]["content"] == [{"type": "image", "source": source}]
    await collect(provider(service), request(*history))
    blind = service.body()["messages"]
    assert PNG not in json.dumps(blind)
    assert "does not accept images" in blind[0]["content"][1]["text"]
    assert "does not accept images" in blind[2]["content"][0]["content"][0]["text"]


@pytest.mark.parametrize(
    ("reason", "expected"),
    [
        ("end_turn", "end_turn"),
        ("stop_sequence", "end_turn"),
        ("max_tokens", "max_tokens"),
        ("refusal", "refusal"),
        ("pause_turn", "other"),
    ],
)
async def test_stop_reasons(reason: str, expected: str) -> None:
    events = await collect(provider(Service(stream_response(text_reply(reason=reason)))), request())
    assert events[-1] == StopEvent(reason=expected)  # type: ignore[arg-type]


def _error(
    status: int, kind: str, message: str, headers: dict[str, str] | None = None
) -> httpx2.Response:
    body = {"type": "error", "error": {"type": kind, "message": message}}
    return httpx2.Response(status, json=body, headers=headers or {})


def _connection_error(request: httpx2.Request) -> httpx2.Response:
    raise httpx2.ConnectError("connection refused", request=request)


@pytest.mark.parametrize(
    ("answer", "error", "status"),
    [
        (lambda: _error(401, "authentication_error", f"invalid x-api-key {KEY}"), AuthFailed, 401),
        (lambda: _error(403, "permission_error", "not allowed"), AuthFailed, 403),
        (
            lambda: _error(429, "rate_limit_error", "slow down", {"retry-after": "3"}),
            RateLimited,
            429,
        ),
        (
            lambda: _error(
                400, "invalid_request_error", "prompt is too long: 210000 tokens > 200000 maximum"
            ),
            ContextTooLong,
            400,
        ),
        (lambda: _error(500, "api_error", "internal"), ProviderUnavailable, 500),
        (lambda: _error(529, "overloaded_error", "Overloaded"), ProviderUnavailable, 529),
        (lambda: _error(400, "invalid_request_error", "tools.0.name: bad"), ProviderFailed, 400),
        (lambda: _connection_error, ProviderUnavailable, None),
    ],
    ids=["401", "403", "429", "400-context", "500", "529", "400-other", "connect"],
)
async def test_every_error_is_mapped(
    answer: Callable[[], Answer], error: type[ProviderError], status: int | None
) -> None:
    source = provider(Service(answer()))
    with pytest.raises(error) as caught:
        await collect(source, request())
    raised = caught.value
    assert raised.context.get("status") == status
    assert raised.context["provider"] == "anthropic"
    text = f"{raised} {raised.to_dict()} {source!r}"
    assert KEY not in text
    assert "SECRET" not in text
    if error is RateLimited:
        assert raised.context["retry_after"] == 3.0


async def test_an_error_event_inside_the_stream() -> None:
    events = [
        start(),
        {"type": "error", "error": {"type": "overloaded_error", "message": "Overloaded"}},
    ]
    with pytest.raises(ProviderUnavailable) as caught:
        await collect(provider(Service(stream_response(events))), request())
    assert caught.value.context["error_type"] == "overloaded_error"


async def test_an_overloaded_stream_before_any_event_is_tried_again() -> None:
    events = [start(), {"type": "error", "error": {"type": "overloaded_error", "message": "busy"}}]
    service = Service(stream_response(events), stream_response(text_reply("fine")))
    out = await collect(provider(service, retries=1), request())
    assert TextDelta(text="fine") in out
    assert len(service.requests) == 2


async def test_a_429_then_success_is_retried_by_the_sdk() -> None:
    service = Service(
        _error(429, "rate_limit_error", "slow", {"retry-after-ms": "10"}),
        stream_response(text_reply("hello")),
    )
    out = await collect(provider(service, retries=2), request())
    assert TextDelta(text="hello") in out
    assert len(service.requests) == 2


async def test_a_truncated_stream_is_provider_error() -> None:
    with pytest.raises(ProviderFailed, match="ended before"):
        await collect(provider(Service(stream_response(text_reply()[:-2]))), request())


async def test_a_dropped_connection_mid_stream_is_unavailable() -> None:
    response = stream_response(text_reply()[:3], fail=httpx2.ReadError("reset"))
    with pytest.raises(ProviderUnavailable):
        await collect(provider(Service(response), retries=0), request())


async def test_closing_the_iterator_closes_the_http_response() -> None:
    body = Body(sse(text_reply()[:3]), hang=True)
    service = Service(
        httpx2.Response(200, headers={"content-type": "text/event-stream"}, stream=body)
    )
    stream = provider(service).stream(request())
    with anyio.fail_after(60):  # a bound on a hang, not a speed
        assert await stream.__anext__() == TextDelta(text="ok")
        await stream.aclose()  # type: ignore[attr-defined]
    assert body.closed


def test_the_factory_needs_a_credential_and_hides_it() -> None:
    config = ModelConfig(provider="anthropic", model="claude-test")
    with pytest.raises(ConfigInvalid, match="needs a credential"):
        make_anthropic(config, None)
    made = make_anthropic(config, KEY)
    assert KEY not in repr(made)
    assert made.name == "anthropic"
