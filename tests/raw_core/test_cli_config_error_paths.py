"""A config error found after the config loaded (an agent without a model, an unknown
agent or model, a missing credential) names the file at fault: ``path`` in ``--json``,
``(in PATH)`` in the text — the layer that defines the field."""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path
from typing import Any

import pytest

from tests.conftest import raw_script

RAW = raw_script()


@pytest.fixture
def env(tmp_path: Path) -> dict[str, str]:
    environment = dict(os.environ)
    environment.update(
        HOME=str(tmp_path / "home"),
        XDG_STATE_HOME=str(tmp_path / "state"),
        XDG_CONFIG_HOME=str(tmp_path / "config"),
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


def both_forms(env: dict[str, str], *args: str) -> tuple[dict[str, Any], str]:
    """The JSON error and the text's error line of one command line."""
    as_json = raw(env, *args, "--json")
    assert as_json.returncode == 2, as_json.stdout + as_json.stderr
    error = json.loads(as_json.stdout)["error"]
    text = raw(env, *args)
    assert text.returncode == 2, text.stderr
    line = next(x for x in text.stderr.splitlines() if x.startswith("raw: "))
    return error, line


def write(path: Path, value: dict[str, Any]) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(value))
    return path


@pytest.mark.parametrize(
    ("args", "field"),
    [
        (["run", "x"], "$.agents.a.model"),
        (["run", "x", "--agent", "q"], "$.agents"),
        (["models", "check", "nosuch"], "$.models"),
    ],
)
def test_an_error_after_loading_names_the_config_file(
    env: dict[str, str], tmp_path: Path, args: list[str], field: str
) -> None:
    config = write(tmp_path / "ok.json", {"agents": {"a": {"tools": {"use": []}}}})
    error, line = both_forms(env, *args, "--config", str(config))
    assert error["code"] == "config_invalid"
    assert error["field"] == field
    assert error["path"] == str(config)
    assert line.startswith("raw: config_invalid: ")
    assert line.endswith(f"(in {config})")


def test_a_missing_credential_names_the_layer_that_defines_the_model(
    env: dict[str, str], tmp_path: Path
) -> None:
    model = {"provider": "openai", "model": "gpt-4.1", "api_key": {"env": "RAW_TEST_UNSET_KEY"}}
    user = write(tmp_path / "config" / "raw" / "config.json", {"models": {"main": model}})
    project = write(tmp_path / "p.json", {"agents": {"a": {"model": "main", "tools": {"use": []}}}})
    error, line = both_forms(env, "run", "x", "--config", str(project))
    assert error["code"] == "config_invalid"
    assert error["field"] == "$.models.main.api_key"
    assert error["path"] == str(user)
    assert line.endswith(f"(in {user})")

    # The same model defined in the project's file: that file is at fault.
    os.remove(user)
    write(
        project,
        {
            "models": {"main": model},
            "agents": {"a": {"model": "main", "tools": {"use": []}}},
        },
    )
    error, line = both_forms(env, "run", "x", "--config", str(project))
    assert error["path"] == str(project)
    assert line.endswith(f"(in {project})")
