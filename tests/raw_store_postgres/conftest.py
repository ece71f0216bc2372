"""One throwaway PostgreSQL server for the whole test session, a fresh database per test.

The server (``raw_store_postgres.testing.ThrowawayServer``) runs from Debian's binaries in
a temporary folder, as an unprivileged account when the tests run as root, on a free
loopback port with its socket in that folder; it is stopped at the end of the session.
Where PostgreSQL is not installed the tests skip, and under CI they fail (``.ci/run``
installs it).
"""

from __future__ import annotations

import itertools
from collections.abc import Iterator

import pytest

from raw_store_postgres.testing import ThrowawayServer, find_binaries
from tests.conftest import missing_prerequisite

_numbers = itertools.count(1)


@pytest.fixture(scope="session")
def postgres_server() -> Iterator[ThrowawayServer]:
    """The session's server (durability across a power loss is not tested: no fsync)."""
    if find_binaries() is None:
        missing_prerequisite(
            "PostgreSQL's initdb and pg_ctl are not installed (Debian: apt-get install postgresql)"
        )
    server = ThrowawayServer.start(settings={"fsync": "off"})
    try:
        yield server
    finally:
        server.stop()


@pytest.fixture
def postgres_dsn(postgres_server: ThrowawayServer) -> Iterator[str]:
    """A new, empty database for the test; dropped after it."""
    with postgres_server.database(f"raw_test_{next(_numbers)}") as dsn:
        yield dsn


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"  # psycopg's async API is asyncio code
