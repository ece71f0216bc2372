"""The schema's name carries the layout's version: raw makes its own schema, never adopts
or converts another one, and refuses one a newer raw marked, leaving each untouched."""

from __future__ import annotations

import pytest

from raw_core.errors import StoreCorrupt, StoreTooNew
from raw_store_postgres import PostgresBackend
from raw_store_postgres.testing import ThrowawayServer

pytestmark = pytest.mark.anyio


def dbname(dsn: str) -> str:
    return dsn.rsplit("dbname=", 1)[1]


async def test_an_older_layout_is_left_as_it_is(
    postgres_server: ThrowawayServer, postgres_dsn: str
) -> None:
    db = dbname(postgres_dsn)
    postgres_server.psql(
        "CREATE SCHEMA raw_sessions_v0; CREATE TABLE raw_sessions_v0.sessions (id text);"
        " INSERT INTO raw_sessions_v0.sessions VALUES ('old')",
        dbname=db,
    )
    async with await PostgresBackend.open(postgres_dsn) as backend:
        await backend.create(title="new")
        assert [s.title for s in await backend.list_sessions()] == ["new"]
    assert postgres_server.psql("SELECT id FROM raw_sessions_v0.sessions", dbname=db) == "old"
    tables = postgres_server.psql(
        "SELECT table_name FROM information_schema.tables WHERE table_schema = 'raw_sessions_v0'",
        dbname=db,
    )
    assert tables == "sessions"


async def test_a_schema_of_that_name_raw_did_not_make_is_store_corrupt(
    postgres_server: ThrowawayServer, postgres_dsn: str
) -> None:
    db = dbname(postgres_dsn)
    postgres_server.psql(
        "CREATE SCHEMA raw_sessions_v2; CREATE TABLE raw_sessions_v2.notes (line text)",
        dbname=db,
    )
    with pytest.raises(StoreCorrupt) as raised:
        await PostgresBackend.open(postgres_dsn)
    assert raised.value.code == "store_corrupt"
    listed = postgres_server.psql(
        "SELECT table_name FROM information_schema.tables WHERE table_schema = 'raw_sessions_v2'",
        dbname=db,
    )
    assert listed == "notes"


async def test_a_schema_a_newer_raw_marked_is_store_too_new(
    postgres_server: ThrowawayServer, postgres_dsn: str
) -> None:
    async with await PostgresBackend.open(postgres_dsn):
        pass
    db = dbname(postgres_dsn)
    postgres_server.psql("UPDATE raw_sessions_v2.meta SET value = '3' WHERE key = 'layout'", db)
    with pytest.raises(StoreTooNew) as raised:
        await PostgresBackend.open(postgres_dsn)
    assert raised.value.code == "store_too_new"
    assert (
        postgres_server.psql("SELECT value FROM raw_sessions_v2.meta WHERE key = 'layout'", db)
        == "3"
    )


async def test_two_backends_opening_an_empty_database_at_once_make_one_schema(
    postgres_dsn: str,
) -> None:
    import anyio

    opened: list[PostgresBackend] = []

    async def open_one() -> None:
        opened.append(await PostgresBackend.open(postgres_dsn))

    async with anyio.create_task_group() as group:
        for _ in range(3):
            group.start_soon(open_one)
    for backend in opened:
        await backend.aclose()
    assert len(opened) == 3
