"""``raw tools check`` and ``raw tools list``: output, JSON shapes and exit codes."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from raw_core.cli import cli
from tests.conftest import raw_script

REPO = Path(__file__).parents[2]
QUICKSTART = REPO / "examples" / "quickstart"


def run(*args: str) -> Any:
    return CliRunner().invoke(cli, list(args), catch_exceptions=False)


def test_version() -> None:
    result = run("--version")
    assert result.exit_code == 0
    assert result.output.startswith("raw 0.")


def test_check_reports_each_folder_and_exits_1_when_one_is_invalid(make_tool: Any) -> None:
    good = make_tool("good")
    bad = make_tool("bad", version="1.0")
    result = run("tools", "check", "--json", str(good), str(bad))
    assert result.exit_code == 1
    assert json.loads(result.output) == [
        {"path": str(good), "ok": True, "id": "good", "name": "good", "version": "1.0.0"},
        {
            "path": str(bad),
            "ok": False,
            "error": {
                "code": "manifest_invalid",
                "field": "$.version",
                "message": f'{bad / "tool.json"}: expected major.minor.patch, found "1.0"',
            },
        },
    ]


def test_check_exits_0_when_all_are_valid(make_tool: Any) -> None:
    result = run("tools", "check", str(make_tool("one")), str(make_tool("two")))
    assert result.exit_code == 0
    assert result.output.count("ok    ") == 2


def test_check_prints_warnings(make_tool: Any) -> None:
    folder = make_tool("one", panels=[{"id": "p", "title": "P", "icon": "unicorn"}])
    result = run("tools", "check", str(folder))
    assert result.exit_code == 0
    assert "warning:" in result.output
    assert "unicorn" in result.output


def test_check_human_output_names_code_and_field(make_tool: Any) -> None:
    result = run("tools", "check", str(make_tool("bad", name="has space")))
    assert result.exit_code == 1
    assert "FAIL" in result.output
    assert "manifest_invalid" in result.output
    assert "(at $.name)" in result.output


def test_check_without_paths_is_a_usage_error() -> None:
    assert run("tools", "check").exit_code == 2


def test_list_prints_what_the_model_receives_in_order() -> None:
    result = run("tools", "list", "--json", "--config", str(QUICKSTART / "raw.json"))
    assert result.exit_code == 0, result.output
    listed = json.loads(result.output)
    assert [t["identity"] for t in listed] == ["builtin/read_file", "agent/word_count"]
    assert set(listed[0]) == {"identity", "name", "description", "input_schema"}


@pytest.mark.parametrize(
    ("document", "code"),
    [
        pytest.param(
            '{"agents": {"a": {"tools": {"use": ["local/x", 3]}}}}',
            "config_invalid",
            id="config-invalid",
        ),
        pytest.param(
            '{"agents": {"a": {"tools": {"use": ["agent/missing"]}}}}',
            "tool_not_found",
            id="tool-missing",
        ),
        pytest.param(
            '{"agents": {"a": {"tools": {"use": ["pkg/s/tools/t"]}}}}',
            "tool_not_found",
            id="package-not-installed",
        ),
        pytest.param(
            '{"agents": {"a": {"tools": {"use": ["mcp/s/t"]}}}}',
            "tool_not_found",
            id="mcp-server-not-configured",
        ),
    ],
)
def test_list_config_errors_exit_2_with_a_json_error(
    tmp_path: Path, document: str, code: str
) -> None:
    path = tmp_path / "raw.json"
    path.write_text(document)
    result = run("tools", "list", "--json", "--config", str(path))
    assert result.exit_code == 2
    error = json.loads(result.output)["error"]
    assert error["code"] == code
    assert error["message"]


def test_list_chooses_the_agent(tmp_path: Path) -> None:
    path = tmp_path / "raw.json"
    path.write_text(
        json.dumps(
            {
                "agents": {
                    "a": {"tools": {"use": []}},
                    "b": {"tools": {"use": ["builtin/list_skills"]}},
                }
            }
        )
    )
    assert run("tools", "list", "--config", str(path)).exit_code == 2
    result = run("tools", "list", "--json", "--config", str(path), "--agent", "b")
    assert [t["name"] for t in json.loads(result.output)] == ["list_skills"]


def test_the_installed_console_script_runs_without_tracebacks(tmp_path: Path) -> None:
    raw = raw_script()
    path = tmp_path / "raw.json"
    path.write_text("{not json")
    result = subprocess.run(
        [raw, "tools", "list", "--config", str(path)], capture_output=True, text=True
    )
    assert result.returncode == 2
    assert "Traceback" not in result.stderr
    assert result.stderr.startswith("raw: config_invalid:")
    listed = subprocess.run(
        [raw, "tools", "list", "--config", str(QUICKSTART / "raw.json")],
        capture_output=True,
        text=True,
    )
    assert listed.returncode == 0
    assert "read_file  (builtin/read_file)" in listed.stdout


def test_list_and_validate_show_what_loading_the_tools_warned_about(
    tmp_path: Path, make_tool: Any
) -> None:
    make_tool("one", panels=[{"id": "p", "title": "P", "icon": "unicorn"}])
    config = tmp_path / "raw.json"
    config.write_text(json.dumps({"agents": {"a": {"tools": {"use": ["agent/one"]}}}}))
    env = {"XDG_CONFIG_HOME": str(tmp_path / "xdg"), "PATH": "/usr/bin:/bin"}
    listed = subprocess.run(
        [raw_script(), "tools", "list", "--json", "--config", str(config)],
        capture_output=True,
        text=True,
        env=env,
        timeout=60,
    )
    assert listed.returncode == 0, listed.stderr
    assert [t["name"] for t in json.loads(listed.stdout)] == ["one"]  # stdout stays JSON
    assert "warning: agent/one:" in listed.stderr
    assert "unicorn" in listed.stderr
    validated = subprocess.run(
        [raw_script(), "config", "validate", "--json", "--config", str(config)],
        capture_output=True,
        text=True,
        env=env,
        timeout=60,
    )
    assert validated.returncode == 0, validated.stderr
    notes = json.loads(validated.stdout)["notes"]
    assert any(note.startswith("agent a: agent/one: ") and "unicorn" in note for note in notes)
