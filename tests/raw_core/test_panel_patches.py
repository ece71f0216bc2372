"""A JSON Patch a board cannot apply is refused naming the operation, its path and what
it expected beside what the document holds, in JSON; the document is left as it was."""

from __future__ import annotations

import copy
import json
from typing import Any

import pytest

from raw_core.errors import PanelInvalid
from raw_core.tools.panel_updates import patched_text

DOCUMENT = {"blocks": [{"type": "text", "text": "hi"}]}


@pytest.mark.parametrize(
    ("patch", "field", "says"),
    [
        pytest.param(
            [{"op": "replace", "path": "/x", "value": 1}],
            "$.patch[0]",
            'patch operation 0 (replace at "/x") cannot be applied: nothing at "/x"',
            id="missing-target",
        ),
        pytest.param(
            [{"op": "add", "path": "/blocks/5", "value": {}}],
            "$.patch[0]",
            '"/blocks" is an array of 1 item: an index from 0 to 1, or "-" for its end, found "5"',
            id="index-past-end",
        ),
        pytest.param(
            [{"op": "add", "path": "/nope/a", "value": 1}],
            "$.patch[0]",
            'nothing at "/nope" to add into',
            id="missing-parent",
        ),
        pytest.param(
            [{"op": "frob", "path": "/x"}],
            "$.patch[0]",
            '"op" must be one of ["add", "remove", "replace", "move", "copy", "test"],'
            ' found "frob"',
            id="unknown-op",
        ),
        pytest.param(
            [{"op": "add", "path": "blocks", "value": 1}],
            "$.patch[0]",
            '"path" must be a JSON Pointer ("" or "/..."), found "blocks"',
            id="not-a-pointer",
        ),
        pytest.param(
            [{"op": "add", "path": "/blocks/-"}],
            "$.patch[0]",
            'an add operation needs a "value"',
            id="no-value",
        ),
        pytest.param(
            [{"op": "move", "path": "/a"}],
            "$.patch[0]",
            'a move operation needs "from"',
            id="no-from",
        ),
        pytest.param(
            [{"op": "move", "from": "/blocks", "path": "/blocks/0"}],
            "$.patch[0]",
            '"/blocks" cannot move into itself',
            id="move-into-itself",
        ),
        pytest.param(
            [{"op": "copy", "from": "/zz", "path": "/a"}],
            "$.patch[0]",
            'nothing at "/zz" to copy',
            id="copy-from-nothing",
        ),
        pytest.param(
            [{"op": "remove", "path": ""}],
            "$.patch[0]",
            "the document itself cannot be removed",
            id="remove-root",
        ),
        pytest.param(
            [
                {"op": "add", "path": "/blocks/-", "value": {"type": "text", "text": "two"}},
                {"op": "test", "path": "/blocks/1", "value": {"type": "text", "text": "2"}},
            ],
            "$.patch[1]",
            'expected {"type":"text","text":"2"}, found {"type":"text","text":"two"}',
            id="test-after-an-add",
        ),
    ],
)
def test_a_patch_refusal_names_the_operation_in_json(
    patch: list[dict[str, Any]], field: str, says: str
) -> None:
    document = copy.deepcopy(DOCUMENT)
    with pytest.raises(PanelInvalid) as raised:
        patched_text(document, patch)
    assert raised.value.field == field
    assert says in raised.value.message
    for python in ("<class", "['", "{'", "KeyError", "IndexError"):
        assert python not in raised.value.message


def test_a_patch_that_applies_gives_the_patched_document() -> None:
    patch = [
        {"op": "test", "path": "/blocks/0/text", "value": "hi"},
        {"op": "add", "path": "/blocks/-", "value": {"type": "text", "text": "two"}},
        {"op": "move", "from": "/blocks/1", "path": "/blocks/0"},
        {"op": "copy", "from": "/blocks/1/text", "path": "/blocks/0/text"},
        {"op": "replace", "path": "", "value": {"blocks": [{"type": "text", "text": "x~/"}]}},
        {"op": "test", "path": "/blocks/0/text", "value": "x~/"},
    ]
    text = patched_text(copy.deepcopy(DOCUMENT), patch)
    assert json.loads(text) == {"blocks": [{"type": "text", "text": "x~/"}]}
