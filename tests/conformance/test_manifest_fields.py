"""Spec 000 and spec 001, "Manifest fields": every field and rule of tool.json.

Each rejection asserts the stable code, the JSON path of the field, and that the entry
module was never imported.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from raw_core.errors import ManifestInvalid
from raw_core.tools.loader import ToolLoader
from raw_core.tools.manifest import KNOWN_PANEL_ICONS

OBJECT = {"type": "object", "properties": {}, "additionalProperties": False}
PANEL = {"id": "status", "title": "Status"}

# (overrides of the valid manifest, expected JSON path of the error)
REJECTED = [
    pytest.param({"api_version": 1}, "$.api_version", id="api_version-1"),
    pytest.param({"api_version": "2"}, "$.api_version", id="api_version-string"),
    pytest.param({"api_version": 2.0}, "$.api_version", id="api_version-float"),
    pytest.param({"api_version": True}, "$.api_version", id="api_version-boolean"),
    pytest.param({"api_version": None}, "$.api_version", id="api_version-missing"),
    pytest.param({"id": None}, "$.id", id="id-missing"),
    pytest.param({"id": "Sample"}, "$.id", id="id-uppercase"),
    pytest.param({"id": "other"}, "$.id", id="id-not-folder-name"),
    pytest.param({"version": "1.0"}, "$.version", id="version-two-parts"),
    pytest.param({"version": "1.0.0-beta"}, "$.version", id="version-suffix"),
    pytest.param({"version": "01.0.0"}, "$.version", id="version-leading-zero"),
    pytest.param({"version": 1}, "$.version", id="version-number"),
    pytest.param({"name": None}, "$.name", id="name-missing"),
    pytest.param({"name": "9lives"}, "$.name", id="name-starts-with-digit"),
    pytest.param({"name": "a" * 65}, "$.name", id="name-65-characters"),
    pytest.param({"name": "read file"}, "$.name", id="name-space"),
    pytest.param({"name": "mcp/tool"}, "$.name", id="name-slash"),
    pytest.param({"description": None}, "$.description", id="description-missing"),
    pytest.param({"description": " "}, "$.description", id="description-blank"),
    pytest.param({"description": ["a"]}, "$.description", id="description-array"),
    pytest.param({"input_schema": None}, "$.input_schema", id="input_schema-missing"),
    pytest.param({"input_schema": []}, "$.input_schema", id="input_schema-array"),
    pytest.param(
        {"input_schema": {"type": "string"}},
        "$.input_schema.type",
        id="input_schema-not-object-type",
    ),
    pytest.param({"entry": None}, "$.entry", id="entry-missing"),
    pytest.param({"entry": "../tool.py"}, "$.entry", id="entry-parent"),
    pytest.param({"entry": "/tmp/tool.py"}, "$.entry", id="entry-absolute"),
    pytest.param({"entry": "./tool.mjs"}, "$.entry", id="entry-not-python"),
    pytest.param({"entry": "./missing.py"}, "$.entry", id="entry-missing-file"),
    pytest.param(
        {"condition_sources": "arguments"}, "$.condition_sources", id="condition_sources-string"
    ),
    pytest.param(
        {"condition_sources": ["results"]}, "$.condition_sources[0]", id="condition_sources-unknown"
    ),
    pytest.param(
        {"condition_sources": ["arguments", "arguments"]},
        "$.condition_sources",
        id="condition_sources-duplicate",
    ),
    pytest.param(
        {"condition_sources": ["effects"]},
        "$.effects_schema",
        id="condition_sources-effects-without-schema",
    ),
    pytest.param(
        {"effects_schema": {"type": "array"}},
        "$.effects_schema.type",
        id="effects_schema-not-object",
    ),
    pytest.param({"panels": [PANEL] * 5}, "$.panels", id="panels-five"),
    pytest.param({"panels": [PANEL, PANEL]}, "$.panels[1].id", id="panels-duplicate-id"),
    pytest.param({"panels": [{"title": "t"}]}, "$.panels[0].id", id="panel-id-missing"),
    pytest.param({"panels": [{"id": "s"}]}, "$.panels[0].title", id="panel-title-missing"),
    pytest.param(
        {"panels": [{**PANEL, "placement": "footer"}]},
        "$.panels[0].placement",
        id="panel-placement-unknown",
    ),
    pytest.param(
        {"panels": [{**PANEL, "context": "full"}]},
        "$.panels[0].context",
        id="panel-context-unknown",
    ),
    pytest.param(
        {"panels": [{**PANEL, "acp_plan": "yes"}]},
        "$.panels[0].acp_plan",
        id="panel-acp_plan-string",
    ),
    pytest.param(
        {"panels": [{**PANEL, "actions": [{"id": "a", "title": "A", "type": "x"}]}]},
        "$.panels[0].actions[0].type",
        id="panel-action-type-unknown",
    ),
    pytest.param(
        {"panels": [{**PANEL, "actions": [{"id": "a", "title": "A", "type": "prompt"}]}]},
        "$.panels[0].actions[0]",
        id="panel-prompt-action-without-prompt",
    ),
    pytest.param({"panels": "status"}, "$.panels", id="panels-string"),
]

UNKNOWN_FIELDS = [
    pytest.param({"extra": 1}, "$.extra", id="top-level"),
    pytest.param({"panels": [{**PANEL, "colour": "red"}]}, "$.panels[0].colour", id="panel"),
    pytest.param(
        {"panels": [{**PANEL, "actions": [{"id": "a", "title": "A", "type": "tool", "x": 1}]}]},
        "$.panels[0].actions[0].x",
        id="panel-action",
    ),
]


def _rejected(folder: Path, imported: Callable[[Path], bool]) -> ManifestInvalid:
    with pytest.raises(ManifestInvalid) as caught:
        ToolLoader().load(folder)
    assert not imported(folder), "the entry module ran although the manifest was rejected"
    return caught.value


@pytest.mark.parametrize(("overrides", "path"), REJECTED)
def test_each_field_rule_rejects_with_code_and_path(
    make_tool: Any, imported: Callable[[Path], bool], overrides: dict[str, Any], path: str
) -> None:
    folder = make_tool("sample", **overrides)
    error = _rejected(folder, imported)
    assert error.code == "manifest_invalid"
    assert error.field == path
    assert error.to_dict()["field"] == path


@pytest.mark.parametrize(("overrides", "path"), UNKNOWN_FIELDS)
def test_unknown_fields_are_rejected_at_every_level(
    make_tool: Any, imported: Callable[[Path], bool], overrides: dict[str, Any], path: str
) -> None:
    error = _rejected(make_tool("sample", **overrides), imported)
    assert error.code == "manifest_invalid"
    assert error.field == path
    assert "unknown field" in error.message


def test_a_complete_manifest_loads(make_tool: Any, imported: Callable[[Path], bool]) -> None:
    folder = make_tool(
        "full-tool_1",
        name="_Full-Tool_1",
        condition_sources=["arguments"],
        panels=[
            {
                "id": "todo",
                "title": "Todo",
                "icon": "checklist",
                "placement": "chat",
                "context": "summary",
                "acp_plan": True,
                "actions": [
                    {"id": "draft", "title": "Draft", "type": "prompt", "prompt": "Hi"},
                    {"id": "rerun", "title": "Run", "type": "tool", "arguments": {}},
                ],
            },
            {"id": "b", "title": "B"},
            {"id": "c", "title": "C"},
            {"id": "d", "title": "D"},
        ],
    )
    tool = ToolLoader().load(folder)
    assert imported(folder)
    assert tool.name == "_Full-Tool_1"
    assert tool.manifest.version == "1.0.0"
    assert [p.id for p in tool.manifest.panels] == ["todo", "b", "c", "d"]
    assert tool.manifest.panels[1].placement == "sidebar"  # the default
    assert tool.manifest.panels[0].actions[1].type == "tool"


def test_name_of_64_characters_is_accepted(make_tool: Any) -> None:
    assert ToolLoader().load(make_tool("sample", name="n" * 64)).name == "n" * 64


def test_unknown_panel_icon_falls_back_to_panel_with_a_warning(make_tool: Any) -> None:
    folder = make_tool("sample", panels=[{**PANEL, "icon": "rocket-ship"}])
    tool = ToolLoader().load(folder)
    assert "rocket-ship" not in KNOWN_PANEL_ICONS
    assert tool.manifest.panels[0].icon == "panel"
    assert any("rocket-ship" in w for w in tool.warnings)


def test_manifest_that_is_not_strict_json_is_rejected(
    make_tool: Any, imported: Callable[[Path], bool]
) -> None:
    text = json.dumps({"api_version": 2, "id": "sample"})[:-1] + ', "id": "sample"}'
    error = _rejected(make_tool("sample", manifest=text), imported)
    assert error.field == "$"
    assert "duplicate key 'id'" in error.message


def test_missing_manifest_is_rejected(tmp_path: Path) -> None:
    folder = tmp_path / "tools" / "empty"
    folder.mkdir(parents=True)
    with pytest.raises(ManifestInvalid, match=r"no tool\.json"):
        ToolLoader().load(folder)


def test_describe_effects_without_effects_schema_is_rejected_after_import(
    make_tool: Any, imported: Callable[[Path], bool]
) -> None:
    code = (
        "from pathlib import Path\n"
        "Path(__file__).with_name('imported.marker').write_text('x')\n"
        "def handler(args, context): return {'content': []}\n"
        "def describe_effects(args, context): return {}\n"
    )
    folder = make_tool("sample", code=code)
    with pytest.raises(ManifestInvalid) as caught:
        ToolLoader().load(folder)
    assert caught.value.field == "$.effects_schema"
    assert imported(folder)  # this rule needs the module: it is checked right after import


def test_effects_schema_with_describe_effects_loads(make_tool: Any) -> None:
    code = (
        "def handler(args, context): return {'content': []}\n"
        "def describe_effects(args, context): return {'files': []}\n"
    )
    effects = {
        "type": "object",
        "properties": {
            "files": {
                "type": "array",
                "items": {"type": "object", "properties": {"path": {"type": "string"}}},
            }
        },
    }
    folder = make_tool(
        "sample", code=code, condition_sources=["arguments", "effects"], effects_schema=effects
    )
    tool = ToolLoader().load(folder)
    assert tool.describe_effects is not None
    assert tool.effects_validator is not None
    tool.effects_validator.validate({"files": [{"path": "/a"}]})
