"""raw's session backend on PostgreSQL (psycopg 3), shipped as the plug-in ``postgres``.

``sessions.backend`` = ``{"type": "postgres", "dsn": {"env": "NAME"}}`` (or ``{"var":
"NAME"}``) selects it; see docs/scale-out.md. Importing the package imports nothing of
psycopg: its names are loaded when first used, so plug-in discovery stays fast.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from raw_core import lazy_exports

if TYPE_CHECKING:
    from raw_store_postgres.backend import DEFAULT_EXPIRE_AFTER_DAYS, PostgresBackend
    from raw_store_postgres.config import (
        POSTGRES_BACKEND,
        PostgresOptions,
        parse_options,
        validate_config,
    )
    from raw_store_postgres.writer import PostgresWriter

_EXPORTS: dict[str, str] = {
    "DEFAULT_EXPIRE_AFTER_DAYS": "raw_store_postgres.backend",
    "POSTGRES_BACKEND": "raw_store_postgres.config",
    "PostgresBackend": "raw_store_postgres.backend",
    "PostgresOptions": "raw_store_postgres.config",
    "PostgresWriter": "raw_store_postgres.writer",
    "parse_options": "raw_store_postgres.config",
    "validate_config": "raw_store_postgres.config",
}


# Hidden from the type checker, which would otherwise take any name as existing here: the
# imports above give every public name its real type, and a misspelt one stays an error.
if not TYPE_CHECKING:
    __getattr__, __dir__ = lazy_exports(globals(), _EXPORTS)


__all__ = [
    "DEFAULT_EXPIRE_AFTER_DAYS",
    "POSTGRES_BACKEND",
    "PostgresBackend",
    "PostgresOptions",
    "PostgresWriter",
    "parse_options",
    "validate_config",
]
