"""The ``postgres`` plug-in: the only module of this distribution with hook implementations.

Importing it imports no psycopg, nor raw's session records: the backend record is imported
when the session backends are first asked for, and its factory imports the backend when a
config selects it, so ``raw --help`` and plug-in discovery stay fast.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from raw_core.plugins.hookspecs import hookimpl

if TYPE_CHECKING:
    from raw_core.sessions.backend import SessionBackendRecord

__all__ = ["raw_register_session_backends"]


@hookimpl
def raw_register_session_backends() -> list[SessionBackendRecord]:
    """``postgres``: sessions in a PostgreSQL database (``sessions.backend`` =
    ``{"type": "postgres", "dsn": {"env": "NAME"}}``). Its record is imported here, when
    the session backends are first asked for: a command that opens no session store never
    imports raw's session records."""
    from raw_store_postgres.config import POSTGRES_BACKEND

    return [POSTGRES_BACKEND]
