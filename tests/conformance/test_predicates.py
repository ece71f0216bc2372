"""Spec 000, "Predicates": ``{source, any, regex}``, bound when the config is loaded.

Each test is one clause. Tools are real folders (tool.json + tool.py) loaded through
:class:`~raw_core.tools.loader.ToolLoader` or selected by an agent of a config file.
"""

from __future__ import annotations

import json
from pathlib import Path
from types import MappingProxyType
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from raw_core.agent import load_agent
from raw_core.config import Predicate, load_config, parse_config
from raw_core.errors import ConfigInvalid
from raw_core.plugins import PluginHost
from raw_core.policy import Policy
from raw_core.policy.predicate import BoundPredicate, PredicateError, ToolShape, bind_predicate
from raw_core.tools.loader import LoadedTool, ToolLoader

STRING = {"type": "string"}
BASH_INPUT = {
    "type": "object",
    "properties": {
        "commands": {
            "type": "array",
            "items": {
                "type": "object",
                "properties": {"command": STRING, "timeout_ms": {"type": "integer"}},
                "required": ["command"],
                "additionalProperties": False,
            },
        },
        "note": STRING,
    },
    "required": ["commands"],
    "additionalProperties": False,
}
WRITE_INPUT = {
    "type": "object",
    "properties": {
        "files": {
            "type": "array",
            "items": {
                "type": "object",
                "properties": {"path": STRING, "content": STRING},
                "required": ["path", "content"],
            },
        }
    },
    "required": ["files"],
}
WRITE_EFFECTS = {
    "type": "object",
    "properties": {
        "files": {
            "type": "array",
            "items": {
                "type": "object",
                "properties": {"path": STRING, "operation": {"enum": ["write", "delete"]}},
                "required": ["path", "operation"],
            },
        }
    },
    "required": ["files"],
}
HANDLER = "def handler(args, context):\n    return {'content': []}\n"
DESCRIBE = (
    HANDLER
    + "\nimport posixpath\n\n"
    + "def describe_effects(args, context):\n"
    + "    return {'files': [{'path': posixpath.normpath(posixpath.join(context.cwd, f['path'])),"
    + " 'operation': 'write'} for f in args['files']]}\n"
)


def write_tool(parent: Path, name: str, **fields: Any) -> Path:
    """A real tool folder ``parent/name``; ``fields`` override manifest keys (``module``:
    the text of tool.py)."""
    folder = parent / name
    folder.mkdir(parents=True, exist_ok=True)
    module = fields.pop("module", HANDLER)
    manifest = {
        "api_version": 2,
        "id": name,
        "version": "1.0.0",
        "name": name,
        "description": f"The {name} test tool.",
        "input_schema": BASH_INPUT,
        "entry": "./tool.py",
        "condition_sources": ["arguments"],
        **fields,
    }
    (folder / "tool.json").write_text(json.dumps(manifest), encoding="utf-8")
    (folder / "tool.py").write_text(module, encoding="utf-8")
    return folder


@pytest.fixture
def bash(tmp_path: Path) -> LoadedTool:
    folder = write_tool(tmp_path / "tools", "bash")
    return ToolLoader().load(folder, identity="builtin/bash")


@pytest.fixture
def write_file(tmp_path: Path) -> LoadedTool:
    folder = write_tool(
        tmp_path / "tools",
        "write_file",
        input_schema=WRITE_INPUT,
        effects_schema=WRITE_EFFECTS,
        condition_sources=["arguments", "effects"],
        module=DESCRIBE,
    )
    return ToolLoader().load(folder, identity="builtin/write_file")


def predicate(source: str, path: str, regex: str) -> Predicate:
    return Predicate(source=source, any=path, regex=regex)  # type: ignore[arg-type]


def agent_config(tmp_path: Path, use: list[str], rules: list[dict[str, Any]]) -> Path:
    path = tmp_path / "raw.json"
    path.write_text(json.dumps({"agents": {"coder": {"tools": {"use": use, "rules": rules}}}}))
    return path


# --- "Every conditional rule states its source explicitly." ---------------------------


@pytest.mark.parametrize(
    ("when", "field"),
    [
        pytest.param({"any": "commands[*].command", "regex": "rm"}, "source", id="no-source"),
        pytest.param({"source": "arguments", "regex": "rm"}, "any", id="no-any"),
        pytest.param({"source": "arguments", "any": "commands[*].command"}, "regex", id="no-regex"),
        pytest.param(
            {"source": "args", "any": "commands[*].command", "regex": "rm"},
            "source",
            id="source-not-arguments-or-effects",
        ),
        pytest.param(
            {"source": "arguments", "any": "x", "regex": "rm", "flags": "i"},
            "flags",
            id="unknown-key",
        ),
    ],
)
def test_every_predicate_states_source_any_and_regex(when: dict[str, Any], field: str) -> None:
    rule = {"match": "builtin/bash", "effect": "ask", "when": when}
    text = json.dumps({"agents": {"a": {"tools": {"use": [], "rules": [rule]}}}})
    with pytest.raises(ConfigInvalid) as caught:
        parse_config(text)
    assert caught.value.field is not None
    assert caught.value.field.startswith("$.agents.a.tools.rules[0].when")
    assert field in caught.value.field or field in caught.value.message


# --- "The source must be one of the tool's declared condition_sources." ---------------


def test_source_must_be_a_declared_condition_source(bash: LoadedTool) -> None:
    with pytest.raises(PredicateError) as caught:
        bind_predicate(predicate("effects", "files[*].path", "x"), ToolShape.of(bash))
    assert caught.value.key == "source"
    assert "condition_sources of builtin/bash (declared: 'arguments')" in caught.value.message


def test_a_tool_without_condition_sources_accepts_no_predicate(tmp_path: Path) -> None:
    folder = write_tool(tmp_path / "tools", "quiet", condition_sources=[])
    tool = ToolLoader().load(folder, identity="local/quiet")
    with pytest.raises(PredicateError, match=r"declared: none"):
        bind_predicate(predicate("arguments", "note", "x"), ToolShape.of(tool))


def test_source_error_at_load_names_rule_and_tool(tmp_path: Path) -> None:
    write_tool(tmp_path / "tools", "bash")
    rule = {
        "match": "agent/*",
        "effect": "ask",
        "when": {"source": "effects", "any": "x", "regex": "x"},
    }
    config = load_config(agent_config(tmp_path, ["agent/bash"], [rule]))
    with pytest.raises(ConfigInvalid) as caught:
        load_agent(config, host=PluginHost())
    assert caught.value.field == "$.agents.coder.tools.rules[0].when.source"
    assert (caught.value.context["rule"], caught.value.context["tool"]) == (0, "agent/bash")


# --- the spec's example: effects, files[*].path ---------------------------------------


def test_spec_example_predicate_on_effects(write_file: LoadedTool) -> None:
    bound = bind_predicate(
        predicate("effects", "files[*].path", r"protected\.txt$"), ToolShape.of(write_file)
    )
    assert bound.matches(
        {
            "files": [
                {"path": "/w/a.txt", "operation": "write"},
                {"path": "/w/protected.txt", "operation": "write"},
            ]
        }
    )
    assert not bound.matches({"files": [{"path": "/w/protected.txt.bak", "operation": "write"}]})


# --- "any: a dotted path with [*] for each array step ... must resolve to a string field"


@pytest.mark.parametrize(
    ("path", "fragment"),
    [
        pytest.param("commands[*].command", None, id="array-step-then-string"),
        pytest.param("note", None, id="top-level-string"),
        pytest.param("commands.command", "step into it with '[*]'", id="array-without-[*]"),
        pytest.param("commands[*]", "declared as object, not as a string", id="ends-at-object"),
        pytest.param("commands[*].timeout_ms", "declared as integer", id="ends-at-integer"),
        pytest.param("commands[0].command", "only '[*]'", id="index-instead-of-[*]"),
    ],
)
def test_path_must_resolve_to_a_string_field(
    bash: LoadedTool, path: str, fragment: str | None
) -> None:
    shape = ToolShape.of(bash)
    if fragment is None:
        assert isinstance(bind_predicate(predicate("arguments", path, "x"), shape), BoundPredicate)
        return
    with pytest.raises(PredicateError) as caught:
        bind_predicate(predicate("arguments", path, "x"), shape)
    assert caught.value.key == "any"
    assert fragment in caught.value.message


# --- "A path that does not exist in the schema is a validation error." ----------------


def test_a_path_missing_from_the_schema_is_a_config_error(tmp_path: Path) -> None:
    write_tool(tmp_path / "tools", "bash")
    rule = {
        "match": "agent/bash",
        "effect": "ask",
        "when": {"source": "arguments", "any": "commands[*].cmd", "regex": "rm"},
    }
    config = load_config(agent_config(tmp_path, ["agent/bash"], [rule]))
    with pytest.raises(ConfigInvalid) as caught:
        load_agent(config, host=PluginHost())
    error = caught.value
    assert error.code == "config_invalid"
    assert error.field == "$.agents.coder.tools.rules[0].when.any"
    assert error.context == {
        "field": "$.agents.coder.tools.rules[0].when.any",
        "rule": 0,
        "tool": "agent/bash",
        # every problem of the rules, as a config file's check lists its own: this one
        "problems": [{"path": "$.agents.coder.tools.rules[0].when.any", "message": error.message}],
    }
    assert "rule 0" in error.message
    assert "no property 'cmd' is declared at commands[*] (declared: command, timeout_ms)" in (
        error.message
    )


def test_the_path_must_resolve_in_every_tool_the_glob_matches(tmp_path: Path) -> None:
    write_tool(tmp_path / "tools", "bash")
    write_tool(tmp_path / "tools", "write_file", input_schema=WRITE_INPUT)
    rule = {
        "match": "agent/*",
        "effect": "ask",
        "when": {"source": "arguments", "any": "commands[*].command", "regex": "rm"},
    }
    config = load_config(agent_config(tmp_path, ["agent/bash", "agent/write_file"], [rule]))
    with pytest.raises(ConfigInvalid) as caught:
        load_agent(config, host=PluginHost())
    assert caught.value.context["tool"] == "agent/write_file"


def test_a_glob_matching_no_selected_tool_is_not_an_error(tmp_path: Path) -> None:
    write_tool(tmp_path / "tools", "bash")
    rule = {
        "match": "mcp/*",
        "effect": "ask",
        "when": {"source": "arguments", "any": "anything[*].at.all", "regex": "rm"},
    }
    agent = load_agent(
        load_config(agent_config(tmp_path, ["agent/bash"], [rule])), host=PluginHost()
    )
    assert [f.kind for f in agent.policy.lint()] == ["matches_nothing"]


# --- "regex: an RE2 pattern, unanchored." ---------------------------------------------


@pytest.mark.parametrize(
    ("regex", "text", "matches"),
    [
        pytest.param("rm", "sudo rm -rf x", True, id="unanchored-middle"),
        pytest.param("rm", "rm", True, id="whole"),
        pytest.param("^rm", "sudo rm", False, id="caret-anchors-start-of-text"),
        pytest.param("^rm", "ls\nrm x", False, id="caret-not-at-line-start"),
        pytest.param("(?m)^rm", "ls\nrm x", True, id="multiline-flag"),
        pytest.param("x$", "ls x\n", False, id="dollar-not-before-trailing-newline"),
        pytest.param("x$", "ls x", True, id="dollar-at-end"),
        pytest.param("(?i)RM", "rm", True, id="case-insensitive-flag"),
        pytest.param("^caf.$", "café", True, id="dot-is-one-character-not-one-byte"),
        pytest.param(r"\bé\b", "café é", False, id="word-boundary-is-ascii-only"),
        pytest.param(r"^\w+$", "café", False, id="word-class-is-ascii-only"),
        pytest.param(r"^\pL+$", "café", True, id="unicode-class"),
        pytest.param("(a+)+$", "a" * 5000 + "!", False, id="no-catastrophic-backtracking"),
    ],
)
def test_regex_is_re2_unanchored(bash: LoadedTool, regex: str, text: str, matches: bool) -> None:
    bound = bind_predicate(predicate("arguments", "commands[*].command", regex), ToolShape.of(bash))
    assert bound.matches({"commands": [{"command": text}]}) is matches


@pytest.mark.parametrize(
    ("regex", "message"),
    [
        pytest.param(r"(\w)\1", r"invalid escape sequence: \1", id="backreference"),
        pytest.param(r"rm(?= )", "invalid perl operator: (?=", id="look-ahead"),
        pytest.param(r"(?<!no)rm", "invalid perl operator: (?<", id="look-behind"),
        pytest.param("rm(", "missing ): rm(", id="unbalanced"),
    ],
)
def test_an_invalid_regex_is_a_config_error_quoting_re2(
    tmp_path: Path, regex: str, message: str, capfd: pytest.CaptureFixture[str]
) -> None:
    write_tool(tmp_path / "tools", "bash")
    rule = {
        "match": "agent/bash",
        "effect": "ask",
        "when": {"source": "arguments", "any": "commands[*].command", "regex": regex},
    }
    config = load_config(agent_config(tmp_path, ["agent/bash"], [rule]))
    with pytest.raises(ConfigInvalid) as caught:
        load_agent(config, host=PluginHost())
    assert caught.value.field == "$.agents.coder.tools.rules[0].when.regex"
    assert message in caught.value.message
    assert capfd.readouterr().err == ""


# --- "A field that is absent from a valid value does not match." ----------------------


def test_an_absent_field_does_not_match(bash: LoadedTool) -> None:
    bound = bind_predicate(predicate("arguments", "note", "."), ToolShape.of(bash))
    arguments = {"commands": [{"command": "ls"}]}
    bash.input_validator.validate(arguments)
    assert not bound.matches(arguments)
    assert bound.matches({**arguments, "note": "n"})


def test_an_empty_array_does_not_match(bash: LoadedTool) -> None:
    bound = bind_predicate(predicate("arguments", "commands[*].command", ""), ToolShape.of(bash))
    assert not bound.matches({"commands": []})
    assert bound.matches({"commands": [{"command": ""}]})


# --- any element matching means a match -----------------------------------------------


@pytest.mark.parametrize(
    ("texts", "matches"),
    [
        pytest.param(["ls", "pwd"], False, id="none"),
        pytest.param(["rm x", "pwd"], True, id="first"),
        pytest.param(["ls", "pwd", "rm x"], True, id="last"),
        pytest.param(["rm x"] * 16, True, id="all"),
    ],
)
def test_any_element_matching_is_a_match(bash: LoadedTool, texts: list[str], matches: bool) -> None:
    bound = bind_predicate(
        predicate("arguments", "commands[*].command", "^rm "), ToolShape.of(bash)
    )
    assert bound.matches({"commands": [{"command": t} for t in texts]}) is matches
    frozen = MappingProxyType({"commands": tuple(MappingProxyType({"command": t}) for t in texts)})
    assert bound.matches(frozen) is matches


# --- "Policies and hook subscriptions use the same predicate evaluator." --------------


def test_policy_uses_the_shared_evaluator(bash: LoadedTool) -> None:
    when = predicate("arguments", "commands[*].command", "rm")
    policy = Policy.bind([_ask(when)], [bash])
    bound = policy.predicate(0, "builtin/bash")
    assert isinstance(bound, BoundPredicate)
    standalone = bind_predicate(when, ToolShape.of(bash))
    for text in ("rm x", "ls"):
        value = {"commands": [{"command": text}]}
        assert bound.matches(value) is standalone.matches(value)
        assert (policy.decide("builtin/bash", value).verdict == "ask") is bound.matches(value)


def _ask(when: Predicate) -> Any:
    from raw_core.config import Rule

    return Rule(match="builtin/bash", effect="ask", when=when)


# --- evaluation never raises ----------------------------------------------------------

ANY_TEXT = st.text(st.one_of(st.characters(), st.characters(categories=["Cs"])))
JSON_VALUES = st.recursive(
    st.one_of(st.none(), st.booleans(), st.integers(), st.floats(allow_nan=False), ANY_TEXT),
    lambda inner: st.one_of(
        st.lists(inner, max_size=4),
        st.dictionaries(st.sampled_from(["commands", "command", "note"]), inner, max_size=3),
    ),
    max_leaves=16,
)
SHAPE = ToolShape.from_schemas("builtin/bash", input_schema=BASH_INPUT)
RM = r"(^|[;&|()\n])\s*(sudo\s+)?(/usr/bin/|/bin/)?rm(\s|$)"
BOUND = bind_predicate(predicate("arguments", "commands[*].command", RM), SHAPE)


@given(st.lists(ANY_TEXT, max_size=4))
def test_evaluation_never_raises_on_arbitrary_strings(texts: list[str]) -> None:
    value = {"commands": [{"command": t} for t in texts]}
    result = BOUND.matches(value)
    assert result is BOUND.explain(value).matched


@given(JSON_VALUES)
def test_evaluation_never_raises_on_any_json_value(value: Any) -> None:
    assert BOUND.matches(value) is BOUND.explain(value).matched
