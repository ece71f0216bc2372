"""Predicate paths: parsing, and resolving them to a string field of a schema at bind time."""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from raw_core.config import Predicate
from raw_core.policy.predicate import (
    PredicateError,
    ToolShape,
    bind_predicate,
    format_path,
    parse_path,
    prepare_predicate,
)


@pytest.mark.parametrize(
    ("text", "steps"),
    [
        pytest.param("path", ("path",), id="one-name"),
        pytest.param("files[*].path", ("files", None, "path"), id="array-then-name"),
        pytest.param("commands[*].command", ("commands", None, "command"), id="bash-commands"),
        pytest.param("a.b.c", ("a", "b", "c"), id="nested-objects"),
        pytest.param("matrix[*][*]", ("matrix", None, None), id="nested-arrays"),
        pytest.param("tags[*]", ("tags", None), id="array-of-strings"),
        pytest.param("with space.x-y", ("with space", "x-y"), id="any-name-characters"),
        pytest.param("$id.é", ("$id", "é"), id="unicode-and-dollar"),
    ],
)
def test_parse_path(text: str, steps: tuple[str | None, ...]) -> None:
    assert parse_path(text) == steps
    assert format_path(steps) == text


@pytest.mark.parametrize(
    ("text", "fragment"),
    [
        pytest.param("", "expected a path", id="empty"),
        pytest.param(".a", "character 1", id="leading-dot"),
        pytest.param("a.", "found the end", id="trailing-dot"),
        pytest.param("a..b", "character 3", id="double-dot"),
        pytest.param("[*]", "expected a property name at character 1", id="starts-with-array"),
        pytest.param("a.[*]", "character 3", id="array-step-without-name"),
        pytest.param("a[0]", "only '[*]'", id="index-step"),
        pytest.param("a[*", "only '[*]'", id="unclosed-bracket"),
        pytest.param("a]", "expected '.' or '[*]'", id="stray-bracket"),
        pytest.param("a[*]b", "expected '.' or '[*]'", id="name-glued-to-array-step"),
        pytest.param("a.*", "", id="star-name-is-just-a-name"),
    ],
)
def test_parse_path_rejects(text: str, fragment: str) -> None:
    if text == "a.*":  # '*' is an ordinary property name; only '[*]' steps into arrays
        assert parse_path(text) == ("a", "*")
        return
    with pytest.raises(PredicateError) as caught:
        parse_path(text)
    assert caught.value.key == "any"
    assert fragment in caught.value.message


_NAME = st.text(st.characters(exclude_characters=".[]"), min_size=1, max_size=5)


@given(st.lists(st.tuples(_NAME, st.integers(0, 2)), min_size=1, max_size=4))
def test_format_and_parse_round_trip(segments: list[tuple[str, int]]) -> None:
    steps: list[str | None] = []
    for name, arrays in segments:
        steps.append(name)
        steps.extend([None] * arrays)
    assert parse_path(format_path(steps)) == tuple(steps)


def _obj(**properties: Any) -> dict[str, Any]:
    return {"type": "object", "properties": properties}


S = {"type": "string"}
I = {"type": "integer"}  # noqa: E741


def _resolves(schema: dict[str, Any], path: str) -> str | None:
    shape = ToolShape.from_schemas("test/tool", input_schema=schema)
    try:
        bind_predicate(Predicate(source="arguments", any=path, regex="x"), shape)
    except PredicateError as exc:
        return f"{exc.key}: {exc.message}"
    return None


RESOLVES = [
    pytest.param(_obj(x=S), "x", id="string-property"),
    pytest.param(_obj(x={"type": ["string", "null"]}), "x", id="nullable-string"),
    pytest.param(_obj(x={"enum": ["a", "b"]}), "x", id="enum-of-strings"),
    pytest.param(_obj(x={"const": "a"}), "x", id="const-string"),
    pytest.param(_obj(x={"type": "string", "format": "uri", "pattern": "^h"}), "x", id="refined"),
    pytest.param(_obj(x={"type": "array", "items": S}), "x[*]", id="array-of-strings"),
    pytest.param(
        _obj(m={"type": "array", "items": {"type": "array", "items": S}}), "m[*][*]", id="matrix"
    ),
    pytest.param({**_obj(x={"$ref": "#/definitions/s"}), "definitions": {"s": S}}, "x", id="ref"),
    pytest.param(
        {
            **_obj(x={"$ref": "#/definitions/a"}),
            "definitions": {"a": {"$ref": "#/definitions/b"}, "b": S},
        },
        "x",
        id="ref-chain",
    ),
    pytest.param(
        {
            "$schema": "https://json-schema.org/draft/2020-12/schema",
            **_obj(x={"$ref": "#/$defs/s", "minLength": 1}),
            "$defs": {"s": S},
        },
        "x",
        id="2020-12-defs-ref-with-sibling",
    ),
    pytest.param(
        {
            "$schema": "https://json-schema.org/draft/2020-12/schema",
            **_obj(t={"type": "array", "prefixItems": [S, S], "items": S}),
        },
        "t[*]",
        id="2020-12-prefix-items",
    ),
    pytest.param(_obj(node={"$ref": "#"}, name=S), "node.node.name", id="recursive-ref"),
    pytest.param(
        {"type": "object", "allOf": [_obj(x=S), _obj(x={"minLength": 1})]},
        "x",
        id="allOf-combines-declarations",
    ),
    pytest.param(
        {"type": "object", "allOf": [_obj(x={"type": ["string", "integer"]}), _obj(x=S)]},
        "x",
        id="allOf-intersects-types",
    ),
    pytest.param(
        {"type": "object", "anyOf": [_obj(x=S), {**_obj(y=I), "additionalProperties": False}]},
        "x",
        id="anyOf-branch-forbidding-the-field",
    ),
    pytest.param(
        _obj(t={"type": "array", "items": [S, S], "additionalItems": False}),
        "t[*]",
        id="tuple-closed-by-additionalItems",
    ),
    pytest.param(
        {"type": "object", "oneOf": [_obj(x=S), _obj(x={"enum": ["a"]})]},
        "x",
        id="oneOf-every-declaring-branch-string",
    ),
    pytest.param(
        _obj(x={"anyOf": [S, {"type": "null"}]}), "x", id="anyOf-string-or-null-at-the-field"
    ),
    pytest.param(
        {"type": "object", "if": _obj(k=S), "then": _obj(x=S), "else": _obj(x={"const": "c"})},
        "x",
        id="if-then-else-alternatives",
    ),
    pytest.param(
        {"type": "object", "properties": {"a": S, "x": S}, "dependencies": {"a": _obj(x=S)}},
        "x",
        id="dependencies-alternative",
    ),
]


@pytest.mark.parametrize(("schema", "path"), RESOLVES)
def test_path_resolves(schema: dict[str, Any], path: str) -> None:
    assert _resolves(schema, path) is None


REFUSED = [
    pytest.param(
        {"type": "object", "anyOf": [_obj(x=S), _obj(y=I)]},
        "x",
        "declared in some alternatives",
        id="anyOf-branch-leaving-the-field-open",
    ),
    pytest.param(
        {"type": "object", "if": _obj(k=S), "then": _obj(x=S), "else": _obj(y=I)},
        "x",
        "declared in some alternatives",
        id="else-leaving-the-field-open",
    ),
    pytest.param(
        {"type": "object", "properties": {"a": S}, "dependencies": {"a": _obj(x=S)}},
        "x",
        "declared in some alternatives",
        id="dependency-only-when-present",
    ),
    pytest.param(
        _obj(t={"type": "array", "items": [S]}),
        "t[*]",
        "declared in some alternatives",
        id="tuple-without-additionalItems",
    ),
    pytest.param(_obj(x=S), "y", "no property 'y' is declared at the top level", id="missing"),
    pytest.param(_obj(x=I), "x", "declared as integer, not as a string", id="integer"),
    pytest.param(_obj(x={}), "x", "may hold any type", id="untyped"),
    pytest.param(_obj(x=True), "x", "may hold any type", id="true-schema"),
    pytest.param(_obj(x=False), "x", "allows no value", id="false-schema"),
    pytest.param(_obj(x={"minLength": 1}), "x", "may hold any type", id="string-keyword-no-type"),
    pytest.param(
        _obj(x={"type": ["string", "integer"]}), "x", "may also hold integer", id="type-list"
    ),
    pytest.param(
        _obj(x={"anyOf": [S, I]}), "x", "may also hold integer", id="anyOf-integer-branch"
    ),
    pytest.param(
        {"type": "object", "anyOf": [_obj(x=S), _obj(x=I)]},
        "x",
        "may also hold integer",
        id="anyOf-branches-disagree",
    ),
    pytest.param(
        {"type": "object", "properties": {"x": {}}, "anyOf": [_obj(x=S), {}]},
        "x",
        "may hold any type",
        id="anyOf-route-leaving-field-untyped",
    ),
    pytest.param(
        {"type": "object", "allOf": [_obj(x=S), _obj(x=I)]},
        "x",
        "allows no value",
        id="allOf-contradiction",
    ),
    pytest.param(_obj(x={"type": "null"}), "x", "declared as null", id="only-null"),
    pytest.param(
        _obj(files={"type": "array", "items": _obj(path=S)}),
        "files.path",
        "files is an array: step into it with '[*]'",
        id="name-step-on-array",
    ),
    pytest.param(
        _obj(files=_obj(path=S)),
        "files[*].path",
        "nothing at files is declared as an array",
        id="array-step-on-object",
    ),
    pytest.param(
        _obj(files={"type": "array", "items": _obj(path=S)}),
        "files[*].pth",
        "(declared: path)",
        id="typo-lists-declared-names",
    ),
    pytest.param(
        {"type": "object", "patternProperties": {"^x$": S}},
        "x",
        "no property 'x'",
        id="patternProperties-declare-no-names",
    ),
    pytest.param(
        {"type": "object", "additionalProperties": S},
        "x",
        "no property 'x'",
        id="additionalProperties-declare-no-names",
    ),
    pytest.param(
        _obj(t={"type": "array", "items": [S], "additionalItems": I}),
        "t[*]",
        "may also hold integer",
        id="tuple-additional-items-integer",
    ),
    pytest.param(_obj(x=S), "x[*]", "nothing at x is declared as an array", id="step-into-string"),
    pytest.param(
        {"type": "object", "properties": {"x": S}, "not": _obj(x=I)},
        "x.y",
        "no property 'y' is declared at x",
        id="not-declares-nothing",
    ),
]


@pytest.mark.parametrize(("schema", "path", "fragment"), REFUSED)
def test_path_refused(schema: dict[str, Any], path: str, fragment: str) -> None:
    message = _resolves(schema, path)
    assert message is not None
    assert message.startswith("any: ")
    assert fragment in message
    assert "input_schema of test/tool" in message


def test_source_must_be_a_condition_source() -> None:
    shape = ToolShape.from_schemas(
        "test/tool", input_schema=_obj(x=S), condition_sources=("arguments",)
    )
    with pytest.raises(PredicateError) as caught:
        bind_predicate(Predicate(source="effects", any="x", regex="a"), shape)
    assert caught.value.key == "source"
    assert "not one of the condition_sources of test/tool" in caught.value.message


def test_no_condition_sources_means_no_predicate() -> None:
    shape = ToolShape.from_schemas("test/tool", input_schema=_obj(x=S), condition_sources=())
    with pytest.raises(PredicateError, match=r"declared: none"):
        bind_predicate(Predicate(source="arguments", any="x", regex="a"), shape)


def test_effects_source_uses_the_effects_schema() -> None:
    shape = ToolShape.from_schemas(
        "test/tool",
        input_schema=_obj(x=I),
        effects_schema=_obj(files={"type": "array", "items": _obj(path=S)}),
        condition_sources=("arguments", "effects"),
    )
    bound = bind_predicate(Predicate(source="effects", any="files[*].path", regex="/p/"), shape)
    assert bound.matches_call({"x": 1}, {"files": [{"path": "/a/p/b"}]})
    assert not bound.matches_call({"x": 1}, None)
    with pytest.raises(PredicateError, match="effects_schema of test/tool"):
        bind_predicate(Predicate(source="effects", any="x", regex="a"), shape)


@pytest.mark.parametrize(
    ("regex", "fragment"),
    [
        pytest.param(r"(a)\1", r"invalid escape sequence: \1", id="backreference"),
        pytest.param(r"(?=a)", "invalid perl operator: (?=", id="look-ahead"),
        pytest.param(r"(?<=a)b", "invalid perl operator: (?<", id="look-behind"),
        pytest.param(r"(?!a)", "invalid perl operator: (?!", id="negative-look-ahead"),
        pytest.param("[a", "missing ]", id="unclosed-class"),
        pytest.param("a{2000}", "invalid repetition size", id="huge-repetition"),
        pytest.param("(?P<n>a)(?P=n)", "invalid perl operator: (?P", id="named-backreference"),
    ],
)
def test_regex_refused_with_re2_message(
    regex: str, fragment: str, capfd: pytest.CaptureFixture[str]
) -> None:
    with pytest.raises(PredicateError) as caught:
        prepare_predicate(Predicate(source="arguments", any="x", regex=regex))
    assert caught.value.key == "regex"
    assert fragment in caught.value.message
    assert repr(regex) in caught.value.message
    out, err = capfd.readouterr()
    assert (out, err) == ("", ""), "RE2 must not print to stderr"
