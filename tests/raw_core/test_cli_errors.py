"""Every error a user can cause prints ``raw: <code>: <message>`` and a hint, click's usage
errors included, and the same bad input exits the same way in every command."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from tests.conftest import raw_script

RAW = raw_script()


@pytest.fixture
def env(tmp_path: Path) -> dict[str, str]:
    environment = dict(os.environ)
    environment.update(
        XDG_STATE_HOME=str(tmp_path / "state"), XDG_CONFIG_HOME=str(tmp_path / "config")
    )
    environment.pop("RAW_TEST_UNSET_KEY", None)
    return environment


def raw(env: dict[str, str], *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [RAW, *args],
        env=env,
        capture_output=True,
        text=True,
        stdin=subprocess.DEVNULL,
        timeout=120,
    )


@pytest.mark.parametrize(
    ("args", "command"),
    [
        (["nosuch"], "raw"),
        (["sessions", "show"], "raw sessions show"),
        (["sessions", "list", "--limit", "many"], "raw sessions list"),
        (["run", "--no-such-option", "hi"], "raw run"),
        # Found in the command's own work, not by click: the command still names itself.
        (["sessions", "resume"], "raw sessions resume"),
        (["sessions", "resume", "0123abc", "--last", "hi"], "raw sessions resume"),
    ],
)
def test_usage_errors_read_like_every_other_error(
    env: dict[str, str], args: list[str], command: str
) -> None:
    result = raw(env, *args)
    assert result.returncode == 2
    first, second = result.stderr.splitlines()[-2:]
    assert first.startswith("raw: usage_invalid: ")
    assert second == f"  hint: `{command} --help` shows the usage"
    assert "Usage:" not in result.stderr
    assert "Traceback" not in result.stderr


def test_an_unknown_session_is_the_same_error_in_every_command(env: dict[str, str]) -> None:
    for args in (
        ["sessions", "show", "0123abc"],
        ["sessions", "panels", "0123abc"],
        ["sessions", "resume", "0123abc", "hello"],
        ["sessions", "compact", "0123abc"],
        ["sessions", "delete", "-y", "0123abc"],
    ):
        result = raw(env, *args)
        assert result.returncode == 2, (args, result.stderr)
        assert result.stderr.splitlines()[-2:] == [
            "raw: session_not_found: no session has the id '0123abc' or an id starting with it",
            "  hint: `raw sessions list` shows the sessions (a prefix of an id will do)",
        ], args


def test_a_missing_api_key_names_the_variable_and_the_field(
    tmp_path: Path, env: dict[str, str]
) -> None:
    config = tmp_path / "raw.json"
    config.write_text(
        json.dumps(
            {
                "models": {
                    "main": {
                        "provider": "openai",
                        "model": "gpt-4.1",
                        "api_key": {"env": "RAW_TEST_UNSET_KEY"},
                    }
                },
                "agents": {"a": {"model": "main", "tools": {"use": []}}},
            }
        )
    )
    result = raw(env, "run", "hello", "--config", str(config))
    assert result.returncode == 2, result.stderr
    assert result.stderr.splitlines()[-1] == (
        "  hint: set the environment variable: export RAW_TEST_UNSET_KEY=..."
        " or change $.models.main.api_key in the config"
    )
    assert "raw: config_invalid: " in result.stderr


def test_the_documented_bash_completion_prints_a_completion_function(env: dict[str, str]) -> None:
    env["_RAW_COMPLETE"] = "bash_source"
    result = raw(env)
    assert result.returncode == 0, result.stderr
    assert "complete -o nosort -F _raw_completion raw" in result.stdout


def test_a_config_error_in_text_names_the_file_it_is_in(
    env: dict[str, str], tmp_path: Path
) -> None:
    managed = tmp_path / "m.json"
    managed.write_text(
        json.dumps(
            {
                "rules": [
                    {
                        "match": "builtin/bash",
                        "effect": "ask",
                        "when": {"any": "commands[*].programs[*].name", "regex": "^rm$"},
                    }
                ]
            }
        )
    )
    config = tmp_path / "raw.json"
    config.write_text(
        json.dumps(
            {
                "models": {"m": {"provider": "replay", "model": "x"}},
                "agents": {"a": {"model": "m", "tools": {"use": []}}},
            }
        )
    )
    env["RAW_MANAGED_CONFIG"] = str(managed)
    done = raw(env, "policy", "lint", "--config", str(config))
    assert done.returncode == 2
    first = done.stderr.splitlines()[0]
    assert first.startswith("raw: config_invalid: ")
    assert "$.rules[0].when.source" in first
    assert first.endswith(f"(in {managed})")
    assert "Traceback" not in done.stderr


def test_a_config_error_that_names_its_file_does_not_repeat_it(
    env: dict[str, str], tmp_path: Path
) -> None:
    missing = tmp_path / "nowhere.json"
    done = raw(env, "policy", "lint", "--config", str(missing))
    assert done.returncode == 2
    assert done.stderr.count(str(missing)) <= 1


def test_every_usage_error_of_a_json_command_prints_as_json(
    tmp_path: Path, env: dict[str, str]
) -> None:
    recording = tmp_path / "recording.jsonl"
    recording.write_text(json.dumps({"text": "hello"}) + "\n")
    config = tmp_path / "raw.json"
    config.write_text(
        json.dumps(
            {
                "models": {"m": {"provider": "replay", "model": str(recording)}},
                "agents": {"a": {"model": "m", "tools": {"use": ["builtin/read_file"]}}},
            }
        )
    )
    made = raw(env, "run", "hi", "--config", str(config), "--json")
    assert made.returncode == 0, made.stderr
    session_id = json.loads(made.stdout.splitlines()[0])["session_id"]
    for args, message in (
        (["run", "--json", "--config", str(config)], "the prompt is empty"),
        (
            ["sessions", "resume", "--last", "--json", "--config", str(config)],
            "the prompt is empty",
        ),
        (["sessions", "delete", session_id, "--json"], "deleting needs a confirmation: pass -y"),
        (["sessions", "show", "--json"], "Missing argument 'SESSION_ID'."),
        (["run", "--json", "--no-such-option"], "No such option '--no-such-option'."),
    ):
        result = raw(env, *args)
        assert result.returncode == 2, (args, result.stderr)
        assert result.stderr == "", args
        assert json.loads(result.stdout) == {
            "error": {"code": "usage_invalid", "message": message}
        }, args
    assert raw(env, "sessions", "show", session_id).returncode == 0  # nothing was deleted


def test_a_cwd_that_is_not_a_folder_is_a_usage_error_and_changes_nothing(
    tmp_path: Path, env: dict[str, str]
) -> None:
    recording = tmp_path / "recording.jsonl"
    recording.write_text(json.dumps({"text": "hello"}) + "\n")
    config = tmp_path / "raw.json"
    config.write_text(
        json.dumps(
            {
                "models": {"m": {"provider": "replay", "model": str(recording)}},
                "agents": {"a": {"model": "m", "tools": {"use": ["builtin/read_file"]}}},
            }
        )
    )
    missing = str(tmp_path / "no" / "such" / "folder")
    fresh = raw(env, "run", "hi", "--config", str(config), "--cwd", missing)
    assert fresh.returncode == 2, fresh.stderr
    assert fresh.stderr.startswith("raw: usage_invalid: Invalid value for '--cwd'")
    assert json.loads(raw(env, "sessions", "list", "--json").stdout) == []  # no session made

    made = raw(env, "run", "hi", "--config", str(config), "--cwd", str(tmp_path))
    assert made.returncode == 0, made.stderr
    for args in (
        ["sessions", "resume", "--last", "--cwd", missing, "again", "--config", str(config)],
        ["tools", "call", "builtin/read_file", "{}", "--config", str(config), "--cwd", missing],
    ):
        result = raw(env, *args)
        assert result.returncode == 2, (args, result.stderr)
        assert "usage_invalid" in result.stderr, args
    (listed,) = json.loads(raw(env, "sessions", "list", "--json").stdout)
    assert listed["cwd"] == str(tmp_path)  # the session keeps its folder


def test_an_unknown_chat_command_is_a_usage_error_and_the_chat_goes_on(
    tmp_path: Path, env: dict[str, str]
) -> None:
    config = tmp_path / "raw.json"
    config.write_text(
        json.dumps(
            {
                "models": {"m": {"provider": "replay", "model": str(tmp_path / "none.jsonl")}},
                "agents": {"a": {"model": "m", "tools": {"use": []}}},
            }
        )
    )
    result = subprocess.run(
        [RAW, "chat", "--config", str(config)],
        env=env,
        input="/nosuch\n/help\n",
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert result.returncode == 0, result.stderr
    assert "raw: usage_invalid: unknown command /nosuch; /help lists the commands" in result.stderr
    assert "/quit      end the chat" in result.stderr  # the next line was still read


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["sessions", "resume"], "give a session id (or a unique prefix of one), or --last"),
        (
            ["sessions", "resume", "0123abc", "hello", "--last"],
            "give a session id or --last, not both",
        ),
    ],
)
def test_resume_without_a_session_or_with_two_ways_is_a_usage_error(
    env: dict[str, str], args: list[str], message: str
) -> None:
    result = raw(env, *args)
    assert result.returncode == 2, result.stderr
    assert result.stderr.splitlines()[0] == f"raw: usage_invalid: {message} (at session_id)"
    as_json = raw(env, *args, "--json")
    assert json.loads(as_json.stdout)["error"]["code"] == "usage_invalid"


@pytest.mark.parametrize("text", ["not json", "[]"])
def test_pkg_commands_refuse_a_config_that_is_not_a_json_object(
    tmp_path: Path, env: dict[str, str], text: str
) -> None:
    config = tmp_path / "raw.json"
    config.write_text(text)
    for args in (["pkg", "list"], ["pkg", "show", "acme"], ["pkg", "remove", "acme"]):
        result = raw(env, *args, "--config", str(config))
        assert result.returncode == 2, (args, result.stdout, result.stderr)
        assert result.stderr.startswith("raw: config_invalid: "), args
        as_json = raw(env, *args, "--config", str(config), "--json")
        assert as_json.returncode == 2
        error = json.loads(as_json.stdout)["error"]
        assert (error["code"], error["field"], error["path"]) == (
            "config_invalid",
            "$",
            str(config),
        )
    assert not (tmp_path / "raw-packages.json").exists()


# --- faults no command caught -------------------------------------------------------------

EXPLODING_COMMAND = """
import sys

import click

from raw_core.cli import cli, main


@cli.command("explode")
@click.option("--json", "as_json", is_flag=True)
def explode(as_json: bool) -> None:
    raise RuntimeError("boom")


sys.argv = ["raw", *sys.argv[1:]]
main()
"""


@pytest.mark.parametrize("debug", ["", "1"])
def test_a_fault_no_command_caught_is_one_internal_error_line(
    env: dict[str, str], tmp_path: Path, debug: str
) -> None:
    script = tmp_path / "explode.py"
    script.write_text(EXPLODING_COMMAND, encoding="utf-8")
    env["RAW_DEBUG"] = debug
    done = subprocess.run(
        [sys.executable, str(script), "explode"],
        env=env,
        capture_output=True,
        text=True,
        stdin=subprocess.DEVNULL,
        timeout=120,
    )
    assert done.returncode == 1
    last = done.stderr.strip().splitlines()[-1]
    assert last.startswith("raw: internal_error: raw failed: RuntimeError: boom"), done.stderr
    assert ("Traceback (most recent call last)" in done.stderr) == bool(debug)
    as_json = subprocess.run(
        [sys.executable, str(script), "explode", "--json"],
        env={**env, "RAW_DEBUG": ""},
        capture_output=True,
        text=True,
        stdin=subprocess.DEVNULL,
        timeout=120,
    )
    assert as_json.returncode == 1
    assert json.loads(as_json.stdout)["error"]["code"] == "internal_error"
    assert "Traceback" not in as_json.stderr


@pytest.mark.parametrize("where", ["a file", "a folder in place of the trust list"])
def test_trusting_a_folder_where_the_config_folder_cannot_be_written(
    env: dict[str, str], tmp_path: Path, where: str
) -> None:
    if where == "a file":
        config_home = tmp_path / "not-a-folder"
        config_home.write_text("", encoding="utf-8")
    else:
        config_home = tmp_path / "config-home"
        (config_home / "raw" / "trusted-folders.json").mkdir(parents=True)
    env["XDG_CONFIG_HOME"] = str(config_home)
    done = raw(env, "config", "trust", str(tmp_path))
    assert done.returncode == 2
    assert done.stderr.startswith("raw: config_invalid: cannot write the trusted folders to ")
    assert "Traceback" not in done.stderr


def test_raw_demo_into_a_used_folder_is_usage_invalid(env: dict[str, str], tmp_path: Path) -> None:
    (tmp_path / "d" / "project").mkdir(parents=True)
    text = raw(env, "demo", "--dir", str(tmp_path / "d"))
    assert text.returncode == 2
    assert text.stderr.splitlines()[-2:] == [
        f"raw: usage_invalid: {tmp_path / 'd' / 'project'} exists; choose another --dir (at --dir)",
        "  hint: `raw demo --help` shows the usage",
    ]
    as_json = raw(env, "demo", "--dir", str(tmp_path / "d"), "--json")
    assert as_json.returncode == 2
    assert json.loads(as_json.stdout)["error"]["code"] == "usage_invalid"


def test_raw_tools_fork_refusals_are_usage_invalid(env: dict[str, str], tmp_path: Path) -> None:
    bad = raw(env, "tools", "fork", "bash", str(tmp_path / "Bad_Name"))
    assert bad.returncode == 2
    first, second = bad.stderr.splitlines()[-2:]
    assert first.startswith("raw: usage_invalid: the new folder name 'Bad_Name' is not a valid")
    assert second == "  hint: `raw tools fork --help` shows the usage"
    (tmp_path / "taken").mkdir()
    (tmp_path / "taken" / "bash").mkdir()
    taken = raw(env, "tools", "fork", "bash", str(tmp_path / "taken"))
    assert taken.returncode == 2
    first, second = taken.stderr.splitlines()[-2:]
    assert first.startswith(f"raw: usage_invalid: {tmp_path / 'taken' / 'bash'} already exists")
    assert second == "  hint: `raw tools fork --help` shows the usage"
    assert not any((tmp_path / "taken" / "bash").iterdir())  # nothing was copied


def test_a_turn_that_ends_in_an_error_prints_the_documented_line(
    env: dict[str, str], tmp_path: Path
) -> None:
    """The recording has one reply: the turn's second request fails (provider_error)."""
    recording = tmp_path / "one.jsonl"
    call = {"name": "bash", "arguments": {"commands": [{"command": "echo hi"}]}}
    recording.write_text(json.dumps({"tool_calls": [call]}) + "\n")
    config = tmp_path / "c.json"
    config.write_text(
        json.dumps(
            {
                "models": {"m": {"provider": "replay", "model": str(recording)}},
                "agents": {"a": {"model": "m", "tools": {"use": ["builtin/bash"]}}},
            }
        )
    )
    result = raw(env, "run", "hi", "--config", str(config), "--cwd", str(tmp_path))
    assert result.returncode == 1, result.stderr
    ended, session = result.stderr.splitlines()[-2:]
    assert ended.startswith("turn ended: error after 2 request(s): provider_error: ")
    assert session.startswith("session ")
    page = (Path(__file__).parents[2] / "docs" / "reference" / "cli.md").read_text()
    documented = " ".join(page.split())  # the form, as the page states it
    assert "`turn ended: REASON after N request(s)`" in documented
    assert "`turn ended: error after 1 request(s): auth_failed: ...`, exit 1" in documented
