"""Faults of the server and the connection: each ends the operation with a clear code,
loses no committed message, and the next operation reconnects.

* a statement the server cancels (``statement_timeout``, here behind a table lock);
* a writer's connection dropped (terminated by the server) — and a writer that lost its
  connection while another writer came and went, which must not write on;
* every pooled and listening connection dropped at once;
* the server restarted, as after a crash, in the middle of a turn (a tool of the turn
  restarts it): what the turn committed before is there, and the same session goes on.
"""

from __future__ import annotations

import json
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import anyio
import psycopg
import pytest

from raw_core import Reply, ScriptedProvider
from raw_core.app import App
from raw_core.errors import SessionLocked, StoreUnavailable
from raw_core.plugins import PluginHost
from raw_core.sessions.backend import DisplayPage
from raw_core.sessions.messages import AssistantMessage, UserMessage
from raw_store_postgres import PostgresBackend
from raw_store_postgres import plugin as postgres_plugin
from raw_store_postgres.testing import ThrowawayServer

pytestmark = pytest.mark.anyio

WAIT = 20.0


def user(text: str) -> UserMessage:
    return UserMessage.from_text(text)


def texts(page: DisplayPage) -> list[str]:
    found: list[str] = []
    for item in page.items:
        message = item.message
        if isinstance(message, AssistantMessage):
            found.append(message.text or ",".join(call.name for call in message.tool_calls))
        elif isinstance(message, UserMessage):
            found.append(message.content[0].text)  # type: ignore[union-attr]
        else:
            found.append(item.kind)
    return found


@pytest.fixture
async def backend(postgres_dsn: str) -> AsyncIterator[PostgresBackend]:
    async with await PostgresBackend.open(
        postgres_dsn, statement_timeout=0.5, connect_timeout=5
    ) as opened:
        yield opened


async def test_a_statement_timeout_is_store_unavailable_and_loses_nothing(
    backend: PostgresBackend, postgres_dsn: str
) -> None:
    session = await backend.create()
    async with backend.open_writer(session.id) as writer:
        await writer.append([user("before")])
        async with await psycopg.AsyncConnection.connect(postgres_dsn) as blocker:
            await blocker.execute("LOCK TABLE raw_sessions_v2.sessions IN ACCESS EXCLUSIVE MODE")
            with anyio.fail_after(WAIT), pytest.raises(StoreUnavailable) as raised:
                await writer.append([user("blocked")])
            await blocker.rollback()
        assert raised.value.code == "store_unavailable"
        assert raised.value.context["cause"] == "statement_timeout"
        assert "statement_timeout" in raised.value.message
        await writer.append([user("after")])  # the same connection goes on
    assert texts(await backend.page(session.id)) == ["before", "after"]


async def terminate(dsn: str, where: str) -> int:
    """End the server backends ``where`` picks (in the test's database); how many."""
    async with await psycopg.AsyncConnection.connect(dsn, autocommit=True) as admin:
        found = await admin.execute(
            "SELECT count(pg_terminate_backend(pid)) FROM pg_stat_activity WHERE datname ="
            f" current_database() AND pid <> pg_backend_pid() AND {where}"
        )
        row = await found.fetchone()
    assert row is not None
    return int(row[0])


async def test_a_dropped_writer_connection_fails_one_operation_then_reconnects(
    backend: PostgresBackend, postgres_dsn: str
) -> None:
    session = await backend.create()
    async with backend.open_writer(session.id) as writer:
        await writer.append([user("one")])
        pid = writer.connection.info.backend_pid
        assert await terminate(postgres_dsn, f"pid = {pid}") == 1
        with pytest.raises(StoreUnavailable) as raised:
            await writer.append([user("lost with the connection")])
        assert raised.value.context["cause"] == "connection"
        await writer.append([user("three")])  # a new connection, the lock taken again
        assert writer.connection.info.backend_pid != pid
        with pytest.raises(SessionLocked):  # and it is held again
            async with backend.open_writer(session.id, wait=0):
                pass
    assert texts(await backend.page(session.id)) == ["one", "three"]


async def test_a_writer_that_lost_its_connection_while_another_wrote_stops(
    backend: PostgresBackend, postgres_dsn: str
) -> None:
    session = await backend.create()
    async with backend.open_writer(session.id) as writer:
        await writer.append([user("first writer")])
        pid = writer.connection.info.backend_pid
        await terminate(postgres_dsn, f"pid = {pid}")
        async with (
            await PostgresBackend.open(postgres_dsn) as other,
            other.open_writer(session.id, wait=WAIT) as second,
        ):
            await second.append([user("second writer")])
        with pytest.raises(StoreUnavailable):  # this writer finds its connection gone
            await writer.append([user("stale")])
        # The lock is free again, but another writer has been in between: refused.
        with pytest.raises(SessionLocked) as raised:
            await writer.append([user("stale")])
        assert "another writer opened it" in raised.value.message
    assert texts(await backend.page(session.id)) == ["first writer", "second writer"]


async def listening(dsn: str) -> None:
    """Until a connection of the test's database listens (the server says so)."""
    async with await psycopg.AsyncConnection.connect(dsn, autocommit=True) as admin:
        with anyio.fail_after(WAIT):
            while True:
                found = await admin.execute(
                    "SELECT count(*) FROM pg_stat_activity WHERE datname = current_database()"
                    " AND query LIKE 'LISTEN %'"
                )
                row = await found.fetchone()
                if row is not None and row[0] > 0:
                    return
                await anyio.sleep(0.01)


async def test_pooled_and_listening_connections_dropped_are_replaced(
    backend: PostgresBackend, postgres_dsn: str
) -> None:
    session = await backend.create()
    tail = await backend.tail_cursor(session.id)
    async with anyio.create_task_group() as group:
        seen: list[list[str]] = []

        async def follow() -> None:
            with anyio.fail_after(WAIT):
                seen.append(texts(await backend.wait_for_items(session.id, tail)))

        group.start_soon(follow)
        await listening(postgres_dsn)  # the follower's connection is there: drop it too
        assert await terminate(postgres_dsn, "application_name = 'raw'") >= 1
        assert [s.id for s in await backend.list_sessions()] == [session.id]  # no error
        async with (
            await PostgresBackend.open(postgres_dsn) as elsewhere,
            elsewhere.open_writer(session.id) as writer,
        ):
            await writer.append([user("after the drop")])
    assert seen == [["after the drop"]]


# --- a server restart in the middle of a turn ------------------------------------------------

RESTART_TOOL = """
from pathlib import Path
from raw_store_postgres.testing import ThrowawayServer

SERVER = ThrowawayServer(Path({binaries!r}), Path({folder!r}), {port!r}, {settings!r})


def handler(args, context):
    SERVER.restart("immediate")  # as after a crash: no shutdown checkpoint
    return {{"content": [{{"type": "text", "text": "restarted"}}]}}
"""


def write_project(root: Path, server: ThrowawayServer, dsn_env: str) -> Path:
    tool = root / "tools" / "restart"
    tool.mkdir(parents=True)
    manifest = {
        "api_version": 2,
        "id": "restart",
        "version": "1.0.0",
        "name": "restart",
        "description": "Restart the database server.",
        "input_schema": {"type": "object", "properties": {}, "additionalProperties": False},
        "entry": "./tool.py",
    }
    (tool / "tool.json").write_text(json.dumps(manifest))
    (tool / "tool.py").write_text(
        RESTART_TOOL.format(
            binaries=str(server.binaries),
            folder=str(server.folder),
            port=server.port,
            settings={"fsync": "off"},
        )
    )
    config: dict[str, Any] = {
        "agents": {"a": {"tools": {"use": ["agent/restart"]}}},
        "sessions": {"backend": {"type": "postgres", "dsn": {"env": dsn_env}}},
    }
    (root / "raw.json").write_text(json.dumps(config))
    return root / "raw.json"


async def test_a_server_restart_mid_turn_loses_nothing_committed(
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    postgres_server: ThrowawayServer,
    postgres_dsn: str,
) -> None:
    monkeypatch.setenv("RAW_TEST_PG_DSN", postgres_dsn)
    path = write_project(tmp_path, postgres_server, "RAW_TEST_PG_DSN")
    host = PluginHost()
    host.register(postgres_plugin, name="postgres")
    model = ScriptedProvider(
        [Reply(tool_calls=(("restart", {}),)), Reply(text="the server is back")]
    )
    async with App.open(path, host=host, provider=model) as app:
        async with app.open_session() as session:
            ended = await session.run_turn("restart the database")
            # The call's result could not be committed: the turn ends with the code.
            assert ended.reason == "error"
            assert ended.error is not None
            assert ended.error["code"] == "store_unavailable"
            async with await PostgresBackend.open(postgres_dsn) as reader:
                assert texts(await reader.page(session.id)) == [
                    "restart the database",
                    "restart",
                ]
            again = await session.run_turn("go on")  # the same writer reconnects
            assert again.reason == "completed"
        async with await PostgresBackend.open(postgres_dsn) as reader:
            assert texts(await reader.page(session.id)) == [
                "restart the database",
                "restart",
                "go on",
                "the server is back",
            ]
