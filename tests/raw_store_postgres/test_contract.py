"""The PostgreSQL backend passes the session backend contract (backend_contract.py), the
same tests the SQLite backend passes, against a real server.

Each backend the factory opens is a separate ``PostgresBackend`` on the same database, with
its own pool, listening connection and writer connections: another process in all but
name (tests/raw_store_postgres/test_processes.py runs real ones).
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from typing import Any

import pytest

from raw_core.sessions.backend import SessionBackend
from raw_store_postgres import PostgresBackend
from tests.contracts.backend_contract import BackendContract, BackendFactory


class TestPostgresBackend(BackendContract):
    @pytest.fixture
    async def backend_factory(self, postgres_dsn: str) -> AsyncIterator[BackendFactory]:
        opened: list[PostgresBackend] = []

        async def factory(**options: Any) -> SessionBackend:
            backend = await PostgresBackend.open(postgres_dsn, pool_size=2, **options)
            opened.append(backend)
            return backend

        yield factory
        for backend in opened:
            await backend.aclose()
