"""The direct reader of stored messages against the converter that checks every field.

Reading a stored message first tries a direct reader that accepts only the exact form the
writer writes; anything else goes to the converter, which names every problem. These
tests generate stored forms and mutations of them, and check that the direct reader reads
every stored form, builds exactly what the converter builds, and never accepts a document
the converter refuses.
"""

from __future__ import annotations

import copy
import json
from typing import Any

import pytest
from hypothesis import given, settings

from raw_core._convert import StructureFailed, structure
from raw_core.sessions.messages import Message, _message_converter, _read_exact
from raw_core.sessions.sqlite import message_from_dict, message_to_dict

from .test_store_messages import messages

JSON_VALUES: list[Any] = [
    None,
    True,
    False,
    0,
    1.5,
    "",
    "x",
    "user",
    "tool",
    "ok",
    "error",
    [],
    {},
    [{}],
]


def _converted(data: Any) -> Message | StructureFailed:
    try:
        found: Message = structure(_message_converter(), data, Message)  # type: ignore[arg-type]
    except StructureFailed as exc:
        return exc
    return found


def _places(value: Any, path: tuple[Any, ...] = ()) -> list[tuple[Any, ...]]:
    """Every path into ``value`` (keys of objects, indexes of arrays)."""
    found = [path]
    if isinstance(value, dict):
        for key, item in value.items():
            found += _places(item, (*path, key))
    elif isinstance(value, list):
        for index, item in enumerate(value):
            found += _places(item, (*path, index))
    return found


def _mutate(data: Any, path: tuple[Any, ...], how: str, replacement: Any) -> Any:
    mutated = copy.deepcopy(data)
    if how == "add":  # an unknown key in the object at ``path``
        target = mutated
        for step in path:
            target = target[step]
        if isinstance(target, dict):
            target["unexpected"] = replacement
        return mutated
    if not path:
        return replacement
    parent = mutated
    for step in path[:-1]:
        parent = parent[step]
    if how == "replace":
        parent[path[-1]] = replacement
    else:
        del parent[path[-1]]
    return mutated


@given(messages)
def test_the_direct_reader_reads_every_stored_form_as_the_converter_does(message: Message) -> None:
    data = json.loads(json.dumps(message_to_dict(message)))
    direct = _read_exact(data)
    assert direct is not None, data
    assert direct == message == _converted(data)
    assert type(direct) is type(message)


@settings(max_examples=60, deadline=None)
@given(messages)
def test_the_direct_reader_never_accepts_what_the_converter_refuses(message: Message) -> None:
    document = json.loads(json.dumps(message_to_dict(message)))
    for path in _places(document):
        mutations = [_mutate(document, path, "replace", value) for value in JSON_VALUES]
        mutations.append(_mutate(document, path, "add", 1))
        if path:
            mutations.append(_mutate(document, path, "drop", None))
        for mutated in mutations:
            _check_agrees(mutated)


def _check_agrees(mutated: Any) -> None:
    converted = _converted(mutated)
    direct = _read_exact(mutated)
    if direct is not None:
        assert not isinstance(converted, StructureFailed), (mutated, converted)
        assert direct == converted
        assert type(direct) is type(converted)
    # whichever reads it, the public reader answers as the converter does
    if isinstance(converted, StructureFailed):
        with pytest.raises(StructureFailed) as raised:
            message_from_dict(mutated)
        assert str(raised.value) == str(converted)
    else:
        assert message_from_dict(mutated) == converted


@pytest.mark.parametrize(
    "data",
    [
        {"role": "tool", "tool_call_id": "c", "status": "error"},
        {"role": "tool", "tool_call_id": "c", "status": "ok", "error_code": "x"},
        {"role": "user", "content": [{"type": "json", "json_text": "1"}]},
        {
            "role": "assistant",
            "tool_calls": [{"id": "c", "name": "n", "arguments": "{}", "source": "x"}],
        },
        {"role": "assistant", "text": True},
        {"role": "user"},
    ],
)
def test_a_document_the_converter_refuses_is_left_to_it(data: dict[str, Any]) -> None:
    assert _read_exact(data) is None
    with pytest.raises(StructureFailed):
        message_from_dict(data)
