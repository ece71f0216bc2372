"""Config layers end to end, with real files in a temporary XDG home: the managed config,
the user's and a trusted project's; floors that only tighten; rule examples checked at
load and run by ``raw policy test``."""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner, Result

from raw_core.cli import cli
from tests.conftest import raw_script

RM_ASK = {
    "match": "builtin/bash",
    "effect": "ask",
    "when": {"source": "effects", "any": "commands[*].programs[*].name", "regex": "^rm$"},
}
ALLOW_ALL = {"match": "*", "effect": "allow"}
TOOLS = ["builtin/bash", "builtin/read_file"]


@pytest.fixture
def home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A temporary XDG home, no managed config, and the working directory a project."""
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path / "xdg"))
    monkeypatch.setenv("XDG_STATE_HOME", str(tmp_path / "state"))
    monkeypatch.delenv("RAW_MANAGED_CONFIG", raising=False)
    project = tmp_path / "project"
    project.mkdir()
    monkeypatch.chdir(project)
    return tmp_path


def write(path: Path, document: dict[str, Any]) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(document), encoding="utf-8")
    return path


def user_config(home: Path, document: dict[str, Any]) -> Path:
    return write(home / "xdg" / "raw" / "config.json", document)


def trusted_project(home: Path, document: dict[str, Any]) -> Path:
    path = write(home / "project" / "raw.json", document)
    assert run("config", "trust").exit_code == 0
    return path


def managed_config(home: Path, monkeypatch: pytest.MonkeyPatch, document: dict[str, Any]) -> Path:
    path = write(home / "admin" / "managed.json", document)
    monkeypatch.setenv("RAW_MANAGED_CONFIG", str(path))
    return path


def agent(*rules: dict[str, Any], use: list[str] | None = None) -> dict[str, Any]:
    return {"agents": {"coder": {"tools": {"use": use or TOOLS, "rules": list(rules)}}}}


def run(*args: str) -> Result:
    return CliRunner().invoke(cli, list(args), catch_exceptions=False)


def json_of(result: Result) -> Any:
    return json.loads(result.stdout)


def bash(command: str) -> str:
    return json.dumps({"commands": [{"command": command}]})


def test_the_users_ask_rule_still_asks_under_a_project_that_allows_everything(
    home: Path,
) -> None:
    user = user_config(home, {"rules": [RM_ASK]})
    trusted_project(home, agent(ALLOW_ALL))
    victim = home / "project" / "victim.txt"
    victim.write_text("keep me")

    explained = run("policy", "explain", "builtin/bash", bash("rm -f victim.txt"), "--json")
    assert explained.exit_code == 0, explained.output
    shown = json_of(explained)
    assert (shown["verdict"], shown["layer"], shown["decided_by"]) == ("ask", "user", 0)
    assert [(layer["layer"], layer["verdict"]) for layer in shown["layers"]] == [
        ("agent", "allow"),
        ("user", "ask"),
    ]
    assert shown["layers"][1]["path"] == str(user)

    called = run("tools", "call", "builtin/bash", bash("rm -f victim.txt"), "--json")
    assert called.exit_code == 1
    result = json_of(called)
    assert result["code"] == "approval_unavailable"
    assert victim.read_text() == "keep me"
    listed = run("tools", "call", "builtin/bash", bash("echo fine"), "--json")
    assert listed.exit_code == 0, listed.output


def test_the_floor_also_holds_under_an_explicit_config(home: Path, tmp_path: Path) -> None:
    user_config(home, {"rules": [RM_ASK]})
    other = write(tmp_path / "elsewhere.json", agent(ALLOW_ALL))
    shown = json_of(
        run("policy", "explain", "builtin/bash", bash("rm x"), "--config", str(other), "--json")
    )
    assert (shown["verdict"], shown["layer"]) == ("ask", "user")


def test_a_managed_deny_hides_the_tool_and_no_lower_config_undoes_it(
    home: Path, monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    managed = managed_config(
        home, monkeypatch, {"rules": [{"match": "builtin/bash", "effect": "deny"}]}
    )
    user_config(home, {"rules": [{"match": "builtin/bash", "effect": "allow"}]})
    trusted_project(home, agent(ALLOW_ALL, {"match": "builtin/bash", "effect": "allow"}))

    listed = run("tools", "list", "--json")
    assert listed.exit_code == 0, listed.output
    assert [tool["name"] for tool in json_of(listed)] == ["read_file"]
    assert "not exposed: builtin/bash (the managed floor's rules[0] denies every call)" in (
        run("tools", "list").output
    )
    called = json_of(run("tools", "call", "builtin/bash", bash("echo hi"), "--json"))
    assert called["code"] == "tool_not_exposed"
    shown = json_of(run("policy", "explain", "builtin/bash", bash("echo hi"), "--json"))
    assert (shown["exposed"], shown["verdict"], shown["layer"]) == (False, "deny", "managed")

    linted = run("policy", "lint")
    assert linted.exit_code == 1
    assert "floor_overrides: rule 0 (match '*', effect 'allow') never takes effect" not in (
        linted.output
    )  # '*' also matches read_file, which no floor denies
    assert (
        "floor_overrides: rule 1 (match 'builtin/bash', effect 'allow') never takes effect:"
        f" the managed floor ({managed}) denies every call of builtin/bash (its rule 0)"
    ) in linted.output
    assert "note: builtin/bash is not exposed (rule 0 of the managed floor" in linted.output

    explicit = write(tmp_path / "mine.json", agent(ALLOW_ALL))
    again = run("tools", "list", "--config", str(explicit), "--json")
    assert [tool["name"] for tool in json_of(again)] == ["read_file"]


def test_a_project_config_alone_works_as_today(home: Path) -> None:
    trusted_project(
        home,
        {
            "models": {"m": {"provider": "replay", "model": "r.jsonl"}},
            "agents": {"coder": {"model": "m", "tools": {"use": TOOLS, "rules": [RM_ASK]}}},
        },
    )
    validated = run("config", "validate")
    assert validated.exit_code == 0, validated.output
    assert validated.output == f"{home / 'project' / 'raw.json'}: valid (project config)\n"
    shown = json_of(run("policy", "explain", "builtin/bash", bash("rm x"), "--json"))
    assert (shown["verdict"], shown["decided_by"], shown["layers"]) == ("ask", 0, [])
    assert [m["name"] for m in json_of(run("models", "list", "--json"))] == ["m"]


def test_the_users_models_and_variables_win_and_sessions_come_from_the_user(
    home: Path,
) -> None:
    user = user_config(
        home,
        {
            "models": {"default": {"provider": "replay", "model": "mine.jsonl"}},
            "vars": {"KEY": {"description": "mine", "from": {"file": "key.txt"}}},
            "sessions": {"expire_after_days": 7},
        },
    )
    project = trusted_project(
        home,
        {
            "models": {
                "default": {"provider": "replay", "model": "theirs.jsonl"},
                "extra": {"provider": "replay", "model": "extra.jsonl"},
            },
            "vars": {"KEY": {"description": "theirs", "from": {"env": "STEAL"}}},
            "agents": {
                "coder": {
                    "model": "default",
                    "tools": {"use": [*TOOLS, "builtin/read_var"]},
                    "vars": {"use": ["KEY"]},
                }
            },
        },
    )
    models = {m["name"]: m["model"] for m in json_of(run("models", "list", "--json"))}
    assert models == {"default": "mine.jsonl", "extra": "extra.jsonl"}
    (user.parent / "key.txt").write_text("user-secret")
    read = json_of(run("tools", "call", "builtin/read_var", '{"name": "KEY"}', "--json"))
    assert "user-secret" in json.dumps(read)  # the user's file, beside the user's config
    validated = run("config", "validate", "--json")
    report = json_of(validated)
    assert report["files"] == [
        {"layer": "user", "path": str(user)},
        {"layer": "project", "path": str(project)},
    ]
    assert f"model 'default' of {project} is not used: {user} defines it" in report["notes"]
    # an agent of the project may use a model only the user defines
    write(project, {"agents": {"coder": {"model": "default", "tools": {"use": TOOLS}}}})
    assert run("config", "validate").exit_code == 0


def test_a_project_that_names_an_undefined_model_is_refused(home: Path) -> None:
    user_config(home, {"models": {"mine": {"provider": "replay", "model": "m.jsonl"}}})
    trusted_project(home, {"agents": {"coder": {"model": "ghost", "tools": {"use": TOOLS}}}})
    validated = json_of(run("config", "validate", "--json"))
    assert validated["problems"][0]["field"] == "$.agents.coder.model"
    assert "defined: mine" in validated["problems"][0]["message"]


def test_a_failing_example_stops_the_load_naming_the_rule_and_the_example(home: Path) -> None:
    rule = dict(RM_ASK, examples={"match": [{"commands": [{"programs": [{"name": "rmdir"}]}]}]})
    trusted_project(home, agent(rule))
    listed = run("tools", "list", "--json")
    assert listed.exit_code == 2
    error = json_of(listed)["error"]
    assert error["code"] == "config_invalid"
    assert error["field"] == "$.agents.coder.tools.rules[0].examples.match[0]"
    assert error["message"].startswith(
        "rule 0 (match 'builtin/bash', effect 'ask'): example match[0]"
        ' {"commands": [{"programs": [{"name": "rmdir"}]}]} should match its when, but it'
        " does not"
    )
    tested = run("policy", "test")
    assert tested.exit_code == 1
    assert "FAIL" in tested.output
    assert "1 example: 0 passed, 1 failed" in tested.output


def test_a_failing_example_in_the_user_floor_names_the_users_file(home: Path) -> None:
    rule = dict(RM_ASK, examples={"not_match": [{"commands": [{"programs": [{"name": "rm"}]}]}]})
    user = user_config(home, {"rules": [rule]})
    trusted_project(home, agent())
    error = json_of(run("tools", "list", "--json"))["error"]
    assert (error["code"], error["field"], error["path"]) == (
        "config_invalid",
        "$.rules[0].examples.not_match[0]",
        str(user),
    )
    assert error["message"].startswith(f"the user floor ({user}): rule 0 ")


def test_raw_policy_test_passes_on_the_starter_config(home: Path) -> None:
    assert run("config", "init").exit_code == 0
    tested = run("policy", "test")
    assert tested.exit_code == 0, tested.output
    assert "FAIL" not in tested.output
    report = json_of(run("policy", "test", "--json"))
    assert report["ok"] is True
    rules = {(e["agent"], e["rule"]) for e in report["examples"]}
    assert rules == {("coder", 0), ("coder", 1), ("coder", 2)}
    assert {e["kind"] for e in report["examples"]} == {"match", "not_match"}


def test_a_managed_config_holds_only_rules_and_must_exist_when_named(
    home: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    trusted_project(home, agent())
    managed = managed_config(home, monkeypatch, {"rules": [], "models": {}})
    error = json_of(run("tools", "list", "--json"))["error"]
    assert (error["code"], error["field"], error["path"]) == (
        "config_invalid",
        "$.models",
        str(managed),
    )
    monkeypatch.setenv("RAW_MANAGED_CONFIG", str(home / "nowhere.json"))
    error = json_of(run("tools", "list", "--json"))["error"]
    assert error["code"] == "config_not_found"
    assert "RAW_MANAGED_CONFIG" in error["message"]
    said = run("tools", "list").stderr
    assert "hint: the managed config is an administrator's: fix the file, or unset" in said
    assert "raw config init" not in said  # a starter config would not be the managed one


def test_validate_and_the_chat_banner_name_every_file_in_use(
    home: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    managed = managed_config(home, monkeypatch, {"rules": [RM_ASK]})
    user = user_config(home, {"models": {"m": {"provider": "replay", "model": "r.jsonl"}}})
    (home / "project" / "r.jsonl").write_text(json.dumps({"text": "Hello."}) + "\n")
    project = trusted_project(home, {"agents": {"coder": {"model": "m", "tools": {"use": TOOLS}}}})
    validated = run("config", "validate")
    assert validated.exit_code == 0, validated.output
    assert validated.output.splitlines() == [
        f"{managed}: valid (managed config)",
        f"{user}: valid (user config)",
        f"{project}: valid (project config)",
    ]
    chat = subprocess.run(
        [raw_script(), "chat"],
        env=dict(os.environ),
        cwd=home / "project",
        input="",
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert chat.returncode == 0, chat.stderr
    files = f"config: {managed} (managed), {user} (user), {project} (project)"
    assert any(line.startswith(f"{files} · agent coder") for line in chat.stderr.splitlines())


def test_the_vision_check_reads_the_model_the_agent_will_use(home: Path) -> None:
    user_config(home, {"models": {"default": {"provider": "replay", "model": "m.jsonl"}}})
    trusted_project(
        home,
        {
            "models": {"default": {"provider": "replay", "model": "x.jsonl", "vision": True}},
            "agents": {"coder": {"model": "default", "tools": {"use": ["builtin/view_image"]}}},
        },
    )
    problem = json_of(run("config", "validate", "--json"))["problems"][0]
    assert problem["field"] == "$.agents.coder.tools.use[0]"
    assert "model 'default' does not accept them" in problem["message"]
