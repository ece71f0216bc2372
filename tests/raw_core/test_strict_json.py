"""The strict JSON reader every untrusted document goes through."""

from __future__ import annotations

import json

import pytest
from hypothesis import given
from hypothesis import strategies as st

from raw_core._json import JsonInputError, loads_strict


@pytest.mark.parametrize(
    ("text", "fragment"),
    [
        pytest.param('{"a": 1, "a": 2}', "duplicate key 'a'", id="duplicate-key"),
        pytest.param('{"b": {"a": 1, "a": 1}}', "duplicate key", id="nested-duplicate"),
        pytest.param('{"a": NaN}', "NaN", id="nan"),
        pytest.param('{"a": Infinity}', "Infinity", id="infinity"),
        pytest.param('{"a": -Infinity}', "Infinity", id="minus-infinity"),
        pytest.param("[" * 65 + "]" * 65, "deeper than 64", id="depth-65"),
        pytest.param("[" * 100000 + "]" * 100000, "deeper than 64", id="depth-100000"),
        pytest.param('{"a": }', "line 1 column 7", id="syntax"),
        pytest.param(b"\xff", "not UTF-8", id="bytes-not-utf8"),
        pytest.param('\ufeff{"a": 1}', "byte order mark", id="byte-order-mark"),
        pytest.param(
            '["[[[[", ' + "[" * 64 + "]" * 64 + "]", "deeper than 64", id="depth-65-in-list"
        ),
    ],
)
def test_refusals(text: str | bytes, fragment: str) -> None:
    with pytest.raises(JsonInputError, match=fragment):
        loads_strict(text)


def test_depth_64_is_accepted() -> None:
    assert loads_strict("[" * 64 + "]" * 64) is not None


def test_size_limit_counts_utf8_bytes() -> None:
    text = json.dumps("é" * 10, ensure_ascii=False)  # 22 bytes
    assert loads_strict(text, max_bytes=22) == "é" * 10
    with pytest.raises(JsonInputError, match="over the limit"):
        loads_strict(text, max_bytes=21)


def test_brackets_inside_strings_do_not_count_as_nesting() -> None:
    text = json.dumps({"a": "[" * 100 + "{" * 100, "b": [[1]]})
    assert loads_strict(text) == {"a": "[" * 100 + "{" * 100, "b": [[1]]}


@given(st.text(), st.integers(min_value=0, max_value=200))
def test_the_size_limit_refuses_exactly_the_texts_over_it(value: str, max_bytes: int) -> None:
    text = json.dumps(value, ensure_ascii=False)
    size = len(text.encode("utf-8", "surrogatepass"))
    if size > max_bytes:
        with pytest.raises(JsonInputError, match="over the limit"):
            loads_strict(text, max_bytes=max_bytes)
    else:
        assert loads_strict(text, max_bytes=max_bytes) == value


json_values = st.recursive(
    st.none()
    | st.booleans()
    | st.integers()
    | st.floats(allow_nan=False, allow_infinity=False)
    | st.text(),
    lambda children: (
        st.lists(children, max_size=4) | st.dictionaries(st.text(), children, max_size=4)
    ),
    max_leaves=20,
)


@given(json_values)
def test_round_trips_what_json_dumps_writes(value: object) -> None:
    assert loads_strict(json.dumps(value)) == value
