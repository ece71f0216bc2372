"""Requests the services would refuse, built from transcripts raw does produce: a reasoning
item with no output after it, tool call ids another provider made, and user messages in a
row."""

from __future__ import annotations

import json
import re

from raw_core.providers.contract import ModelRequest, ModelTool
from raw_core.sessions.messages import (
    AssistantMessage,
    ProviderPart,
    TextBlock,
    ToolCall,
    ToolResultMessage,
    UserMessage,
)
from raw_providers._names import WireNames
from raw_providers._openai_chat import chat_messages
from raw_providers._openai_responses import responses_input
from raw_providers.anthropic_provider import anthropic_messages

TOOL = ModelTool(name="read_file", description="Read.", input_schema={"type": "object"})


def request(*messages: object) -> ModelRequest:
    return ModelRequest(
        system="s",
        tools=(TOOL,),
        messages=tuple(messages),  # type: ignore[arg-type]
        cache_key="k",
    )


def test_a_reasoning_item_without_its_output_is_not_sent_back() -> None:
    reasoning = ProviderPart(
        provider="openai", data=json.dumps({"id": "rs_1", "type": "reasoning", "summary": []})
    )
    cut_off = AssistantMessage(provider_parts=(reasoning,))  # max_tokens while reasoning
    answered = AssistantMessage(text="done", provider_parts=(reasoning,))
    names = WireNames([TOOL.name])
    alone = responses_input(
        request(UserMessage.from_text("a"), cut_off, UserMessage.from_text("b")),
        names,
        provider="openai",
        vision=False,
    )
    assert [item.get("type") for item in alone] == [None, None]
    kept = responses_input(
        request(UserMessage.from_text("a"), answered), names, provider="openai", vision=False
    )
    assert [item.get("type") for item in kept] == [None, "reasoning", None]


def test_anthropic_gets_unique_well_formed_tool_use_ids() -> None:
    def turn(call_id: str) -> list[object]:
        return [
            UserMessage.from_text("go"),
            AssistantMessage(tool_calls=(ToolCall(id=call_id, name="read_file", arguments="{}"),)),
            ToolResultMessage(tool_call_id=call_id, status="ok", content=(TextBlock(text="x"),)),
        ]

    messages = [*turn("call_0"), *turn("call_0"), *turn("functions.read_file:0")]
    built = anthropic_messages(
        request(*messages), WireNames([TOOL.name]), provider="anthropic", vision=False
    )
    uses = [
        b["id"]
        for m in built
        for b in m["content"]
        if isinstance(m["content"], list) and b.get("type") == "tool_use"
    ]
    results = [
        b["tool_use_id"]
        for m in built
        for b in m["content"]
        if isinstance(m["content"], list) and b.get("type") == "tool_result"
    ]
    assert len(set(uses)) == 3
    assert all(re.fullmatch(r"[A-Za-z0-9_-]+", use) for use in uses)
    assert results == uses  # each result still answers its own call


def test_user_messages_in_a_row_become_one_for_chat_servers() -> None:
    built = chat_messages(
        request(UserMessage.from_text("first"), UserMessage.from_text("again")),
        WireNames([TOOL.name]),
        vision=False,
    )
    assert [m["role"] for m in built] == ["system", "user"]
    assert built[1]["content"] == "first\n\nagain"
