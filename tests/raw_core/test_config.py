"""The config file, first version: every field validated with its JSON path."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from raw_core.config import DEFAULT_MAX_OUTPUT_BYTES, DEFAULT_MAX_STEPS, load_config, parse_config
from raw_core.errors import ConfigInvalid, ConfigNotFound


def agent(**fields: Any) -> dict[str, Any]:
    return {"tools": {"use": []}, **fields}


def config(**top: Any) -> str:
    document = {"agents": {"coder": agent()}, **top}
    return json.dumps(document)


def test_minimal_config_has_defaults() -> None:
    parsed = parse_config(config())
    name, coder = parsed.resolve_agent()
    assert name == "coder"
    assert coder.model is None
    assert coder.max_steps == DEFAULT_MAX_STEPS
    assert coder.max_output_bytes == DEFAULT_MAX_OUTPUT_BYTES
    assert coder.tools.rules == ()


def test_the_design_skeleton_shape_parses() -> None:
    parsed = parse_config(
        json.dumps(
            {
                "default_agent": "coder",
                "models": {
                    "local": {
                        "provider": "openai",
                        "model": "qwen3-coder",
                        "base_url": "http://127.0.0.1:8080/v1",
                    }
                },
                "agents": {
                    "coder": {
                        "model": "local",
                        "system": "Be careful.",
                        "max_steps": 10,
                        "max_output_bytes": 4096,
                        "tools": {
                            "use": ["builtin/read_file"],
                            "rules": [{"match": "builtin/*", "effect": "deny"}],
                        },
                    }
                },
            }
        )
    )
    _, coder = parsed.resolve_agent()
    assert coder.model == "local"
    assert parsed.models["local"].base_url == "http://127.0.0.1:8080/v1"
    assert coder.tools.rules[0].effect == "deny"


BAD = [
    pytest.param({}, "$.agents", "required field is missing", id="agents-missing"),
    pytest.param({"agents": []}, "$.agents", "expected an object", id="agents-array"),
    pytest.param(
        {"agents": {"a": agent()}, "extra": 1}, "$.extra", "unknown field", id="unknown-top-level"
    ),
    pytest.param(
        {"agents": {"a": {"tools": {"use": []}, "color": "x"}}},
        "$.agents.a.color",
        "unknown field",
        id="unknown-agent-field",
    ),
    pytest.param({"agents": {"a": {}}}, "$.agents.a.tools", "required field", id="tools-missing"),
    pytest.param(
        {"agents": {"a": {"tools": {"use": "builtin/bash"}}}},
        "$.agents.a.tools.use",
        "expected an array",
        id="use-string",
    ),
    pytest.param(
        {"agents": {"a": {"tools": {"use": [1]}}}},
        "$.agents.a.tools.use[0]",
        "expected a string",
        id="use-number",
    ),
    pytest.param(
        {"agents": {"a": {"tools": {"use": [], "allow": []}}}},
        "$.agents.a.tools.allow",
        "unknown field",
        id="unknown-tools-field",
    ),
    pytest.param(
        {"agents": {"a": agent(max_steps=0)}},
        "$.agents.a.max_steps",
        "positive",
        id="max_steps-zero",
    ),
    pytest.param(
        {"agents": {"a": agent(max_steps="5")}},
        "$.agents.a.max_steps",
        "expected an integer",
        id="max_steps-string",
    ),
    pytest.param(
        {"agents": {"a": agent(max_output_bytes=-1)}},
        "$.agents.a.max_output_bytes",
        "positive",
        id="max_output_bytes-negative",
    ),
    pytest.param(
        {"agents": {"a": agent(system=3)}},
        "$.agents.a.system",
        "expected a string",
        id="system-number",
    ),
    pytest.param(
        {"agents": {"a": agent(model="gpt")}},
        "$.agents.a.model",
        "not defined",
        id="model-undefined",
    ),
    pytest.param(
        {"agents": {"a": agent()}, "models": {"m": {"provider": "openai"}}},
        "$.models.m.model",
        "required field",
        id="model-definition-incomplete",
    ),
    pytest.param(
        {"agents": {"a": agent()}, "default_agent": "b"},
        "$.default_agent",
        "not an agent",
        id="default_agent-unknown",
    ),
    pytest.param(
        {"agents": {"a": {"tools": {"use": [], "rules": [{"match": "x"}]}}}},
        "$.agents.a.tools.rules[0].effect",
        "required field",
        id="rule-effect-missing",
    ),
    pytest.param(
        {"agents": {"a": {"tools": {"use": [], "rules": [{"match": "x", "effect": "block"}]}}}},
        "$.agents.a.tools.rules[0].effect",
        'expected one of "allow", "ask", "deny"',
        id="rule-effect-unknown",
    ),
    pytest.param(
        {
            "agents": {
                "a": {
                    "tools": {
                        "use": [],
                        "rules": [
                            {
                                "match": "x",
                                "effect": "deny",
                                "when": {"source": "arguments", "any": "a", "regex": "b"},
                            }
                        ],
                    }
                }
            }
        },
        "$.agents.a.tools.rules[0].when",
        "only valid with effect 'ask'",
        id="when-with-deny",
    ),
    pytest.param(
        {
            "agents": {
                "a": {
                    "tools": {
                        "use": [],
                        "rules": [
                            {
                                "match": "x",
                                "effect": "ask",
                                "when": {
                                    "source": "arguments",
                                    "any": "a",
                                    "regex": "b",
                                    "flags": "i",
                                },
                            }
                        ],
                    }
                }
            }
        },
        "$.agents.a.tools.rules[0].when.flags",
        "unknown field",
        id="when-unknown-key",
    ),
    pytest.param(
        {
            "agents": {
                "a": {
                    "tools": {
                        "use": [],
                        "rules": [
                            {
                                "match": "x",
                                "effect": "ask",
                                "when": {"source": "output", "any": "a", "regex": "b"},
                            }
                        ],
                    }
                }
            }
        },
        "$.agents.a.tools.rules[0].when.source",
        "expected one of",
        id="when-source-unknown",
    ),
]


@pytest.mark.parametrize(("document", "path", "fragment"), BAD)
def test_each_bad_field_is_named_by_its_path(document: Any, path: str, fragment: str) -> None:
    with pytest.raises(ConfigInvalid) as caught:
        parse_config(json.dumps(document))
    assert caught.value.code == "config_invalid"
    assert caught.value.field == path
    assert fragment in caught.value.message


@pytest.mark.parametrize(
    "text",
    [
        pytest.param('{"agents": {}, "agents": {}}', id="duplicate-key"),
        pytest.param('{"agents": NaN}', id="nan"),
        pytest.param("{", id="truncated"),
        pytest.param("[" * 100 + "]" * 100, id="too-deep"),
    ],
)
def test_text_that_is_not_strict_json_is_refused(text: str) -> None:
    with pytest.raises(ConfigInvalid) as caught:
        parse_config(text)
    assert caught.value.field == "$"


def test_agent_resolution() -> None:
    two = parse_config(json.dumps({"agents": {"a": agent(), "b": agent()}}))
    with pytest.raises(ConfigInvalid, match="--agent"):
        two.resolve_agent()
    assert two.resolve_agent("b")[0] == "b"
    with pytest.raises(ConfigInvalid, match="no agent named 'c'"):
        two.resolve_agent("c")
    defaulted = parse_config(
        json.dumps({"agents": {"a": agent(), "b": agent()}, "default_agent": "b"})
    )
    assert defaulted.resolve_agent()[0] == "b"
    assert defaulted.resolve_agent("a")[0] == "a"


def test_missing_file_is_config_not_found(tmp_path: Path) -> None:
    with pytest.raises(ConfigNotFound) as caught:
        load_config(tmp_path / "nope.json")
    assert caught.value.code == "config_not_found"


def test_loaded_config_knows_its_directory(tmp_path: Path) -> None:
    path = tmp_path / "raw.json"
    path.write_text(config())
    assert load_config(path).directory == tmp_path
