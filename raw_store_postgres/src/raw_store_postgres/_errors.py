"""What a failure of the server or the connection becomes: a raw error with a stable code.

Every database call of this backend runs inside :func:`database_errors`, which turns
psycopg's exceptions into :class:`~raw_core.errors.StoreError` subclasses:

* a statement the server cancelled (``statement_timeout``) — ``store_unavailable`` with
  ``cause: "statement_timeout"``; the statement was rolled back;
* a connection that broke or could not be made (the server restarting or unreachable, a
  connection terminated, the pool exhausted) — ``store_unavailable`` with ``cause:
  "connection"``; the next operation opens a new one;
* a full disk on the server — ``storage_full``;
* anything else the server refused — ``store_unavailable`` with the server's SQLSTATE.

The message names what the server said, never the connection string (it may hold a
password).
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from typing import Final

import psycopg
import psycopg.errors

from raw_core.errors import StorageFull, StoreUnavailable

__all__ = ["BACKEND", "database_errors", "first_line"]

BACKEND: Final = "postgres"
"""The ``backend`` every error of this package names in its context."""


def first_line(exc: BaseException) -> str:
    """The first line of what psycopg (the server) said, or the exception's type."""
    text = str(exc).strip()
    return text.splitlines()[0] if text else type(exc).__name__


@contextmanager
def database_errors(doing: str) -> Iterator[None]:
    """Turn psycopg's exceptions raised while ``doing`` (``"appending to session x"``)
    into raw errors with stable codes."""
    try:
        yield
    except psycopg.errors.QueryCanceled as exc:
        raise StoreUnavailable(
            f"the PostgreSQL server cancelled {doing}: {first_line(exc)} (the statement was "
            "rolled back; raise statement_timeout_ms if the server is merely slow)",
            backend=BACKEND,
            cause="statement_timeout",
            sqlstate=exc.sqlstate,
        ) from None
    except psycopg.errors.DiskFull as exc:
        raise StorageFull(
            f"the PostgreSQL server's disk is full while {doing}: {first_line(exc)} "
            "(the statement was rolled back)",
            backend=BACKEND,
            sqlstate=exc.sqlstate,
        ) from None
    except (psycopg.OperationalError, psycopg.InterfaceError) as exc:
        raise StoreUnavailable(
            f"lost the PostgreSQL server while {doing}: {first_line(exc)} (what was "
            "committed before is kept; the next operation reconnects)",
            backend=BACKEND,
            cause="connection",
            sqlstate=getattr(exc, "sqlstate", None),
        ) from None
    except psycopg.Error as exc:
        raise StoreUnavailable(
            f"the PostgreSQL server refused {doing}: {first_line(exc)}",
            backend=BACKEND,
            cause="server",
            sqlstate=exc.sqlstate,
        ) from None
