"""``raw config validate`` and ``raw tools check`` on hostile JSON: the documented exit code
and error code, never a traceback."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from raw_core.cli import cli
from tests.conftest import run_raw
from tests.hostile_json import HOSTILE, HUGE_INT, as_bytes

IDS = [name for name, _ in HOSTILE]


@pytest.fixture(autouse=True)
def xdg(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path / "xdg"))
    monkeypatch.setenv("XDG_STATE_HOME", str(tmp_path / "state"))
    monkeypatch.chdir(tmp_path)


def run(*args: str) -> Any:
    # catch_exceptions=False: an exception raw lets through fails the test with it.
    return CliRunner().invoke(cli, list(args), catch_exceptions=False)


@pytest.mark.parametrize(("name", "text"), HOSTILE, ids=IDS)
def test_config_validate_reports_config_invalid(
    name: str, text: str | bytes, tmp_path: Path
) -> None:
    path = tmp_path / "raw.json"
    path.write_bytes(as_bytes(text))
    human = run("config", "validate", "--config", str(path))
    assert human.exit_code == 2
    assert ": config_invalid: " in human.output
    as_json = run("config", "validate", "--config", str(path), "--json")
    assert as_json.exit_code == 2
    body = json.loads(as_json.output)
    assert body["ok"] is False
    assert {problem["code"] for problem in body["problems"]} == {"config_invalid"}


@pytest.mark.parametrize(("name", "text"), HOSTILE, ids=IDS)
def test_tools_check_reports_manifest_invalid(name: str, text: str | bytes, make_tool: Any) -> None:
    folder = make_tool("sample")
    (folder / "tool.json").write_bytes(as_bytes(text))
    human = run("tools", "check", str(folder))
    assert human.exit_code == 1
    assert "FAIL" in human.output
    assert "manifest_invalid" in human.output
    as_json = run("tools", "check", "--json", str(folder))
    assert as_json.exit_code == 1
    (report,) = json.loads(as_json.output)
    assert report["ok"] is False
    assert report["error"]["code"] == "manifest_invalid"


def _raw(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "raw_core", *args],
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )


def test_a_huge_integer_in_the_config_prints_no_traceback(tmp_path: Path) -> None:
    path = tmp_path / "raw.json"
    path.write_text('{"agents": ' + HUGE_INT + "}", encoding="utf-8")
    result = _raw("config", "validate", "--config", str(path))
    assert result.returncode == 2
    assert "Traceback" not in result.stderr
    assert result.stderr.startswith("$: config_invalid: ")
    assert "has 5000 digits; the limit is 4300" in result.stderr


def test_a_huge_integer_in_tool_json_prints_no_traceback(make_tool: Any) -> None:
    folder = make_tool("sample")
    (folder / "tool.json").write_text('{"api_version": ' + HUGE_INT + "}", encoding="utf-8")
    result = _raw("tools", "check", str(folder))
    assert result.returncode == 1
    assert "Traceback" not in result.stderr
    assert "manifest_invalid" in result.stdout
    assert "has 5000 digits; the limit is 4300" in result.stdout


def test_a_turn_with_hostile_model_output_renders_without_a_traceback(tmp_path: Path) -> None:
    """Arguments nested too deep to show, and text and arguments holding a lone surrogate
    (JSON allows ``"\\ud800"``; UTF-8 cannot encode it)."""
    recording = tmp_path / "recording.jsonl"
    replies = [
        {"tool_calls": [{"name": "read_file", "arguments": "[" * 5000 + "]" * 5000}]},
        {"tool_calls": [{"name": "read_file", "arguments": '{"path": "\\ud800"}'}]},
        {"text": "done \ud800 here"},
    ]
    recording.write_text("".join(json.dumps(reply) + "\n" for reply in replies))
    config = tmp_path / "raw.json"
    config.write_text(
        json.dumps(
            {
                "models": {"m": {"provider": "replay", "model": str(recording)}},
                "agents": {"a": {"model": "m", "tools": {"use": ["builtin/read_file"]}}},
            }
        )
    )
    human = _raw("run", "--config", str(config), "go")
    assert human.returncode == 0, human.stderr
    assert "Traceback" not in human.stderr
    assert "renderer failed" not in human.stderr
    assert human.stdout.strip() == "done \\ud800 here"
    assert human.stderr.count("✗ read_file [invalid_arguments]") == 2
    as_json = _raw("run", "--json", "--config", str(config), "go")
    assert as_json.returncode == 0, as_json.stderr
    assert "Traceback" not in as_json.stderr
    events = [json.loads(line) for line in as_json.stdout.splitlines()]
    assert [e["text"] for e in events if e["type"] == "text_delta"] == ["done \ud800 here"]
    assert events[-1]["type"] == "turn_ended"


@pytest.mark.parametrize("value", ["nan", "inf", "-inf", "1e400", "NaN"])
@pytest.mark.parametrize(
    "command",
    [["sessions", "prune", "--days"], ["models", "check", "m", "--timeout"]],
    ids=["prune-days", "check-timeout"],
)
def test_a_number_that_is_not_finite_is_a_usage_error(
    tmp_path: Path, command: list[str], value: str
) -> None:
    result = run_raw(tmp_path, *command, value)
    assert result.returncode == 2, result.stderr
    assert result.stderr.startswith(f"raw: usage_invalid: Invalid value for '{command[-1]}'")


def test_a_session_limit_past_the_database_integers_lists_them_all(tmp_path: Path) -> None:
    result = run_raw(tmp_path, "sessions", "list", "--limit", str(2**63), "--json")
    assert result.returncode == 0, result.stderr
    assert json.loads(result.stdout) == []
