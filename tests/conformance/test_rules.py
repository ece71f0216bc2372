"""Spec 001, "Control tools with rules", and design.md's decisions on globs and exposure.

Each test is one clause; rule tables are parametrized with readable ids. Tools are real
folders (tool.json + tool.py), shipped by a stand-in ``builtin`` plug-in or found beside the
config file as ``agent/`` tools.
"""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from raw_core.agent import Agent, load_agent
from raw_core.cli import cli
from raw_core.config import Predicate, Rule, load_config, parse_config
from raw_core.errors import ConfigInvalid, ToolNotExposed
from raw_core.plugins import PluginHost, ToolFolder
from raw_core.plugins.hookspecs import hookimpl
from raw_core.policy import Decision, Policy
from raw_core.policy.predicate import ToolShape

RM = r"(^|[;&|()\n])\s*(sudo\s+)?(/usr/bin/|/bin/)?rm(\s|$)"
RM_RULE: dict[str, Any] = {
    "match": "builtin/bash",
    "effect": "ask",
    "when": {"source": "arguments", "any": "commands[*].command", "regex": RM},
}
BASH_INPUT = {
    "type": "object",
    "properties": {
        "commands": {
            "type": "array",
            "minItems": 1,
            "maxItems": 16,
            "items": {
                "type": "object",
                "properties": {
                    "command": {"type": "string"},
                    "timeout_ms": {"type": "integer", "minimum": 1, "maximum": 600000},
                },
                "required": ["command"],
                "additionalProperties": False,
            },
        }
    },
    "required": ["commands"],
    "additionalProperties": False,
}
READ_INPUT = {
    "type": "object",
    "properties": {
        "files": {
            "type": "array",
            "items": {"type": "object", "properties": {"path": {"type": "string"}}},
        }
    },
    "required": ["files"],
}


def write_tool(parent: Path, name: str, input_schema: dict[str, Any]) -> Path:
    folder = parent / name
    folder.mkdir(parents=True, exist_ok=True)
    manifest = {
        "api_version": 2,
        "id": name,
        "version": "1.0.0",
        "name": name,
        "description": f"The {name} test tool.",
        "input_schema": input_schema,
        "entry": "./tool.py",
        "condition_sources": ["arguments"],
    }
    (folder / "tool.json").write_text(json.dumps(manifest), encoding="utf-8")
    (folder / "tool.py").write_text(
        "def handler(args, context):\n    return {'content': []}\n", encoding="utf-8"
    )
    return folder


class _Builtin:
    def __init__(self, folders: list[Path]) -> None:
        self.folders = folders

    @hookimpl
    def raw_register_tools(self) -> list[ToolFolder]:
        return [ToolFolder(path=folder) for folder in self.folders]


def builtin_agent(tmp_path: Path, rules: list[dict[str, Any]]) -> Agent:
    """An agent selecting builtin/bash and builtin/read_file, with ``rules``."""
    shipped = tmp_path / "shipped"
    folders = [
        write_tool(shipped, "bash", BASH_INPUT),
        write_tool(shipped, "read_file", READ_INPUT),
    ]
    host = PluginHost()
    host.register(_Builtin(folders), name="builtin")
    config = tmp_path / "raw.json"
    use = ["builtin/bash", "builtin/read_file"]
    config.write_text(json.dumps({"agents": {"coder": {"tools": {"use": use, "rules": rules}}}}))
    return load_agent(load_config(config), host=host)


def bash_call(*commands: str) -> dict[str, Any]:
    return {"commands": [{"command": command} for command in commands]}


# --- the rm rule of spec 001 ----------------------------------------------------------


@pytest.mark.parametrize(
    ("command", "verdict"),
    [
        pytest.param("rm -rf x", "ask", id="rm-rf-asks"),
        pytest.param("ls; rm x", "ask", id="after-semicolon-asks"),
        pytest.param("sudo rm x", "ask", id="sudo-rm-asks"),
        pytest.param("/bin/rm x", "ask", id="bin-rm-asks"),
        pytest.param("/usr/bin/rm x", "ask", id="usr-bin-rm-asks"),
        pytest.param("true && rm x", "ask", id="after-and-asks"),
        pytest.param("ls | rm x", "ask", id="after-pipe-asks"),
        pytest.param("(rm x)", "ask", id="in-subshell-asks"),
        pytest.param("ls\nrm x", "ask", id="on-second-line-asks"),
        pytest.param("rm", "ask", id="bare-rm-asks"),
        pytest.param("echo rm", "allow", id="echo-rm-runs"),
        pytest.param("rmdir x", "allow", id="rmdir-runs"),
        pytest.param("ls -la", "allow", id="ls-runs"),
        pytest.param("git rm x", "allow", id="git-rm-runs"),
        pytest.param("farm x", "allow", id="word-ending-in-rm-runs"),
    ],
)
def test_the_rm_rule_asks_before_rm(tmp_path: Path, command: str, verdict: str) -> None:
    agent = builtin_agent(tmp_path, [RM_RULE])
    arguments = bash_call(command)
    agent.registry.by_identity("builtin/bash").input_validator.validate(arguments)
    decision = agent.policy.decide("builtin/bash", arguments)
    assert decision == Decision(verdict=verdict, rule=0 if verdict == "ask" else None)  # type: ignore[arg-type]


def test_the_rm_rule_asks_when_any_command_of_the_batch_runs_rm(tmp_path: Path) -> None:
    agent = builtin_agent(tmp_path, [RM_RULE])
    assert (
        agent.policy.decide("builtin/bash", bash_call("ls", "pwd", "rm -rf build")).verdict == "ask"
    )
    assert agent.policy.decide("builtin/bash", bash_call("ls", "pwd", "echo rm")).verdict == "allow"
    # "Other Bash calls run without a prompt", and other tools are untouched.
    assert agent.policy.decide("builtin/read_file", {"files": [{"path": "rm"}]}).verdict == "allow"


# --- "match: a glob over the full tool identity" --------------------------------------

IDENTITIES = (
    "builtin/bash",
    "builtin/read_file",
    "mcp/search/query",
    "mcp/search/fetch",
    "local/my_bash",
)


@pytest.mark.parametrize(
    ("glob", "matched"),
    [
        pytest.param("builtin/bash", {"builtin/bash"}, id="exact-identity"),
        pytest.param("bash", set(), id="name-alone-is-not-the-identity"),
        pytest.param("mcp/search/*", {"mcp/search/query", "mcp/search/fetch"}, id="spec-example"),
        pytest.param("mcp/*", {"mcp/search/query", "mcp/search/fetch"}, id="star-crosses-slash"),
        pytest.param("*bash", {"builtin/bash", "local/my_bash"}, id="star-any-run"),
        pytest.param("*", set(IDENTITIES), id="star-everything"),
        pytest.param("builtin/????_file", {"builtin/read_file"}, id="question-one-character"),
        pytest.param("builtin/?ash", {"builtin/bash"}, id="question-exactly-one"),
        pytest.param("builtin/[b]ash", set(), id="brackets-are-literal"),
        pytest.param("builtin/{bash,read_file}", set(), id="braces-are-literal"),
        pytest.param("builtin/bas", set(), id="whole-identity-not-prefix"),
    ],
)
def test_match_is_a_glob_over_the_full_identity(glob: str, matched: set[str]) -> None:
    shapes = [ToolShape.from_schemas(i, input_schema=READ_INPUT) for i in IDENTITIES]
    policy = Policy.bind([Rule(match=glob, effect="deny")], shapes)
    assert {i for i in IDENTITIES if policy.matching_rules(i)} == matched


# --- "effect: allow, ask, or deny"; "when: optional, only valid with ask" -------------


@pytest.mark.parametrize(
    ("rule", "fragment"),
    [
        pytest.param({"match": "builtin/bash", "effect": "block"}, "effect", id="unknown-effect"),
        pytest.param({"match": "builtin/bash"}, "effect", id="effect-required"),
        pytest.param({"effect": "deny"}, "match", id="match-required"),
        pytest.param(
            {**RM_RULE, "effect": "deny"}, "only valid with effect 'ask'", id="when-with-deny"
        ),
        pytest.param(
            {**RM_RULE, "effect": "allow"}, "only valid with effect 'ask'", id="when-with-allow"
        ),
        pytest.param(
            {"match": "builtin/bash", "effect": "deny", "why": "x"}, "why", id="unknown-key"
        ),
    ],
)
def test_rule_fields(rule: dict[str, Any], fragment: str) -> None:
    text = json.dumps({"agents": {"a": {"tools": {"use": [], "rules": [rule]}}}})
    with pytest.raises(ConfigInvalid) as caught:
        parse_config(text)
    assert caught.value.field is not None
    assert caught.value.field.startswith("$.agents.a.tools.rules[0]")
    assert fragment in caught.value.message or fragment in caught.value.field


# --- "Rules apply in order, and the last matching rule wins." -------------------------

ORDER = [
    pytest.param([], ("allow", None), id="no-rule-runs-automatically"),
    pytest.param(
        [{"match": "builtin/read_file", "effect": "deny"}], ("allow", None), id="no-matching-rule"
    ),
    pytest.param([{"match": "builtin/bash", "effect": "allow"}], ("allow", 0), id="allow"),
    pytest.param([{"match": "builtin/bash", "effect": "ask"}], ("ask", 0), id="ask-every-time"),
    pytest.param(
        [{"match": "builtin/*", "effect": "ask"}, {"match": "builtin/bash", "effect": "allow"}],
        ("allow", 1),
        id="later-allow-wins-over-ask",
    ),
    pytest.param(
        [{"match": "builtin/bash", "effect": "allow"}, {"match": "*", "effect": "ask"}],
        ("ask", 1),
        id="later-broad-ask-wins-over-allow",
    ),
    pytest.param(
        [{"match": "*", "effect": "deny"}, RM_RULE],
        ("deny", 0),
        id="conditional-that-misses-does-not-match",
    ),
    pytest.param(
        [RM_RULE, {"match": "builtin/bash", "effect": "allow"}],
        ("allow", 1),
        id="later-unconditional-beats-earlier-conditional",
    ),
]


@pytest.mark.parametrize(("rules", "expected"), ORDER)
def test_last_matching_rule_wins(
    tmp_path: Path, rules: list[dict[str, Any]], expected: tuple[str, int | None]
) -> None:
    agent = builtin_agent(tmp_path, rules)
    decision = agent.policy.decide("builtin/bash", bash_call("ls"))
    assert (decision.verdict, decision.rule) == expected


# --- "deny removes the tool's schema from the model and rejects direct calls." --------

EXPOSURE = [
    pytest.param([{"match": "builtin/bash", "effect": "deny"}], False, id="unconditional-deny"),
    pytest.param([{"match": "*", "effect": "deny"}], False, id="deny-everything"),
    pytest.param(
        [{"match": "builtin/bash", "effect": "deny"}, {"match": "*", "effect": "allow"}],
        True,
        id="later-allow-exposes",
    ),
    pytest.param(
        [{"match": "builtin/bash", "effect": "deny"}, RM_RULE],
        True,
        id="later-conditional-ask-exposes",
    ),
    pytest.param(
        [RM_RULE, {"match": "builtin/*", "effect": "deny"}],
        False,
        id="earlier-conditional-does-not-expose",
    ),
    pytest.param([RM_RULE], True, id="conditional-alone"),
]


@pytest.mark.parametrize(("rules", "exposed"), EXPOSURE)
def test_deny_removes_the_schema_and_rejects_direct_calls(
    tmp_path: Path, rules: list[dict[str, Any]], exposed: bool
) -> None:
    agent = builtin_agent(tmp_path, rules)
    names = [d.identity for d in agent.definitions()]
    assert ("builtin/bash" in names) is exposed
    if exposed:
        assert agent.dispatcher(host=None).select("bash").identity == "builtin/bash"
        return
    with pytest.raises(ToolNotExposed) as caught:
        agent.dispatcher(host=None).select("bash")
    assert caught.value.code == "tool_not_exposed"


def test_raw_tools_list_hides_a_denied_tool(tmp_path: Path) -> None:
    write_tool(tmp_path / "tools", "bash", BASH_INPUT)
    write_tool(tmp_path / "tools", "read_file", READ_INPUT)
    config = tmp_path / "raw.json"
    rules = [{"match": "agent/bash", "effect": "deny"}]
    use = ["agent/bash", "agent/read_file"]
    config.write_text(json.dumps({"agents": {"coder": {"tools": {"use": use, "rules": rules}}}}))
    result = CliRunner().invoke(cli, ["tools", "list", "--config", str(config), "--json"])
    assert result.exit_code == 0
    assert [d["identity"] for d in json.loads(result.stdout)] == ["agent/read_file"]


def test_an_exposed_tool_is_still_denied_when_its_condition_misses(tmp_path: Path) -> None:
    agent = builtin_agent(tmp_path, [{"match": "builtin/bash", "effect": "deny"}, RM_RULE])
    assert agent.policy.is_exposed("builtin/bash")
    assert agent.policy.decide("builtin/bash", bash_call("rm x")).verdict == "ask"
    assert agent.policy.decide("builtin/bash", bash_call("ls")).verdict == "deny"


# --- "last matching rule wins", against its direct reading (Hypothesis) ----------------

LAW_IDENTITIES = ("builtin/bash", "builtin/sh", "local/my_bash", "mcp/shell/run")
LAW_SHAPES = tuple(ToolShape.from_schemas(i, input_schema=BASH_INPUT) for i in LAW_IDENTITIES)
# Regexes on which RE2 and Python's re agree for the generated texts.
REGEXES = ("rm", "^sudo", "a|b", "[0-9]+", r"\.txt", r"x\s", RM)
GLOBS = st.one_of(
    st.sampled_from(["*", "builtin/*", "builtin/bash", "*bash", "builtin/?h", "mcp/*", "*/*/*"]),
    st.text(st.sampled_from("bash/*?lx"), max_size=8),
)


@st.composite
def rules(draw: st.DrawFn) -> Rule:
    match = draw(st.one_of(GLOBS, st.lists(GLOBS, min_size=1, max_size=3).map(tuple)))
    if draw(st.booleans()):
        regex = draw(st.sampled_from(REGEXES))
        when = Predicate(source="arguments", any="commands[*].command", regex=regex)
        return Rule(match=match, effect="ask", when=when)
    return Rule(match=match, effect=draw(st.sampled_from(["allow", "ask", "deny"])))


def glob_reading(pattern: str, text: str) -> bool:
    regex = "".join(".*" if c == "*" else "." if c == "?" else re.escape(c) for c in pattern)
    return re.fullmatch(regex, text, re.DOTALL) is not None


def direct_reading(rule_list: list[Rule], identity: str, texts: list[str]) -> Decision:
    """Walk every rule in order; each one that matches replaces the verdict."""
    decision = Decision(verdict="allow", rule=None)
    for index, candidate in enumerate(rule_list):
        if not any(glob_reading(glob, identity) for glob in candidate.globs):
            continue
        if candidate.when is not None and not any(
            re.search(candidate.when.regex, t) for t in texts
        ):
            continue
        decision = Decision(verdict=candidate.effect, rule=index)
    return decision


@settings(max_examples=400, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    st.lists(rules(), max_size=10),
    st.sampled_from(LAW_IDENTITIES),
    st.lists(st.text(st.sampled_from("rmsudoab7x.t \n;|/"), max_size=14), max_size=4),
)
def test_evaluator_agrees_with_the_direct_reading(
    rule_list: list[Rule], identity: str, texts: list[str]
) -> None:
    policy = Policy.bind(rule_list, LAW_SHAPES)
    arguments = bash_call(*texts)
    expected = direct_reading(rule_list, identity, texts)
    assert policy.decide(identity, arguments) == expected
    explanation = policy.explain(identity, arguments)
    assert (explanation.verdict, explanation.decided_by) == (expected.verdict, expected.rule)
    if not policy.is_exposed(identity):
        assert expected.verdict == "deny"
