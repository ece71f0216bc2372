"""``--max-output-bytes`` on ``raw run``, ``raw chat`` and ``raw sessions resume``: the
session's result cap, so the model's copy of a call's output that the session stores is
cut there, and the output as the user saw it is kept beside it."""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path
from typing import Any

import pytest

from tests.conftest import raw_script

OUTPUT_CHARS = 5000  # under the agent's default cap (8192), over the one the tests give
CAP = 100
BIG = f"""
def handler(args, context):
    return {{"content": [{{"type": "text", "text": "x" * {OUTPUT_CHARS}}}]}}
"""


@pytest.fixture
def env(tmp_path: Path) -> dict[str, str]:
    return dict(
        os.environ,
        XDG_STATE_HOME=str(tmp_path / "state"),
        XDG_CONFIG_HOME=str(tmp_path / "config"),
        NO_COLOR="1",
    )


def config_calling_big(root: Path, make_tool: Any, name: str) -> Path:
    """A config whose recorded model calls ``big`` once, then answers."""
    make_tool("big", root=root / "tools", code=BIG)
    recording = root / f"{name}.jsonl"
    replies = [{"tool_calls": [{"name": "big", "arguments": {}}]}, {"text": "done"}]
    recording.write_text("".join(json.dumps(reply) + "\n" for reply in replies))
    config = root / f"{name}.json"
    config.write_text(
        json.dumps(
            {
                "models": {"recorded": {"provider": "replay", "model": str(recording)}},
                "agents": {"a": {"model": "recorded", "tools": {"use": ["agent/big"]}}},
            }
        )
    )
    return config


def raw(env: dict[str, str], *args: str, stdin: str = "") -> subprocess.CompletedProcess[str]:
    result = subprocess.run(
        [raw_script(), *args], env=env, input=stdin, capture_output=True, text=True, timeout=120
    )
    assert result.returncode == 0, result.stderr
    return result


def the_only_session(env: dict[str, str]) -> str:
    (session,) = json.loads(raw(env, "sessions", "list", "--json").stdout)
    return str(session["id"])


def stored_results(env: dict[str, str], session_id: str) -> list[tuple[str, str | None]]:
    """For each call of the session: the text of the model's copy, and of the output as the
    user saw it when the model's copy was capped (None when it was not)."""
    items = json.loads(raw(env, "sessions", "show", session_id, "--json").stdout)["items"]
    found: list[tuple[str, str | None]] = []
    for item in items:  # a call's tool_output item follows its message (ids may repeat)
        if item["kind"] == "message" and item["message"]["role"] == "tool":
            found.append(("".join(b["text"] for b in item["message"]["content"]), None))
        elif item["kind"] == "tool_output":
            found[-1] = (found[-1][0], "".join(b["text"] for b in item["content"]))
    return found


def assert_capped(result: tuple[str, str | None]) -> None:
    model_copy, full = result
    assert len(model_copy.encode()) <= CAP  # the cap holds, its marker included
    assert model_copy.startswith("x")
    assert "truncated" in model_copy
    assert full == "x" * OUTPUT_CHARS


def test_run_caps_the_model_copy_the_session_stores(
    tmp_path: Path, make_tool: Any, env: dict[str, str]
) -> None:
    config = config_calling_big(tmp_path, make_tool, "run")
    raw(env, "run", "go", "--config", str(config), "--max-output-bytes", str(CAP))
    (result,) = stored_results(env, the_only_session(env))
    assert_capped(result)


def test_chat_caps_the_model_copy_the_session_stores(
    tmp_path: Path, make_tool: Any, env: dict[str, str]
) -> None:
    config = config_calling_big(tmp_path, make_tool, "chat")
    raw(env, "chat", "--config", str(config), "--max-output-bytes", str(CAP), stdin="go\n")
    (result,) = stored_results(env, the_only_session(env))
    assert_capped(result)


def test_resume_caps_the_results_of_its_turn_only(
    tmp_path: Path, make_tool: Any, env: dict[str, str]
) -> None:
    first = config_calling_big(tmp_path, make_tool, "first")
    raw(env, "run", "go", "--config", str(first))
    session_id = the_only_session(env)
    again = config_calling_big(tmp_path, make_tool, "again")
    raw(
        env,
        "sessions",
        "resume",
        session_id,
        "once more",
        "--config",
        str(again),
        "--max-output-bytes",
        str(CAP),
    )
    earlier, resumed = stored_results(env, session_id)
    assert earlier == ("x" * OUTPUT_CHARS, None)  # under the agent's cap: stored whole
    assert_capped(resumed)


NOTE = "(the model was given a shortened result)"


def test_the_shortened_result_note_is_printed_only_for_a_cut_result(
    tmp_path: Path, make_tool: Any, env: dict[str, str]
) -> None:
    config = config_calling_big(tmp_path, make_tool, "note")
    capped = raw(env, "run", "go", "--config", str(config), "--max-output-bytes", str(CAP))
    assert NOTE in capped.stderr
    whole = raw(env, "run", "go", "--config", str(config))
    assert NOTE not in whole.stderr
    # An error whose model copy is reworded (the host's copy names more) was not cut.
    data = json.loads(config.read_text())
    data["rules"] = [{"match": "agent/big", "effect": "ask"}]
    config.write_text(json.dumps(data))
    asked = raw(env, "run", "go", "--config", str(config), "--json")
    finished = next(
        e for e in map(json.loads, asked.stdout.splitlines()) if e["type"] == "tool_call_finished"
    )
    assert finished["code"] == "approval_unavailable"
    assert finished["content"] != finished["full_content"]
    assert finished["truncated"] is False
    unavailable = raw(env, "run", "go", "--config", str(config))
    assert "[approval_unavailable]" in unavailable.stderr
    assert NOTE not in unavailable.stderr
