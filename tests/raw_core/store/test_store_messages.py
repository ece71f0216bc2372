"""The message records and their one JSON form."""

from __future__ import annotations

import json
import re
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from raw_core._convert import StructureFailed
from raw_core.sessions.sqlite import (
    AssistantMessage,
    ImageBlock,
    JsonBlock,
    Message,
    ProviderPart,
    TextBlock,
    ToolCall,
    ToolResultMessage,
    UserMessage,
    VarPlaceholder,
    dumps_message,
    loads_message,
    message_from_dict,
    message_to_dict,
)

SPLIT_PAIR = re.compile("[\ud800-\udbff][\udc00-\udfff]")

# any string, lone surrogates included: they must survive the round trip. Not a high
# surrogate directly followed by a low one: JSON writes them as the escape of a character
# outside the BMP, so they come back as that character (see the test below).
texts = st.text(st.characters(codec=None, exclude_categories=()), max_size=12).filter(
    lambda text: not SPLIT_PAIR.search(text)
)

text_blocks = st.builds(TextBlock, text=texts)
image_blocks = st.builds(ImageBlock, media_type=texts, data=texts)
content_blocks = st.one_of(
    text_blocks,
    image_blocks,
    st.builds(JsonBlock, json_text=texts),
    st.builds(VarPlaceholder, name=texts),
)
messages: st.SearchStrategy[Message] = st.one_of(
    st.builds(
        UserMessage, content=st.lists(st.one_of(text_blocks, image_blocks), max_size=3).map(tuple)
    ),
    st.builds(
        AssistantMessage,
        text=texts,
        tool_calls=st.lists(
            st.builds(
                ToolCall,
                id=texts,
                name=texts,
                arguments=texts,
                source=st.sampled_from(["model", "user_action"]),
            ),
            max_size=3,
        ).map(tuple),
        provider_parts=st.lists(
            st.builds(ProviderPart, provider=texts, data=texts), max_size=2
        ).map(tuple),
    ),
    st.builds(
        ToolResultMessage,
        tool_call_id=texts,
        status=st.just("ok"),
        error_code=st.none(),
        content=st.lists(content_blocks, max_size=3).map(tuple),
    ),
    st.builds(
        ToolResultMessage,
        tool_call_id=texts,
        status=st.just("error"),
        error_code=texts.filter(bool),
        content=st.lists(content_blocks, max_size=3).map(tuple),
    ),
)


@given(messages)
def test_every_message_round_trips_through_its_json_form(message: Message) -> None:
    text = dumps_message(message)
    assert text.isascii()
    assert loads_message(text) == message
    data = message_to_dict(message)
    assert json.loads(json.dumps(data)) == data
    assert message_from_dict(data) == message


def test_the_json_form_is_tagged_and_leaves_defaults_out() -> None:
    result = ToolResultMessage(
        tool_call_id="call_1",
        status="ok",
        content=(VarPlaceholder(name="API_KEY"), TextBlock(text="read")),
    )
    assert message_to_dict(result) == {
        "role": "tool",
        "tool_call_id": "call_1",
        "status": "ok",
        "content": [
            {"type": "var_placeholder", "name": "API_KEY"},
            {"type": "text", "text": "read"},
        ],
    }
    assert message_to_dict(AssistantMessage(text="hi")) == {"role": "assistant", "text": "hi"}


@pytest.mark.parametrize(
    ("message", "text"),
    [
        (UserMessage(content=()), '{"role":"user","content":[]}'),
        (
            UserMessage(
                content=(
                    TextBlock(text='h\u00e9 "q"'),
                    ImageBlock(media_type="image/png", data="AA=="),
                )
            ),
            '{"role":"user","content":[{"type":"text","text":"h\\u00e9 \\"q\\""},'
            '{"type":"image","media_type":"image/png","data":"AA=="}]}',
        ),
        (AssistantMessage(), '{"role":"assistant"}'),
        (
            AssistantMessage(
                text="t",
                tool_calls=(ToolCall(id="c", name="n", arguments='{"a": 1}'),),
                provider_parts=(ProviderPart(provider="p", data="\ud800"),),
            ),
            '{"role":"assistant","text":"t","tool_calls":[{"id":"c","name":"n",'
            '"arguments":"{\\"a\\": 1}"}],"provider_parts":[{"provider":"p","data":"\\ud800"}]}',
        ),
        (
            ToolResultMessage(tool_call_id="c", status="ok"),
            '{"role":"tool","tool_call_id":"c","status":"ok"}',
        ),
        (
            ToolResultMessage(
                tool_call_id="c",
                status="error",
                error_code="denied",
                content=(JsonBlock(json_text="[1]"), VarPlaceholder(name="K")),
            ),
            '{"role":"tool","tool_call_id":"c","status":"error","error_code":"denied",'
            '"content":[{"type":"json","json_text":"[1]"},{"type":"var_placeholder","name":"K"}]}',
        ),
    ],
    ids=["user-empty", "user", "assistant-empty", "assistant", "tool-ok-empty", "tool-error"],
)
def test_the_stored_text_is_exactly_this(message: Message, text: str) -> None:
    assert dumps_message(message) == text
    assert loads_message(text) == message


def test_a_surrogate_pair_split_in_two_code_points_reads_back_joined() -> None:
    split = UserMessage.from_text("\ud83d\ude00")  # two code points, as Python can hold
    assert (
        dumps_message(split)
        == '{"role":"user","content":[{"type":"text","text":"\\ud83d\\ude00"}]}'
    )
    assert loads_message(dumps_message(split)) == UserMessage.from_text("\U0001f600")


def test_writing_something_that_is_not_a_message_is_a_type_error() -> None:
    with pytest.raises(TypeError, match="expected a message, found str"):
        dumps_message("hello")  # type: ignore[arg-type]
    with pytest.raises(TypeError, match="expected a content block, found str"):
        dumps_message(UserMessage(content=("hello",)))  # type: ignore[arg-type]


def test_provider_parts_and_arguments_are_kept_byte_for_byte() -> None:
    arguments = '{"b": 1,  "a": [1.0, 2e3]}'
    part = '{"type": "reasoning", "encrypted_content": "gAAAA=="}'
    message = AssistantMessage(
        tool_calls=(ToolCall(id="c", name="t", arguments=arguments),),
        provider_parts=(ProviderPart(provider="openai", data=part),),
    )
    back = loads_message(dumps_message(message))
    assert isinstance(back, AssistantMessage)
    assert back.tool_calls[0].arguments == arguments
    assert back.provider_parts[0].data == part


@pytest.mark.parametrize(
    ("status", "error_code"), [("error", None), ("error", ""), ("ok", "denied")]
)
def test_an_error_code_goes_with_an_error_status_only(status: Any, error_code: str | None) -> None:
    with pytest.raises(ValueError, match="error code"):
        ToolResultMessage(tool_call_id="c", status=status, error_code=error_code)


@pytest.mark.parametrize(
    ("data", "path", "expected"),
    [
        ([], "$", "expected an object"),
        ({"content": []}, "$.role", "found nothing"),
        ({"role": "system", "content": []}, "$.role", '"user", "assistant", "tool"'),
        ({"role": "user"}, "$.content", "missing"),
        ({"role": "user", "content": [], "name": "x"}, "$.name", "unknown field"),
        (
            {"role": "user", "content": [{"type": "var_placeholder", "name": "K"}]},
            "$.content[0].type",
            '"text", "image"',
        ),
        ({"role": "tool", "tool_call_id": "c", "status": "maybe"}, "$.status", "maybe"),
        ({"role": "assistant", "text": 5}, "$.text", "expected a string"),
    ],
    ids=[
        "not-an-object",
        "no-role",
        "unknown-role",
        "missing-field",
        "unknown-field",
        "placeholder-in-user-message",
        "bad-status",
        "wrong-type",
    ],
)
def test_a_bad_message_names_the_field(data: Any, path: str, expected: str) -> None:
    with pytest.raises(StructureFailed) as caught:
        message_from_dict(data)
    problems = {problem.path: problem.message for problem in caught.value.problems}
    assert path in problems
    assert expected in problems[path]
