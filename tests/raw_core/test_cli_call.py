"""``raw tools call``: the whole pipeline once, from the command line."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path
from typing import Any

import pexpect
import pytest
from click.testing import CliRunner

from raw_core.cli import cli
from tests.conftest import Children, raw_script

EFFECT_TOOL = """
def describe_effects(args, context):
    return {"files": [{"path": context.cwd + "/" + args["path"]}]}

def handler(args, context):
    return {"content": [{"type": "text", "text": "wrote " + args["path"] + "\\n" + "x" * 300}]}
"""
SCHEMA = {
    "type": "object",
    "properties": {"path": {"type": "string"}},
    "required": ["path"],
    "additionalProperties": False,
}
EFFECTS = {
    "type": "object",
    "properties": {
        "files": {
            "type": "array",
            "items": {"type": "object", "properties": {"path": {"type": "string"}}},
        }
    },
}


@pytest.fixture
def config(tmp_path: Path, make_tool: Any) -> Path:
    make_tool(
        "writer",
        root=tmp_path / "tools",
        code=EFFECT_TOOL,
        input_schema=SCHEMA,
        effects_schema=EFFECTS,
        condition_sources=["arguments", "effects"],
    )
    path = tmp_path / "raw.json"
    path.write_text(
        json.dumps(
            {
                "agents": {
                    "a": {
                        "tools": {
                            "use": ["agent/writer"],
                            "rules": [
                                {
                                    "match": "agent/writer",
                                    "effect": "ask",
                                    "when": {
                                        "source": "effects",
                                        "any": "files[*].path",
                                        "regex": "/protected/",
                                    },
                                }
                            ],
                        }
                    }
                }
            }
        )
    )
    return path


def call(config: Path, args: str, *options: str, input: str | None = None) -> Any:
    return CliRunner().invoke(
        cli,
        [
            "tools",
            "call",
            "agent/writer",
            args,
            "--config",
            str(config),
            "--json",
            "--cwd",
            str(config.parent),
            *options,
        ],
        input=input,
        catch_exceptions=False,
    )


def test_an_allowed_call_runs_and_prints_the_json_shape(config: Path) -> None:
    result = call(config, '{"path": "notes.txt"}')
    assert result.exit_code == 0, result.output
    body = json.loads(result.output)
    assert body["status"] == "ok"
    assert body["code"] is None
    assert body["content"][0]["text"].startswith("wrote notes.txt")
    assert body["effects"] == {"files": [{"path": f"{config.parent}/notes.txt"}]}


def test_an_ask_without_a_terminal_or_flag_is_approval_unavailable(config: Path) -> None:
    result = call(config, '{"path": "protected/key"}')
    assert result.exit_code == 1
    assert json.loads(result.output)["code"] == "approval_unavailable"


def test_approve_and_deny_answer_the_ask(config: Path) -> None:
    assert call(config, '{"path": "protected/key"}', "--approve").exit_code == 0
    denied = call(config, '{"path": "protected/key"}', "--deny")
    assert denied.exit_code == 1
    assert json.loads(denied.output)["code"] == "approval_denied"


def test_bad_arguments_are_an_error_result(config: Path) -> None:
    result = call(config, '{"path": "a", "path": "b"}')
    assert result.exit_code == 1
    assert json.loads(result.output)["code"] == "invalid_arguments"


def test_an_unselected_identity_is_tool_unknown(config: Path) -> None:
    result = CliRunner().invoke(
        cli, ["tools", "call", "agent/other", "{}", "--config", str(config), "--json"]
    )
    assert result.exit_code == 1
    assert json.loads(result.output)["code"] == "tool_unknown"


def test_the_cap_limits_what_the_model_receives(config: Path) -> None:
    result = call(config, '{"path": "a"}', "--max-output-bytes", "50")
    content = json.loads(result.output)["content"]
    assert sum(len(block["text"].encode()) for block in content) <= 50
    assert content[0]["text"]
    assert "truncated" in content[-1]["text"]


def test_a_config_error_exits_2(tmp_path: Path) -> None:
    path = tmp_path / "raw.json"
    path.write_text('{"agents": {}}')
    result = CliRunner().invoke(
        cli, ["tools", "call", "x/y", "{}", "--config", str(path), "--json"]
    )
    assert result.exit_code == 2
    assert json.loads(result.output)["error"]["code"] == "config_invalid"


def test_the_terminal_asks_and_shows_effects_apart_from_arguments(
    config: Path, children: Children
) -> None:
    """A real pseudo-terminal: the prompt shows the effects, then the arguments."""
    for answer, code in (("y", 0), ("n", 1)):
        child = children.spawn(
            raw_script(),
            [
                "tools",
                "call",
                "agent/writer",
                '{"path": "protected/k"}',
                "--config",
                str(config),
                "--cwd",
                str(config.parent),
            ],
            encoding="utf-8",
            timeout=60,
            dimensions=(40, 200),
        )
        child.expect(r"Run it\? \[y/N\]: ")
        text = str(child.before) + str(child.after)
        child.sendline(answer)
        child.expect(pexpect.EOF)
        text += str(child.before)
        child.close()
        assert child.exitstatus == code, text
        assert text.index("Intended effects:") < text.index("Arguments:") < text.index("Run it?")
        assert f"{config.parent}/protected/k" in text
        assert ("wrote protected/k" in text) == (code == 0)


def test_the_console_script_runs_the_pipeline(config: Path) -> None:
    result = subprocess.run(
        [
            raw_script(),
            "tools",
            "call",
            "agent/writer",
            '{"path": "a"}',
            "--config",
            str(config),
            "--cwd",
            str(config.parent),
        ],
        capture_output=True,
        text=True,
        stdin=subprocess.DEVNULL,
    )
    assert result.returncode == 0, result.stderr
    assert result.stdout.startswith("wrote a\n" + "x" * 300)
