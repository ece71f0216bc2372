"""The openai provider through the real SDK, served by an httpx2 mock transport.

Each test answers the SDK's HTTP request with the wire format the service sends (Chat
Completions chunks, Responses API events) and checks raw's events, and what the SDK put in
the request body.
"""

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
    JsonBlock,
    ProviderPart,
    TextBlock,
    ToolCall,
    ToolResultMessage,
    UserMessage,
)
from raw_providers._names import wire_alias
from raw_providers.openai_provider import OpenAIProvider, make_openai, make_openai_compatible
from tests.raw_providers.scripted_http import Answer, Body, Service

pytestmark = pytest.mark.anyio

KEY = "sk-test-SECRET-0123456789abcdef"
PNG = base64.b64encode(b"\x89PNG\r\n\x1a\n" + b"\0" * 64).decode()
SLASHED = "mcp/github/search_issues"


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


def sse(events: Sequence[dict[str, Any] | str], *, named: bool = False) -> list[bytes]:
    frames = []
    for event in events:
        if isinstance(event, str):
            frames.append(f"data: {event}\n\n".encode())
        else:
            head = f"event: {event['type']}\n" if named else ""
            frames.append(f"{head}data: {json.dumps(event)}\n\n".encode())
    return frames


def stream_response(frames: list[bytes], **body: Any) -> httpx2.Response:
    return httpx2.Response(
        200, headers={"content-type": "text/event-stream"}, stream=Body(frames, **body)
    )


def error_response(
    status: int, body: Any, headers: dict[str, str] | None = None
) -> httpx2.Response:
    return httpx2.Response(status, json=body, headers=headers or {})


def model(api: str = "chat", **fields: Any) -> ModelConfig:
    return ModelConfig(provider="openai", model="gpt-test", api=api, **fields)  # type: ignore[arg-type]


def provider(
    service: Service, *, api: str = "chat", retries: int = 0, **fields: Any
) -> OpenAIProvider:
    client = httpx2.AsyncClient(transport=httpx2.MockTransport(service))
    return OpenAIProvider(
        model(api, **fields), api_key=KEY, http_client=client, max_retries=retries
    )


TOOLS = (
    ModelTool(
        name="read_file",
        description="Read a file.",
        input_schema={"type": "object", "properties": {"path": {"type": "string"}}},
    ),
    ModelTool(
        name=SLASHED,
        description="Search issues.",
        input_schema={"type": "object", "properties": {"q": {"type": "string"}}},
    ),
)


def request(*messages: Any, tools: tuple[ModelTool, ...] = TOOLS) -> ModelRequest:
    return ModelRequest(
        system="Be brief.",
        tools=tools,
        messages=messages or (UserMessage.from_text("hi"),),
        cache_key="cache-key-1",
    )


async def collect(source: OpenAIProvider, req: ModelRequest) -> list[ProviderEvent]:
    return [event async for event in source.stream(req)]


# --- Chat Completions ------------------------------------------------------------------


def chunk(
    delta: dict[str, Any] | None = None, finish: str | None = None, **extra: Any
) -> dict[str, Any]:
    choices = [] if delta is None else [{"index": 0, "delta": delta, "finish_reason": finish}]
    return {
        "id": "chatcmpl-1",
        "object": "chat.completion.chunk",
        "created": 1,
        "model": "gpt-test",
        "choices": choices,
        **extra,
    }


CHAT_TOOL_STREAM: list[dict[str, Any] | str] = [
    chunk({"role": "assistant", "content": ""}),
    chunk({"content": "Let me "}),
    chunk({"content": "look."}),
    chunk(
        {
            "tool_calls": [
                {
                    "index": 0,
                    "id": "call_a",
                    "type": "function",
                    "function": {"name": "read_file", "arguments": ""},
                }
            ]
        }
    ),
    chunk({"tool_calls": [{"index": 0, "function": {"arguments": '{"pa'}}]}),
    chunk({"tool_calls": [{"index": 0, "function": {"arguments": 'th": "a.py"}'}}]}),
    chunk(
        {
            "tool_calls": [
                {
                    "index": 1,
                    "id": "call_b",
                    "type": "function",
                    "function": {"name": wire_alias(SLASHED), "arguments": '{"q":'},
                }
            ]
        }
    ),
    chunk({"tool_calls": [{"index": 1, "function": {"arguments": ' "bug"}'}}]}),
    chunk({}, finish="tool_calls"),
    chunk(
        None,
        usage={
            "prompt_tokens": 120,
            "completion_tokens": 30,
            "total_tokens": 150,
            "prompt_tokens_details": {"cached_tokens": 100},
        },
    ),
    "[DONE]",
]


async def test_chat_streams_text_tool_calls_in_fragments_usage_and_stop() -> None:
    service = Service(stream_response(sse(CHAT_TOOL_STREAM)))
    events = await collect(provider(service), request())
    assert events == [
        TextDelta(text="Let me "),
        TextDelta(text="look."),
        ToolCallStart(index=0, id="call_a", name="read_file"),
        ToolCallDelta(index=0, arguments='{"pa'),
        ToolCallDelta(index=0, arguments='th": "a.py"}'),
        ToolCallStart(index=1, id="call_b", name=SLASHED),
        ToolCallDelta(index=1, arguments='{"q":'),
        ToolCallDelta(index=1, arguments=' "bug"}'),
        ToolCallEnd(index=0),
        ToolCallEnd(index=1),
        UsageEvent(input_tokens=120, output_tokens=30, cache_read_tokens=100),
        StopEvent(reason="tool_use"),
    ]


async def test_chat_request_carries_tools_in_order_aliases_cache_key_and_settings() -> None:
    service = Service(stream_response(sse([chunk({"content": "ok"}, finish="stop"), "[DONE]"])))
    source = provider(service, max_tokens=512, temperature=0.2)
    await collect(source, request())
    body = service.body()
    assert body["model"] == "gpt-test"
    assert body["stream"] is True
    assert body["stream_options"] == {"include_usage": True}
    assert body["prompt_cache_key"] == "cache-key-1"
    assert body["max_completion_tokens"] == 512
    assert body["temperature"] == 0.2
    assert [t["function"]["name"] for t in body["tools"]] == ["read_file", wire_alias(SLASHED)]
    assert body["tools"][1]["function"]["parameters"] == dict(TOOLS[1].input_schema)
    assert body["messages"][0] == {"role": "system", "content": "Be brief."}
    assert body["messages"][1] == {"role": "user", "content": "hi"}
    headers = service.requests[-1].headers
    assert headers["authorization"] == f"Bearer {KEY}"
    assert str(service.requests[-1].url) == "https://api.openai.com/v1/chat/completions"


async def test_chat_history_maps_aliases_back_onto_the_wire_and_results_in_order() -> None:
    history = (
        UserMessage.from_text("find bugs"),
        AssistantMessage(
            text="Searching.",
            tool_calls=(
                ToolCall(id="call_1", name=SLASHED, arguments='{"q": "bug"}'),
                ToolCall(id="call_2", name="mcp/gone/tool", arguments="{}"),
            ),
        ),
        ToolResultMessage(
            tool_call_id="call_1", status="ok", content=(JsonBlock(json_text="[1]"),)
        ),
        ToolResultMessage(
            tool_call_id="call_2",
            status="error",
            error_code="tool_unknown",
            content=(TextBlock(text="error [tool_unknown]: no such tool"),),
        ),
    )
    service = Service(stream_response(sse([chunk({"content": "ok"}, finish="stop"), "[DONE]"])))
    await collect(provider(service), request(*history))
    messages = service.body()["messages"]
    assert messages[2]["tool_calls"] == [
        {
            "id": "call_1",
            "type": "function",
            "function": {"name": wire_alias(SLASHED), "arguments": '{"q": "bug"}'},
        },
        {
            "id": "call_2",
            "type": "function",
            "function": {"name": wire_alias("mcp/gone/tool"), "arguments": "{}"},
        },
    ]
    assert messages[3] == {"role": "tool", "tool_call_id": "call_1", "content": "[1]"}
    assert messages[4]["content"] == "error [tool_unknown]: no such tool"
    assert "/" not in json.dumps([t["function"]["name"] for t in service.body()["tools"]])


async def test_chat_images_for_a_vision_model() -> None:
    history = (
        UserMessage(
            content=(TextBlock(text="what is this?"), ImageBlock(media_type="image/png", data=PNG))
        ),
        AssistantMessage(tool_calls=(ToolCall(id="c1", name="read_file", arguments="{}"),)),
        ToolResultMessage(
            tool_call_id="c1",
            status="ok",
            content=(TextBlock(text="a picture"), ImageBlock(media_type="image/png", data=PNG)),
        ),
    )
    service = Service(stream_response(sse([chunk({"content": "ok"}, finish="stop"), "[DONE]"])))
    await collect(provider(service, vision=True), request(*history))
    messages = service.body()["messages"]
    assert messages[1]["content"] == [
        {"type": "text", "text": "what is this?"},
        {"type": "image_url", "image_url": {"url": f"data:image/png;base64,{PNG}"}},
    ]
    assert messages[3] == {
        "role": "tool",
        "tool_call_id": "c1",
        "content": "a picture\n[image 1: in the user message after the tool results]",
    }
    assert messages[4] == {  # images of tool results follow the results, each labelled
        "role": "user",
        "content": [
            {
                "type": "text",
                "text": "The images the tool calls above returned, each after its label:",
            },
            {"type": "text", "text": "image 1 (tool call c1):"},
            {"type": "image_url", "image_url": {"url": f"data:image/png;base64,{PNG}"}},
        ],
    }


async def test_chat_images_become_a_note_for_a_model_without_vision() -> None:
    history = (
        UserMessage(content=(TextBlock(text="look"), ImageBlock(media_type="image/png", data=PNG))),
    )
    service = Service(stream_response(sse([chunk({"content": "ok"}, finish="stop"), "[DONE]"])))
    await collect(provider(service), request(*history))
    content = service.body()["messages"][1]["content"]
    assert isinstance(content, str)
    assert "look" in content
    assert "image/png" in content
    assert "does not accept images" in content
    assert PNG not in json.dumps(service.body())


@pytest.mark.parametrize(
    ("finish", "reason"),
    [
        ("stop", "end_turn"),
        ("length", "max_tokens"),
        ("content_filter", "refusal"),
        ("something_new", "other"),
    ],
)
async def test_chat_stop_reasons(finish: str, reason: str) -> None:
    service = Service(stream_response(sse([chunk({"content": "x"}, finish=finish), "[DONE]"])))
    events = await collect(provider(service), request())
    assert events[-1] == StopEvent(reason=reason)  # type: ignore[arg-type]


async def test_chat_a_call_without_arguments_gets_an_empty_object() -> None:
    frames = sse(
        [
            chunk({"tool_calls": [{"index": 0, "id": "c", "function": {"name": "read_file"}}]}),
            chunk({}, finish="tool_calls"),
            "[DONE]",
        ]
    )
    events = await collect(provider(Service(stream_response(frames))), request())
    assert ToolCallDelta(index=0, arguments="{}") in events


async def test_the_compatible_dialect_sends_max_tokens_and_no_cache_key() -> None:
    service = Service(stream_response(sse([chunk({"content": "ok"}, finish="stop"), "[DONE]"])))
    client = httpx2.AsyncClient(transport=httpx2.MockTransport(service))
    local = ModelConfig(
        provider="openai-compatible", model="qwen", base_url="http://127.0.0.1:9/v1", max_tokens=64
    )
    source = make_openai_compatible(local, None, http_client=client, max_retries=0)
    await collect(source, request())
    body = service.body()
    assert body["max_tokens"] == 64
    assert "max_completion_tokens" not in body
    assert "prompt_cache_key" not in body
    assert str(service.requests[0].url) == "http://127.0.0.1:9/v1/chat/completions"
    assert source.name == "openai-compatible"


# --- the Responses API -----------------------------------------------------------------

REASONING = {
    "type": "reasoning",
    "id": "rs_1",
    "summary": [{"type": "summary_text", "text": "Thinking about files."}],
    "encrypted_content": "gAAAA-opaque",
}


def responses_stream(*, alias: str = "read_file") -> list[dict[str, Any]]:
    return [
        {
            "type": "response.created",
            "sequence_number": 0,
            "response": {"id": "resp_1", "status": "in_progress", "output": []},
        },
        {
            "type": "response.output_item.added",
            "sequence_number": 1,
            "output_index": 0,
            "item": {**REASONING, "encrypted_content": None},
        },
        {
            "type": "response.output_item.done",
            "sequence_number": 2,
            "output_index": 0,
            "item": REASONING,
        },
        {
            "type": "response.output_item.added",
            "sequence_number": 3,
            "output_index": 1,
            "item": {
                "type": "message",
                "id": "msg_1",
                "role": "assistant",
                "status": "in_progress",
                "content": [],
            },
        },
        {
            "type": "response.output_text.delta",
            "sequence_number": 4,
            "item_id": "msg_1",
            "output_index": 1,
            "content_index": 0,
            "delta": "On it.",
        },
        {
            "type": "response.output_item.added",
            "sequence_number": 5,
            "output_index": 2,
            "item": {
                "type": "function_call",
                "id": "fc_1",
                "call_id": "call_r",
                "name": alias,
                "arguments": "",
            },
        },
        {
            "type": "response.function_call_arguments.delta",
            "sequence_number": 6,
            "item_id": "fc_1",
            "output_index": 2,
            "delta": '{"path":',
        },
        {
            "type": "response.function_call_arguments.delta",
            "sequence_number": 7,
            "item_id": "fc_1",
            "output_index": 2,
            "delta": ' "b.py"}',
        },
        {
            "type": "response.output_item.done",
            "sequence_number": 8,
            "output_index": 2,
            "item": {
                "type": "function_call",
                "id": "fc_1",
                "call_id": "call_r",
                "name": alias,
                "arguments": '{"path": "b.py"}',
                "status": "completed",
            },
        },
        {
            "type": "response.completed",
            "sequence_number": 9,
            "response": {
                "id": "resp_1",
                "status": "completed",
                "output": [],
                "usage": {
                    "input_tokens": 50,
                    "output_tokens": 9,
                    "total_tokens": 59,
                    "input_tokens_details": {"cached_tokens": 32, "cache_write_tokens": 0},
                    "output_tokens_details": {"reasoning_tokens": 4},
                },
            },
        },
    ]


async def test_responses_stream_text_calls_reasoning_part_usage_and_stop() -> None:
    service = Service(stream_response(sse(responses_stream(alias=wire_alias(SLASHED)), named=True)))
    events = await collect(provider(service, api="responses"), request())
    part = next(e for e in events if isinstance(e, PartEvent)).part
    assert part.provider == "openai"
    assert json.loads(part.data) == REASONING
    assert [e for e in events if not isinstance(e, PartEvent)] == [
        TextDelta(text="On it."),
        ToolCallStart(index=0, id="call_r", name=SLASHED),
        ToolCallDelta(index=0, arguments='{"path":'),
        ToolCallDelta(index=0, arguments=' "b.py"}'),
        ToolCallEnd(index=0),
        UsageEvent(input_tokens=50, output_tokens=9, cache_read_tokens=32),
        StopEvent(reason="tool_use"),
    ]
    body = service.body()
    assert str(service.requests[0].url).endswith("/v1/responses")
    assert body["instructions"] == "Be brief."
    assert body["prompt_cache_key"] == "cache-key-1"
    assert [t["name"] for t in body["tools"]] == ["read_file", wire_alias(SLASHED)]
    assert body["input"] == [{"role": "user", "content": [{"type": "input_text", "text": "hi"}]}]


async def test_responses_parts_go_back_unchanged_and_only_to_their_provider() -> None:
    mine = ProviderPart(provider="openai", data=json.dumps(REASONING))
    theirs = ProviderPart(
        provider="anthropic",
        data=json.dumps({"type": "thinking", "thinking": "x", "signature": "s"}),
    )
    history = (
        UserMessage.from_text("go"),
        AssistantMessage(
            text="On it.",
            tool_calls=(ToolCall(id="call_r", name=SLASHED, arguments='{"q": "b"}'),),
            provider_parts=(mine, theirs),
        ),
        ToolResultMessage(
            tool_call_id="call_r",
            status="ok",
            content=(TextBlock(text="found"), ImageBlock(media_type="image/png", data=PNG)),
        ),
    )
    service = Service(stream_response(sse(responses_stream(), named=True)))
    await collect(provider(service, api="responses", vision=True), request(*history))
    items = service.body()["input"]
    assert items[1] == REASONING
    assert items[2] == {"role": "assistant", "content": "On it."}
    assert items[3] == {
        "type": "function_call",
        "call_id": "call_r",
        "name": wire_alias(SLASHED),
        "arguments": '{"q": "b"}',
    }
    assert items[4]["type"] == "function_call_output"
    assert items[4]["output"] == [
        {"type": "input_text", "text": "found"},
        {"type": "input_image", "image_url": f"data:image/png;base64,{PNG}", "detail": "auto"},
    ]
    assert "thinking" not in json.dumps(items)
    assert len(items) == 5


async def test_responses_incomplete_is_max_tokens() -> None:
    events = [
        {
            "type": "response.output_text.delta",
            "sequence_number": 1,
            "item_id": "m",
            "output_index": 0,
            "content_index": 0,
            "delta": "partial",
        },
        {
            "type": "response.incomplete",
            "sequence_number": 2,
            "response": {
                "id": "r",
                "status": "incomplete",
                "output": [],
                "incomplete_details": {"reason": "max_output_tokens"},
            },
        },
    ]
    out = await collect(
        provider(Service(stream_response(sse(events, named=True))), api="responses"), request()
    )
    assert out[-1] == StopEvent(reason="max_tokens")


@pytest.mark.parametrize(
    ("event", "error"),
    [
        (
            {
                "type": "response.failed",
                "sequence_number": 1,
                "response": {
                    "id": "r",
                    "status": "failed",
                    "output": [],
                    "error": {
                        "code": "context_length_exceeded",
                        "message": "Your input exceeds the context window of this model.",
                    },
                },
            },
            ContextTooLong,
        ),
        (
            {
                "type": "response.failed",
                "sequence_number": 1,
                "response": {
                    "id": "r",
                    "status": "failed",
                    "output": [],
                    "error": {"code": "server_error", "message": "An error occurred."},
                },
            },
            ProviderUnavailable,
        ),
        (
            {
                "type": "error",
                "sequence_number": 1,
                "code": "rate_limit_exceeded",
                "message": "Slow down.",
            },
            RateLimited,
        ),
    ],
    ids=["failed-context", "failed-server", "error-event-rate"],
)
async def test_responses_failures_inside_the_stream(
    event: dict[str, Any], error: type[ProviderError]
) -> None:
    service = Service(stream_response(sse([event], named=True)))
    with pytest.raises(error):
        await collect(provider(service, api="responses"), request())


# --- errors ------------------------------------------------------------------------------

CONTEXT_400 = {
    "error": {
        "message": "This model's maximum context length is 128000 tokens. However, your"
        " messages resulted in 130000 tokens.",
        "type": "invalid_request_error",
        "param": "messages",
        "code": "context_length_exceeded",
    }
}
ECHOED_KEY_401 = {
    "error": {
        "message": f"Incorrect API key provided: {KEY}. You can find your API key at ...",
        "type": "invalid_request_error",
        "code": "invalid_api_key",
    }
}


def _connection_error(request: httpx2.Request) -> httpx2.Response:
    raise httpx2.ConnectError("connection refused", request=request)


def _timeout(request: httpx2.Request) -> httpx2.Response:
    raise httpx2.ReadTimeout("timed out", request=request)


@pytest.mark.parametrize("api", ["chat", "responses"])
@pytest.mark.parametrize(
    ("answer", "error", "status"),
    [
        (lambda: error_response(401, ECHOED_KEY_401), AuthFailed, 401),
        (
            lambda: error_response(
                403, {"error": {"message": "Project not allowed", "type": "permission_error"}}
            ),
            AuthFailed,
            403,
        ),
        (
            lambda: error_response(
                429,
                {
                    "error": {
                        "message": "Rate limit reached",
                        "type": "requests",
                        "code": "rate_limit_exceeded",
                    }
                },
                {"retry-after": "7"},
            ),
            RateLimited,
            429,
        ),
        (lambda: error_response(400, CONTEXT_400), ContextTooLong, 400),
        (
            lambda: error_response(
                500, {"error": {"message": "The server had an error", "type": "server_error"}}
            ),
            ProviderUnavailable,
            500,
        ),
        (
            lambda: error_response(503, {"error": {"message": "overloaded"}}),
            ProviderUnavailable,
            503,
        ),
        (
            lambda: error_response(
                404,
                {
                    "error": {
                        "message": "The model `gpt-x` does not exist",
                        "code": "model_not_found",
                    }
                },
            ),
            ProviderFailed,
            404,
        ),
        (lambda: _connection_error, ProviderUnavailable, None),
        (lambda: _timeout, ProviderUnavailable, None),
    ],
    ids=["401", "403", "429", "400-context", "500", "503", "404", "connect", "timeout"],
)
async def test_every_error_is_mapped_at_one_seam(
    api: str, answer: Callable[[], Answer], error: type[ProviderError], status: int | None
) -> None:
    source = provider(Service(answer()), api=api)
    with pytest.raises(error) as caught:
        await collect(source, request())
    raised = caught.value
    assert raised.context.get("status") == status
    assert raised.context["provider"] == "openai"
    assert isinstance(raised.__cause__, Exception)
    text = f"{raised} {raised.to_dict()} {source!r}"
    assert KEY not in text
    assert "SECRET" not in text
    if error is RateLimited:
        assert raised.context["retry_after"] == 7.0


async def test_a_429_then_success_is_retried_by_the_sdk() -> None:
    service = Service(
        error_response(429, {"error": {"message": "slow down"}}, {"retry-after-ms": "10"}),
        stream_response(sse([chunk({"content": "ok"}, finish="stop"), "[DONE]"])),
    )
    events = await collect(provider(service, retries=2), request())
    assert events == [TextDelta(text="ok"), StopEvent(reason="end_turn")]
    assert len(service.requests) == 2


async def test_a_stream_that_breaks_before_its_first_event_is_tried_again() -> None:
    broken = stream_response([], fail=httpx2.RemoteProtocolError("peer closed connection"))
    good = stream_response(sse([chunk({"content": "ok"}, finish="stop"), "[DONE]"]))
    service = Service(broken, good)
    events = await collect(provider(service, retries=1), request())
    assert events == [TextDelta(text="ok"), StopEvent(reason="end_turn")]
    assert len(service.requests) == 2


async def test_a_stream_that_breaks_after_text_fails_without_repeating_it() -> None:
    frames = sse([chunk({"content": "half"})])
    service = Service(stream_response(frames, fail=httpx2.ReadError("connection reset")))
    seen: list[ProviderEvent] = []

    async def consume() -> None:
        async for event in provider(service, retries=2).stream(request()):
            seen.append(event)

    with pytest.raises(ProviderUnavailable):
        await consume()
    assert seen == [TextDelta(text="half")]
    assert len(service.requests) == 1


@pytest.mark.parametrize(
    "frames",
    [
        [b"data: {not json\n\n"],
        sse([chunk({"content": "no finish"}), "[DONE]"]),
    ],
    ids=["malformed-json", "no-finish-reason"],
)
async def test_a_malformed_stream_is_provider_error(frames: list[bytes]) -> None:
    with pytest.raises(ProviderFailed):
        await collect(provider(Service(stream_response(frames))), request())


@pytest.mark.parametrize("api", ["chat", "responses"])
async def test_closing_the_iterator_closes_the_http_response(api: str) -> None:
    first = (
        sse([chunk({"content": "streaming"})])
        if api == "chat"
        else sse(responses_stream()[4:5], named=True)
    )
    body = Body(first, hang=True)
    service = Service(
        httpx2.Response(200, headers={"content-type": "text/event-stream"}, stream=body)
    )
    stream = provider(service, api=api).stream(request())
    with anyio.fail_after(60):  # a bound on a hang, not a speed
        event = await stream.__anext__()
        assert isinstance(event, TextDelta)
        await stream.aclose()  # type: ignore[attr-defined]
    assert body.closed


async def test_cancelling_a_consumer_closes_the_http_response() -> None:
    body = Body(sse([chunk({"content": "streaming"})]), hang=True)
    service = Service(
        httpx2.Response(200, headers={"content-type": "text/event-stream"}, stream=body)
    )
    source = provider(service)
    got: list[ProviderEvent] = []
    with anyio.fail_after(60), anyio.CancelScope() as consumer:
        stream = source.stream(request())
        try:
            async for event in stream:
                got.append(event)
                consumer.cancel()  # the consumer is cancelled as it waits for the next one
        finally:
            with anyio.CancelScope(shield=True):
                await stream.aclose()  # type: ignore[attr-defined]
    assert got == [TextDelta(text="streaming")]
    assert body.closed


def test_the_factories_check_their_configuration() -> None:
    from raw_core.errors import ConfigInvalid

    with pytest.raises(ConfigInvalid, match="needs a credential"):
        make_openai(model(), None)
    with pytest.raises(ConfigInvalid, match="needs a base_url"):
        make_openai_compatible(ModelConfig(provider="openai-compatible", model="m"), None)
    made = make_openai(model(), KEY)
    assert KEY not in repr(made)
    assert made.name == "openai"


async def test_chat_copes_with_a_late_name_and_calls_sharing_an_index() -> None:
    frames = sse(
        [
            chunk({"tool_calls": [{"index": 0, "id": "c1"}]}),
            chunk({"tool_calls": [{"index": 0, "function": {"name": "read_file"}}]}),
            chunk({"tool_calls": [{"index": 0, "function": {"arguments": '{"path": "a"}'}}]}),
            chunk(
                {
                    "tool_calls": [
                        {
                            "index": 0,
                            "id": "c2",
                            "function": {"name": "read_file", "arguments": '{"path": "b"}'},
                        }
                    ]
                }
            ),
            chunk({}, finish="stop"),
            "[DONE]",
        ]
    )
    events = await collect(provider(Service(stream_response(frames))), request())
    assert events == [
        ToolCallStart(index=0, id="c1", name="read_file"),
        ToolCallDelta(index=0, arguments='{"path": "a"}'),
        ToolCallStart(index=1, id="c2", name="read_file"),
        ToolCallDelta(index=1, arguments='{"path": "b"}'),
        ToolCallEnd(index=0),
        ToolCallEnd(index=1),
        StopEvent(reason="tool_use"),
    ]
