"""The tables, in a schema whose name carries the layout's version.

Raw does not convert old session data. The layout's version is in the schema's name
(:data:`SCHEMA`, ``raw_sessions_v2``): a layout change gets a new schema name, created
fresh beside the old one, which is never touched again (an older raw keeps using it). The
schema's ``meta`` table says it is raw's and which layout it holds, so a schema of that name
made by someone else is ``store_corrupt`` and never adopted, and one a newer raw marked
with a higher layout is ``store_too_new``.

The first backend to open an empty database creates the schema, in one transaction under
a transaction-level advisory lock, so two processes starting at once do not race.
"""

from __future__ import annotations

from typing import Final, TypeAlias

import psycopg
from psycopg.rows import TupleRow

from raw_core.errors import StoreCorrupt, StoreTooNew, StoreUnavailable
from raw_store_postgres._errors import BACKEND, database_errors

__all__ = [
    "CHANNEL",
    "CONTEXT_KINDS_END",
    "KIND_MESSAGE",
    "KIND_MODEL_ONLY",
    "KIND_PANEL",
    "KIND_REQUEST",
    "KIND_TOOL_OUTPUT",
    "LAYOUT",
    "LOCK_SPACE",
    "SCHEMA",
    "Connection",
    "ensure_schema",
]

Connection: TypeAlias = psycopg.AsyncConnection[TupleRow]

LAYOUT: Final = 2
SCHEMA: Final = f"raw_sessions_v{LAYOUT}"
"""The schema of this layout; a layout an older raw cannot read gets a new name."""

CHANNEL: Final = SCHEMA
"""The LISTEN/NOTIFY channel: a commit notifies the id of the session (or request) it
changed, nothing else; a woken reader reads the tables."""

LOCK_SPACE: Final = 0x72617701
"""The first key of every advisory lock of this layout (``pg_advisory_lock(LOCK_SPACE,
session key)``), so raw's locks do not meet another application's."""
_SETUP_KEY: Final = 0  # no session has key 0: the lock that serialises creating the schema

# The row kinds of the entries table, as in raw's SQLite store. Kinds below
# CONTEXT_KINDS_END are in the model context; the others are display-only, so a
# display-only kind a later raw adds is no layout change: it never reaches the model of an
# older raw, which refuses it in a page as store_too_new (as the panel kind, added within
# layout 1, is refused by a raw that predates it).
KIND_MESSAGE: Final = 0
KIND_MODEL_ONLY: Final = 1
KIND_TOOL_OUTPUT: Final = 2
KIND_REQUEST: Final = 3
KIND_PANEL: Final = 4
CONTEXT_KINDS_END: Final = 2

# sessions: ``key`` is the session's small number (its advisory lock's second key and its
#   rows' owner), ``id`` the stable id callers use; ``state`` the runtime state as a JSON
#   object; the model context is the summary (``summary_*``) and then the context rows
#   from ``context_from`` on. ``writer_epoch`` counts the writers that opened the session,
#   so a writer that lost its connection can tell, once it has the lock again, whether
#   another writer came in between.
# entries: both streams, append-only, numbered per session from 1 (``seq``); paging is a
#   range scan of the primary key. ``format`` is the JSON form of ``body``.
# requests: pending requests (approvals and interactions); answering one is a
#   compare-and-set on ``state``.
# Deleting a session deletes its entries and requests (ON DELETE CASCADE).
_DDL: Final = (
    f"CREATE SCHEMA {SCHEMA}",
    f"CREATE TABLE {SCHEMA}.meta (key text PRIMARY KEY, value text NOT NULL)",
    f"""
    CREATE TABLE {SCHEMA}.sessions (
        key integer GENERATED ALWAYS AS IDENTITY (START WITH 1) PRIMARY KEY,
        id text NOT NULL UNIQUE,
        title text NOT NULL,
        cwd text,
        created_at timestamptz NOT NULL,
        last_activity timestamptz NOT NULL,
        state text NOT NULL DEFAULT '{{}}',
        context_from bigint NOT NULL DEFAULT 0,
        summary_format smallint,
        summary_body text,
        writer_epoch bigint NOT NULL DEFAULT 0,
        CHECK ((summary_format IS NULL) = (summary_body IS NULL))
    )
    """,
    f"CREATE INDEX sessions_by_activity ON {SCHEMA}.sessions (last_activity)",
    f"""
    CREATE TABLE {SCHEMA}.entries (
        session_key integer NOT NULL REFERENCES {SCHEMA}.sessions (key) ON DELETE CASCADE,
        seq bigint NOT NULL CHECK (seq > 0),
        created_at timestamptz NOT NULL,
        kind smallint NOT NULL,
        format smallint NOT NULL,
        body text NOT NULL,
        PRIMARY KEY (session_key, seq)
    )
    """,
    f"""
    CREATE TABLE {SCHEMA}.requests (
        id text PRIMARY KEY,
        session_key integer NOT NULL REFERENCES {SCHEMA}.sessions (key) ON DELETE CASCADE,
        added bigint GENERATED ALWAYS AS IDENTITY,
        kind text NOT NULL,
        tool_call_id text NOT NULL,
        show text NOT NULL,
        created_at timestamptz NOT NULL,
        deadline timestamptz,
        state text NOT NULL
            CHECK (state IN ('pending', 'approved', 'denied', 'answered', 'expired',
                'cancelled', 'interrupted')),
        answer text,
        answered_at timestamptz
    )
    """,
    f"CREATE INDEX requests_by_session ON {SCHEMA}.requests (session_key, added)",
    f"INSERT INTO {SCHEMA}.meta (key, value) VALUES ('made_by', 'raw'), ('layout', '{LAYOUT}')",
)


async def _layout(connection: Connection) -> int | None:
    """The layout the schema's meta table names; None when there is no such schema."""
    found = await connection.execute("SELECT 1 FROM pg_namespace WHERE nspname = %s", (SCHEMA,))
    if await found.fetchone() is None:
        return None
    marks: dict[object, object] = {}
    has_meta = await connection.execute(
        "SELECT 1 FROM pg_tables WHERE schemaname = %s AND tablename = 'meta'", (SCHEMA,)
    )
    if await has_meta.fetchone() is not None:
        rows = await connection.execute(f"SELECT key, value FROM {SCHEMA}.meta")
        marks = {row[0]: row[1] for row in await rows.fetchall()}
    if marks.get("made_by") != "raw" or not str(marks.get("layout", "")).isdigit():
        raise StoreCorrupt(
            f"expected raw's session tables in the schema {SCHEMA}, found a schema of that "
            "name that raw did not make; it is left untouched",
            backend=BACKEND,
            schema=SCHEMA,
        )
    return int(str(marks["layout"]))


async def ensure_schema(connection: Connection) -> None:
    """Check the schema of this layout, creating it when the database has none.

    ``store_corrupt`` for a schema of that name that is not raw's, ``store_too_new`` for
    one a newer raw marked; ``store_unavailable`` when it must be created and the role may
    not (``CREATE`` on the database is needed once)."""
    with database_errors(f"reading the schema {SCHEMA}"):
        layout = await _layout(connection)
    if layout is None:
        try:
            with database_errors(f"creating the schema {SCHEMA}"):
                async with connection.transaction():
                    await connection.execute(
                        "SELECT pg_advisory_xact_lock(%s, %s)", (LOCK_SPACE, _SETUP_KEY)
                    )
                    layout = await _layout(connection)  # another process may have made it
                    if layout is None:
                        for statement in _DDL:
                            await connection.execute(statement)
                        layout = LAYOUT
        except StoreUnavailable as exc:
            if exc.context.get("sqlstate") == "42501":  # insufficient_privilege
                raise StoreUnavailable(
                    f"the role may not create the schema {SCHEMA}: grant it CREATE on the "
                    "database once, or let an administrator open the backend first "
                    f"({exc.message})",
                    backend=BACKEND,
                    schema=SCHEMA,
                    cause="privilege",
                ) from None
            raise
    if layout > LAYOUT:
        raise StoreTooNew(
            f"the schema {SCHEMA} was marked by a newer raw (layout {layout}; this raw reads "
            f"layout {LAYOUT}); it is left untouched: upgrade raw to use it",
            backend=BACKEND,
            schema=SCHEMA,
        )
    if layout < LAYOUT:
        raise StoreCorrupt(
            f"expected layout {LAYOUT} in the schema {SCHEMA}, found layout {layout}",
            backend=BACKEND,
            schema=SCHEMA,
        )
