"""``raw policy explain``, ``raw policy lint`` and ``raw tools list`` end to end (CliRunner)."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner, Result

from raw_core.cli import cli

RM = r"(^|[;&|()\n])\s*(sudo\s+)?(/usr/bin/|/bin/)?rm(\s|$)"
RM_RULE = {
    "match": "agent/bash",
    "effect": "ask",
    "when": {"source": "arguments", "any": "commands[*].command", "regex": RM},
}


@pytest.fixture
def project(
    tmp_path: Path,
    write_tool_folder: Callable[..., Path],
    bash_schema: dict[str, Any],
    write_file_tool: dict[str, Any],
) -> Path:
    """tmp_path with tools/bash, tools/write_file and tools/read_file beside raw.json."""
    tools = tmp_path / "tools"
    write_tool_folder(tools, "bash", input_schema=bash_schema, description="Run commands.")
    write_tool_folder(tools, "write_file", description="Write files.", **write_file_tool)
    write_tool_folder(
        tools,
        "read_file",
        description="Read files.",
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
    return tmp_path


USE = ["agent/bash", "agent/write_file", "agent/read_file"]


def run(*args: str) -> Result:
    return CliRunner().invoke(cli, list(args), catch_exceptions=False)


def explain_json(config: Path, identity: str, arguments: Any, *extra: str) -> Result:
    return run(
        "policy",
        "explain",
        identity,
        json.dumps(arguments),
        "--config",
        str(config),
        "--json",
        *extra,
    )


# --- raw tools list --------------------------------------------------------------------


def test_tools_list_hides_a_denied_tool(project: Path, write_config: Callable[..., Path]) -> None:
    config = write_config(USE, [{"match": "agent/write_file", "effect": "deny"}])
    result = run("tools", "list", "--config", str(config), "--json")
    assert result.exit_code == 0
    assert [d["identity"] for d in json.loads(result.stdout)] == ["agent/bash", "agent/read_file"]
    text = run("tools", "list", "--config", str(config))
    assert "write_file  (agent/write_file)" not in text.stdout
    assert "not exposed: agent/write_file (tools.rules[0] denies every call)" in text.stdout


def test_tools_list_shows_a_tool_a_later_conditional_rule_exposes(
    project: Path, write_config: Callable[..., Path]
) -> None:
    config = write_config(USE, [{"match": "agent/*", "effect": "deny"}, RM_RULE])
    result = run("tools", "list", "--config", str(config), "--json")
    assert [d["identity"] for d in json.loads(result.stdout)] == ["agent/bash"]


def test_tools_list_config_error_names_the_rule(
    project: Path, write_config: Callable[..., Path]
) -> None:
    bad = {
        "match": "agent/*",
        "effect": "ask",
        "when": {"source": "arguments", "any": "commands[*].command", "regex": "rm"},
    }
    config = write_config(USE, [bad])
    result = run("tools", "list", "--config", str(config), "--json")
    assert result.exit_code == 2
    error = json.loads(result.stdout)["error"]
    assert error["code"] == "config_invalid"
    assert error["field"] == "$.agents.coder.tools.rules[0].when.any"
    assert "agent/write_file" in error["message"]


# --- raw policy explain ----------------------------------------------------------------


@pytest.mark.parametrize(
    ("command", "verdict"),
    [
        pytest.param("rm -rf x", "ask", id="rm-rf"),
        pytest.param("ls; rm x", "ask", id="after-semicolon"),
        pytest.param("sudo rm x", "ask", id="sudo"),
        pytest.param("/bin/rm x", "ask", id="absolute-bin"),
        pytest.param("echo rm", "allow", id="echo-rm"),
        pytest.param("rmdir x", "allow", id="rmdir"),
    ],
)
def test_explain_json_rm_rule(
    project: Path, write_config: Callable[..., Path], command: str, verdict: str
) -> None:
    config = write_config(USE, [{"match": "agent/*", "effect": "allow"}, RM_RULE])
    result = explain_json(config, "agent/bash", {"commands": [{"command": command}]})
    assert result.exit_code == 0, result.output
    body = json.loads(result.stdout)
    assert set(body) == {
        "identity",
        "exposed",
        "effects",
        "rules",
        "verdict",
        "decided_by",
        "layer",
        "layers",
        "hooks",
        "final_verdict",
        "final_reason",
        "command_hooks",
    }
    assert body["hooks"] == []  # no plug-in has a check hook here
    assert (body["layer"], body["layers"]) == ("agent", [])  # no floor
    assert body["command_hooks"] == []  # nor does the agent select a command hook
    assert body["final_verdict"] == verdict
    assert body["identity"] == "agent/bash"
    assert body["effects"] is None
    assert body["verdict"] == verdict
    assert body["decided_by"] == (1 if verdict == "ask" else 0)
    assert [(r["index"], r["match"], r["effect"], r["matched"]) for r in body["rules"]] == [
        (0, "agent/*", "allow", True),
        (1, "agent/bash", "ask", verdict == "ask"),
    ]
    assert all(isinstance(r["why"], str) and r["why"] for r in body["rules"])


def test_explain_computes_effects_with_cwd(
    project: Path, write_config: Callable[..., Path], tmp_path: Path
) -> None:
    rule = {
        "match": "agent/write_file",
        "effect": "ask",
        "when": {"source": "effects", "any": "files[*].path", "regex": "^/srv/protected/"},
    }
    config = write_config(USE, [rule])
    arguments = {
        "files": [{"path": "notes.txt", "content": ""}, {"path": "../protected/k", "content": ""}]
    }
    result = explain_json(config, "agent/write_file", arguments, "--cwd", "/srv/app")
    assert result.exit_code == 0, result.output
    body = json.loads(result.stdout)
    assert body["effects"] == {
        "files": [
            {"path": "/srv/app/notes.txt", "operation": "write"},
            {"path": "/srv/protected/k", "operation": "write"},
        ]
    }
    assert body["verdict"] == "ask"
    assert "effects files[1].path = '/srv/protected/k' matches" in body["rules"][0]["why"]
    other = explain_json(config, "agent/write_file", arguments, "--cwd", "/home/me/work")
    assert json.loads(other.stdout)["verdict"] == "allow"


def test_explain_text(project: Path, write_config: Callable[..., Path]) -> None:
    config = write_config(USE, [{"match": "agent/*", "effect": "allow"}, RM_RULE])
    arguments = json.dumps({"commands": [{"command": "ls"}, {"command": "rm -rf build"}]})
    result = run("policy", "explain", "agent/bash", arguments, "--config", str(config))
    assert result.exit_code == 0
    lines = result.stdout.splitlines()
    assert lines[0] == "tool: agent/bash"
    assert lines[1] == "effects: none declared"
    assert lines[2] == "rules:"
    assert lines[3].startswith("  [0] allow agent/*     matched      glob matches agent/bash")
    assert lines[4].startswith("  [1] ask   agent/bash  matched      glob matches; when: arguments")
    assert lines[-1] == "verdict: ask (rule 1)"


def test_explain_hidden_tool(project: Path, write_config: Callable[..., Path]) -> None:
    config = write_config(USE, [{"match": "agent/bash", "effect": "deny"}])
    result = explain_json(config, "agent/bash", {"commands": [{"command": "ls"}]})
    body = json.loads(result.stdout)
    assert (body["exposed"], body["verdict"], body["decided_by"]) == (False, "deny", 0)


@pytest.mark.parametrize(
    ("identity", "arguments", "code", "exit_code"),
    [
        pytest.param("agent/bash", "{not json", "invalid_arguments", 2, id="not-json"),
        pytest.param(
            "agent/bash",
            '{"commands": [], "commands": []}',
            "invalid_arguments",
            2,
            id="duplicate-keys",
        ),
        pytest.param("agent/bash", '{"commands": "ls"}', "invalid_arguments", 2, id="schema"),
        pytest.param(
            "agent/write_file",
            '{"files": [{"path": "", "content": ""}]}',
            "invalid_arguments",
            2,
            id="validate-args",
        ),
        pytest.param("agent/nope", "{}", "tool_unknown", 2, id="not-selected"),
    ],
)
def test_explain_refuses_bad_input(
    project: Path,
    write_config: Callable[..., Path],
    identity: str,
    arguments: str,
    code: str,
    exit_code: int,
) -> None:
    config = write_config(USE)
    result = run("policy", "explain", identity, arguments, "--config", str(config), "--json")
    assert result.exit_code == exit_code
    assert json.loads(result.stdout)["error"]["code"] == code


def test_explain_effects_failure_exits_1(
    project: Path,
    write_config: Callable[..., Path],
    write_tool_folder: Callable[..., Path],
    write_file_tool: dict[str, Any],
) -> None:
    broken = dict(write_file_tool)
    broken["module"] = (
        "def handler(args, context):\n    return {}\n\n"
        "def describe_effects(args, context):\n    raise ValueError('boom')\n"
    )
    write_tool_folder(project / "tools", "write_file", **broken)
    config = write_config(USE)
    result = explain_json(config, "agent/write_file", {"files": []})
    assert result.exit_code == 1
    error = json.loads(result.stdout)["error"]
    assert error["code"] == "effects_invalid"
    assert "ValueError: boom" in error["message"]


def test_explain_config_error_exits_2(project: Path, write_config: Callable[..., Path]) -> None:
    bad = dict(RM_RULE, when={**RM_RULE["when"], "regex": "(?<=x)rm"})  # type: ignore[dict-item]
    config = write_config(USE, [bad])
    result = explain_json(config, "agent/bash", {"commands": []})
    assert result.exit_code == 2
    error = json.loads(result.stdout)["error"]
    assert error["code"] == "config_invalid"
    assert error["field"] == "$.agents.coder.tools.rules[0].when.regex"
    assert "invalid perl operator: (?<" in error["message"]
    text = run("policy", "explain", "agent/bash", "{}", "--config", str(config))
    assert text.exit_code == 2
    assert text.stderr.startswith("raw: config_invalid: rule 0")


# --- raw policy lint -------------------------------------------------------------------


def test_lint_clean_exits_0(project: Path, write_config: Callable[..., Path]) -> None:
    config = write_config(USE, [{"match": "agent/*", "effect": "allow"}, RM_RULE])
    result = run("policy", "lint", "--config", str(config))
    assert result.exit_code == 0
    assert result.stdout == "no findings in 2 rules\n"


def test_lint_findings_exit_1(project: Path, write_config: Callable[..., Path]) -> None:
    rules = [
        {"match": "agent/bsh", "effect": "deny"},
        RM_RULE,
        {"match": "agent/*", "effect": "allow"},
        {"match": "agent/write_file", "effect": "deny"},
    ]
    config = write_config(USE, rules)
    result = run("policy", "lint", "--config", str(config), "--json")
    assert result.exit_code == 1
    body = json.loads(result.stdout)
    assert body["agent"] == "coder"
    assert body["hidden"] == {"agent/write_file": 3}
    assert [(f["kind"], f["rule"], f["shadowed_by"]) for f in body["findings"]] == [
        ("matches_nothing", 0, []),
        ("never_decides", 1, [2]),
    ]
    text = run("policy", "lint", "--config", str(config))
    assert text.exit_code == 1
    assert text.stdout.splitlines() == [
        "matches_nothing: rule 0 (match 'agent/bsh', effect 'deny') matches no selected tool"
        " (selected: agent/bash, agent/write_file, agent/read_file)",
        "never_decides: rule 1 (match 'agent/bash', effect 'ask') never decides: every selected"
        " tool it matches (agent/bash) is matched by a later unconditional rule (rule 2)",
        "note: agent/write_file is not exposed (rule 3 denies every call)",
        "2 findings in 4 rules",
    ]


def test_lint_config_error_exits_2(tmp_path: Path) -> None:
    config = tmp_path / "raw.json"
    config.write_text('{"agents": {"coder": {"tools": {"use": [], "rules": [{"match": 1}]}}}}')
    result = run("policy", "lint", "--config", str(config), "--json")
    assert result.exit_code == 2
    assert json.loads(result.stdout)["error"]["code"] == "config_invalid"
