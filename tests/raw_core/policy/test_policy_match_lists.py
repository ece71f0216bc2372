"""A rule's ``match`` may be a list of globs, so that it names exactly the tools its
predicate binds to: one rule on ``files[*].path`` for write_file and bash together, where
``builtin/*`` would also take in tools without that field (``config_invalid``)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from raw_core.agent import Agent, load_agent
from raw_core.config import Rule, load_config, parse_config
from raw_core.errors import ConfigInvalid
from raw_core.plugins import PluginHost

USE = ["builtin/read_file", "builtin/write_file", "builtin/bash"]
DOTENV = {"source": "effects", "any": "files[*].path", "regex": "(^|/)\\.env$"}


def agent_with(tmp_path: Path, rules: list[dict[str, Any]]) -> Agent:
    config = tmp_path / "raw.json"
    config.write_text(
        json.dumps({"agents": {"coder": {"tools": {"use": USE, "rules": rules}}}}),
        encoding="utf-8",
    )
    host = PluginHost()
    host.load_entry_points()
    return load_agent(load_config(config), host=host)


def test_one_rule_over_files_path_covers_write_file_and_bash(tmp_path: Path) -> None:
    rule = {"match": ["builtin/write_file", "builtin/bash"], "effect": "ask", "when": DOTENV}
    agent = agent_with(tmp_path, [rule])
    write = agent.registry.by_name("write_file")
    bash = agent.registry.by_name("bash")
    assert write.describe_effects is not None
    assert bash.describe_effects is not None

    class Context:
        cwd = "/srv/app"

    by_write = write.describe_effects({"operations": [_overwrite(".env")]}, Context())
    by_bash = bash.describe_effects({"commands": [{"command": "echo K=1 > .env"}]}, Context())
    harmless = bash.describe_effects({"commands": [{"command": "echo K=1 > env.txt"}]}, Context())
    assert agent.policy.decide("builtin/write_file", {}, by_write).verdict == "ask"
    assert agent.policy.decide("builtin/bash", {}, by_bash).verdict == "ask"
    assert agent.policy.decide("builtin/bash", {}, harmless).verdict == "allow"
    assert agent.policy.matching_rules("builtin/read_file") == ()


def _overwrite(path: str) -> dict[str, str]:
    return {"op": "overwrite", "path": path, "content": "K=1\n"}


def test_the_same_rule_with_a_glob_over_every_tool_cannot_bind(tmp_path: Path) -> None:
    rule = {"match": "builtin/*", "effect": "ask", "when": DOTENV}
    with pytest.raises(ConfigInvalid) as caught:
        agent_with(tmp_path, [rule])
    assert caught.value.context["tool"] == "builtin/read_file"
    assert caught.value.field == "$.agents.coder.tools.rules[0].when.source"


def test_a_list_matches_what_any_of_its_globs_matches(tmp_path: Path) -> None:
    agent = agent_with(
        tmp_path,
        [
            {"match": ["builtin/read_*", "builtin/bash"], "effect": "deny"},
            {"match": ["local/nothing"], "effect": "allow"},
        ],
    )
    assert agent.policy.hidden == {"builtin/read_file": 0, "builtin/bash": 0}
    assert [d.identity for d in agent.definitions()] == ["builtin/write_file"]
    (finding,) = agent.policy.lint()
    assert finding.kind == "matches_nothing"
    assert finding.message.startswith("rule 1 (match [\"local/nothing\"], effect 'allow')")
    assert finding.to_dict()["match"] == ["local/nothing"]
    explained = agent.policy.explain("builtin/write_file", {"operations": []})
    assert explained.to_dict()["rules"][0] == {
        "index": 0,
        "match": ["builtin/read_*", "builtin/bash"],
        "effect": "deny",
        "matched": False,
        "why": 'none of the globs ["builtin/read_*", "builtin/bash"] matches builtin/write_file',
    }


@pytest.mark.parametrize(
    ("match", "message"),
    [
        ([], "expected a glob or an array of globs, found an empty array"),
        (["builtin/bash", 3], "expected a glob or an array of globs; item 1 is a number"),
        ({"glob": "x"}, "expected a glob or an array of globs, found an object"),
        (None, "expected a glob or an array of globs, found null"),
    ],
)
def test_a_match_that_is_neither_a_glob_nor_a_list_of_globs_is_refused(
    match: Any, message: str
) -> None:
    text = json.dumps(
        {"agents": {"a": {"tools": {"use": [], "rules": [{"match": match, "effect": "deny"}]}}}}
    )
    with pytest.raises(ConfigInvalid) as caught:
        parse_config(text)
    assert caught.value.field == "$.agents.a.tools.rules[0].match"
    assert message in caught.value.message


def test_a_list_is_kept_as_a_tuple_and_a_string_as_it_is() -> None:
    text = json.dumps(
        {
            "agents": {
                "a": {
                    "tools": {
                        "use": [],
                        "rules": [
                            {"match": ["a/*", "b/*"], "effect": "deny"},
                            {"match": "c/*", "effect": "allow"},
                        ],
                    }
                }
            }
        }
    )
    first, second = parse_config(text).agents["a"].tools.rules
    assert first == Rule(match=("a/*", "b/*"), effect="deny")
    assert first.globs == ("a/*", "b/*")
    assert second.globs == ("c/*",)
