"""``raw config`` through the console script: every problem ``validate`` can see, the codes
``init`` and a store that cannot be opened give, and the hint for a missing credential."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from raw_core.cli.config import STARTER_CONFIG
from tests.conftest import run_raw


def _problems(tmp_path: Path, config: Path) -> tuple[int, list[dict[str, str]], list[str]]:
    result = run_raw(tmp_path, "config", "validate", "--config", str(config), "--json")
    body = json.loads(result.stdout)
    assert body["ok"] is (result.returncode == 0), result.stdout
    return result.returncode, body["problems"], body["notes"]


def _user_config(tmp_path: Path, config: dict[str, object]) -> Path:
    path = tmp_path / "config" / "raw" / "config.json"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(config), encoding="utf-8")
    return path


# --- raw config init ----------------------------------------------------------------------


@pytest.mark.parametrize("target", ["taken/x.json", "taken/deeper/x.json"], ids=["in", "under"])
def test_init_into_a_file_is_not_config_exists(tmp_path: Path, target: str) -> None:
    (tmp_path / "taken").write_text("a file, not a folder", encoding="utf-8")
    result = run_raw(tmp_path, "config", "init", target)
    assert result.returncode == 2
    assert result.stderr.startswith("raw: usage_invalid: cannot write "), result.stderr
    assert "config_exists" not in result.stderr
    assert (tmp_path / "taken").read_text(encoding="utf-8") == "a file, not a folder"


def test_init_onto_a_folder_is_not_config_exists(tmp_path: Path) -> None:
    (tmp_path / "folder").mkdir()
    result = run_raw(tmp_path, "config", "init", "folder")
    assert result.returncode == 2
    assert result.stderr.startswith("raw: usage_invalid: folder is a folder; "), result.stderr
    assert list((tmp_path / "folder").iterdir()) == []


def test_init_over_a_file_is_config_exists(tmp_path: Path) -> None:
    (tmp_path / "raw.json").write_text("{}", encoding="utf-8")
    result = run_raw(tmp_path, "config", "init", "raw.json")
    assert result.returncode == 2
    assert result.stderr.startswith("raw: config_exists: "), result.stderr
    assert (tmp_path / "raw.json").read_text(encoding="utf-8") == "{}"


# --- a store that cannot be opened ----------------------------------------------------------

_LOCAL_MODEL = {
    # A closed loopback port: nothing is ever sent anywhere.
    "models": {
        "m": {"provider": "openai-compatible", "model": "m", "base_url": "http://127.0.0.1:9/v1"}
    },
    "agents": {"a": {"model": "m", "tools": {"use": []}}},
}


def _state_is_a_file(tmp_path: Path) -> Path:
    (tmp_path / "state").write_text("", encoding="utf-8")
    return tmp_path / "state" / "raw"


def _database_is_a_folder(tmp_path: Path) -> Path:
    folder = tmp_path / "state" / "raw" / "sessions-v3.sqlite3"
    folder.mkdir(parents=True)
    return folder


@pytest.mark.parametrize("command", [["sessions", "list"], ["run", "hi"]], ids=["list", "run"])
@pytest.mark.parametrize(
    "break_store", [_state_is_a_file, _database_is_a_folder], ids=["state-file", "db-folder"]
)
def test_a_store_location_that_fails_is_store_unavailable(
    tmp_path: Path, command: list[str], break_store: object
) -> None:
    _user_config(tmp_path, _LOCAL_MODEL)
    assert callable(break_store)
    where = break_store(tmp_path)
    result = run_raw(tmp_path, *command, "--json")
    assert result.returncode == 2, result
    error = json.loads(result.stdout)["error"]
    assert error["code"] == "store_unavailable", error
    assert str(where) in error["message"]
    assert "field" not in error


# --- notes ------------------------------------------------------------------------------


def test_a_project_sessions_section_the_user_config_replaces_is_noted(tmp_path: Path) -> None:
    user = _user_config(tmp_path, {"sessions": {"expire_after_days": 30}})
    project = tmp_path / "raw.json"
    project.write_text(
        json.dumps({"sessions": {"expire_after_days": 7}, "agents": {"a": {"tools": {"use": []}}}}),
        encoding="utf-8",
    )
    code, problems, notes = _problems(tmp_path, project)
    assert (code, problems) == (0, [])
    assert notes == [f"sessions of {project} is not used: {user} provides sessions"]
    # The same sessions in both files leave nothing out: no note.
    project.write_text(
        json.dumps(
            {"sessions": {"expire_after_days": 30}, "agents": {"a": {"tools": {"use": []}}}}
        ),
        encoding="utf-8",
    )
    assert _problems(tmp_path, project) == (0, [], [])
    # A project that sets no sessions loses none: no note either.
    _user_config(tmp_path, {"sessions": {"expire_after_days": 14}})  # not the default
    project.write_text(json.dumps({"agents": {"a": {"tools": {"use": []}}}}), encoding="utf-8")
    assert _problems(tmp_path, project) == (0, [], [])


# --- the hint for a credential read through a variable ------------------------------------


def _with_key_from(source: dict[str, object]) -> dict[str, object]:
    config: dict[str, Any] = json.loads(json.dumps(STARTER_CONFIG))
    config["vars"]["OPENAI_API_KEY"]["from"] = source
    return config


@pytest.mark.parametrize(
    ("config", "expected"),
    [
        (
            STARTER_CONFIG,
            "  hint: set the environment variable: export OPENAI_API_KEY=... or change"
            " $.models.default.api_key in the config",
        ),
        (
            _with_key_from({"file": "no-such-key.txt"}),
            "  hint: put the value in no-such-key.txt, or change vars.OPENAI_API_KEY.from"
            " in the config",
        ),
        (
            _with_key_from({"command": ["false"]}),
            "  hint: run the command vars.OPENAI_API_KEY.from names to see why it fails,"
            " or change it",
        ),
    ],
    ids=["env", "file", "command"],
)
def test_a_missing_credential_variable_has_a_hint(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, config: dict[str, object], expected: str
) -> None:
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    _user_config(tmp_path, config)
    result = run_raw(tmp_path, "run", "hi")
    assert result.returncode == 2
    lines = result.stderr.splitlines()
    assert lines[0].startswith("raw: var_unavailable: variable OPENAI_API_KEY: "), lines
    assert lines[0].endswith("(at $.models.default.api_key)"), lines
    assert lines[1:] == [expected]


# --- raw config validate: every problem at once -------------------------------------------


def _fields(problems: list[dict[str, str]]) -> list[tuple[str, str]]:
    return [(p["field"], p["code"]) for p in problems]


def test_every_tool_and_skill_entry_of_an_agent_is_reported(tmp_path: Path) -> None:
    (tmp_path / "sk").mkdir()
    config = tmp_path / "e.json"
    config.write_text(
        json.dumps(
            {
                "skills": {"paths": ["sk"]},
                "agents": {
                    "b": {
                        "tools": {"use": ["agent/m1", "builtin/read_file", "agent/m2"]},
                        "skills": {"use": ["nope", "nope2"]},
                    },
                    "c": {"tools": {"use": []}, "skills": {"use": ["nope3"]}},
                },
            }
        ),
        encoding="utf-8",
    )
    code, problems, _ = _problems(tmp_path, config)
    assert code == 2
    assert _fields(problems) == [
        ("$.agents.b.tools.use[0]", "tool_not_found"),
        ("$.agents.b.tools.use[2]", "tool_not_found"),
        ("$.agents.b.skills.use[0]", "config_invalid"),
        ("$.agents.b.skills.use[1]", "config_invalid"),
        ("$.agents.c.skills.use[0]", "config_invalid"),
    ]
    assert "'nope2' not found" in problems[3]["message"]


def test_a_reference_problem_does_not_hide_what_loading_the_agent_finds(tmp_path: Path) -> None:
    config = tmp_path / "raw.json"
    config.write_text(
        json.dumps(
            {"agents": {"b": {"model": "ghost", "tools": {"use": ["agent/m1", "Not An Identity"]}}}}
        ),
        encoding="utf-8",
    )
    code, problems, _ = _problems(tmp_path, config)
    assert code == 2
    # The malformed identity is the file's problem, once; the missing folder is the load's.
    assert sorted(_fields(problems)) == [
        ("$.agents.b.model", "config_invalid"),
        ("$.agents.b.tools.use[0]", "tool_not_found"),
        ("$.agents.b.tools.use[1]", "config_invalid"),
    ]


@pytest.mark.parametrize(
    ("user_text", "user_field"),
    [
        (json.dumps({"sessions": {"expire_after_days": 0}}), "$.sessions.expire_after_days"),
        (json.dumps({"sessions": {"expire_after_days": "soon"}}), "$.sessions.expire_after_days"),
        ("{not json", "$"),
    ],
    ids=["value", "type", "json"],
)
def test_a_problem_in_the_user_config_does_not_hide_the_projects(
    tmp_path: Path, user_text: str, user_field: str
) -> None:
    user = _user_config(tmp_path, {})
    user.write_text(user_text, encoding="utf-8")
    project = tmp_path / "raw.json"
    project.write_text(
        json.dumps({"agents": {"a": {"tools": {"use": []}, "max_steps": 0}}}), encoding="utf-8"
    )
    code, problems, _ = _problems(tmp_path, project)
    assert code == 2
    assert [(p["field"], p.get("path")) for p in problems] == [
        (user_field, str(user)),
        ("$.agents.a.max_steps", str(project)),
    ]


def test_a_model_every_turn_refuses_is_a_problem(tmp_path: Path) -> None:
    config = tmp_path / "f.json"
    config.write_text(
        json.dumps(
            {
                "default_agent": "x",
                "models": {
                    "f": {"provider": "openai", "model": "m"},
                    "g": {"provider": "no-such-provider", "model": "m"},
                    "unused": {"provider": "anthropic", "model": "m"},
                },
                "agents": {
                    "x": {"model": "f", "tools": {"use": []}},
                    "y": {"model": "g", "tools": {"use": []}},
                },
            }
        ),
        encoding="utf-8",
    )
    code, problems, _ = _problems(tmp_path, config)
    assert code == 2
    assert _fields(problems) == [
        ("$.models.f", "config_invalid"),
        ("$.models.g.provider", "config_invalid"),
    ]
    # What a turn says about each: the same code at the same field.
    for agent, problem in zip(["x", "y"], problems, strict=True):
        turn = run_raw(tmp_path, "run", "hi", "--config", str(config), "--agent", agent, "--json")
        assert turn.returncode == 2
        error = json.loads(turn.stdout)["error"]
        assert (error["field"], error["code"]) == (problem["field"], problem["code"])
        assert error["message"] == problem["message"]


def test_validate_names_a_missing_file_as_every_command_does(tmp_path: Path) -> None:
    missing = tmp_path / "nope.json"
    validated = run_raw(tmp_path, "config", "validate", "--config", str(missing))
    ran = run_raw(tmp_path, "tools", "list", "--config", str(missing))
    assert validated.returncode == ran.returncode == 2
    said = f"config_not_found: no config file at {missing}"
    assert said in validated.stderr, validated.stderr
    assert said in ran.stderr, ran.stderr


def test_each_rule_floor_and_hook_problem_of_an_agent_is_reported(tmp_path: Path) -> None:
    """One bad rule does not hide the next, nor a floor's, nor a command hook's."""
    when = {"source": "arguments", "any": "files[*].path"}
    user = _user_config(
        tmp_path, {"rules": [{"match": "*", "effect": "ask", "when": {**when, "regex": "("}}]}
    )
    config = tmp_path / "raw.json"
    rules = [
        {"match": "builtin/read_file", "effect": "ask", "when": {**when, "regex": "(["}},
        {
            "match": "*",
            "effect": "ask",
            "when": {**when, "regex": "^x"},
            "examples": {"match": [{"files": [{"path": "y"}]}]},
        },
        {
            "match": "*",
            "effect": "ask",
            "when": {"source": "arguments", "any": "nope", "regex": "x"},
        },
        {"match": "*", "effect": "allow"},
    ]
    agent = {
        "tools": {"use": ["builtin/read_file"], "rules": rules},
        "hooks": {"use": ["agent/gone"]},
    }
    other = {"tools": {"use": ["builtin/read_file"]}}  # meets the floor's problem too
    config.write_text(json.dumps({"agents": {"a": agent, "b": other}}), encoding="utf-8")
    code, problems, _ = _problems(tmp_path, config)
    assert code == 2  # the floor's problem once, for both agents
    assert [(p["field"], p["code"], p.get("path")) for p in problems] == [
        ("$.agents.a.tools.rules[0].when.regex", "config_invalid", None),
        ("$.agents.a.tools.rules[1].examples.match[0]", "config_invalid", None),
        ("$.agents.a.tools.rules[2].when.any", "config_invalid", None),
        ("$.rules[0].when.regex", "config_invalid", str(user)),
        ("$.agents.a.hooks.use[0]", "hook_not_found", None),
    ]
    assert problems[3]["message"].startswith("the user floor ("), problems[3]["message"]
