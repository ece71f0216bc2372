"""``raw models list`` and the config errors of ``raw models check`` (the checks that reach a
server run against aimock in test_providers_aimock.py)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner

from raw_core.cli.models import models

SECRET = "sk-list-SECRET-987654321"

CONFIG = {
    "agents": {"main": {"tools": {"use": []}}},
    "models": {
        "gpt": {"provider": "openai", "model": "gpt-5", "api_key": {"env": "RAW_TEST_OPENAI"}},
        "claude": {
            "provider": "anthropic",
            "model": "claude-sonnet",
            "api_key": {"env": "RAW_TEST_ANTHROPIC"},
        },
        "local": {
            "provider": "openai-compatible",
            "model": "qwen3-coder",
            "base_url": "http://127.0.0.1:8080/v1",
        },
        "keyed": {"provider": "openai", "model": "m", "api_key": {"var": "KEY_VAR"}},
        "odd": {"provider": "gemini", "model": "g", "api_key": {"env": "RAW_TEST_OPENAI"}},
    },
    "vars": {"KEY_VAR": {"description": "a key", "from": {"env": "RAW_TEST_VAR_SOURCE"}}},
}


@pytest.fixture
def config(tmp_path: Path) -> Path:
    path = tmp_path / "raw.json"
    path.write_text(json.dumps(CONFIG))
    return path


def test_list_as_json_shows_credentials_state_never_values(config: Path) -> None:
    env = {"RAW_TEST_OPENAI": SECRET, "RAW_TEST_ANTHROPIC": "", "RAW_TEST_VAR_SOURCE": SECRET}
    result = CliRunner().invoke(models, ["list", "--config", str(config), "--json"], env=env)
    assert result.exit_code == 0, result.output
    assert SECRET not in result.output
    rows = {row["name"]: row for row in json.loads(result.output)}
    assert list(rows) == sorted(CONFIG["models"])  # type: ignore[call-overload]
    assert rows["gpt"]["credential"] == {"source": "env:RAW_TEST_OPENAI", "state": "set"}
    assert rows["claude"]["credential"] == {"source": "env:RAW_TEST_ANTHROPIC", "state": "missing"}
    assert rows["local"]["credential"] == {"source": None, "state": "none"}
    assert rows["local"]["base_url"] == "http://127.0.0.1:8080/v1"
    assert rows["keyed"]["credential"]["state"] == "set"
    assert rows["odd"]["provider_installed"] is False
    assert rows["gpt"]["provider_installed"] is True


def test_list_as_a_table(config: Path) -> None:
    result = CliRunner().invoke(
        models, ["list", "--config", str(config)], env={"RAW_TEST_OPENAI": SECRET}
    )
    assert result.exit_code == 0, result.output
    lines = result.output.splitlines()
    assert lines[0].split() == ["NAME", "PROVIDER", "MODEL", "BASE_URL", "CREDENTIAL"]
    local = next(line for line in lines if line.startswith("local"))
    assert "openai-compatible" in local
    assert "http://127.0.0.1:8080/v1" in local
    assert "gemini (not installed)" in result.output
    assert SECRET not in result.output


def test_list_with_a_missing_config_is_a_config_error(tmp_path: Path) -> None:
    result = CliRunner().invoke(models, ["list", "--config", str(tmp_path / "nope.json")])
    assert result.exit_code == 2
    assert "config_not_found" in result.output


@pytest.mark.parametrize(
    ("name", "env", "words"),
    [
        ("nothing", {}, "no model named 'nothing'"),
        ("odd", {"RAW_TEST_OPENAI": SECRET}, "no provider named 'gemini'"),
        ("gpt", {}, "RAW_TEST_OPENAI, which is not set"),
        ("keyed", {}, "KEY_VAR"),
    ],
    ids=["unknown-model", "unknown-provider", "unset-env", "unset-var-source"],
)
def test_check_config_errors_exit_2(
    config: Path, name: str, env: dict[str, str], words: str
) -> None:
    result = CliRunner().invoke(models, ["check", name, "--config", str(config)], env=env)
    assert result.exit_code == 2, result.output
    assert words in result.output
    assert SECRET not in result.output


def test_check_an_unreachable_server_exits_1(config: Path) -> None:
    # Port 9 (discard) on loopback: nothing listens there, so the connection is refused.
    local = json.loads(config.read_text())
    local["models"]["local"]["base_url"] = "http://127.0.0.1:9/v1"
    config.write_text(json.dumps(local))
    result = CliRunner().invoke(models, ["check", "local", "--config", str(config), "--json"])
    assert result.exit_code == 1, result.output
    report = json.loads(result.output)
    assert report["error"]["code"] == "provider_unavailable"
    assert report["ok"] is False
