"""The ``postgres`` plug-in: the only module of this distribution with hook implementations.

Importing it imports no psycopg: the backend record's factory imports the backend when a
config selects it, so ``raw --help`` and plug-in discovery stay fast.
"""

from __future__ import annotations

from raw_core.plugins.hookspecs import hookimpl
from raw_core.sessions.backend import SessionBackendRecord
from raw_store_postgres.config import POSTGRES_BACKEND

__all__ = ["raw_register_session_backends"]


@hookimpl
def raw_register_session_backends() -> list[SessionBackendRecord]:
    """``postgres``: sessions in a PostgreSQL database (``sessions.backend`` =
    ``{"type": "postgres", "dsn": {"env": "NAME"}}``)."""
    return [POSTGRES_BACKEND]
