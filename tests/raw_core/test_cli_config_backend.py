"""``raw config validate`` reports every ``sessions.backend`` setting the commands would
refuse when they open the backend, with the same field and message, run as a user runs it
(the ``raw`` script in a subprocess)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from tests.conftest import run_raw


def write_config(tmp_path: Path, backend: dict[str, Any]) -> Path:
    path = tmp_path / "raw.json"
    config = {"agents": {"a": {"tools": {"use": []}}}, "sessions": {"backend": backend}}
    path.write_text(json.dumps(config), encoding="utf-8")
    return path


@pytest.mark.parametrize(
    ("directory", "says"),
    [
        pytest.param("rel", 'expected an absolute folder (or one starting with ~), found "rel"'),
        pytest.param(
            "",
            "expected the folder of the session store as a non-empty string, found an empty string",
        ),
    ],
)
def test_a_sqlite_folder_the_backend_refuses_is_refused_by_validate(
    tmp_path: Path, directory: str, says: str
) -> None:
    path = write_config(tmp_path, {"type": "sqlite", "directory": directory})
    checked = run_raw(tmp_path, "config", "validate", "--json", "--config", str(path))
    assert checked.returncode == 2, checked.stdout
    problems = json.loads(checked.stdout)["problems"]
    assert [(p["code"], p["field"], p["message"]) for p in problems] == [
        ("config_invalid", "$.sessions.backend.directory", says)
    ]
    listed = run_raw(tmp_path, "sessions", "list", "--config", str(path))
    assert listed.returncode == 2
    assert f"config_invalid: {says}" in listed.stderr
    assert "$.sessions.backend.directory" in listed.stderr
    assert "Traceback" not in checked.stderr + listed.stderr
    assert not (tmp_path / "rel").exists()


def test_an_absolute_sqlite_folder_is_valid_and_used(tmp_path: Path) -> None:
    folder = tmp_path / "store"
    path = write_config(tmp_path, {"type": "sqlite", "directory": str(folder)})
    checked = run_raw(tmp_path, "config", "validate", "--config", str(path))
    assert checked.returncode == 0, checked.stderr
    listed = run_raw(tmp_path, "sessions", "list", "--config", str(path))
    assert listed.returncode == 0, listed.stderr
    assert folder.is_dir()
