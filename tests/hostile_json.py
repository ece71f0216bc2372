"""Hostile JSON text for the parsers of outside input: named cases and hypothesis strategies.

Every parser raw points at a file, a model's arguments or a stream must turn each of these
into its documented error code (or, where it has one, its documented fallback); no other
exception may leave it.
"""

from __future__ import annotations

import json
from typing import Any

from hypothesis import strategies as st

HUGE_INT = "1" * 5000
"""More digits than Python converts by default (4,300)."""

# (id, text): each is malformed or pushes a bound; the ones marked valid are strict JSON.
HOSTILE: list[tuple[str, str | bytes]] = [
    ("huge-int", HUGE_INT),
    ("huge-negative-int", "-" + "9" * 4301),
    ("huge-int-in-object", '{"a": [' + HUGE_INT + "]}"),
    ("int-beyond-float", '{"a": ' + "9" * 400 + "}"),
    ("deep-arrays", "[" * 100_000 + "]" * 100_000),
    ("deep-objects", '{"a":' * 50_000 + "1" + "}" * 50_000),
    ("deep-unclosed", "[" * 100_000),
    ("nan", '{"a": NaN}'),
    ("infinity", '{"a": Infinity}'),
    ("minus-infinity", '{"a": -Infinity}'),
    ("huge-float", '{"a": 1e999}'),
    ("huge-negative-float", '{"a": -1e999}'),
    ("long-float", '{"a": 1' + "0" * 5000 + ".5}"),
    ("duplicate-key", '{"a": 1, "a": 2}'),
    ("lone-surrogate-escape", '{"a": "\\ud800"}'),
    ("lone-surrogate-char", '{"a": "\ud800"}'),
    ("lone-surrogate-key", '{"\\udfff": 1}'),
    ("invalid-utf8", b'{"a": "\xff\xfe"}'),
    ("truncated-utf8", b'{"a": "\xe2\x82"}'),
    ("utf16", '{"a": 1}'.encode("utf-16")),
    ("bom", '\ufeff{"a": 1}'),
    ("bom-bytes", b'\xef\xbb\xbf{"a": 1}'),
    ("trailing-garbage", '{"a": 1} x'),
    ("two-values", '{"a": 1}{"b": 2}'),
    ("top-level-array", "[1, 2]"),
    ("top-level-string", '"text"'),
    ("top-level-number", "12"),
    ("top-level-null", "null"),
    ("empty", ""),
    ("whitespace", " \n\t "),
    ("nul", '{"a": 1}\x00'),
    ("unterminated-string", '{"a": "b'),
    ("control-char-in-string", '{"a": "\x01"}'),
    ("bad-escape", '{"a": "\\x41"}'),
    ("single-quotes", "{'a': 1}"),
    ("comment", '{"a": 1 /* c */}'),
]

_TOKENS = [
    "{",
    "}",
    "[",
    "]",
    ",",
    ":",
    " ",
    '"a"',
    '"type"',
    '"\\ud800"',
    '"\\u0000"',
    "0",
    "-1",
    "1.5",
    "1e999",
    "-0",
    HUGE_INT,
    "9" * 400,
    "NaN",
    "Infinity",
    "true",
    "null",
    '"',
    "\\",
    "\ufeff",
    "\ud800",
]

json_values = st.recursive(
    st.none()
    | st.booleans()
    | st.integers()
    | st.floats(allow_nan=False, allow_infinity=False)
    | st.text(max_size=20),
    lambda children: (
        st.lists(children, max_size=4) | st.dictionaries(st.text(max_size=10), children, max_size=4)
    ),
    max_leaves=12,
)


def _dumped(value: Any) -> str:
    return json.dumps(value)


hostile_texts: st.SearchStrategy[str] = st.one_of(
    st.sampled_from([text for _, text in HOSTILE if isinstance(text, str)]),
    st.text(max_size=200),
    st.lists(st.sampled_from(_TOKENS), max_size=30).map("".join),
    json_values.map(_dumped),
    st.tuples(json_values.map(_dumped), st.sampled_from(_TOKENS)).map("".join),
)
"""Text that is random, built of JSON's tokens (and hostile ones), or valid JSON, or valid
JSON with something after it."""

hostile_bytes: st.SearchStrategy[bytes] = st.one_of(
    st.sampled_from([text for _, text in HOSTILE if isinstance(text, bytes)]),
    st.binary(max_size=200),
    hostile_texts.map(lambda text: text.encode("utf-8", "surrogatepass")),
)
"""What a file can hold: any bytes, including ones that are not UTF-8."""


def as_bytes(text: str | bytes) -> bytes:
    """``text`` as a file holds it (a lone surrogate written as its three bytes)."""
    return text if isinstance(text, bytes) else text.encode("utf-8", "surrogatepass")
