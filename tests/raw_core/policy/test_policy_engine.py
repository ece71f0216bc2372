"""The policy engine: binding errors, verdicts, exposure, explain and lint, and its laws."""

from __future__ import annotations

import re
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from raw_core.config import Predicate, Rule
from raw_core.errors import ConfigInvalid, ToolNotExposed, ToolUnknown
from raw_core.policy import Decision, Policy
from raw_core.policy.predicate import ToolShape

STRING = {"type": "string"}


def _array_of(**properties: Any) -> dict[str, Any]:
    return {"type": "array", "items": {"type": "object", "properties": properties}}


BASH_SCHEMA = {
    "type": "object",
    "properties": {"commands": _array_of(command=STRING, timeout_ms={"type": "integer"})},
    "required": ["commands"],
}
WRITE_SCHEMA = {"type": "object", "properties": {"files": _array_of(path=STRING, content=STRING)}}
WRITE_EFFECTS_SCHEMA = {
    "type": "object",
    "properties": {"files": _array_of(path=STRING, operation={"enum": ["write", "delete"]})},
}
RM = r"(^|[;&|()\n])\s*(sudo\s+)?(/usr/bin/|/bin/)?rm(\s|$)"

BASH = ToolShape.from_schemas("builtin/bash", input_schema=BASH_SCHEMA)
SH = ToolShape.from_schemas("builtin/sh", input_schema=BASH_SCHEMA)
READ = ToolShape.from_schemas(
    "builtin/read_file",
    input_schema={
        "type": "object",
        "properties": {
            "files": {
                "type": "array",
                "items": {"type": "object", "properties": {"path": {"type": "string"}}},
            }
        },
    },
)
WRITE = ToolShape.from_schemas(
    "builtin/write_file",
    input_schema=WRITE_SCHEMA,
    effects_schema=WRITE_EFFECTS_SCHEMA,
    condition_sources=("arguments", "effects"),
)
TOOLS = (BASH, SH, READ, WRITE)


def rule(match: str, effect: str, when: tuple[str, str, str] | None = None) -> Rule:
    predicate = None
    if when is not None:
        source, path, regex = when
        predicate = Predicate(source=source, any=path, regex=regex)  # type: ignore[arg-type]
    return Rule(match=match, effect=effect, when=predicate)  # type: ignore[arg-type]


def bash_when(regex: str) -> tuple[str, str, str]:
    return ("arguments", "commands[*].command", regex)


def commands(*texts: str) -> dict[str, Any]:
    return {"commands": [{"command": text} for text in texts]}


# --- binding ---------------------------------------------------------------------------


def test_bind_error_names_rule_field_and_tool() -> None:
    rules = [
        rule("builtin/*", "allow"),
        rule("builtin/*", "ask", bash_when("rm")),
    ]
    with pytest.raises(ConfigInvalid) as caught:
        Policy.bind(rules, TOOLS, field="$.agents.coder.tools.rules")
    error = caught.value
    assert error.code == "config_invalid"
    assert error.field == "$.agents.coder.tools.rules[1].when.any"
    assert error.context["rule"] == 1
    assert error.context["tool"] == "builtin/read_file"
    assert "rule 1" in error.message
    assert "builtin/read_file" in error.message
    assert "no property 'commands' is declared at the top level (declared: files)" in error.message


def test_bind_error_for_source_not_declared() -> None:
    rules = [rule("builtin/bash", "ask", ("effects", "files[*].path", "x"))]
    with pytest.raises(ConfigInvalid) as caught:
        Policy.bind(rules, TOOLS)
    assert caught.value.field == "$.tools.rules[0].when.source"
    assert caught.value.context["tool"] == "builtin/bash"


@pytest.mark.parametrize(
    ("when", "key"),
    [
        pytest.param(bash_when("(?=rm)"), "regex", id="bad-regex"),
        pytest.param(("arguments", "commands[0].command", "rm"), "any", id="bad-path-syntax"),
    ],
)
def test_tool_independent_errors_even_when_glob_matches_nothing(
    when: tuple[str, str, str], key: str
) -> None:
    rules = [rule("nothing/matches", "ask", when)]
    with pytest.raises(ConfigInvalid) as caught:
        Policy.bind(rules, TOOLS)
    assert caught.value.field == f"$.tools.rules[0].when.{key}"
    assert caught.value.context["rule"] == 0
    assert "tool" not in caught.value.context


def test_a_glob_matching_no_tool_is_no_error() -> None:
    policy = Policy.bind([rule("mcp/*", "ask", bash_when("x"))], TOOLS)
    assert policy.lint()[0].kind == "matches_nothing"


def test_predicate_bound_once_per_matched_tool() -> None:
    policy = Policy.bind([rule("builtin/?h", "ask", bash_when("rm"))], TOOLS)
    assert policy.predicate(0, "builtin/sh") is not None
    assert policy.predicate(0, "builtin/bash") is None  # the glob does not match it
    assert policy.matching_rules("builtin/sh") == (0,)
    assert policy.matching_rules("builtin/bash") == ()


# --- verdicts --------------------------------------------------------------------------

DECISIONS = [
    pytest.param([], commands("ls"), Decision(verdict="allow", rule=None), id="no-rules-allow"),
    pytest.param(
        [rule("builtin/read_file", "deny")],
        commands("ls"),
        Decision(verdict="allow", rule=None),
        id="no-matching-rule-allow",
    ),
    pytest.param(
        [rule("builtin/*", "deny"), rule("builtin/bash", "allow")],
        commands("ls"),
        Decision(verdict="allow", rule=1),
        id="last-match-wins-allow-after-deny",
    ),
    pytest.param(
        [rule("builtin/bash", "allow"), rule("builtin/*", "deny")],
        commands("ls"),
        Decision(verdict="deny", rule=1),
        id="last-match-wins-deny-after-allow",
    ),
    pytest.param(
        [rule("*", "ask"), rule("builtin/read_file", "allow")],
        commands("ls"),
        Decision(verdict="ask", rule=0),
        id="later-rule-for-other-tool-ignored",
    ),
    pytest.param(
        [rule("builtin/bash", "ask", bash_when(RM))],
        commands("ls", "rm -rf x"),
        Decision(verdict="ask", rule=0),
        id="conditional-matches-any-element",
    ),
    pytest.param(
        [rule("builtin/bash", "ask", bash_when(RM))],
        commands("ls", "echo rm"),
        Decision(verdict="allow", rule=None),
        id="conditional-no-element-matches",
    ),
    pytest.param(
        [rule("builtin/bash", "deny"), rule("builtin/bash", "ask", bash_when(RM))],
        commands("ls"),
        Decision(verdict="deny", rule=0),
        id="conditional-miss-falls-back-to-earlier-deny",
    ),
    pytest.param(
        [rule("builtin/bash", "deny"), rule("builtin/bash", "ask", bash_when(RM))],
        commands("rm x"),
        Decision(verdict="ask", rule=1),
        id="conditional-hit-after-deny-asks",
    ),
    pytest.param(
        [rule("builtin/bash", "ask", bash_when("rm")), rule("builtin/*", "allow")],
        commands("rm x"),
        Decision(verdict="allow", rule=1),
        id="unconditional-after-conditional-wins",
    ),
    pytest.param(
        [
            rule("builtin/bash", "ask", bash_when("^git")),
            rule("builtin/bash", "ask", bash_when("push")),
        ],
        commands("git status"),
        Decision(verdict="ask", rule=0),
        id="earlier-conditional-decides-when-later-misses",
    ),
    pytest.param(
        [rule("builtin/bash", "ask", bash_when("^x"))],
        commands("a\nx"),
        Decision(verdict="allow", rule=None),
        id="caret-is-start-of-text",
    ),
    pytest.param(
        [rule("builtin/bash", "ask", bash_when("(?m)^x"))],
        commands("a\nx"),
        Decision(verdict="ask", rule=0),
        id="caret-multiline-flag",
    ),
    pytest.param(
        [rule("builtin/bash", "ask", bash_when("x$"))],
        commands("x\n"),
        Decision(verdict="allow", rule=None),
        id="dollar-not-before-trailing-newline",
    ),
    pytest.param(
        [rule("builtin/bash", "ask", bash_when("rm"))],
        {"commands": []},
        Decision(verdict="allow", rule=None),
        id="empty-array-no-match",
    ),
]


@pytest.mark.parametrize(("rules", "arguments", "expected"), DECISIONS)
def test_decide(rules: list[Rule], arguments: dict[str, Any], expected: Decision) -> None:
    policy = Policy.bind(rules, TOOLS)
    assert policy.decide("builtin/bash", arguments) == expected
    explanation = policy.explain("builtin/bash", arguments)
    assert (explanation.verdict, explanation.decided_by) == (expected.verdict, expected.rule)


def test_decide_on_effects() -> None:
    rules = [rule("builtin/write_file", "ask", ("effects", "files[*].path", "/protected/"))]
    policy = Policy.bind(rules, TOOLS)
    arguments = {"files": [{"path": "a", "content": ""}]}
    hit = {
        "files": [
            {"path": "/w/a", "operation": "write"},
            {"path": "/protected/b", "operation": "write"},
        ]
    }
    miss = {"files": [{"path": "/w/a", "operation": "write"}]}
    assert policy.decide("builtin/write_file", arguments, hit).verdict == "ask"
    assert policy.decide("builtin/write_file", arguments, miss).verdict == "allow"
    assert policy.decide("builtin/write_file", arguments, None).verdict == "allow"


def test_unknown_identity() -> None:
    policy = Policy.bind([], TOOLS)
    with pytest.raises(ToolUnknown):
        policy.decide("builtin/nope", {})
    with pytest.raises(ToolUnknown):
        policy.explain("builtin/nope", {})
    with pytest.raises(ToolUnknown):
        policy.check_exposed("builtin/nope")
    assert not policy.is_exposed("builtin/nope")


def test_decide_walks_only_the_deciding_tail() -> None:
    """Rules before a tool's last unconditional rule are never evaluated."""
    rules = [rule("builtin/bash", "ask", bash_when("rm")), rule("*", "allow")]
    policy = Policy.bind(rules, TOOLS)
    chain = policy._chains["builtin/bash"].steps
    assert len(chain) == 1
    assert chain[0].predicate is None


# --- exposure --------------------------------------------------------------------------

EXPOSURE = [
    pytest.param([], True, None, id="no-rules-exposed"),
    pytest.param([rule("builtin/bash", "deny")], False, 0, id="unconditional-deny-hides"),
    pytest.param([rule("*", "deny")], False, 0, id="deny-all-hides"),
    pytest.param(
        [rule("builtin/bash", "deny"), rule("builtin/bash", "allow")],
        True,
        None,
        id="later-allow-exposes",
    ),
    pytest.param(
        [rule("builtin/bash", "allow"), rule("builtin/*", "deny")],
        False,
        1,
        id="later-deny-hides",
    ),
    pytest.param(
        [rule("builtin/bash", "deny"), rule("builtin/bash", "ask", bash_when("rm"))],
        True,
        None,
        id="later-conditional-exposes",
    ),
    pytest.param(
        [rule("builtin/bash", "ask", bash_when("rm")), rule("builtin/bash", "deny")],
        False,
        1,
        id="earlier-conditional-does-not-expose",
    ),
    pytest.param(
        [rule("builtin/bash", "deny"), rule("builtin/read_file", "allow")],
        False,
        0,
        id="later-rule-for-other-tool-ignored",
    ),
    pytest.param([rule("builtin/bash", "ask")], True, None, id="ask-exposes"),
]


@pytest.mark.parametrize(("rules", "exposed", "hiding_rule"), EXPOSURE)
def test_exposure(rules: list[Rule], exposed: bool, hiding_rule: int | None) -> None:
    policy = Policy.bind(rules, TOOLS)
    assert policy.is_exposed("builtin/bash") is exposed
    assert policy.hidden.get("builtin/bash") == hiding_rule
    if exposed:
        policy.check_exposed("builtin/bash")
    else:
        with pytest.raises(ToolNotExposed) as caught:
            policy.check_exposed("builtin/bash")
        assert caught.value.code == "tool_not_exposed"
        assert caught.value.context == {"tool": "builtin/bash", "rule": hiding_rule}
        assert policy.decide("builtin/bash", commands("ls")) == Decision(
            verdict="deny", rule=hiding_rule
        )


# --- explain ---------------------------------------------------------------------------


def test_explain_reports_every_rule() -> None:
    rules = [
        rule("builtin/*", "allow"),
        rule("builtin/read_file", "deny"),
        rule("builtin/bash", "ask", bash_when(RM)),
        rule("builtin/bash", "ask", bash_when("^git push")),
    ]
    policy = Policy.bind(rules, TOOLS)
    explanation = policy.explain("builtin/bash", commands("ls", "sudo rm -rf /tmp/x", 7))  # type: ignore[arg-type]
    assert explanation.verdict == "ask"
    assert explanation.decided_by == 2
    assert explanation.exposed
    got = [(r.index, r.matched) for r in explanation.rules]
    assert got == [(0, True), (1, False), (2, True), (3, False)]
    whys = [r.why for r in explanation.rules]
    assert whys[0] == "glob matches builtin/bash; no condition; a later matching rule (2) decides"
    assert whys[1] == "glob 'builtin/read_file' does not match builtin/bash"
    assert whys[2].startswith("glob matches; when: arguments commands[1].command =")
    assert "'sudo rm -rf /tmp/x' matches" in whys[2]
    assert whys[2].endswith("the last matching rule: it decides")
    assert whys[3] == (
        "glob matches; when: none of the 2 strings at arguments commands[*].command"
        " matches /^git push/ (1 non-string value ignored)"
    )
    as_dict = explanation.to_dict()
    assert as_dict["rules"][1] == {
        "index": 1,
        "match": "builtin/read_file",
        "effect": "deny",
        "matched": False,
        "why": "glob 'builtin/read_file' does not match builtin/bash",
    }


@pytest.mark.parametrize(
    ("arguments", "why"),
    [
        pytest.param(
            {}, "arguments has no value at commands[*].command (absent: no match)", id="absent"
        ),
        pytest.param(
            commands("ls"),
            "the 1 string at arguments commands[*].command does not match /rm/",
            id="one-string",
        ),
        pytest.param(
            {"commands": [{"command": None}]},
            "no string at arguments commands[*].command: no match (1 non-string value ignored)",
            id="only-non-strings",
        ),
        pytest.param(
            commands("rm " + "x" * 200),
            "arguments commands[0].command = "
            + repr("rm " + "x" * 77)
            + "... (203 characters) matches /rm/",
            id="long-string-shortened",
        ),
    ],
)
def test_explain_predicate_why(arguments: dict[str, Any], why: str) -> None:
    policy = Policy.bind([rule("builtin/bash", "ask", bash_when("rm"))], TOOLS)
    explained = policy.explain("builtin/bash", arguments).rules[0].why
    assert (
        explained.removeprefix("glob matches; when: ").removesuffix(
            "; the last matching rule: it decides"
        )
        == why
    )


def test_explain_effects_absent() -> None:
    rules = [rule("builtin/write_file", "ask", ("effects", "files[*].path", "x"))]
    policy = Policy.bind(rules, TOOLS)
    explanation = policy.explain("builtin/write_file", {"files": []}, None)
    assert explanation.rules[0].why == "glob matches; when: the call has no effects"


# --- lint ------------------------------------------------------------------------------

LINT = [
    pytest.param([rule("builtin/*", "allow")], [], id="clean"),
    pytest.param(
        [rule("builtin/bsh", "deny")], [("matches_nothing", 0, ())], id="typo-matches-nothing"
    ),
    pytest.param(
        [rule("builtin/bash", "ask"), rule("builtin/*", "allow")],
        [("never_decides", 0, (1,))],
        id="shadowed-by-later-superset",
    ),
    pytest.param(
        [rule("builtin/bash", "ask", bash_when("rm")), rule("builtin/bash", "deny")],
        [("never_decides", 0, (1,))],
        id="conditional-shadowed-by-later-unconditional",
    ),
    pytest.param(
        [rule("builtin/*", "allow"), rule("builtin/bash", "ask", bash_when("rm"))],
        [],
        id="later-conditional-does-not-shadow",
    ),
    pytest.param(
        [rule("builtin/*", "ask"), rule("builtin/bash", "deny")],
        [],
        id="later-subset-does-not-shadow",
    ),
    pytest.param(
        [
            rule("builtin/*", "ask"),
            rule("builtin/?ash", "deny"),
            rule("builtin/sh", "allow"),
            rule("builtin/*_file", "allow"),
        ],
        [("never_decides", 0, (1, 2, 3))],
        id="shadowed-by-a-union-of-later-rules",
    ),
    pytest.param(
        [rule("x/*", "ask"), rule("builtin/bash", "ask"), rule("builtin/bash", "deny")],
        [("matches_nothing", 0, ()), ("never_decides", 1, (2,))],
        id="both-kinds-in-rule-order",
    ),
]


@pytest.mark.parametrize(("rules", "expected"), LINT)
def test_lint(rules: list[Rule], expected: list[tuple[str, int, tuple[int, ...]]]) -> None:
    findings = Policy.bind(rules, TOOLS).lint()
    assert [(f.kind, f.rule, f.shadowed_by) for f in findings] == expected


# --- laws (Hypothesis) -----------------------------------------------------------------

IDENTITIES = ("builtin/bash", "builtin/sh", "local/my_bash", "mcp/shell/run")
SHAPES = tuple(ToolShape.from_schemas(i, input_schema=BASH_SCHEMA) for i in IDENTITIES)
# Regexes on which RE2 and Python's re agree, each with a string it matches.
WITNESS = {
    "rm": "rm",
    "^sudo": "sudo ls",
    "a|b": "b",
    "[0-9]+": "7",
    r"\.txt": "f.txt",
    r"x\s": "x ",
}
GLOBS = st.one_of(
    st.sampled_from(
        ["*", "builtin/*", "builtin/bash", "*bash", "builtin/?h", "mcp/*", "*/*/*", "b*h", "zz/*"]
    ),
    st.text(st.sampled_from("bash/*?lx"), max_size=8),
)
# A rule's match: one glob, or a list of them (any of them matching).
MATCHES = st.one_of(GLOBS, st.lists(GLOBS, min_size=1, max_size=3).map(tuple))
RULES = st.builds(
    lambda match, effect, regex: Rule(
        match=match,
        effect=effect,
        when=None
        if regex is None
        else Predicate(source="arguments", any="commands[*].command", regex=regex),
    ),
    MATCHES,
    st.sampled_from(["allow", "ask", "deny"]),
    st.none(),
).flatmap(
    lambda r: st.one_of(
        st.just(r),
        st.sampled_from(sorted(WITNESS)).map(
            lambda regex: Rule(
                match=r.match,
                effect="ask",
                when=Predicate(source="arguments", any="commands[*].command", regex=regex),
            )
        ),
    )
)
COMMANDS = st.lists(st.text(st.sampled_from("rmsudoab7x.t \n;"), max_size=12), max_size=4)


def glob_reference(pattern: str, text: str) -> bool:
    regex = "".join(".*" if c == "*" else "." if c == "?" else re.escape(c) for c in pattern)
    return re.fullmatch(regex, text, re.DOTALL) is not None


def oracle(rules: list[Rule], identity: str, texts: list[str]) -> Decision:
    """The direct reading: walk every rule in order; the last one that matches wins."""
    decision = Decision(verdict="allow", rule=None)
    for index, candidate in enumerate(rules):
        if not any(glob_reference(glob, identity) for glob in candidate.globs):
            continue
        when = candidate.when
        if when is not None and not any(re.search(when.regex, text) for text in texts):
            continue
        decision = Decision(verdict=candidate.effect, rule=index)
    return decision


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(RULES, max_size=8), st.sampled_from(IDENTITIES), COMMANDS)
def test_hidden_exactly_when_every_call_is_denied(
    rules: list[Rule], identity: str, texts: list[str]
) -> None:
    policy = Policy.bind(rules, SHAPES)
    matching = [i for i, r in enumerate(rules) if any(glob_reference(g, identity) for g in r.globs)]
    if not policy.is_exposed(identity):
        # Whatever the call, it is denied.
        assert oracle(rules, identity, texts).verdict == "deny"
        assert rules[matching[-1]].when is None
        return
    # Exposed: some call is not denied. Build one from the last matching rule.
    last = rules[matching[-1]] if matching else None
    witness = [WITNESS[last.when.regex]] if last is not None and last.when is not None else []
    assert oracle(rules, identity, witness).verdict != "deny"


JSON_SCALARS = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(),
    st.floats(allow_nan=False),
    st.text(st.one_of(st.characters(), st.characters(categories=["Cs"]))),
)
JSON_VALUES = st.recursive(
    JSON_SCALARS,
    lambda inner: st.one_of(
        st.lists(inner, max_size=4),
        st.dictionaries(
            st.sampled_from(["commands", "command", "files", "path", "x"]), inner, max_size=4
        ),
    ),
    max_leaves=20,
)
ANY_TEXT = st.text(st.one_of(st.characters(), st.characters(categories=["Cs"])))


@given(ANY_TEXT, st.lists(ANY_TEXT, max_size=3))
def test_evaluation_never_raises_on_arbitrary_strings(first: str, rest: list[str]) -> None:
    policy = Policy.bind([rule("builtin/bash", "ask", bash_when(RM))], TOOLS)
    arguments = commands(first, *rest)
    decision = policy.decide("builtin/bash", arguments)
    assert decision.verdict in ("allow", "ask")
    assert policy.explain("builtin/bash", arguments).verdict == decision.verdict


@given(JSON_VALUES, JSON_VALUES)
def test_evaluation_never_raises_on_arbitrary_values(arguments: Any, effects: Any) -> None:
    rules = [
        rule("builtin/*sh", "ask", bash_when(".")),
        rule("builtin/write_file", "ask", ("effects", "files[*].path", ".")),
    ]
    policy = Policy.bind(rules, TOOLS)
    for identity in ("builtin/bash", "builtin/write_file"):
        decision = policy.decide(identity, arguments, effects)
        assert policy.explain(identity, arguments, effects).verdict == decision.verdict


def test_lone_surrogates_are_read_as_replacement_characters() -> None:
    policy = Policy.bind([rule("builtin/bash", "ask", bash_when("rm \ufffd"))], TOOLS)
    assert policy.decide("builtin/bash", commands("rm \ud800")).verdict == "ask"
