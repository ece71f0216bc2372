"""``raw sessions compact ID`` and a turn that compacts, through the real CLI: the model
context gets a summary, the display history keeps every message, and the terminal and
``--json`` show the compaction."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from raw_core.runtime.compaction import SUMMARY_HEADER
from raw_core.sessions.sqlite import AssistantMessage, SessionStore, TextBlock, UserMessage


def raw(*args: str, env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "raw_core", *args],
        env=env,
        capture_output=True,
        text=True,
        stdin=subprocess.DEVNULL,
        timeout=120,
    )


@pytest.fixture
def env(tmp_path: Path) -> dict[str, str]:
    return dict(
        os.environ,
        XDG_STATE_HOME=str(tmp_path / "state"),
        XDG_CONFIG_HOME=str(tmp_path / "config"),
        NO_COLOR="1",
    )


def project(tmp_path: Path, replies: list[str], window: int | None = None) -> Path:
    recording = tmp_path / "replies.jsonl"
    recording.write_text("".join(json.dumps({"text": r}) + "\n" for r in replies))
    model: dict[str, object] = {"provider": "replay", "model": str(recording)}
    if window is not None:
        model["context_window"] = window
    config = tmp_path / "raw.json"
    config.write_text(
        json.dumps(
            {
                "models": {"recorded": model},
                "agents": {"a": {"model": "recorded", "tools": {"use": []}}},
            }
        )
    )
    return config


def seeded(tmp_path: Path, exchanges: int) -> str:
    with SessionStore.open(tmp_path / "state" / "raw") as store:
        session = store.create("long")
        with store.open_writer(session.id) as writer:
            for n in range(exchanges):
                writer.append([UserMessage.from_text(f"question {n} " + "q" * 200)])
                writer.append([AssistantMessage(text=f"answer {n} " + "a" * 200)])
        return session.id


def context_of(tmp_path: Path, session_id: str) -> tuple[object, ...]:
    with SessionStore.open(tmp_path / "state" / "raw") as store:
        return store.open_reader(session_id).read_context()


def test_sessions_compact_replaces_the_oldest_part_with_a_summary(
    tmp_path: Path, env: dict[str, str]
) -> None:
    session_id = seeded(tmp_path, 6)
    config = project(tmp_path, ["The user asked six questions."])
    done = raw("sessions", "compact", session_id, "--config", str(config), "--json", env=env)
    assert done.returncode == 0, done.stderr
    ended = json.loads(done.stdout)
    assert ended["type"] == "compaction_ended"
    assert ended["outcome"] == "completed"
    assert ended["replaced"] + ended["kept"] == 12
    assert ended["replaced"] >= 2
    context = context_of(tmp_path, session_id)
    assert len(context) == 1 + ended["kept"]
    head = context[0]
    assert isinstance(head, UserMessage)
    assert isinstance(head.content[0], TextBlock)
    assert head.content[0].text == f"{SUMMARY_HEADER}\n\nThe user asked six questions."
    shown = raw("sessions", "show", session_id, "--json", env=env)
    assert len(json.loads(shown.stdout)["items"]) == 12  # the display history is whole


def test_sessions_compact_says_when_there_is_nothing_to_compact(
    tmp_path: Path, env: dict[str, str]
) -> None:
    with SessionStore.open(tmp_path / "state" / "raw") as store:
        session = store.create("short")
        with store.open_writer(session.id) as writer:
            writer.append([UserMessage.from_text("only this")])
    config = project(tmp_path, [])
    done = raw("sessions", "compact", session.id, "--config", str(config), env=env)
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "nothing to compact"


def test_sessions_compact_fails_cleanly_when_the_model_fails(
    tmp_path: Path, env: dict[str, str]
) -> None:
    session_id = seeded(tmp_path, 3)
    before = context_of(tmp_path, session_id)
    config = project(tmp_path, [])  # the recording has no reply for the summary request
    done = raw("sessions", "compact", session_id, "--config", str(config), "--json", env=env)
    assert done.returncode == 1
    ended = json.loads(done.stdout)  # the compaction_ended event, as cli.md says
    assert ended["type"] == "compaction_ended"
    assert ended["session_id"] == session_id
    assert ended["outcome"] == "failed"
    assert ended["error"]["code"] == "provider_error"
    assert "Traceback" not in done.stderr
    assert context_of(tmp_path, session_id) == before
    text = raw("sessions", "compact", session_id, "--config", str(config), env=env)
    assert text.returncode == 1
    assert text.stderr.startswith("raw: provider_error: ")
    assert context_of(tmp_path, session_id) == before


def test_sessions_compact_exits_2_for_a_config_error(tmp_path: Path, env: dict[str, str]) -> None:
    session_id = seeded(tmp_path, 3)
    before = context_of(tmp_path, session_id)
    config = project(tmp_path, ["unused"])
    done = raw(
        "sessions", "compact", session_id, "--config", str(config), "--agent", "nope",
        "--json", env=env,
    )  # fmt: skip
    assert done.returncode == 2, done.stderr
    assert json.loads(done.stdout)["error"]["code"] == "config_invalid"
    assert "Traceback" not in done.stderr
    assert context_of(tmp_path, session_id) == before


def test_a_turn_past_the_threshold_compacts_and_the_terminal_says_so(
    tmp_path: Path, env: dict[str, str]
) -> None:
    session_id = seeded(tmp_path, 8)
    config = project(tmp_path, ["Eight questions so far.", "Here you are."], window=1500)
    shown = raw("sessions", "resume", session_id, "one more", "--config", str(config), env=env)
    assert shown.returncode == 0, shown.stderr
    assert shown.stdout.strip() == "Here you are."
    assert "(compacting the conversation: about " in shown.stderr
    assert "of a 1,500-token window" in shown.stderr
    assert "(compacted: " in shown.stderr

    again = project(tmp_path, ["Nine now.", "Sure."], window=350)
    streamed = raw(
        "sessions", "resume", session_id, "and more", "--config", str(again), "--json", env=env
    )
    assert streamed.returncode == 0, streamed.stderr
    kinds = [json.loads(line)["type"] for line in streamed.stdout.splitlines()]
    assert kinds.index("compaction_started") < kinds.index("compaction_ended")
    assert kinds[-1] == "turn_ended"


def test_compact_in_a_chat_prints_its_result_once(tmp_path: Path, env: dict[str, str]) -> None:
    answers = [f"answer {n} " + "a" * 200 for n in range(6)]
    config = project(tmp_path, [*answers, "The user asked six questions."])
    prompts = "".join(f"question {n} {'q' * 200}\n" for n in range(6)) + "/compact\n"
    done = subprocess.run(
        [sys.executable, "-m", "raw_core", "chat", "--config", str(config)],
        env=env,
        input=prompts,
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 0, done.stderr
    assert done.stderr.count("(compacted: ") == 1, done.stderr
    assert done.stderr.count("(compacting the conversation: ") == 1
