"""raw's session backend on PostgreSQL (psycopg 3), shipped as the plug-in ``postgres``.

``sessions.backend`` = ``{"type": "postgres", "dsn": {"env": "NAME"}}`` (or ``{"var":
"NAME"}``) selects it; see docs/scale-out.md. Importing the package imports nothing of
psycopg: its names are loaded when first used, so plug-in discovery stays fast.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

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


def __getattr__(name: str) -> Any:
    module = _EXPORTS.get(name)
    if module is None:
        raise AttributeError(f"module 'raw_store_postgres' has no attribute {name!r}")
    value = getattr(importlib.import_module(module), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted([*globals(), *_EXPORTS])


__all__ = [
    "DEFAULT_EXPIRE_AFTER_DAYS",
    "POSTGRES_BACKEND",
    "PostgresBackend",
    "PostgresOptions",
    "PostgresWriter",
    "parse_options",
    "validate_config",
]
