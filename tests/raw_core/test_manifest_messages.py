"""A tool that fails to load names itself and its file; schema and manifest errors quote
values as JSON, never as Python writes them (``['a', 'b']``, ``{'x'}``, ``True``)."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from raw_core.agent import load_agent
from raw_core.cli import cli
from raw_core.config import load_config
from raw_core.errors import ManifestError
from raw_core.plugins import PluginHost
from raw_core.tools.loader import ToolLoader
from raw_core.tools.manifest import parse_manifest
from tests.conftest import manifest_for

# A Python repr of a list, set or dict of strings, or of a constant: what no message quotes.
PYTHON_REPR = re.compile(r"\['|\{'|': |\bTrue\b|\bFalse\b|\bNone\b")


@pytest.fixture(autouse=True)
def xdg(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path / "xdg"))
    monkeypatch.setenv("XDG_STATE_HOME", str(tmp_path / "state"))
    monkeypatch.chdir(tmp_path)


def agent_config(tmp_path: Path, make_tool: Any, **fields: Any) -> tuple[Path, Path]:
    """A config whose agent selects ``agent/bad``, a tool folder with ``fields`` changed."""
    folder = make_tool("bad", root=tmp_path / "tools", **fields)
    config = tmp_path / "raw.json"
    config.write_text(json.dumps({"agents": {"a": {"tools": {"use": ["agent/bad"]}}}}))
    return config, folder


# --- the tool and the file are named -----------------------------------------------------


def test_a_bad_manifest_reached_through_a_config_names_the_tool_and_the_file(
    tmp_path: Path, make_tool: Any
) -> None:
    config, folder = agent_config(tmp_path, make_tool, author="someone")
    with pytest.raises(ManifestError) as caught:
        load_agent(load_config(config), host=PluginHost())
    error = caught.value
    manifest = str(folder / "tool.json")
    assert error.code == "manifest_invalid"
    assert error.message == f"agent/bad ({manifest}): unknown field"
    assert error.context["tool"] == "agent/bad"
    assert error.context["path"] == manifest
    assert error.field == "$.author"


def test_config_validate_names_the_tool_and_the_file(tmp_path: Path, make_tool: Any) -> None:
    config, folder = agent_config(tmp_path, make_tool, author="someone")
    manifest = folder / "tool.json"
    human = CliRunner().invoke(cli, ["config", "validate", "--config", str(config)])
    assert human.exit_code == 2
    assert f"$.author: manifest_invalid: agent/bad ({manifest}): unknown field" in human.output
    as_json = CliRunner().invoke(cli, ["config", "validate", "--config", str(config), "--json"])
    (problem,) = json.loads(as_json.output)["problems"]
    assert problem == {
        "code": "manifest_invalid",
        "field": "$.author",
        "message": f"agent/bad ({manifest}): unknown field",
    }


def test_tools_list_names_the_tool_and_the_file(tmp_path: Path, make_tool: Any) -> None:
    config, folder = agent_config(tmp_path, make_tool, version="1.0")
    result = CliRunner().invoke(cli, ["tools", "list", "--config", str(config)])
    assert result.exit_code == 2
    assert result.output == (
        f"raw: manifest_invalid: agent/bad ({folder / 'tool.json'}): expected"
        ' major.minor.patch, found "1.0" (at $.version)\n'
    )


def test_tools_check_names_the_file(make_tool: Any) -> None:
    folder = make_tool("bad", api_version=True)
    result = CliRunner().invoke(cli, ["tools", "check", "--json", str(folder)])
    (report,) = json.loads(result.output)
    assert report["error"] == {
        "code": "manifest_invalid",
        "field": "$.api_version",
        "message": f"{folder / 'tool.json'}: expected the integer 2, found true",
    }


def test_an_entry_that_exports_no_handler_names_the_tool_and_the_entry(
    tmp_path: Path, make_tool: Any
) -> None:
    folder = make_tool("bad", code="x = 1\n")
    with pytest.raises(ManifestError) as caught:
        ToolLoader().load(folder, identity="agent/bad")
    entry = str(folder / "tool.py")
    assert caught.value.code == "tool_entry_invalid"
    assert (
        caught.value.message == f"agent/bad ({entry}): ./tool.py must export handler(args, context)"
    )
    assert caught.value.context["path"] == entry


# --- schema errors quote JSON ------------------------------------------------------------


def call_error(tmp_path: Path, make_tool: Any, schema: dict[str, Any], arguments: Any) -> str:
    """The error text ``raw tools call`` prints for ``arguments`` against ``schema``."""
    config, _ = agent_config(tmp_path, make_tool, input_schema={"type": "object", **schema})
    result = CliRunner().invoke(
        cli, ["tools", "call", "agent/bad", json.dumps(arguments), "--config", str(config)]
    )
    assert result.exit_code == 1, result.output
    text: str = result.output.strip()
    assert not PYTHON_REPR.search(text), text
    return text


@pytest.mark.parametrize(
    ("schema", "arguments", "expected"),
    [
        pytest.param(
            {"properties": {"mode": {"enum": ["a", "b", None, True, {"k": 1}]}}},
            {"mode": "c"},
            '$.mode: must be one of ["a","b",null,true,{"k":1}]',
            id="enum",
        ),
        pytest.param(
            {"required": ["files", "mode"], "properties": {"mode": {}}},
            {"mode": 1},
            '$: must have the properties ["files"]',
            id="required",
        ),
        pytest.param(
            {
                "properties": {"a": {}},
                "patternProperties": {"^x": {}},
                "additionalProperties": False,
            },
            {"a": 1, "xy": 2, "zz": 3, "b": 4},
            '$: must not have the properties ["zz","b"]',
            id="additional-properties",
        ),
        pytest.param(
            {"properties": {"a": {"const": {"k": [True, None]}}}},
            {"a": 1},
            '$.a: must be {"k":[true,null]}',
            id="const",
        ),
        pytest.param(
            {"properties": {"a": {"type": "string", "pattern": "^a'b$"}}},
            {"a": "c"},
            """$.a: must match the pattern "^a'b$\"""",
            id="pattern",
        ),
        pytest.param(
            {"dependencies": {"a": ["b", "c"]}},
            {"a": 1, "c": 2},
            '$: has "a", so it must also have ["b"]',
            id="dependencies",
        ),
    ],
)
def test_argument_errors_quote_the_schema_as_json(
    tmp_path: Path, make_tool: Any, schema: dict[str, Any], arguments: Any, expected: str
) -> None:
    assert call_error(tmp_path, make_tool, schema, arguments) == (
        f"error [invalid_arguments]: {expected}"
    )


def manifest_error(**fields: Any) -> str:
    with pytest.raises(ManifestError) as caught:
        parse_manifest(json.dumps(manifest_for("bad", **fields)), tool="bad")
    message = caught.value.message
    assert not PYTHON_REPR.search(message), message
    return message


@pytest.mark.parametrize(
    ("schema", "expected"),
    [
        pytest.param({"required": ["a", "a"]}, 'found ["a","a"]', id="required"),
        pytest.param({"minLength": True}, "found true", id="boolean"),
        pytest.param({"enum": {"a": None}}, 'found {"a":null}', id="object"),
        pytest.param({"type": ["string", None]}, 'found ["string",null]', id="type"),
        pytest.param({"$ref": "http://example.test/s"}, '"http://example.test/s"', id="ref"),
        pytest.param({"pattern": "(?=x)"}, 'RE2 rejects pattern "(?=x)"', id="pattern"),
    ],
)
def test_schema_definition_errors_quote_values_as_json(
    schema: dict[str, Any], expected: str
) -> None:
    input_schema = {"type": "object", "properties": {"p": schema}}
    assert expected in manifest_error(input_schema=input_schema)


@pytest.mark.parametrize(
    ("fields", "expected"),
    [
        pytest.param({"version": "1.0"}, 'found "1.0"', id="version"),
        pytest.param({"api_version": "2"}, 'found "2"', id="api-version"),
        pytest.param({"entry": "../x.py"}, 'found "../x.py"', id="entry"),
        pytest.param(
            {"panels": [{"id": "p", "title": "P"}, {"id": "p", "title": "Q"}]},
            'panel id "p" is declared twice',
            id="panel-id",
        ),
    ],
)
def test_manifest_errors_quote_values_as_json(fields: dict[str, Any], expected: str) -> None:
    assert expected in manifest_error(**fields)
