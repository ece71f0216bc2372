"""The ends of a command that come from outside: the reader of stdout going away
(``raw run --json | head -1``) and SIGTERM.

Each ends the running turn as Ctrl-C does (the session stays valid), prints no
traceback, and exits with the code a shell reports for the signal: 141 (SIGPIPE) when
stdout was closed, 143 for SIGTERM. Every test runs the real ``raw`` console script with
a recorded model; the bounds are generous.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest

from tests.conftest import Children, raw_script

EXIT_WITHIN = 60  # seconds
LONG_TEXT = "a line\n" * 40_000  # many text_delta events: more than a pipe's buffer holds


@pytest.fixture
def env(tmp_path: Path) -> dict[str, str]:
    environment = dict(os.environ)
    environment.update(
        XDG_STATE_HOME=str(tmp_path / "state"),
        XDG_CONFIG_HOME=str(tmp_path / "config"),
        NO_COLOR="1",
        TERM="dumb",
    )
    environment.pop("RAW_DEBUG", None)
    return environment


def replay_config(root: Path, replies: list[dict[str, Any]]) -> Path:
    recording = root / "recording.jsonl"
    recording.write_text("".join(json.dumps(r) + "\n" for r in replies))
    config = root / "raw.json"
    config.write_text(
        json.dumps(
            {
                "models": {"recorded": {"provider": "replay", "model": str(recording)}},
                "agents": {"a": {"model": "recorded", "tools": {"use": ["builtin/bash"]}}},
            }
        )
    )
    return config


def last_turn_reason(env: dict[str, str], session_id: str) -> str:
    """The session is still valid (``raw sessions show`` reads it), and how its turn ended."""
    shown = subprocess.run(
        [raw_script(), "sessions", "show", session_id, "--json"],
        env=env,
        capture_output=True,
        text=True,
        stdin=subprocess.DEVNULL,
        timeout=EXIT_WITHIN,
    )
    assert shown.returncode == 0, shown.stderr
    return shown.stdout


@pytest.mark.parametrize(
    "args",
    [["run", "go", "--json"], ["run", "go"], ["chat", "--json"]],
    ids=["run-json", "run-text", "chat-json"],
)
def test_a_closed_stdout_ends_the_turn_quietly_and_exits_141(
    tmp_path: Path, env: dict[str, str], children: Children, args: list[str]
) -> None:
    config = replay_config(tmp_path, [{"text": LONG_TEXT}, {"text": LONG_TEXT}])
    process = children.popen(
        [raw_script(), *args, "--config", str(config)],
        env=env,
        cwd=tmp_path,
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    assert process.stdin is not None
    assert process.stdout is not None
    process.stdin.write("first\nsecond\n")
    process.stdin.close()
    first = process.stdout.readline()  # the reader reads one line, then goes away
    assert first
    process.stdout.close()
    try:
        process.wait(timeout=EXIT_WITHIN)
    except subprocess.TimeoutExpired:
        pytest.fail("raw did not end after the reader of its output went away")
    assert process.stderr is not None
    with process.stderr:
        stderr = process.stderr.read()
    assert process.returncode == 141, stderr
    assert "Traceback" not in stderr
    assert "renderer failed" not in stderr
    assert "BrokenPipe" not in stderr
    assert "Exception ignored" not in stderr
    if "--json" in args:
        session_id = json.loads(first)["session_id"]
        shown = last_turn_reason(env, session_id)
        assert "second" not in shown  # a chat did not go on to its next prompt


def test_sigterm_ends_the_turn_kills_the_running_command_and_exits_143(
    tmp_path: Path, env: dict[str, str], children: Children
) -> None:
    marker = tmp_path / "sleep.pid"
    command = {"command": f"echo $$ > {marker}; exec sleep 30"}
    call = {"name": "bash", "arguments": {"commands": [command]}}
    config = replay_config(tmp_path, [{"tool_calls": [call]}, {"text": "done"}])
    process = children.popen(
        [raw_script(), "run", "go", "--config", str(config), "--json"],
        env=env,
        cwd=tmp_path,
        stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    deadline = time.monotonic() + EXIT_WITHIN
    while not (marker.exists() and marker.read_text().strip()):  # the command is running
        assert time.monotonic() < deadline, "the bash call never started"
        assert process.poll() is None, process.communicate()
        time.sleep(0.05)
    sleeper = int(marker.read_text())
    process.send_signal(signal.SIGTERM)
    try:
        stdout, stderr = process.communicate(timeout=EXIT_WITHIN)
    except subprocess.TimeoutExpired:
        pytest.fail("raw run did not end after SIGTERM")
    assert process.returncode == 143, stderr
    assert "Traceback" not in stderr
    events = [json.loads(line) for line in stdout.splitlines()]
    assert events[-1]["type"] == "turn_ended"
    assert events[-1]["reason"] == "cancelled"
    finished = next(e for e in events if e["type"] == "tool_call_finished")
    assert finished["code"] == "cancelled"
    assert "cancelled" in last_turn_reason(env, events[0]["session_id"])
    while _alive(sleeper):  # the command's process group was killed with the turn
        assert time.monotonic() < deadline, f"the bash command (pid {sleeper}) was left running"
        time.sleep(0.05)


def _alive(pid: int) -> bool:
    """Whether ``pid`` runs (a zombie waiting to be reaped does not)."""
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return False
    return stat.rsplit(")", 1)[1].split()[0] != "Z"


LOG_PROGRAM = """
import logging
from raw_core.cli._log import install
install()
try:
    1 / 0
except ZeroDivisionError:
    logging.getLogger("raw_core.runtime.loop").exception("an event renderer failed")
logging.getLogger("raw_core").info("not shown")
"""


@pytest.mark.parametrize("debug", [False, True])
def test_a_logged_failure_is_one_line_unless_raw_debug_asks(
    env: dict[str, str], debug: bool
) -> None:
    if debug:
        env["RAW_DEBUG"] = "1"
    result = subprocess.run(
        [sys.executable, "-c", LOG_PROGRAM],
        env=env,
        capture_output=True,
        text=True,
        timeout=EXIT_WITHIN,
    )
    assert result.returncode == 0
    first = "raw: an event renderer failed (ZeroDivisionError: division by zero)\n"
    if debug:
        assert result.stderr.startswith(first)
        assert "Traceback" in result.stderr
        assert "not shown" in result.stderr
    else:
        assert result.stderr == first


@pytest.mark.parametrize(
    "args",
    [
        ["--help"],
        ["sessions", "--help"],
        ["sessions", "list", "--json"],
        ["run", "--bogus", "--json"],  # a usage error, in its JSON form on stdout
        ["run", "hi", "--cwd", "/no/such/folder", "--json"],
    ],
    ids=" ".join,
)
def test_any_command_whose_stdout_is_closed_exits_141_quietly(
    tmp_path: Path, env: dict[str, str], args: list[str]
) -> None:
    read_end, write_end = os.pipe()
    os.close(read_end)  # nobody will read: every write fails
    try:
        result = subprocess.run(
            [raw_script(), *args],
            env=env,
            cwd=tmp_path,
            stdin=subprocess.DEVNULL,
            stdout=write_end,
            stderr=subprocess.PIPE,
            text=True,
            timeout=EXIT_WITHIN,
        )
    finally:
        os.close(write_end)
    assert result.returncode == 141, result.stderr
    assert result.stderr == ""
