"""``raw sessions`` and an expired session: not listed, not shown, not resumed
(``session_expired`` naming when it expired), and gone once a command writes to the store.

The expired session is made by a store whose clock is 40 days back, so nothing waits."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from datetime import UTC, datetime, timedelta
from pathlib import Path

from raw_core.sessions.sqlite import SessionStore, UserMessage


def raw(*args: str, env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "raw_core", *args],
        env=env,
        capture_output=True,
        text=True,
        stdin=subprocess.DEVNULL,
        timeout=120,
    )


def _env(tmp_path: Path) -> dict[str, str]:
    return dict(
        os.environ,
        XDG_STATE_HOME=str(tmp_path / "state"),
        XDG_CONFIG_HOME=str(tmp_path / "config"),
        NO_COLOR="1",
    )


def test_an_expired_session_is_not_listed_shown_or_resumed(tmp_path: Path) -> None:
    env = _env(tmp_path)
    store_dir = tmp_path / "state" / "raw"
    with SessionStore.open(store_dir) as now:
        fresh = now.create(title="fresh")
    long_ago = datetime.now(UTC) - timedelta(days=40)
    with SessionStore.open(store_dir, clock=lambda: long_ago) as then:
        old = then.create(title="old")
        with then.open_writer(old.id) as writer:
            writer.append([UserMessage.from_text("said long ago")])
        expired_at = then.info(old.id).last_activity + timedelta(days=30)

    listed = raw("sessions", "list", "--json", env=env)
    assert listed.returncode == 0, listed.stderr
    assert [s["id"] for s in json.loads(listed.stdout)] == [fresh.id]

    shown = raw("sessions", "show", old.id, "--json", env=env)
    assert shown.returncode == 2, shown.stderr
    error = json.loads(shown.stdout)["error"]
    assert error["code"] == "session_expired"
    assert f"expired at {expired_at:%Y-%m-%d %H:%M:%S} UTC" in error["message"]
    text = raw("sessions", "show", old.id, env=env)
    assert text.returncode == 2
    assert f"session_expired: session {old.id} expired at {expired_at:%Y-%m-%d}" in text.stderr
    assert "Traceback" not in text.stderr

    recording = tmp_path / "replies.jsonl"
    recording.write_text(json.dumps({"text": "never sent"}) + "\n")
    config = tmp_path / "raw.json"
    config.write_text(
        json.dumps(
            {
                "models": {"recorded": {"provider": "replay", "model": str(recording)}},
                "agents": {"a": {"model": "recorded", "tools": {"use": []}}},
            }
        )
    )
    resumed = raw("sessions", "resume", old.id, "hello again", "--config", str(config), env=env)
    assert resumed.returncode == 2, resumed.stdout + resumed.stderr
    assert "session_expired" in resumed.stdout + resumed.stderr
    assert "Traceback" not in resumed.stderr

    # Resuming opened the store for writing: the expired session's data is gone now.
    gone = raw("sessions", "show", old.id, "--json", env=env)
    assert json.loads(gone.stdout)["error"]["code"] == "session_not_found"
    with SessionStore.open(store_dir, clock=lambda: long_ago) as then:
        assert [s.id for s in then.list_sessions()] == [fresh.id]


def test_the_session_commands_take_the_config_file_their_advice_names(tmp_path: Path) -> None:
    """In a folder whose raw.json is not trusted, raw advises ``--config``: every session
    command takes it, and reads the sessions settings of that file."""
    env = _env(tmp_path)
    store_dir = tmp_path / "state" / "raw"
    long_ago = datetime.now(UTC) - timedelta(days=40)
    with SessionStore.open(store_dir, clock=lambda: long_ago) as then:
        old = then.create(title="old")
    project = tmp_path / "project"
    project.mkdir()
    config = project / "raw.json"
    config.write_text(
        json.dumps({"sessions": {"expire_after_days": 60}, "agents": {"a": {"tools": {"use": []}}}})
    )

    def in_project(*args: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            [sys.executable, "-m", "raw_core", *args],
            env=env,
            cwd=project,
            capture_output=True,
            text=True,
            stdin=subprocess.DEVNULL,
            timeout=120,
        )

    refused = in_project("sessions", "list", "--json")
    assert refused.returncode == 2
    assert "--config" in refused.stdout + refused.stderr
    listed = in_project("sessions", "list", "--json", "--config", str(config))
    assert listed.returncode == 0, listed.stderr
    assert [s["id"] for s in json.loads(listed.stdout)] == [old.id]  # 40 days < 60
    shown = in_project("sessions", "show", old.id[:8], "--json", "--config", str(config))
    assert shown.returncode == 0, shown.stderr
    assert json.loads(shown.stdout)["items"] == []
    for command in (["panels", old.id], ["prune"], ["delete", old.id, "-y"]):
        done = in_project("sessions", *command, "--json", "--config", str(config))
        assert done.returncode == 0, (command, done.stderr)
    assert (
        json.loads(in_project("sessions", "list", "--json", "--config", str(config)).stdout) == []
    )


def test_an_expired_session_can_still_be_deleted_by_its_whole_id(tmp_path: Path) -> None:
    env = _env(tmp_path)
    store_dir = tmp_path / "state" / "raw"
    long_ago = datetime.now(UTC) - timedelta(days=40)
    with SessionStore.open(store_dir, clock=lambda: long_ago) as then:
        old = then.create(title="old")
    deleted = raw("sessions", "delete", old.id, "-y", "--json", env=env)
    assert deleted.returncode == 0, deleted.stdout + deleted.stderr
    assert json.loads(deleted.stdout) == {"deleted": old.id}
    with SessionStore.open(store_dir, clock=lambda: long_ago) as then:
        assert then.list_sessions() == ()
