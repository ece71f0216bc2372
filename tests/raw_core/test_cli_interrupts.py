"""A handler that never returns cannot keep raw alive, and Ctrl-C always gives control back.

Each test runs the real ``raw`` console script (or a Python program embedding raw) with a
recorded model whose first reply calls a local tool: ``hang`` (a synchronous handler that
sleeps forever, ignoring its cancellation) or ``stubborn`` (an async handler that swallows
every cancellation). The bounds are generous: what is checked is that the process ends at
all, with the right exit code and output, not how fast.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
from pathlib import Path
from typing import Any

import pexpect
import pytest

from tests.conftest import Children, raw_script

EXIT_WITHIN = 60  # seconds; a process that has not ended by then never will
HANG = """
import threading

def handler(args, context):
    threading.Event().wait()  # forever, and deaf to the call's cancellation
"""
STUBBORN = """
import anyio

async def handler(args, context):
    while True:
        try:
            await anyio.sleep(3600)
        except anyio.get_cancelled_exc_class():
            pass  # a handler that swallows its cancellation
"""
SCHEMA = {"type": "object", "properties": {}, "additionalProperties": False}


@pytest.fixture
def env(tmp_path: Path) -> dict[str, str]:
    environment = dict(os.environ)
    environment.update(
        XDG_STATE_HOME=str(tmp_path / "state"),
        XDG_CONFIG_HOME=str(tmp_path / "config"),
        NO_COLOR="1",
        TERM="dumb",
    )
    return environment


def write_config(root: Path, make_tool: Any, tool: str, **agent: Any) -> Path:
    """A config whose recorded model calls ``tool`` once, then answers ``done``."""
    make_tool("hang", root=root / "tools", code=HANG, input_schema=SCHEMA)
    make_tool("stubborn", root=root / "tools", code=STUBBORN, input_schema=SCHEMA)
    recording = root / "recording.jsonl"
    replies = [
        {"text": "calling", "tool_calls": [{"name": tool, "arguments": {}}]},
        {"text": "done"},
    ]
    recording.write_text("".join(json.dumps(reply) + "\n" for reply in replies))
    config = root / "raw.json"
    config.write_text(
        json.dumps(
            {
                "models": {"recorded": {"provider": "replay", "model": str(recording)}},
                "agents": {
                    "a": {"model": "recorded", "tools": {"use": [f"agent/{tool}"]}, **agent}
                },
            }
        )
    )
    return config


def spawn_run(children: Children, config: Path, env: dict[str, str], *extra: str) -> Any:
    return children.spawn(
        raw_script(),
        ["run", "go", "--config", str(config), *extra],
        env=env,
        cwd=str(config.parent),
        encoding="utf-8",
        timeout=EXIT_WITHIN,
        dimensions=(40, 200),
    )


def ended(child: Any) -> tuple[int, str]:
    """Wait for the child's end: its exit status and everything it printed."""
    child.expect(pexpect.EOF)
    output = str(child.before)
    child.close()
    return child.exitstatus, output


def test_a_timed_out_sync_handler_does_not_keep_raw_run_alive(
    tmp_path: Path, make_tool: Any, env: dict[str, str], children: Children
) -> None:
    config = write_config(tmp_path, make_tool, "hang", handler_timeout_ms=200)
    process = children.popen(
        [raw_script(), "run", "go", "--config", str(config), "--json"],
        env=env,
        stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        stdout, stderr = process.communicate(timeout=EXIT_WITHIN)
    except subprocess.TimeoutExpired:
        pytest.fail("raw run did not exit after its turn ended (it waited on the handler)")
    assert process.returncode == 0, stderr
    events = [json.loads(line) for line in stdout.splitlines()]
    finished = next(e for e in events if e["type"] == "tool_call_finished")
    assert finished["code"] == "timeout"
    assert events[-1]["type"] == "turn_ended"
    assert events[-1]["reason"] == "completed"


def test_an_embedding_program_exits_after_a_timed_out_sync_handler(
    tmp_path: Path, make_tool: Any, env: dict[str, str], children: Children
) -> None:
    """The library itself leaves no thread the interpreter would wait for at exit."""
    config = write_config(tmp_path, make_tool, "hang", handler_timeout_ms=200)
    program = (
        "import sys, anyio\n"
        "from raw_core.app import App\n"
        "async def main():\n"
        "    async with App.open(sys.argv[1]) as app:\n"
        "        result = await app.call_tool('agent/hang', '{}')\n"
        "    print(result.code, flush=True)\n"
        "anyio.run(main)\n"
    )
    process = children.popen(
        [sys.executable, "-c", program, str(config)],
        env=env,
        stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        stdout, stderr = process.communicate(timeout=EXIT_WITHIN)
    except subprocess.TimeoutExpired:
        pytest.fail("the program did not exit: the abandoned handler's thread kept it alive")
    assert process.returncode == 0, stderr
    assert stdout == "timeout\n"


def test_ctrl_c_cancels_a_hung_sync_handler_and_raw_run_exits_130(
    tmp_path: Path, make_tool: Any, env: dict[str, str], children: Children
) -> None:
    config = write_config(tmp_path, make_tool, "hang")
    child = spawn_run(children, config, env)
    child.expect("→ hang")
    child.sendintr()
    status, output = ended(child)
    assert status == 130, output
    assert "✗ hang [cancelled]" in output
    assert "turn ended: cancelled" in output
    assert "Traceback" not in output
    session_id = output.split("session ")[-1].split()[0]
    assert len(session_id) == 32


@pytest.mark.parametrize("tool", ["hang", "stubborn"])
def test_a_second_ctrl_c_returns_control_too(
    tmp_path: Path, make_tool: Any, env: dict[str, str], children: Children, tool: str
) -> None:
    """A second press once the first was received: it lands while the cancelled turn
    ends, or after. With ``stubborn`` the turn never ends, and the second press stops raw
    anyway."""
    config = write_config(tmp_path, make_tool, tool)
    child = spawn_run(children, config, env)
    child.expect(f"→ {tool}")
    child.sendintr()
    child.expect("Ctrl-C again quits")
    output = str(child.before) + str(child.after)
    try:
        child.sendintr()
    except OSError:  # raw has exited already and closed its terminal
        pass
    status, rest = ended(child)
    output += rest
    assert status == 130, output
    assert "Traceback" not in output
    assert "Exception ignored" not in output
    assert "session " in output


def test_sigint_without_a_terminal_prints_the_session_and_exits_130(
    tmp_path: Path, make_tool: Any, env: dict[str, str], children: Children
) -> None:
    config = write_config(tmp_path, make_tool, "hang")
    process = children.popen(
        [raw_script(), "run", "go", "--config", str(config), "--json"],
        env=env,
        stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    assert process.stdout is not None
    for line in process.stdout:  # the handler is running once its call has started
        if json.loads(line)["type"] == "tool_call_started":
            break
    process.send_signal(signal.SIGINT)
    try:
        rest, stderr = process.communicate(timeout=EXIT_WITHIN)
    except subprocess.TimeoutExpired:
        pytest.fail("raw run did not exit after SIGINT")
    assert process.returncode == 130, stderr
    assert "Traceback" not in stderr
    last = json.loads(rest.splitlines()[-1])
    assert last["type"] == "turn_ended"
    assert last["reason"] == "cancelled"
