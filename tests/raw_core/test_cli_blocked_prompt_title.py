"""A prompt a UserPromptSubmit hook blocks leaves nothing behind, its session's title
included: ``raw run`` and ``raw chat`` title a session by the first prompt the hooks let
through, never by one they blocked."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from tests.command_hooks import write_config, write_hook, write_tool
from tests.conftest import run_raw

SECRET = "my password is hunter2"
BLOCK_PASSWORDS = """case "$payload" in
  *password*) echo "prompts must not hold passwords" >&2; exit 2 ;;
esac
"""


def project(tmp_path: Path) -> Path:
    write_tool(tmp_path)
    write_hook(tmp_path, "prompts", events=["UserPromptSubmit"], sh=BLOCK_PASSWORDS)
    recording = tmp_path / "replies.jsonl"
    recording.write_text(json.dumps({"text": "Done."}) + "\n", encoding="utf-8")
    models = {"recorded": {"provider": "replay", "model": str(recording)}}
    return write_config(tmp_path, ["agent/prompts"], model="recorded", top={"models": models})


def sessions(tmp_path: Path, config: Path) -> list[dict[str, Any]]:
    listed = run_raw(tmp_path, "sessions", "list", "--config", str(config), "--json")
    assert listed.returncode == 0, listed.stderr
    assert "hunter2" not in listed.stdout
    found: list[dict[str, Any]] = json.loads(listed.stdout)
    return found


def test_raw_run_does_not_title_a_session_by_a_blocked_prompt(tmp_path: Path) -> None:
    config = project(tmp_path)
    blocked = run_raw(tmp_path, "run", SECRET, "--config", str(config))
    assert blocked.returncode == 1, blocked.stderr
    assert "hook_denied" in blocked.stdout + blocked.stderr
    assert [s["title"] for s in sessions(tmp_path, config)] == [""]
    passed = run_raw(tmp_path, "run", "tidy   up\nthe repo", "--config", str(config))
    assert passed.returncode == 0, passed.stderr
    titles = [s["title"] for s in sessions(tmp_path, config)]
    assert titles == ["tidy up the repo", ""]  # newest first; one line


def test_raw_chat_titles_its_session_by_the_first_prompt_let_through(tmp_path: Path) -> None:
    config = project(tmp_path)
    chat = run_raw(tmp_path, "chat", "--config", str(config), input=f"{SECRET}\nhello there\n")
    assert chat.returncode == 0, chat.stderr
    assert "Done." in chat.stdout
    assert [s["title"] for s in sessions(tmp_path, config)] == ["hello there"]
