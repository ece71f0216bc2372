"""Rule globs: ``*`` any run (``/`` included), ``?`` one character, nothing else special."""

from __future__ import annotations

import re

import pytest
from hypothesis import given
from hypothesis import strategies as st

from raw_core.policy._glob import Glob


def reference_match(pattern: str, text: str) -> bool:
    """The obvious reading: translate to a regular expression and match the whole text."""
    regex = "".join(".*" if c == "*" else "." if c == "?" else re.escape(c) for c in pattern)
    return re.fullmatch(regex, text, re.DOTALL) is not None


@pytest.mark.parametrize(
    ("pattern", "text", "expected"),
    [
        pytest.param("builtin/bash", "builtin/bash", True, id="literal-equal"),
        pytest.param("builtin/bash", "builtin/bash2", False, id="literal-is-whole"),
        pytest.param("builtin/bash", "xbuiltin/bash", False, id="literal-anchored-at-start"),
        pytest.param("builtin/*", "builtin/bash", True, id="star-rest"),
        pytest.param("builtin/*", "builtin/", True, id="star-empty-run"),
        pytest.param("*", "mcp/search/query", True, id="star-crosses-slashes"),
        pytest.param("mcp/*", "mcp/search/query", True, id="star-spans-segments"),
        pytest.param("mcp/*/query", "mcp/search/query", True, id="star-inside"),
        pytest.param("mcp/*/query", "mcp/a/b/query", True, id="star-inside-several-segments"),
        pytest.param("*/bash", "builtin/bash", True, id="star-leading"),
        pytest.param("*/bash", "local/my_bash", False, id="star-leading-needs-suffix"),
        pytest.param("*bash", "local/my_bash", True, id="star-then-suffix"),
        pytest.param("builtin/?ash", "builtin/bash", True, id="question-one-char"),
        pytest.param("builtin/?ash", "builtin/ash", False, id="question-not-zero"),
        pytest.param("builtin/?ash", "builtin/bbash", False, id="question-not-two"),
        pytest.param("builtin?bash", "builtin/bash", True, id="question-matches-slash"),
        pytest.param("builtin/[bc]ash", "builtin/bash", False, id="brackets-literal"),
        pytest.param("builtin/[bc]ash", "builtin/[bc]ash", True, id="brackets-match-themselves"),
        pytest.param("builtin/{a,b}", "builtin/a", False, id="braces-literal"),
        pytest.param("builtin/{a,b}", "builtin/{a,b}", True, id="braces-match-themselves"),
        pytest.param("builtin/\\*", "builtin/bash", False, id="backslash-is-no-escape"),
        pytest.param("builtin/\\*", "builtin/\\bash", True, id="backslash-literal-star-wild"),
        pytest.param("builtin/.ash", "builtin/bash", False, id="dot-literal"),
        pytest.param("**", "", True, id="stars-match-empty"),
        pytest.param("", "", True, id="empty-matches-empty"),
        pytest.param("", "builtin/bash", False, id="empty-matches-nothing-else"),
        pytest.param("a*b*c", "aXXbYYbZZc", True, id="stars-backtrack"),
        pytest.param("a*b*c", "aXXbYYbZZ", False, id="stars-backtrack-fail"),
        pytest.param("BUILTIN/*", "builtin/bash", False, id="case-sensitive"),
    ],
)
def test_glob_table(pattern: str, text: str, expected: bool) -> None:
    assert Glob(pattern).matches(text) is expected
    assert reference_match(pattern, text) is expected


_ALPHABET = st.sampled_from("ab/*?[]{}\\.")


@given(st.text(_ALPHABET, max_size=8), st.text(st.sampled_from("ab/*?[]"), max_size=10))
def test_glob_agrees_with_reference(pattern: str, text: str) -> None:
    assert Glob(pattern).matches(text) is reference_match(pattern, text)


@given(st.text(max_size=20))
def test_a_glob_without_wildcards_matches_only_itself(text: str) -> None:
    literal = text.replace("*", "").replace("?", "")
    glob = Glob(literal)
    assert glob.is_literal
    assert glob.matches(literal)
    assert not glob.matches(literal + "x")


def test_many_stars_stay_fast() -> None:
    # A backtracking matcher would take exponential time here.
    assert not Glob("*a" * 30 + "b").matches("a" * 200)
