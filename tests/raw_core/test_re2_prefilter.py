"""The required-literal prefilter of raw's RE2 patterns never changes an answer.

``compile_pattern`` and ``compile_any`` skip RE2 when a text lacks a literal every match
must contain. These tests compare their answers with RE2's own (the same pattern run with
no prefilter) on many generated patterns and texts — patterns mixing what the derivation
reads (plain characters, escaped punctuation, ``.``, ``^``, ``$``, ``\\b``, ``\\s``,
quantifiers, lazy ones, groups and classes read past whole) with what makes it give up
(flags, counted repetitions, top-level alternations, ``\\x``, non-ASCII) — and check the
derivation's promise directly: every text RE2 matches contains the literal.
"""

from __future__ import annotations

import random

import pytest
import re2

from raw_core._re2 import PatternError, _Pattern, compile_any, compile_pattern, required_literal

# Atoms the derivation reads, and some it refuses; the texts use the same few characters
# so that matches, near misses and texts lacking a literal are all common.
READ = ["a", "b", "c", " ", "-", "#", "\\.", "\\-", "\\\\", "\\*", ".", "^", "$", "\\b", "\\B"]
READ += ["\\s", "\\S", "\\d", "\\w", "\\W", "\\A", "\\z", "\\n", "\\t", "1", "/", "_", "\\_"]
# Groups and classes are read past whole, whatever is inside them (alternations too).
READ += ["(?:a|b)", "(a)", "(a|b)", "(ab|c)", "(a(b|c))", "(^|[;&])", "(\\s|$)", "([)]|a)"]
READ += ["[ab]", "[^a]", "[]a]", "[a-c]", "[[:alpha:]]", "[\\]a]", "(?:[|]b)", "(a|)"]

REFUSED = ["(?i)", "(?s)", "(?i:ab)", "(?P<n>a)", "[[a]]", "a{2}", "{1,}", "|", "\\x61", "é"]
REFUSED += ["\\pL", "]", ")", "\\Qa.\\E", "(\\Qa)\\E)", "\\C", "\\1", "}", "a|b"]
# A range ending in [ with a : after it: RE2 reads no [:name:] there, so what follows may
# be top-level syntax (a misreading of it once let a deny rule's pattern be skipped).
REFUSED += ["[A-[:]|:]]", "[a-[:]", "(?:[a-[:])", "[^A-[:alpha:]|a]", "[-[:alpha:]]"]
QUANTIFIERS = ["", "", "", "?", "*", "+", "??", "*?", "+?"]
TEXT_CHARS = "abc -#.*\\1/_\n\tAé\ufffd"
SURROGATE = "\ud800"


def random_pattern(rng: random.Random) -> str:
    parts: list[str] = []
    for _ in range(rng.randint(0, 7)):
        atom = rng.choice(REFUSED) if rng.random() < 0.08 else rng.choice(READ)
        parts.append(atom + rng.choice(QUANTIFIERS))
    return "".join(parts)


def random_text(rng: random.Random, pattern: str) -> str:
    pick = rng.random()
    if pick < 0.3:  # pieces of the pattern itself, unescaped: often a match
        pieces = [c for c in pattern.replace("\\", "") if c not in "?*+^$"] or ["a"]
        text = "".join(rng.choice(pieces) for _ in range(rng.randint(0, 10)))
    else:
        text = "".join(rng.choice(TEXT_CHARS) for _ in range(rng.randint(0, 10)))
    if rng.random() < 0.05:
        at = rng.randint(0, len(text))
        text = text[:at] + SURROGATE + text[at:]
    return text


def re2_answer(pattern: str, text: str) -> bool:
    """RE2's answer with no prefilter: the same binding, every text searched."""
    return _Pattern(pattern).test(text)


def compiled_patterns(seed: int, count: int) -> list[str]:
    rng = random.Random(seed)
    found: list[str] = []
    while len(found) < count:
        pattern = random_pattern(rng)
        try:
            compile_pattern(pattern)
        except PatternError:
            continue
        found.append(pattern)
    return found


@pytest.mark.parametrize("seed", range(4))
def test_the_prefilter_agrees_with_re2_on_generated_patterns(seed: int) -> None:
    rng = random.Random(1000 + seed)
    prefiltered = 0
    skipped = 0
    for pattern in compiled_patterns(seed, 1500):
        literal = required_literal(pattern)
        compiled = compile_pattern(pattern)
        prefiltered += literal is not None
        for _ in range(25):
            text = random_text(rng, pattern)
            expected = re2_answer(pattern, text)
            assert compiled.test(text) is expected, (pattern, literal, text)
            if expected:  # the derivation's promise, checked on its own
                assert literal is None or literal in text, (pattern, literal, text)
            elif literal is not None and literal not in text:
                skipped += 1
    # The generator exercises the prefilter: many patterns get a literal, many texts skip RE2.
    assert prefiltered > 300
    assert skipped > 5000


def test_re2_python_api_agrees_where_it_can_read_the_text() -> None:
    """google-re2's own ``search`` (no lone surrogates: it cannot encode them)."""
    rng = random.Random(7)
    for pattern in compiled_patterns(99, 800):
        compiled = compile_pattern(pattern)
        for _ in range(10):
            text = random_text(rng, pattern).replace(SURROGATE, "")
            expected = re2.search(pattern, text) is not None
            assert compiled.test(text) is expected, (pattern, text)


@pytest.mark.parametrize("seed", range(2))
def test_a_joined_alternation_agrees_with_re2(seed: int) -> None:
    rng = random.Random(2000 + seed)
    patterns = compiled_patterns(50 + seed, 900)
    for index in range(0, len(patterns), 3):
        parts = patterns[index : index + rng.randint(2, 3)]
        if len(parts) < 2 or any("\\Q" in part for part in parts):
            continue
        try:
            joined = compile_any(parts)
        except PatternError:
            continue
        for _ in range(20):
            text = random_text(rng, "".join(parts))
            expected = any(re2_answer(part, text) for part in parts)
            assert joined.test(text) is expected, (parts, text)


@pytest.mark.parametrize(
    ("pattern", "literal"),
    [
        ("\\bgit\\s+push\\b", "push"),
        ("\\bgit\\s+status", "status"),
        ("rm\\s+-rf", "-rf"),
        ("\\.env$", ".env"),
        ("abc?d", "ab"),  # c may be absent: the runs are "ab" and "d"
        ("ab*", "a"),
        ("a+?bc", "bc"),  # a lazy quantifier: its "?" finds the run empty
        ("^sudo ", "sudo "),
        ("x\\\\y", "x\\y"),
        ("", None),
        ("^$", None),
        (".*", None),
        ("a?", None),
        ("(push)", None),  # a group is an atom: what is inside is not read
        ("pu[s]h", "pu"),
        ("(^|[;&|()\\n])\\s*(sudo\\s+)?(/usr/bin/|/bin/)?rm(\\s|$)", "rm"),
        ("((a)|b)cd", "cd"),  # an alternation inside a group stays inside it
        ("[]a]xy", "xy"),
        ("[[:alpha:]]zz", "zz"),
        ("([)])qq", "qq"),
        ("(ab)+c", "c"),
        ("rm(ab)?", "rm"),
    ],
)
def test_required_literal_reads_simple_patterns(pattern: str, literal: str | None) -> None:
    assert required_literal(pattern) == literal


@pytest.mark.parametrize(
    "pattern",
    [
        "git|push",
        "(?i)push",
        "(?i:pu)sh",
        "(?P<n>p)ush",
        "(pu)|sh",
        "[[a]]push",
        "(push",
        "[push",
        "(pu\\Q)\\E)sh",
        "[A-[:]|:]]zzz",  # the class is A-[ and ':', then an alternation at the top level
        "(?:[A-[:])|(:]])zzz",
        "[!-[:]|:]]rm",
        "push{1}",
        "pus\\x68",
        "\\Qpush\\E",
        "push\\pL",
        "push\\1",
        "pushé",
        "push]",
        "push}",
        "push\\",
        "push\\q",
    ],
)
def test_required_literal_gives_up_on_what_it_does_not_read(pattern: str) -> None:
    assert required_literal(pattern) is None


def test_a_joined_alternation_needs_a_literal_in_every_part_and_few_of_them() -> None:
    joined = compile_any(["\\bgit\\s+push\\b", "curl", "push"])
    assert joined.required == ("push", "curl")
    assert joined.test("curl x")
    assert not joined.test("git status")
    with_flag = compile_any(["push", "(?i)CURL"])  # a part with no literal
    assert with_flag.required == ()
    assert with_flag.test("curl")
    many = compile_any([f"tool{index}" for index in range(5)])
    assert many.required == ()  # five literals to look for: RE2's one pass is cheaper
    assert many.test("tool4")
    assert compile_pattern("\\bgit\\s+push\\b").required == ("push",)
    assert compile_pattern("a|b").required == ()
