"""The SQLite backend passes the session backend contract (backend_contract.py).

Each backend the factory opens is a separate ``SqliteBackend`` on the same folder, with
its own connections: to SQLite and the lock files, another process in all but name.
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest

from raw_core.sessions.backend import SessionBackend
from raw_core.sessions.sqlite import SqliteBackend
from tests.contracts.backend_contract import BackendContract, BackendFactory


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


class TestSqliteBackend(BackendContract):
    @pytest.fixture
    async def backend_factory(self, tmp_path: Path) -> AsyncIterator[BackendFactory]:
        opened: list[SqliteBackend] = []

        async def factory(**options: Any) -> SessionBackend:
            backend = await SqliteBackend.open(tmp_path / "state", **options)
            opened.append(backend)
            return backend

        yield factory
        for backend in opened:
            await backend.aclose()
