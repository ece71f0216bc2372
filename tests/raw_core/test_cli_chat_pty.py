"""``raw chat`` and ``raw run`` as a person meets them, on a real pseudo-terminal (pexpect):
colour (and none with NO_COLOR), long output folded, line editing, history, a two-line
prompt, the chat's commands, Ctrl-C during a turn and at the prompt, and sessions picked up
again (``resume --last`` in another folder runs in the session's folder)."""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path
from typing import Any

import pexpect
import pytest

from tests.conftest import Children, raw_script

RAW = raw_script()
PROMPT = "you>"  # prompt_toolkit draws the trailing space as a cursor move


@pytest.fixture
def env(tmp_path: Path) -> dict[str, str]:
    environment = {k: v for k, v in os.environ.items() if k not in ("NO_COLOR", "FORCE_COLOR")}
    environment.update(
        HOME=str(tmp_path / "home"),
        XDG_STATE_HOME=str(tmp_path / "state"),
        XDG_CONFIG_HOME=str(tmp_path / "config"),
        TERM="xterm-256color",
        # pexpect does not answer the cursor-position request a real terminal answers.
        PROMPT_TOOLKIT_NO_CPR="1",
        NO_COLOR="1",
    )
    return environment


def spawn(children: Children, args: list[str], env: dict[str, str], cwd: Path) -> Any:
    return children.spawn(
        RAW, args, env=env, cwd=str(cwd), encoding="utf-8", timeout=60, dimensions=(40, 200)
    )


def replay_config(root: Path, name: str, replies: list[dict[str, Any]]) -> Path:
    recording = root / f"{name}.jsonl"
    recording.write_text("".join(json.dumps(r) + "\n" for r in replies))
    config = root / f"{name}.json"
    config.write_text(
        json.dumps(
            {
                "models": {"recorded": {"provider": "replay", "model": str(recording)}},
                "agents": {"a": {"model": "recorded", "tools": {"use": ["builtin/bash"]}}},
            }
        )
    )
    return config


def bash(command: str) -> dict[str, Any]:
    return {"tool_calls": [{"name": "bash", "arguments": {"commands": [{"command": command}]}}]}


def raw(
    env: dict[str, str], *args: str, cwd: Path | None = None
) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [RAW, *args],
        env=env,
        cwd=cwd,
        capture_output=True,
        text=True,
        stdin=subprocess.DEVNULL,
        timeout=120,
    )


def user_texts(env: dict[str, str], session_id: str) -> list[str]:
    shown = raw(env, "sessions", "show", session_id, "--json")
    assert shown.returncode == 0, shown.stderr
    items = json.loads(shown.stdout)["items"]
    return [
        "".join(block["text"] for block in item["message"]["content"])
        for item in items
        if item.get("message", {}).get("role") == "user"
    ]


@pytest.mark.parametrize("way", ["colour", "NO_COLOR", "--no-color"])
def test_a_terminal_gets_colour_and_no_color_gets_none(
    tmp_path: Path, env: dict[str, str], children: Children, way: str
) -> None:
    config = replay_config(tmp_path, "one", [bash("echo hi"), {"text": "Done."}])
    colour = way == "colour"
    if way != "NO_COLOR":
        del env["NO_COLOR"]
    options = ["--no-color"] if way == "--no-color" else []
    child = spawn(children, [*options, "run", "say hi", "--config", str(config)], env, tmp_path)
    child.expect(pexpect.EOF)
    child.close()
    assert child.exitstatus == 0
    output = child.before
    assert "bash" in output
    assert "Done." in output
    assert "waiting for the model" in output  # the spinner, coloured or not
    coloured_call = "\x1b[1;36m→ bash"
    assert (coloured_call in output) is colour
    if not colour:
        assert "\x1b[3" not in output  # no foreground colour at all, the spinner's included


def test_long_output_is_folded_on_screen_and_whole_in_the_session(
    tmp_path: Path, env: dict[str, str], children: Children
) -> None:
    config = replay_config(tmp_path, "long", [bash("seq 3000"), {"text": "Counted."}])
    child = spawn(children, ["run", "count", "--config", str(config)], env, tmp_path)
    child.expect("✓ bash")
    child.expect("Counted.")
    screen = [line.strip() for line in child.before.splitlines()]
    child.expect(r"session ([0-9a-f]{32})")
    session_id = child.match.group(1)
    child.expect(pexpect.EOF)
    child.close()
    assert child.exitstatus == 0
    # On screen: the first 8 lines, a count, the last 4; nothing in between.
    output = [line for line in screen if line.startswith("│ ")]
    assert len(output) == 12
    assert "│ 1" in output
    assert "│ 3000" in output
    assert "│ 1500" not in output
    folds = [line for line in screen if line.startswith("… ")]
    assert len(folds) == 1
    assert "more lines" in folds[0]
    # In the session: the whole output, found by a prefix of the id.
    shown = raw(env, "sessions", "show", session_id[:8])
    assert shown.returncode == 0, shown.stderr
    whole = shown.stdout.split("\n")
    assert "    1500" in whole
    assert "    3000" in whole


def test_line_editing_history_and_a_two_line_prompt(
    tmp_path: Path, env: dict[str, str], children: Children
) -> None:
    config = replay_config(
        tmp_path, "chat", [{"text": "One."}, {"text": "Two."}, {"text": "Three."}]
    )
    child = spawn(children, ["chat", "--config", str(config)], env, tmp_path)
    child.expect(PROMPT)
    child.send("hllo world")
    child.send("\x1b[D" * 9)  # Left, nine times: the cursor is after the "h"
    child.send("e")
    child.send("\r")
    child.expect("One.")
    child.expect(PROMPT)
    child.send("\x1b[A")  # Up: the prompt just sent comes back
    child.expect("hello world")
    child.send("\r")
    child.expect("Two.")
    child.expect(PROMPT)
    child.send("first line")
    child.send("\x1b\r")  # Esc, Enter: a new line
    child.send("second line\r")
    child.expect("Three.")
    child.expect(PROMPT)
    child.sendeof()
    child.expect(r"session ([0-9a-f]{32})")
    session_id = child.match.group(1)
    child.expect(pexpect.EOF)
    child.close()
    assert child.exitstatus == 0
    assert user_texts(env, session_id) == ["hello world", "hello world", "first line\nsecond line"]
    listed = json.loads(raw(env, "sessions", "list", "--json").stdout)
    assert [(s["id"], s["title"], s["cwd"]) for s in listed] == [
        (session_id, "hello world", str(tmp_path))
    ]


def test_history_is_kept_across_chats_and_an_empty_chat_keeps_no_session(
    tmp_path: Path, env: dict[str, str], children: Children
) -> None:
    config = replay_config(tmp_path, "chat", [{"text": "One."}])
    child = spawn(children, ["chat", "--config", str(config)], env, tmp_path)
    child.expect(PROMPT)
    child.send("remember me\r")
    child.expect("One.")
    child.expect(PROMPT)
    child.sendeof()
    child.expect(pexpect.EOF)
    child.close()
    child = spawn(children, ["chat", "--config", str(config)], env, tmp_path)
    child.expect(PROMPT)
    child.send("\x1b[A")
    child.expect("remember me")
    child.send("\x15")  # Ctrl-U: clear the line; nothing is sent
    child.sendeof()
    child.expect(pexpect.EOF)
    child.close()
    assert child.exitstatus == 0
    listed = json.loads(raw(env, "sessions", "list", "--json").stdout)
    assert [s["title"] for s in listed] == ["remember me"]  # the second chat kept nothing


def test_chat_commands_and_ctrl_c_at_the_prompt_asks_for_a_second_press(
    tmp_path: Path, env: dict[str, str], children: Children
) -> None:
    config = replay_config(tmp_path, "chat", [{"text": "One."}, {"text": "The summary."}])
    child = spawn(children, ["chat", "--config", str(config)], env, tmp_path)
    child.expect(PROMPT)
    child.send("/help\r")
    child.expect("/compact")
    child.expect(PROMPT)
    child.send("hi\r")
    child.expect("One.")
    child.expect(PROMPT)
    child.send("/tools\r")
    child.expect("bash  ")
    child.expect(PROMPT)
    child.send("/sessions\r")
    child.expect(f"{tmp_path}  hi")
    child.expect(PROMPT)
    child.send("/compact\r")  # the summary is the model's next reply
    child.expect(r"\((compacted: .*|nothing to compact)\)")
    child.expect(PROMPT)
    child.send("/nonsense\r")
    child.expect("unknown command /nonsense")
    child.expect(PROMPT)
    child.sendintr()
    child.expect("press Ctrl-C again to quit")
    child.expect(PROMPT)
    child.sendintr()
    child.expect(pexpect.EOF)
    child.close()
    assert child.exitstatus == 130
    assert "Traceback" not in child.before
    assert "Aborted" not in child.before


def test_ctrl_c_at_a_dumb_terminals_prompt_asks_for_a_second_press_too(
    tmp_path: Path, env: dict[str, str], children: Children
) -> None:
    """TERM=dumb reads plain lines (no line editor reads the key): the SIGINT the
    terminal sends still warns first, and the chat goes on until a second press."""
    env["TERM"] = "dumb"
    config = replay_config(tmp_path, "chat", [{"text": "One."}])
    child = spawn(children, ["chat", "--config", str(config)], env, tmp_path)
    child.expect(PROMPT)
    child.sendintr()
    child.expect("press Ctrl-C again to quit")
    child.expect(PROMPT)
    child.send("hi\r")  # still chatting after the first press
    child.expect("One.")
    child.expect(PROMPT)
    child.sendintr()
    child.expect("press Ctrl-C again to quit")
    child.expect(PROMPT)
    child.sendintr()
    child.expect(pexpect.EOF)
    child.close()
    assert child.exitstatus == 130
    assert "Traceback" not in child.before


def test_ctrl_c_cancels_a_running_turn_and_the_chat_goes_on(
    tmp_path: Path, env: dict[str, str], children: Children
) -> None:
    config = replay_config(tmp_path, "slow", [bash("sleep 30"), {"text": "Never."}])
    child = spawn(children, ["chat", "--config", str(config)], env, tmp_path)
    child.expect(PROMPT)
    child.send("wait\r")
    child.expect("→ bash")
    child.sendintr()
    child.expect("turn ended: cancelled")
    child.expect(PROMPT)
    child.sendeof()
    child.expect(pexpect.EOF)
    child.close()
    assert child.exitstatus == 0


def test_resume_last_in_another_folder_runs_in_the_sessions_folder(
    tmp_path: Path, env: dict[str, str], children: Children
) -> None:
    project, elsewhere = tmp_path / "project", tmp_path / "elsewhere"
    project.mkdir()
    elsewhere.mkdir()
    first = replay_config(tmp_path, "first", [{"text": "Noted."}])
    started = raw(env, "run", "remember this folder", "--config", str(first), cwd=project)
    assert started.returncode == 0, started.stderr
    again = replay_config(tmp_path, "again", [bash("pwd"), {"text": "Here."}])
    resume = ["sessions", "resume", "--last", "--config", str(again)]
    child = spawn(children, resume, env, elsewhere)
    child.expect("you: remember this folder")  # the last exchanges come first
    child.expect("assistant: Noted.")
    child.expect(PROMPT)
    child.send("where are we?\r")
    child.expect("✓ bash")
    child.expect("Here.")
    assert f"│ {project}" in child.before
    child.expect(PROMPT)
    child.sendeof()
    child.expect(pexpect.EOF)
    child.close()
    assert child.exitstatus == 0
