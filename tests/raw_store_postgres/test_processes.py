"""Processes sharing one database: two writers of one session (one wins), a writer killed
while it holds the session (another takes over), and a reader in another process woken by
a commit (LISTEN/NOTIFY; it would otherwise look again only after 30 s)."""

from __future__ import annotations

import json
import selectors
import signal
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import anyio
import pytest

from raw_core.errors import SessionLocked
from raw_core.sessions.messages import UserMessage
from raw_store_postgres import PostgresBackend
from tests.conftest import Children

pytestmark = pytest.mark.anyio

PEER = Path(__file__).with_name("peer.py")
WAIT = 20.0  # seconds: a bound on what should happen at once, never a timing assumption


class Peers:
    """The peer processes of a test: killed at its end (through ``children``), their pipes
    closed."""

    def __init__(self, children: Children) -> None:
        self._children = children
        self._started: list[Any] = []

    def start(self, role: str, dsn: str, session_id: str, name: str = "") -> Any:
        process = start(self._children, role, dsn, session_id, name)
        self._started.append(process)
        return process

    def close(self) -> None:
        self._children.kill_all()
        for process in self._started:
            for stream in (process.stdin, process.stdout, process.stderr):
                stream.close()


@pytest.fixture
def peers(children: Children) -> Iterator[Peers]:
    started = Peers(children)
    try:
        yield started
    finally:
        started.close()


def start(children: Children, role: str, dsn: str, session_id: str, name: str = "") -> Any:
    return children.popen(
        [sys.executable, str(PEER), role, dsn, session_id, name or role],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        bufsize=1,
    )


def read_line(process: Any, timeout: float = WAIT) -> str:
    """The next line the process prints; fails (with its stderr) if none comes in time."""
    with selectors.DefaultSelector() as selector:
        selector.register(process.stdout, selectors.EVENT_READ)
        if not selector.select(timeout):
            process.kill()
            raise AssertionError(f"no line in {timeout} s; stderr: {process.stderr.read()}")
    line = str(process.stdout.readline())
    if not line:
        raise AssertionError(f"the process ended; stderr: {process.stderr.read()}")
    return line.strip()


def tell(process: Any) -> None:
    process.stdin.write("\n")
    process.stdin.flush()


def texts(page: Any) -> list[str]:
    return [item.message.content[0].text for item in page.items]


async def test_two_processes_writing_one_session_one_wins(postgres_dsn: str, peers: Peers) -> None:
    async with await PostgresBackend.open(postgres_dsn) as backend:
        session = await backend.create()
        writers = [peers.start("writer", postgres_dsn, session.id, f"w{i}") for i in (1, 2)]
        for writer in writers:
            assert read_line(writer) == "ready"
        for writer in writers:
            tell(writer)  # both try now
        results = [read_line(writer) for writer in writers]
        assert sorted(results) == ["got", "locked"]
        winner = writers[results.index("got")]
        tell(winner)
        assert read_line(winner) == "appended"
        name = f"w{results.index('got') + 1}"
        assert texts(await backend.page(session.id)) == [name]
        for writer in writers:
            writer.stdin.close()
            assert writer.wait(WAIT) == 0


async def test_a_killed_writer_lets_another_take_over(postgres_dsn: str, peers: Peers) -> None:
    async with await PostgresBackend.open(postgres_dsn) as backend:
        session = await backend.create()
        holder = peers.start("holder", postgres_dsn, session.id)
        assert read_line(holder) == "holding"
        with pytest.raises(SessionLocked):
            async with backend.open_writer(session.id, wait=0):
                pass
        holder.send_signal(signal.SIGKILL)
        holder.wait(WAIT)
        # The server ends the dead client's connection, and with it the lock.
        async with backend.open_writer(session.id, wait=WAIT) as writer:
            await writer.append([UserMessage.from_text("took over")])
        assert texts(await backend.page(session.id)) == ["took over"]


async def test_a_reader_in_another_process_is_woken_by_a_commit(
    postgres_dsn: str, peers: Peers
) -> None:
    async with await PostgresBackend.open(postgres_dsn) as backend:
        session = await backend.create()
        follower = peers.start("follower", postgres_dsn, session.id)
        assert read_line(follower) == "following"
        # Give it no help: the commit may come before or after it starts to wait.
        committed = time.monotonic()
        async with backend.open_writer(session.id) as writer:
            await writer.append([UserMessage.from_text("live")])
        line = await anyio.to_thread.run_sync(read_line, follower)
        woken_after = time.monotonic() - committed
        assert json.loads(line) == ["live"]
        assert woken_after < 15  # well before its 30 s safety look: a notification woke it
        assert follower.wait(WAIT) == 0
