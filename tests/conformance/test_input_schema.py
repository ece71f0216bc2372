"""Spec 001, "Manifest fields" → input_schema: draft-07 or 2020-12, local $ref only.

Also design.md "Decisions" (2020-12 rewritten to draft-07, keywords with no equivalent
refused) and the issue's rule that a schema ``pattern`` never runs Python's backtracking
``re`` on model input.
"""

from __future__ import annotations

import http.server
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any, ClassVar

import pytest

from raw_core.errors import ManifestInvalid
from raw_core.tools._schema import (
    SchemaDefinitionError,
    SchemaValidationError,
    compile_schema,
    prepare_schema,
)
from raw_core.tools.loader import ToolLoader

D2020 = "https://json-schema.org/draft/2020-12/schema"


def validator(schema: dict[str, Any]) -> Any:
    return compile_schema(prepare_schema(schema))


def accepts(schema: dict[str, Any], value: Any) -> bool:
    try:
        validator(schema).validate(value)
    except SchemaValidationError:
        return False
    return True


def test_draft07_schema_validates_with_paths() -> None:
    schema = {
        "type": "object",
        "properties": {
            "files": {
                "type": "array",
                "items": {
                    "type": "object",
                    "properties": {"path": {"type": "string"}},
                    "required": ["path"],
                },
            }
        },
        "required": ["files"],
    }
    with pytest.raises(SchemaValidationError) as caught:
        validator(schema).validate({"files": [{"path": "a"}, {"path": 3}]})
    assert caught.value.path == "$.files[1].path"
    assert "string" in caught.value.message


@pytest.mark.parametrize(
    ("schema", "good", "bad"),
    [
        pytest.param(
            {
                "type": "object",
                "$schema": D2020,
                "properties": {
                    "t": {
                        "type": "array",
                        "prefixItems": [{"type": "string"}, {"type": "integer"}],
                        "items": False,
                    }
                },
            },
            {"t": ["a", 1]},
            {"t": ["a", 1, 2]},
            id="prefixItems-items",
        ),
        pytest.param(
            {
                "type": "object",
                "$schema": D2020,
                "properties": {"t": {"type": "array", "prefixItems": [{"type": "string"}]}},
            },
            {"t": ["a", 1, None]},
            {"t": [1]},
            id="prefixItems-open",
        ),
        pytest.param(
            {"type": "object", "$schema": D2020, "dependentRequired": {"a": ["b"]}},
            {"a": 1, "b": 2},
            {"a": 1},
            id="dependentRequired",
        ),
        pytest.param(
            {"type": "object", "$schema": D2020, "dependentSchemas": {"a": {"required": ["c"]}}},
            {"a": 1, "c": 2},
            {"a": 1},
            id="dependentSchemas",
        ),
        pytest.param(
            {
                "type": "object",
                "$schema": D2020,
                "$defs": {"n": {"type": "integer"}},
                "properties": {"x": {"$ref": "#/$defs/n"}},
            },
            {"x": 1},
            {"x": "1"},
            id="defs-ref",
        ),
        pytest.param(
            {
                "type": "object",
                "$schema": D2020,
                "$defs": {"n": {"type": "integer"}},
                "properties": {"x": {"$ref": "#/$defs/n", "minimum": 5}},
            },
            {"x": 6},
            {"x": 2},
            id="ref-with-siblings-applies-both",
        ),
        pytest.param(
            {
                "type": "object",
                "definitions": {"s": {"type": "string"}},
                "properties": {"x": {"$ref": "#/definitions/s"}},
            },
            {"x": "a"},
            {"x": 1},
            id="draft07-definitions-ref",
        ),
    ],
)
def test_2020_12_keywords_are_rewritten_to_their_draft07_equivalent(
    schema: dict[str, Any], good: Any, bad: Any
) -> None:
    assert accepts(schema, good)
    assert not accepts(schema, bad)


@pytest.mark.parametrize(
    ("schema", "path"),
    [
        pytest.param(
            {"type": "object", "$schema": D2020, "unevaluatedProperties": False},
            "$.unevaluatedProperties",
            id="unevaluatedProperties",
        ),
        pytest.param(
            {
                "type": "object",
                "$schema": D2020,
                "properties": {"a": {"type": "array", "unevaluatedItems": False}},
            },
            "$.properties.a.unevaluatedItems",
            id="unevaluatedItems",
        ),
        pytest.param(
            {"type": "object", "$schema": D2020, "$dynamicAnchor": "x"},
            '$["$dynamicAnchor"]',
            id="dynamicAnchor",
        ),
        pytest.param(
            {"type": "object", "$schema": D2020, "properties": {"a": {"$dynamicRef": "#x"}}},
            '$.properties.a["$dynamicRef"]',
            id="dynamicRef",
        ),
        pytest.param(
            {"type": "object", "prefixItems": []}, "$.prefixItems", id="2020-keyword-in-draft07"
        ),
        pytest.param(
            {"type": "object", "$schema": "http://json-schema.org/draft-04/schema#"},
            '$["$schema"]',
            id="draft-04",
        ),
        pytest.param(
            {
                "type": "object",
                "$schema": D2020,
                "properties": {"a": {"items": [{"type": "string"}]}},
            },
            "$.properties.a.items",
            id="2020-items-array",
        ),
        pytest.param(
            {"type": "object", "properties": {"a": {"$ref": "#/definitions/nope"}}},
            '$.properties.a["$ref"]',
            id="unresolved-local-ref",
        ),
        pytest.param(
            {"type": "object", "properties": {"a": {"$id": "http://x/y"}}},
            '$.properties.a["$id"]',
            id="nested-id",
        ),
        pytest.param(
            {"type": "object", "properties": {"a": {"type": "string", "pattern": "(?<=a)b"}}},
            "$.properties.a.pattern",
            id="lookbehind",
        ),
        pytest.param(
            {"type": "object", "patternProperties": {"(a)\\1": {}}},
            '$.patternProperties["(a)\\\\1"]',
            id="backreference-patternProperties",
        ),
    ],
)
def test_schemas_raw_cannot_honour_are_refused_naming_the_keyword(
    schema: dict[str, Any], path: str
) -> None:
    with pytest.raises(SchemaDefinitionError) as caught:
        prepare_schema(schema)
    assert caught.value.path == path


def test_re2_message_is_quoted_for_an_unsupported_pattern(make_tool: Any) -> None:
    folder = make_tool(
        "sample",
        input_schema={
            "type": "object",
            "properties": {"a": {"type": "string", "pattern": "(?=x)"}},
        },
    )
    with pytest.raises(ManifestInvalid) as caught:
        ToolLoader().load(folder)
    assert caught.value.field == "$.input_schema.properties.a.pattern"
    assert "invalid perl operator" in caught.value.message


class _CountingHandler(http.server.BaseHTTPRequestHandler):
    hits: ClassVar[list[str]] = []

    def do_GET(self) -> None:
        self.hits.append(self.path)
        body = b'{"type": "string"}'
        self.send_response(200)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, format: str, *args: Any) -> None:
        pass


@pytest.fixture
def schema_server() -> Iterator[tuple[str, list[str]]]:
    hits: list[str] = []
    handler = type("Handler", (_CountingHandler,), {"hits": hits})
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}", hits
    finally:
        server.shutdown()
        server.server_close()
        thread.join()


def test_a_remote_ref_is_an_error_and_is_never_fetched(
    make_tool: Any, schema_server: tuple[str, list[str]]
) -> None:
    url, hits = schema_server
    folder = make_tool(
        "sample",
        input_schema={"type": "object", "properties": {"a": {"$ref": f"{url}/string.json"}}},
    )
    with pytest.raises(ManifestInvalid) as caught:
        ToolLoader().load(folder)
    assert caught.value.field == '$.input_schema.properties.a["$ref"]'
    assert "never" in caught.value.message or "fetched" in caught.value.message
    assert hits == []


def test_root_id_with_a_remote_base_still_never_fetches(
    schema_server: tuple[str, list[str]],
) -> None:
    url, hits = schema_server
    schema = {
        "$id": f"{url}/root.json",
        "type": "object",
        "definitions": {"s": {"type": "string"}},
        "properties": {"a": {"$ref": "#/definitions/s"}},
    }
    assert accepts(schema, {"a": "x"})
    assert not accepts(schema, {"a": 1})
    assert hits == []


def test_patterns_run_in_linear_time_on_model_input() -> None:
    schema = {
        "type": "object",
        "properties": {"a": {"type": "string", "pattern": "^(a+)+$"}},
        "patternProperties": {"^(b+)+$": {"type": "integer"}},
    }
    check = validator(schema)
    evil = "a" * 5000 + "!"
    started = time.perf_counter()
    with pytest.raises(SchemaValidationError):
        check.validate({"a": evil})
    with pytest.raises(SchemaValidationError):
        check.validate({"b" * 5000: "not an integer"})
    check.validate({"b" * 5000 + "!": "no pattern matches this key"})
    # Python's re would not finish at all (2**5000 ways to try); RE2 takes milliseconds.
    # The bound is generous: it tells linear from exponential, not fast from slow.
    assert time.perf_counter() - started < 30


def test_dollar_follows_re2_not_python_re() -> None:
    schema = {"type": "object", "properties": {"a": {"type": "string", "pattern": "^x$"}}}
    assert accepts(schema, {"a": "x"})
    assert not accepts(schema, {"a": "x\n"})  # Python's re would accept "x\n"


def test_validation_never_inserts_defaults_or_changes_the_value() -> None:
    schema = {"type": "object", "properties": {"a": {"type": "string", "default": "d"}}}
    value: dict[str, Any] = {}
    validator(schema).validate(value)
    assert value == {}


def test_format_is_an_annotation() -> None:
    schema = {"type": "object", "properties": {"a": {"type": "string", "format": "email"}}}
    assert accepts(schema, {"a": "not an email"})


def test_preparing_never_mutates_the_written_schema() -> None:
    schema: dict[str, Any] = {
        "type": "object",
        "$schema": D2020,
        "properties": {"t": {"prefixItems": [{"type": "string"}]}},
    }
    before = repr(schema)
    prepare_schema(schema)
    assert repr(schema) == before


def test_loaded_tool_keeps_the_schema_as_written(make_tool: Any, tmp_path: Path) -> None:
    written = {
        "type": "object",
        "$schema": D2020,
        "properties": {"t": {"type": "array", "prefixItems": [{"type": "string"}]}},
    }
    tool = ToolLoader().load(make_tool("sample", input_schema=written))
    assert tool.manifest.input_schema == written
    tool.input_validator.validate({"t": ["a"]})
    with pytest.raises(SchemaValidationError):
        tool.input_validator.validate({"t": [1]})


@pytest.mark.parametrize(
    ("schema", "where"),
    [
        (
            {
                "properties": {"n": {"$ref": "#/definitions/a"}},
                "definitions": {"a": {"$ref": "#/definitions/a"}},
            },
            '$.definitions.a["$ref"]',
        ),
        (
            {
                "properties": {"n": {"$ref": "#/definitions/a"}},
                "definitions": {
                    "a": {"$ref": "#/definitions/b"},
                    "b": {"allOf": [{"$ref": "#/definitions/a"}]},
                },
            },
            '$.definitions.b.allOf[0]["$ref"]',
        ),
        ({"allOf": [{"not": {"$ref": "#"}}]}, '$.allOf[0].not["$ref"]'),
        ({"dependencies": {"x": {"$ref": "#"}}}, '$.dependencies.x["$ref"]'),
        (
            {
                "properties": {"a": {"$ref": "#/components/schemas/List"}},
                "components": {
                    "schemas": {
                        "List": {"type": "array", "items": {"$ref": "#/components/schemas/Item"}},
                        "Item": {"anyOf": [{"$ref": "#/components/schemas/Item"}]},
                    }
                },
            },
            '$.components.schemas.Item.anyOf[0]["$ref"]',
        ),
    ],
    ids=["self", "through-allOf", "root-through-not", "through-dependencies", "under-any-key"],
)
def test_a_reference_loop_that_never_steps_into_the_value_is_refused(
    schema: dict[str, Any], where: str
) -> None:
    """Validating would recurse without end (RecursionError on every call): refused when
    the schema is prepared, at the reference that closes the loop."""
    with pytest.raises(SchemaDefinitionError) as caught:
        prepare_schema({"type": "object", **schema})
    assert caught.value.path == where
    assert "validating would never end" in str(caught.value)


@pytest.mark.parametrize(
    "schema",
    [
        {"properties": {"children": {"type": "array", "items": {"$ref": "#"}}}},
        {
            "properties": {"v": {"$ref": "#/definitions/x"}},
            "definitions": {
                "x": {
                    "anyOf": [
                        {"type": "string"},
                        {"type": "array", "items": {"$ref": "#/definitions/x"}},
                    ]
                }
            },
        },
        {"properties": {"next": {"$ref": "#"}}},
        # Never run, so never endless: then without if, a definition nothing names, the
        # siblings of a draft-07 $ref.
        {"properties": {"path": {"type": "string", "then": {"$ref": "#/properties/path"}}}},
        {"definitions": {"unused": {"$ref": "#/definitions/unused"}}},
        {
            "properties": {"a": {"$ref": "#/definitions/s", "anyOf": [{"$ref": "#/properties/a"}]}},
            "definitions": {"s": {"type": "string"}},
        },
    ],
    ids=["tree", "nested-arrays", "linked-list", "then-without-if", "unused", "ref-siblings"],
)
def test_a_recursive_schema_that_steps_into_the_value_is_accepted(schema: dict[str, Any]) -> None:
    validate = validator({"type": "object", **schema}).validate
    validate({"children": [{"children": []}], "v": ["a", ["b"]], "next": {"next": {}}})
    validate({"path": "p", "a": "s"})


def test_a_local_reference_is_a_uri_fragment_percent_decoded() -> None:
    """``#/definitions/a%20b`` names the definition ``a b`` (RFC 6901, section 6), for the
    load's check as for the validator."""
    schema = {
        "type": "object",
        "properties": {"v": {"$ref": "#/definitions/a%20b"}, "w": {"$ref": "#/definitions/c~1d"}},
        "definitions": {"a b": {"type": "string"}, "c/d": {"type": "integer"}},
    }
    validate = validator(schema).validate
    validate({"v": "x", "w": 1})
    with pytest.raises(SchemaValidationError) as caught:
        validate({"v": 1})
    assert caught.value.path == "$.v"
    with pytest.raises(SchemaDefinitionError):
        prepare_schema(
            {
                "type": "object",
                "properties": {"v": {"$ref": "#/definitions/a%20c"}},
                "definitions": {"a b": {}},
            }
        )
