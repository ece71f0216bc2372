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
    assert coder.handler_timeout_ms == 600_000
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
        {"agents": {"a": agent(handler_timeout_ms=0)}},
        "$.agents.a.handler_timeout_ms",
        "positive",
        id="handler_timeout_ms-zero",
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


VAR = {"description": "d", "from": {"env": "E"}}
BAD += [
    pytest.param(
        {"agents": {"a": agent()}, "vars": {"K": {"from": {"env": "E"}}}},
        "$.vars.K.description",
        "required field",
        id="var-description-missing",
    ),
    pytest.param(
        {"agents": {"a": agent()}, "vars": {"K": {"description": "d", "from": {}}}},
        "$.vars.K.from",
        'exactly one of "env", "file" and "command"',
        id="var-no-source",
    ),
    pytest.param(
        {
            "agents": {"a": agent()},
            "vars": {"K": {"description": "d", "from": {"env": "E", "file": "f"}}},
        },
        "$.vars.K.from",
        "exactly one",
        id="var-two-sources",
    ),
    pytest.param(
        {"agents": {"a": agent()}, "vars": {"K": {"description": "d", "from": {"command": []}}}},
        "$.vars.K.from.command",
        "non-empty",
        id="var-empty-command",
    ),
    pytest.param(
        {
            "agents": {"a": agent()},
            "vars": {"K": {"description": "d", "from": {"command": "ls -l"}}},
        },
        "$.vars.K.from.command",
        "expected an array",
        id="var-command-string",
    ),
    pytest.param(
        {
            "agents": {"a": agent()},
            "vars": {"K": {"description": "d", "from": {"env": "E", "timeout_ms": 5}}},
        },
        "$.vars.K.from.timeout_ms",
        "command only",
        id="var-timeout-without-command",
    ),
    pytest.param(
        {"agents": {"a": agent()}, "vars": {"K": {**VAR, "secret": True}}},
        "$.vars.K.secret",
        "unknown field",
        id="var-unknown-field",
    ),
    pytest.param(
        {"agents": {"a": agent()}, "vars": {"9K": VAR}},
        "$.vars['9K']",
        "variable name",
        id="var-bad-name",
    ),
    pytest.param(
        {"agents": {"a": agent(vars={"use": ["NOPE"]})}},
        "$.agents.a.vars.use[0]",
        "not defined in vars",
        id="agent-var-undefined",
    ),
    pytest.param(
        {"agents": {"a": agent(vars={"use": ["K", "K"]})}, "vars": {"K": VAR}},
        "$.agents.a.vars.use[1]",
        "selected twice",
        id="agent-var-twice",
    ),
    pytest.param(
        {"agents": {"a": agent(skills={"use": ["x", "x"]})}},
        "$.agents.a.skills.use[1]",
        "selected twice",
        id="agent-skill-twice",
    ),
    pytest.param(
        {"agents": {"a": agent(skills=["x"])}},
        "$.agents.a.skills",
        "expected an object",
        id="agent-skills-array",
    ),
    pytest.param(
        {"agents": {"a": agent()}, "skills": {"paths": "skills"}},
        "$.skills.paths",
        "expected an array",
        id="skills-paths-string",
    ),
    pytest.param(
        {"agents": {"a": agent()}, "sessions": {"expire_after_days": -1}},
        "$.sessions.expire_after_days",
        "above 0",
        id="expiry-negative",
    ),
    pytest.param(
        {
            "agents": {"a": agent()},
            "vars": {"K": {"description": "d", "from": {"command": ["x"], "timeout_ms": 10**30}}},
        },
        "$.vars.K.from.timeout_ms",
        "at most 600000",
        id="var-timeout-huge",
    ),
    pytest.param(
        {"agents": {"a": agent()}, "sessions": {"expire_after_days": 1e10}},
        "$.sessions.expire_after_days",
        "at most 36500",
        id="expiry-huge",
    ),
    pytest.param(
        {
            "agents": {"a": agent()},
            "models": {"m": {"provider": "openai", "model": "x", "api_key": {"var": "MISSING"}}},
        },
        "$.models.m.api_key.var",
        "not defined in vars",
        id="model-key-var-undefined",
    ),
    pytest.param(
        {
            "agents": {"a": agent()},
            "models": {"m": {"provider": "openai", "model": "x", "api_key": "sk-123"}},
        },
        "$.models.m.api_key",
        "expected an object",
        id="model-key-literal",
    ),
    pytest.param(
        {
            "agents": {"a": agent()},
            "models": {"m": {"provider": "openai", "model": "x", "temperature": 9}},
        },
        "$.models.m.temperature",
        "from 0 to 2",
        id="model-temperature",
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


def test_every_shape_problem_is_reported_at_once() -> None:
    document = {
        "agents": {
            "a": {"tools": {"use": [3]}, "color": 1},
            "b": {"tools": {"use": []}, "max_steps": "5"},
        },
        "vars": {"K": {"description": 5, "from": {"env": "E"}}},
    }
    with pytest.raises(ConfigInvalid) as caught:
        parse_config(json.dumps(document))
    paths = sorted(p["path"] for p in caught.value.context["problems"])
    assert paths == [
        "$.agents.a.color",
        "$.agents.a.tools.use[0]",
        "$.agents.b.max_steps",
        "$.vars.K.description",
    ]


def test_every_value_problem_is_reported_at_once() -> None:
    document = {
        "agents": {"a": {"tools": {"use": ["bad id"]}, "max_steps": 0, "max_output_bytes": -1}},
        "models": {"m": {"provider": "p", "model": "x", "temperature": 5, "max_tokens": 0}},
        "sessions": {"expire_after_days": 0},
    }
    with pytest.raises(ConfigInvalid) as caught:
        parse_config(json.dumps(document))
    paths = sorted(p["path"] for p in caught.value.context["problems"])
    assert paths == [
        "$.agents.a.max_output_bytes",
        "$.agents.a.max_steps",
        "$.agents.a.tools.use[0]",
        "$.models.m.max_tokens",
        "$.models.m.temperature",
        "$.sessions.expire_after_days",
    ]


def test_references_are_all_reported_once_the_shape_is_right() -> None:
    document = {
        "default_agent": "z",
        "agents": {"a": agent(model="ghost"), "b": agent(vars={"use": ["V"]})},
    }
    with pytest.raises(ConfigInvalid) as caught:
        parse_config(json.dumps(document))
    assert [p["path"] for p in caught.value.context["problems"]] == [
        "$.default_agent",
        "$.agents.a.model",
        "$.agents.b.vars.use[0]",
    ]


def test_the_full_skeleton_parses() -> None:
    parsed = parse_config(
        json.dumps(
            {
                "default_agent": "coder",
                "models": {
                    "local": {
                        "provider": "openai",
                        "model": "qwen3-coder",
                        "base_url": "http://127.0.0.1:8080/v1",
                        "api_key": {"var": "LOCAL_KEY"},
                    }
                },
                "vars": {
                    "LOCAL_KEY": {
                        "description": "key for the local server",
                        "from": {"env": "LOCAL_KEY"},
                    }
                },
                "skills": {"paths": ["skills"]},
                "sessions": {"expire_after_days": 30},
                "agents": {
                    "coder": {
                        "model": "local",
                        "system": "You are careful.",
                        "max_steps": 50,
                        "max_output_bytes": 8192,
                        "tools": {"use": ["builtin/read_file"], "rules": []},
                        "skills": {"use": []},
                        "vars": {"use": ["LOCAL_KEY"]},
                    }
                },
            }
        )
    )
    assert parsed.models["local"].api_key is not None
    assert parsed.models["local"].api_key.var == "LOCAL_KEY"
    assert parsed.vars["LOCAL_KEY"].source.env == "LOCAL_KEY"
    assert parsed.sessions.expire_after_days == 30
    assert parsed.skills.paths == ("skills",)
