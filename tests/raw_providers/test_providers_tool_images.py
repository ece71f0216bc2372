"""An image a tool returned, as each service receives it: a real turn of builtin/view_image
on a real PNG, through the official SDK, over HTTP on loopback, the request captured as
the service got it.

Anthropic takes image blocks inside the tool result; the Responses API a
``function_call_output`` with ``input_image`` content; Chat Completions (OpenAI and
OpenAI-compatible servers) a tool message that points to the image and, right after the
tool results, a user message carrying it. Each is built from the stored result alone, so
the next request repeats the same messages: the prefix stays stable.
"""

from __future__ import annotations

import base64
import json
from pathlib import Path
from typing import Any

import httpx2
import pytest

from raw_core import App
from raw_core.plugins import PluginHost
from tests.images import png
from tests.raw_providers.scripted_http import Service, serve_on_loopback

pytestmark = [pytest.mark.anyio, pytest.mark.parametrize("anyio_backend", ["asyncio"])]

KEY = "sk-test-images-0123456789"
ARGUMENTS = json.dumps({"path": "shot.png"})
IMAGE = png(32, 16)
DATA = base64.b64encode(IMAGE).decode()


def sse(events: list[Any], *, named: bool = False) -> httpx2.Response:
    frames = []
    for event in events:
        if isinstance(event, str):
            frames.append(f"data: {event}\n\n")
        else:
            head = f"event: {event['type']}\n" if named else ""
            frames.append(f"{head}data: {json.dumps(event)}\n\n")
    return httpx2.Response(
        200, headers={"content-type": "text/event-stream"}, content="".join(frames).encode()
    )


# --- each service's answers: a call of view_image, then text -----------------------------


def _chunk(delta: dict[str, Any], finish: str | None = None) -> dict[str, Any]:
    return {
        "id": "chatcmpl-1",
        "object": "chat.completion.chunk",
        "created": 1,
        "model": "m",
        "choices": [{"index": 0, "delta": delta, "finish_reason": finish}],
    }


def chat_answers() -> list[httpx2.Response]:
    call = {
        "index": 0,
        "id": "call_1",
        "type": "function",
        "function": {"name": "view_image", "arguments": ARGUMENTS},
    }
    return [
        sse(
            [
                _chunk({"role": "assistant", "tool_calls": [call]}),
                _chunk({}, "tool_calls"),
                "[DONE]",
            ]
        ),
        sse([_chunk({"content": "A red box."}, "stop"), "[DONE]"]),
        sse([_chunk({"content": "Still red."}, "stop"), "[DONE]"]),
    ]


def _response(number: int, items: list[dict[str, Any]]) -> list[dict[str, Any]]:
    events: list[dict[str, Any]] = [
        {
            "type": "response.created",
            "sequence_number": 0,
            "response": {"id": f"resp_{number}", "status": "in_progress", "output": []},
        }
    ]
    for index, item in enumerate(items):
        events.append(
            {
                "type": "response.output_item.added",
                "sequence_number": len(events),
                "output_index": index,
                "item": item,
            }
        )
        if item["type"] == "message":
            events.append(
                {
                    "type": "response.output_text.delta",
                    "sequence_number": len(events),
                    "item_id": item["id"],
                    "output_index": index,
                    "content_index": 0,
                    "delta": item["content"][0]["text"],
                }
            )
        events.append(
            {
                "type": "response.output_item.done",
                "sequence_number": len(events),
                "output_index": index,
                "item": item,
            }
        )
    usage = {"input_tokens": 5, "output_tokens": 5, "total_tokens": 10}
    events.append(
        {
            "type": "response.completed",
            "sequence_number": len(events),
            "response": {
                "id": f"resp_{number}",
                "status": "completed",
                "output": [],
                "usage": usage,
            },
        }
    )
    return events


def _message(number: int, text: str) -> dict[str, Any]:
    return {
        "type": "message",
        "id": f"msg_{number}",
        "role": "assistant",
        "status": "completed",
        "content": [{"type": "output_text", "text": text, "annotations": []}],
    }


def responses_answers() -> list[httpx2.Response]:
    call = {
        "type": "function_call",
        "id": "fc_1",
        "call_id": "call_1",
        "name": "view_image",
        "arguments": ARGUMENTS,
        "status": "completed",
    }
    return [
        sse(_response(1, [call]), named=True),
        sse(_response(2, [_message(2, "A red box.")]), named=True),
        sse(_response(3, [_message(3, "Still red.")]), named=True),
    ]


def _anthropic(blocks: list[dict[str, Any]], reason: str) -> httpx2.Response:
    events: list[dict[str, Any]] = [
        {
            "type": "message_start",
            "message": {
                "id": "msg_1",
                "type": "message",
                "role": "assistant",
                "model": "m",
                "content": [],
                "stop_reason": None,
                "stop_sequence": None,
                "usage": {"input_tokens": 5, "output_tokens": 1},
            },
        }
    ]
    for index, block in enumerate(blocks):
        if block["type"] == "tool_use":
            start = {**block, "input": {}}
            delta = {"type": "input_json_delta", "partial_json": json.dumps(block["input"])}
        else:
            start = {"type": "text", "text": ""}
            delta = {"type": "text_delta", "text": block["text"]}
        events += [
            {"type": "content_block_start", "index": index, "content_block": start},
            {"type": "content_block_delta", "index": index, "delta": delta},
            {"type": "content_block_stop", "index": index},
        ]
    events += [
        {
            "type": "message_delta",
            "delta": {"stop_reason": reason, "stop_sequence": None},
            "usage": {"output_tokens": 5},
        },
        {"type": "message_stop"},
    ]
    return sse(events, named=True)


def anthropic_answers() -> list[httpx2.Response]:
    call = {
        "type": "tool_use",
        "id": "toolu_1",
        "name": "view_image",
        "input": {"path": "shot.png"},
    }
    return [
        _anthropic([call], "tool_use"),
        _anthropic([{"type": "text", "text": "A red box."}], "end_turn"),
        _anthropic([{"type": "text", "text": "Still red."}], "end_turn"),
    ]


# --- one real session per service --------------------------------------------------------


def model_config(kind: str, base_url: str) -> dict[str, Any]:
    key = {"api_key": {"env": "RAW_TEST_IMAGE_KEY"}}
    if kind == "anthropic":
        return {"provider": "anthropic", "model": "claude-test", "base_url": base_url, **key}
    if kind == "openai-compatible":
        return {"provider": "openai-compatible", "model": "local", "base_url": f"{base_url}/v1"}
    api = "responses" if kind == "openai-responses" else "chat"
    return {
        "provider": "openai",
        "model": "gpt-test",
        "base_url": f"{base_url}/v1",
        "api": api,
        **key,
    }


async def two_turns(tmp_path: Path, kind: str, answers: list[httpx2.Response]) -> Service:
    """A session of ``kind``'s model with view_image: a turn that looks at shot.png, then
    another turn; the service's three requests."""
    (tmp_path / "shot.png").write_bytes(IMAGE)
    service = Service(*answers)
    host = PluginHost()
    host.load_entry_points()
    with serve_on_loopback(service) as base_url:
        model = {**model_config(kind, base_url), "vision": True}
        agent = {"model": "m", "tools": {"use": ["builtin/view_image"]}}
        config = tmp_path / "raw.json"
        config.write_text(json.dumps({"models": {"m": model}, "agents": {"a": agent}}))
        opened = App.open(config, host=host, store_dir=tmp_path / "s")
        async with opened as app, app.open_session(cwd=tmp_path) as session:
            first = await session.run_turn("What is in shot.png?")
            second = await session.run_turn("And now?")
    assert [first.reason, second.reason] == ["completed", "completed"], (first, second)
    assert len(service.requests) == 3
    return service


@pytest.fixture(autouse=True)
def key(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("RAW_TEST_IMAGE_KEY", KEY)


async def test_anthropic_gets_an_image_block_in_the_tool_result(
    tmp_path: Path, anyio_backend: str
) -> None:
    service = await two_turns(tmp_path, "anthropic", anthropic_answers())
    assert service.requests[1].url.path == "/v1/messages"
    messages = service.body(1)["messages"]
    (result,) = messages[2]["content"]
    assert result["type"] == "tool_result"
    assert result["tool_use_id"] == "toolu_1"
    text, image = result["content"]
    assert text["type"] == "text"
    assert text["text"].startswith("shot.png: PNG image, 32×16 pixels")
    assert image == {
        "type": "image",
        "source": {"type": "base64", "media_type": "image/png", "data": DATA},
    }
    later = service.body(2)["messages"]
    assert _without_cache_marks(later[:3]) == _without_cache_marks(messages)


def _without_cache_marks(value: Any) -> Any:
    """``value`` without ``cache_control`` (set on the last block of a request only)."""
    if isinstance(value, dict):
        return {k: _without_cache_marks(v) for k, v in value.items() if k != "cache_control"}
    if isinstance(value, list):
        return [_without_cache_marks(item) for item in value]
    return value


async def test_the_responses_api_gets_a_function_call_output_with_the_image(
    tmp_path: Path, anyio_backend: str
) -> None:
    service = await two_turns(tmp_path, "openai-responses", responses_answers())
    assert service.requests[1].url.path == "/v1/responses"
    items = service.body(1)["input"]
    output = next(item for item in items if item.get("type") == "function_call_output")
    assert output["call_id"] == "call_1"
    text, image = output["output"]
    assert text["type"] == "input_text"
    assert text["text"].startswith("shot.png: PNG image, 32×16 pixels")
    assert image == {
        "type": "input_image",
        "image_url": f"data:image/png;base64,{DATA}",
        "detail": "auto",
    }
    assert service.body(2)["input"][: len(items)] == items


@pytest.mark.parametrize("kind", ["openai-chat", "openai-compatible"])
async def test_chat_completions_gets_a_pointer_then_a_user_message_with_the_image(
    tmp_path: Path, anyio_backend: str, kind: str
) -> None:
    service = await two_turns(tmp_path, kind, chat_answers())
    assert service.requests[1].url.path == "/v1/chat/completions"
    messages = service.body(1)["messages"]
    tool, carrier = messages[-2:]
    assert tool["role"] == "tool"
    assert tool["tool_call_id"] == "call_1"
    line, pointer = tool["content"].split("\n")
    assert line.startswith("shot.png: PNG image, 32×16 pixels")
    assert pointer == "[image 1: in the user message after the tool results]"
    assert carrier == {
        "role": "user",
        "content": [
            {
                "type": "text",
                "text": "The images the tool calls above returned, each after its label:",
            },
            {"type": "text", "text": "image 1 (tool call call_1):"},
            {"type": "image_url", "image_url": {"url": f"data:image/png;base64,{DATA}"}},
        ],
    }
    later = service.body(2)["messages"]
    assert later[: len(messages)] == messages  # the same messages again: a stable prefix
    assert later[len(messages)] == {"role": "assistant", "content": "A red box."}
