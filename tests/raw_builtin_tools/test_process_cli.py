"""A real ``raw run`` that starts a background process leaves none behind when it exits:
the end of its session stops the process group and deletes its output."""

from __future__ import annotations

import json
import os
import re
import subprocess
from pathlib import Path

from tests.conftest import Children, raw_script


def test_raw_run_exits_and_leaves_no_process(tmp_path: Path, children: Children) -> None:
    start = {"action": "start", "name": "nap", "command": "sleep 300 & sleep 301"}
    call = {"name": "process", "arguments": {"actions": [start]}}
    (tmp_path / "rec.jsonl").write_text(
        json.dumps({"tool_calls": [call]}) + "\n" + json.dumps({"text": "Left it running."}) + "\n"
    )
    config = {
        "models": {"r": {"provider": "replay", "model": "rec.jsonl"}},
        "agents": {"a": {"model": "r", "tools": {"use": ["builtin/process"]}}},
    }
    (tmp_path / "raw.json").write_text(json.dumps(config))
    state = tmp_path / "state"
    env = {**os.environ, "XDG_STATE_HOME": str(state), "XDG_CONFIG_HOME": str(tmp_path / "x")}
    result = subprocess.run(
        [raw_script(), "run", "--config", str(tmp_path / "raw.json"), "go"],
        capture_output=True,
        text=True,
        env=env,
        cwd=tmp_path,
        timeout=120,
    )
    found = re.search(r"started nap: pid (\d+)", result.stderr)
    assert found, result.stderr
    group = int(found.group(1))
    children.adopt(group)
    assert result.returncode == 0, result.stderr
    assert "Left it running." in result.stdout
    left = [pid for pid in _pids() if _group_of(pid) == group]
    assert left == []
    assert list((state / "raw" / "processes").iterdir()) == []


def _pids() -> list[int]:
    return [int(entry.name) for entry in Path("/proc").glob("[0-9]*")]


def _group_of(pid: int) -> int | None:
    """The process group of ``pid`` (None when it is gone or a zombie)."""
    try:
        fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    except OSError:
        return None
    return None if fields[0] == "Z" else int(fields[2])
