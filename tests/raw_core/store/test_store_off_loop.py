"""What can wait long never runs on the event loop: while it waits, other tasks run.

Each test makes the operation wait for something only another task on the loop can give
(a lock held by a connection of the loop's thread, an fsync or a read that waits for a
threading event): run on the loop, it would wait for itself and fail after the bound.
"""

from __future__ import annotations

import os
import sqlite3
import threading
from collections.abc import AsyncIterator, Callable
from contextlib import closing
from pathlib import Path
from typing import Any

import anyio
import pytest

from raw_core.sessions.sqlite import SqliteBackend, UserMessage
from raw_core.sessions.sqlite.reader import SessionReader

WAIT = 10.0


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


@pytest.fixture
async def backend(tmp_path: Path) -> AsyncIterator[SqliteBackend]:
    async with await SqliteBackend.open(tmp_path / "state", busy_timeout=WAIT) as opened:
        yield opened


async def until(condition: Callable[[], bool]) -> None:
    """Until ``condition()``, a state of a worker thread no anyio event can tell."""
    while not condition():  # noqa: ASYNC110
        await anyio.sleep(0.001)


class Hold:
    """Makes a function wait, in whichever thread calls it, until the loop lets it go."""

    def __init__(self) -> None:
        self.entered = threading.Event()
        self.released = threading.Event()
        self.threads: list[int] = []

    def wrap(self, function: Callable[..., Any]) -> Callable[..., Any]:
        def held(*args: Any, **kwargs: Any) -> Any:
            self.threads.append(threading.get_ident())
            self.entered.set()
            if not self.released.wait(WAIT):
                raise AssertionError("the event loop never ran while this waited")
            return function(*args, **kwargs)

        return held

    async def release_once_entered(self) -> None:
        await until(self.entered.is_set)
        self.released.set()


@pytest.mark.anyio
async def test_a_commit_that_meets_another_write_lock_waits_off_the_loop(
    backend: SqliteBackend,
) -> None:
    session = await backend.create()
    with closing(sqlite3.connect(backend.path, isolation_level=None)) as other:
        async with backend.open_writer(session.id) as writer:
            other.execute("BEGIN IMMEDIATE")  # another process's write transaction
            with anyio.fail_after(WAIT):
                async with anyio.create_task_group() as group:
                    group.start_soon(writer.append, [UserMessage.from_text("waited")])
                    # The append failed at once inline and now waits in a worker thread;
                    # only then can this task run and let the other transaction end.
                    await until(lambda: writer._connection.gate.away is not None)
                    other.execute("COMMIT")
    page = await backend.page(session.id)
    assert [item.message for item in page.items] == [UserMessage.from_text("waited")]


@pytest.mark.anyio
async def test_end_turn_syncs_off_the_loop(
    backend: SqliteBackend, monkeypatch: pytest.MonkeyPatch
) -> None:
    session = await backend.create()
    hold = Hold()
    async with backend.open_writer(session.id) as writer:
        await writer.append([UserMessage.from_text("a turn")])
        monkeypatch.setattr("raw_core.sessions.sqlite._durability.os.fsync", hold.wrap(os.fsync))
        with anyio.fail_after(WAIT):
            async with anyio.create_task_group() as group:
                group.start_soon(writer.end_turn)
                await hold.release_once_entered()
    assert hold.threads
    assert threading.get_ident() not in hold.threads


@pytest.mark.anyio
@pytest.mark.parametrize("method", ["page_display", "read_context"])
async def test_reading_a_deep_session_runs_off_the_loop(
    backend: SqliteBackend, monkeypatch: pytest.MonkeyPatch, method: str
) -> None:
    session = await backend.create()
    await _fill(backend, session.id, 20_000)
    hold = Hold()
    monkeypatch.setattr(SessionReader, method, hold.wrap(getattr(SessionReader, method)))
    results: list[int] = []

    async def read() -> None:
        if method == "page_display":
            results.append(len((await backend.page(session.id, limit=10_000)).items))
        else:
            results.append(len(await backend.read_context(session.id)))

    with anyio.fail_after(WAIT):
        async with anyio.create_task_group() as group:
            group.start_soon(read)
            await hold.release_once_entered()
    assert results == [10_000 if method == "page_display" else 20_000]


async def _fill(backend: SqliteBackend, session_id: str, count: int) -> None:
    async with backend.open_writer(session_id) as writer:
        await writer.append([UserMessage.from_text(f"m{i}") for i in range(count)])
