"""The reference CLI on a real pseudo-terminal (pexpect) and in pipes: ``raw demo``,
``raw run``, ``raw chat`` with Ctrl-C, and ``raw sessions``."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pexpect
import pytest

from tests.conftest import Children, raw_script

RAW = raw_script()
SLOW_THEN_DONE: list[dict[str, Any]] = [
    {
        "text": "Let me wait.",
        "tool_calls": [{"name": "bash", "arguments": {"commands": [{"command": "sleep 30"}]}}],
    },
    {"text": "never reached"},
]


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


@pytest.mark.parametrize(("answer", "removed"), [("y", True), ("n", False)])
def test_the_demo_asks_before_rm_and_takes_the_answer(
    tmp_path: Path, env: dict[str, str], answer: str, removed: bool, children: Children
) -> None:
    child = spawn(children, ["demo", "--dir", str(tmp_path / "demo")], env, tmp_path)
    child.expect("Intended effects:|Arguments:")
    child.expect(r"Run it\? \[y/N\]: ")
    assert "rm -rf old-output" in child.before
    child.sendline(answer)
    child.expect("✓ bash" if removed else "✗ bash \\[approval_denied\\]")
    child.expect("Done: greet\\(\\) now greets by name")
    child.expect(pexpect.EOF)
    child.close()
    assert child.exitstatus == 0
    project = tmp_path / "demo" / "project"
    assert 'return f"Hello, {name}!"' in (project / "greet.py").read_text()
    assert (project / "old-output").exists() is not removed


def test_the_demo_without_a_terminal_cannot_approve(tmp_path: Path, env: dict[str, str]) -> None:
    result = subprocess.run(
        [RAW, "demo", "--dir", str(tmp_path / "d")],
        env=env,
        capture_output=True,
        text=True,
        stdin=subprocess.DEVNULL,
    )
    assert result.returncode == 0, result.stderr
    assert "approval_unavailable" in result.stderr
    assert (tmp_path / "d" / "project" / "old-output").exists()


def test_the_command_the_demo_prints_shows_its_session(tmp_path: Path, env: dict[str, str]) -> None:
    result = subprocess.run(
        [RAW, "demo", "--dir", str(tmp_path / "d")],
        env=env,
        capture_output=True,
        text=True,
        stdin=subprocess.DEVNULL,
    )
    assert result.returncode == 0, result.stderr
    session_id = result.stderr.split("\nsession ")[-1].split()[0]
    config = tmp_path / "d" / "raw.json"
    printed = f"The whole session: raw sessions show {session_id} --config {config}"
    assert printed in result.stderr.splitlines()
    command = printed.split(": ", 1)[1].split()
    assert command[:2] == ["raw", "sessions"]
    shown = subprocess.run(
        [RAW, *command[1:], "--json"],
        env=env,
        capture_output=True,
        text=True,
        stdin=subprocess.DEVNULL,
    )
    assert shown.returncode == 0, shown.stdout + shown.stderr
    items = json.loads(shown.stdout)["items"]
    assert any(item["kind"] == "message" for item in items)
    assert (tmp_path / "d" / "sessions").is_dir()  # the store is in the demo's folder


def test_ctrl_c_cancels_a_chat_turn_and_the_session_resumes(
    tmp_path: Path, env: dict[str, str], children: Children
) -> None:
    config = replay_config(tmp_path, "slow", SLOW_THEN_DONE)
    child = spawn(children, ["chat", "--config", str(config)], env, tmp_path)
    child.expect("you> ")
    child.sendline("wait for me")
    child.expect("→ bash")
    child.sendintr()
    child.expect("turn ended: cancelled")
    child.expect("you> ")
    child.sendeof()
    child.expect(r"session ([0-9a-f]{32})")
    session_id = child.match.group(1)
    child.expect(pexpect.EOF)
    child.close()
    assert child.exitstatus == 0

    resumed = replay_config(tmp_path, "resume", [{"text": "Back again."}])
    result = subprocess.run(
        [RAW, "sessions", "resume", session_id, "go on", "--config", str(resumed), "--json"],
        env=env,
        capture_output=True,
        text=True,
        stdin=subprocess.DEVNULL,
    )
    assert result.returncode == 0, result.stderr
    events = [json.loads(line) for line in result.stdout.splitlines()]
    assert events[-1] == {"type": "turn_ended", "reason": "completed", "steps": 1, "error": None}
    shown = subprocess.run(
        [RAW, "sessions", "show", session_id, "--json"], env=env, capture_output=True, text=True
    )
    items = json.loads(shown.stdout)["items"]
    assert [i["seq"] for i in items] == [1, 2, 3, 4, 5]  # positions in the session
    roles = [(i["message"]["role"], i["message"].get("error_code")) for i in items]
    assert roles == [
        ("user", None),
        ("assistant", None),
        ("tool", "cancelled"),
        ("user", None),
        ("assistant", None),
    ]


def test_a_second_ctrl_c_quits_chat(
    tmp_path: Path, env: dict[str, str], children: Children
) -> None:
    config = replay_config(tmp_path, "slow", SLOW_THEN_DONE)
    child = spawn(children, ["chat", "--config", str(config)], env, tmp_path)
    child.expect("you> ")
    child.sendline("wait")
    child.expect("→ bash")
    child.sendintr()
    child.expect("Ctrl-C again quits")
    child.sendintr()
    child.expect(pexpect.EOF)
    child.close()
    assert child.exitstatus == 130  # ended by Ctrl-C, as the shell reports SIGINT
    assert "Traceback" not in str(child.before)


def test_ctrl_d_at_the_prompt_quits_chat_with_0(
    tmp_path: Path, env: dict[str, str], children: Children
) -> None:
    config = replay_config(tmp_path, "hi", [{"text": "Hello."}])
    child = spawn(children, ["chat", "--config", str(config)], env, tmp_path)
    child.expect("you> ")
    child.sendeof()
    child.expect(pexpect.EOF)
    child.close()
    assert child.exitstatus == 0


def test_run_reads_the_prompt_from_stdin_and_prints_json_lines(
    tmp_path: Path, env: dict[str, str]
) -> None:
    config = replay_config(
        tmp_path,
        "echo",
        [
            {"tool_calls": [{"name": "bash", "arguments": {"commands": [{"command": "echo hi"}]}}]},
            {"text": "It said hi."},
        ],
    )
    result = subprocess.run(
        [RAW, "run", "--config", str(config), "--json"],
        env=env,
        input="say hi",
        capture_output=True,
        text=True,
    )
    assert result.returncode == 0, result.stderr
    events = [json.loads(line) for line in result.stdout.splitlines()]
    kinds = [e["type"] for e in events]
    assert kinds[0] == "turn_started"
    assert events[0]["prompt"] == "say hi"
    assert kinds.count("turn_ended") == 1
    finished = next(e for e in events if e["type"] == "tool_call_finished")
    assert "hi" in finished["content"][0]["text"]


def test_run_exit_codes(tmp_path: Path, env: dict[str, str]) -> None:
    failing = replay_config(tmp_path, "empty", [])
    result = subprocess.run(
        [RAW, "run", "hello", "--config", str(failing)],
        env=env,
        capture_output=True,
        text=True,
        stdin=subprocess.DEVNULL,
    )
    assert result.returncode == 1
    assert "provider_error" in result.stderr
    no_model = tmp_path / "nomodel.json"
    no_model.write_text(json.dumps({"agents": {"a": {"tools": {"use": []}}}}))
    result = subprocess.run(
        [RAW, "run", "hello", "--config", str(no_model)],
        env=env,
        capture_output=True,
        text=True,
        stdin=subprocess.DEVNULL,
    )
    assert result.returncode == 2
    assert "has no model" in result.stderr
    assert "Traceback" not in result.stderr


def test_sessions_list_show_and_delete(tmp_path: Path, env: dict[str, str]) -> None:
    config = replay_config(tmp_path, "hi", [{"text": "Hello there."}])
    subprocess.run(
        [RAW, "run", "first prompt", "--config", str(config)],
        env=env,
        capture_output=True,
        check=True,
        stdin=subprocess.DEVNULL,
    )
    listed = json.loads(
        subprocess.run(
            [RAW, "sessions", "list", "--json"], env=env, capture_output=True, text=True, check=True
        ).stdout
    )
    assert [s["title"] for s in listed] == ["first prompt"]
    session_id = listed[0]["id"]
    shown = subprocess.run(
        [RAW, "sessions", "show", session_id], env=env, capture_output=True, text=True, check=True
    ).stdout
    assert "you: first prompt" in shown
    assert "assistant: Hello there." in shown
    refused = subprocess.run(
        [RAW, "sessions", "delete", session_id],
        env=env,
        capture_output=True,
        text=True,
        stdin=subprocess.DEVNULL,
    )
    assert refused.returncode == 2
    subprocess.run(
        [RAW, "sessions", "delete", session_id, "-y"], env=env, check=True, capture_output=True
    )
    missing = subprocess.run(
        [RAW, "sessions", "show", session_id, "--json"], env=env, capture_output=True, text=True
    )
    assert missing.returncode == 2
    assert json.loads(missing.stdout)["error"]["code"] == "session_not_found"


def test_help_lists_every_command() -> None:
    result = subprocess.run([RAW, "--help"], capture_output=True, text=True, check=True)
    for command in ("run", "chat", "demo", "sessions", "tools", "policy", "config"):
        assert f"  {command} " in result.stdout
    assert sys.modules.get("openai") is None


def test_sessions_prune_deletes_only_expired_sessions(tmp_path: Path, env: dict[str, str]) -> None:
    config = replay_config(tmp_path, "hi", [{"text": "Hello."}])
    subprocess.run(
        [RAW, "run", "keep me", "--config", str(config)],
        env=env,
        check=True,
        capture_output=True,
        stdin=subprocess.DEVNULL,
    )
    kept = subprocess.run(
        [RAW, "sessions", "prune", "--json"], env=env, capture_output=True, text=True, check=True
    )
    assert json.loads(kept.stdout) == {"deleted": []}
    gone = subprocess.run(
        [RAW, "sessions", "prune", "--days", "0.000001", "--json"],
        env=env,
        capture_output=True,
        text=True,
        check=True,
    )
    assert len(json.loads(gone.stdout)["deleted"]) == 1
    listed = subprocess.run(
        [RAW, "sessions", "list", "--json"], env=env, capture_output=True, text=True, check=True
    )
    assert json.loads(listed.stdout) == []


def test_cli_inputs_that_once_crashed_are_usage_errors(tmp_path: Path, env: dict[str, str]) -> None:
    huge = tmp_path / "huge.json"
    huge.write_text(
        json.dumps(
            {"sessions": {"expire_after_days": 1e10}, "agents": {"a": {"tools": {"use": []}}}}
        )
    )
    for args in (
        ["config", "validate", "--config", str(huge)],
        ["sessions", "prune", "--days", "inf"],
        ["sessions", "prune", "--days", "1e308"],
        ["demo", "--dir", "/proc/raw-demo"],
    ):
        result = subprocess.run(
            [RAW, *args], env=env, capture_output=True, text=True, stdin=subprocess.DEVNULL
        )
        assert result.returncode == 2, (args, result.stderr)
        assert "Traceback" not in result.stderr


def test_a_prompt_that_is_not_utf8_is_read_with_replacement(
    tmp_path: Path, env: dict[str, str]
) -> None:
    config = replay_config(tmp_path, "hi", [{"text": "Hello."}])
    result = subprocess.run(
        [RAW.encode(), b"run", b"caf\xe9", b"--config", bytes(config), b"--json"],
        env=env,
        capture_output=True,
        stdin=subprocess.DEVNULL,
    )
    assert result.returncode == 0, result.stderr
    first = json.loads(result.stdout.splitlines()[0])
    assert first["prompt"] == "caf\ufffd"


def test_chat_reads_prompts_from_a_file_or_dev_null_without_a_traceback(
    tmp_path: Path, env: dict[str, str]
) -> None:
    # A regular file and /dev/null cannot be watched by the event loop's poller: chat
    # reads them at once, to the end of input, and quits as at Ctrl-D.
    config = replay_config(tmp_path, "said", [{"text": "Hello from the file."}])
    prompts = tmp_path / "prompts.txt"
    prompts.write_text("hello\n")
    for source in (prompts, Path(os.devnull)):
        with source.open("rb") as stdin:
            result = subprocess.run(
                [RAW, "chat", "--config", str(config)],
                env=env,
                stdin=stdin,
                capture_output=True,
                text=True,
                timeout=60,
                cwd=tmp_path,
            )
        assert result.returncode == 0, result.stderr
        assert "Traceback" not in result.stderr
        if source == prompts:
            assert "Hello from the file." in result.stdout + result.stderr
