"""The per-session flock: exclusive across open files, safe when its file is removed."""

from __future__ import annotations

import fcntl
import os
from pathlib import Path
from typing import Any

import pytest

from raw_core.errors import SessionLocked
from raw_core.sessions.sqlite._lock import SessionLock, acquire


def test_two_holders_in_one_process_exclude_each_other(tmp_path: Path) -> None:
    path = tmp_path / "s.lock"
    first = SessionLock.try_acquire(path)
    assert first is not None
    assert SessionLock.try_acquire(path) is None
    with pytest.raises(SessionLocked, match="session abc"):
        acquire(path, session_id="abc", wait=0.05)
    first.release()
    first.release()
    second = SessionLock.try_acquire(path)
    assert second is not None
    second.release(remove_file=True)
    assert not path.exists()


def test_a_lock_whose_file_was_removed_meanwhile_is_taken_again_on_the_new_file(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    path = tmp_path / "s.lock"
    real_flock = fcntl.flock
    calls: list[int] = []

    def flock_after_removal(fd: int, operation: int) -> Any:
        calls.append(fd)
        if len(calls) == 1:  # the holder removed the file and released it just now
            path.unlink()
            path.touch()
        return real_flock(fd, operation)

    monkeypatch.setattr(fcntl, "flock", flock_after_removal)
    lock = SessionLock.try_acquire(path)
    assert lock is not None
    assert len(calls) == 2
    assert lock._fd is not None
    assert os.fstat(lock._fd).st_ino == path.stat().st_ino
    lock.release()
