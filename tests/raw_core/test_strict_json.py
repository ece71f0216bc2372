"""The strict JSON reader every untrusted document goes through."""

from __future__ import annotations

import json
import sys

import pytest
from hypothesis import given
from hypothesis import strategies as st

from raw_core._json import MAX_INT_DIGITS, JsonInputError, loads_strict
from tests.hostile_json import HOSTILE, hostile_bytes, hostile_texts


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
        pytest.param("1" * 4301, "has 4301 digits; the limit is 4300", id="int-4301-digits"),
        pytest.param("-" + "1" * 4301, "has 4301 digits", id="negative-int-4301-digits"),
        pytest.param('{"a": [' + "7" * 100_000 + "]}", "100000 digits", id="int-nested"),
        pytest.param('{"a": 1e999}', "too large for a float", id="huge-float"),
        pytest.param('{"a": 1} x', "Extra data at line 1 column 10", id="trailing-garbage"),
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


def test_an_integer_of_4300_digits_is_read() -> None:
    assert loads_strict("-" + "9" * MAX_INT_DIGITS) == -int("9" * MAX_INT_DIGITS)


def test_the_integer_bound_holds_whatever_the_interpreter_allows() -> None:
    before = sys.get_int_max_str_digits()
    try:
        sys.set_int_max_str_digits(0)  # no limit in the interpreter: raw's bound still holds
        with pytest.raises(JsonInputError, match="the limit is 4300"):
            loads_strict("1" * 4301)
        sys.set_int_max_str_digits(640)  # a lower one: refused in raw's terms, not ValueError
        with pytest.raises(JsonInputError, match="too many digits"):
            loads_strict("1" * 641)
    finally:
        sys.set_int_max_str_digits(before)


@pytest.mark.parametrize(("name", "text"), HOSTILE, ids=[name for name, _ in HOSTILE])
def test_hostile_text_is_read_or_refused_as_json_input_error(name: str, text: str | bytes) -> None:
    try:
        loads_strict(text, max_bytes=1 << 22)
    except JsonInputError:
        pass


@given(hostile_texts)
def test_no_text_raises_anything_but_json_input_error(text: str) -> None:
    try:
        value = loads_strict(text)
    except JsonInputError:
        return
    assert loads_strict(json.dumps(value)) == value


@given(hostile_bytes)
def test_no_bytes_raise_anything_but_json_input_error(data: bytes) -> None:
    try:
        loads_strict(data, max_bytes=1 << 16)
    except JsonInputError:
        pass
