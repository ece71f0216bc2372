"""The SQLite backend under anyio: a turn, writers waiting for each other, delete and prune."""

from __future__ import annotations

from collections.abc import AsyncIterator
from datetime import timedelta
from pathlib import Path

import anyio
import pytest

from raw_core.errors import SessionLocked, SessionNotFound
from raw_core.sessions.backend import SessionBackend, SessionState
from raw_core.sessions.sqlite import (
    AssistantMessage,
    Message,
    SessionStore,
    SqliteBackend,
    ToolCall,
    ToolResultMessage,
    UserMessage,
    VarPlaceholder,
)

# Here rather than in a conftest.py: tests/conftest.py exists, and mypy (which checks all
# of tests/ without package bases) refuses two modules named "conftest".


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


@pytest.fixture
async def store(tmp_path: Path) -> AsyncIterator[SqliteBackend]:
    async with await SqliteBackend.open(tmp_path / "state") as opened:
        yield opened


@pytest.mark.anyio
async def test_a_turn_through_the_async_api(store: SqliteBackend) -> None:
    assert isinstance(store, SessionBackend)
    assert store.name == "sqlite"
    session = await store.create(title="async", cwd="/work")
    assert session.cwd == "/work"
    turn: list[Message] = [
        UserMessage.from_text("what is the key?"),
        AssistantMessage(tool_calls=(ToolCall(id="c1", name="read_var", arguments="{}"),)),
        ToolResultMessage(tool_call_id="c1", status="ok", content=(VarPlaceholder(name="K"),)),
        AssistantMessage(text="It is set."),
    ]
    async with store.open_writer(session.id) as writer:
        assert writer.session_id == session.id
        await writer.append(turn[:2])
        await writer.append(turn[2:])
        await writer.end_turn()
        await writer.set_state(SessionState(title="renamed", cwd="/work"))
        assert await writer.read_context() == tuple(turn)
        await writer.compact(UserMessage.from_text("summary"), replace_first=3)
    assert await store.read_context(session.id) == (UserMessage.from_text("summary"), turn[3])
    page = await store.page(session.id, limit=3)
    assert [item.message for item in page.items] == turn[:3]
    rest = await store.page(session.id, page.next_cursor, limit=3)
    assert [item.message for item in rest.items] == turn[3:]
    assert (await store.page(session.id, await store.tail_cursor(session.id))).items == ()
    info = await store.info(session.id)
    assert (info.title, info.cwd) == ("renamed", "/work")
    assert [s.id for s in await store.list_sessions()] == [session.id]
    assert store.path == store.store.path


@pytest.mark.anyio
async def test_a_waiting_writer_gets_the_session_once_the_first_lets_go(
    store: SqliteBackend,
) -> None:
    session = await store.create()
    order: list[str] = []
    held, refused = anyio.Event(), anyio.Event()

    async def first() -> None:
        async with store.open_writer(session.id) as writer:
            order.append("first has it")
            held.set()
            await refused.wait()
            # The second now waits for the session; the loop keeps running meanwhile. The
            # order below is the lock's, whatever this pause lasts.
            await anyio.sleep(0.1)
            await writer.append([UserMessage.from_text("first")])
        order.append("first let go")

    async def second() -> None:
        await held.wait()
        with pytest.raises(SessionLocked):
            async with store.open_writer(session.id, wait=0):
                pass
        refused.set()
        async with store.open_writer(session.id, wait=60) as writer:
            order.append("second has it")
            await writer.append([UserMessage.from_text("second")])

    async with anyio.create_task_group() as group:
        group.start_soon(first)
        group.start_soon(second)
    assert order == ["first has it", "first let go", "second has it"]
    texts = [item.message for item in (await store.page(session.id)).items]
    assert texts == [UserMessage.from_text("first"), UserMessage.from_text("second")]


@pytest.mark.anyio
async def test_a_writer_waiting_too_long_is_locked_out(store: SqliteBackend) -> None:
    session = await store.create()
    async with store.open_writer(session.id):
        with anyio.fail_after(60):  # a bound on a hang: the wait itself is 0.1 s
            with pytest.raises(SessionLocked) as caught:
                async with store.open_writer(session.id, wait=0.1):
                    pass
        assert caught.value.code == "session_locked"
        with pytest.raises(SessionLocked):
            await store.delete(session.id, wait=0.05)


@pytest.mark.anyio
async def test_delete_and_prune(store: SqliteBackend) -> None:
    gone, idle = await store.create(), await store.create()
    await store.delete(gone.id)
    with pytest.raises(SessionNotFound) as caught:
        await store.page(gone.id)
    assert caught.value.code == "session_not_found"
    assert await store.prune(idle.last_activity + timedelta(days=29)) == ()
    assert await store.prune(idle.last_activity + timedelta(days=31)) == (idle.id,)
    assert await store.list_sessions() == ()


@pytest.mark.anyio
async def test_the_backend_runs_on_an_open_sync_store(tmp_path: Path) -> None:
    core = SessionStore.open(tmp_path / "state", any_thread=True)
    store = SqliteBackend(core)
    session = await store.create()
    assert core.info(session.id) == session
    await store.aclose()
    await store.aclose()  # idempotent
