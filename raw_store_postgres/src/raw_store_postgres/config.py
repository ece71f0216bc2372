"""The ``sessions.backend`` options of the PostgreSQL backend, and its backend record.

``{"type": "postgres", "dsn": {"env": "NAME"} | {"var": "NAME"}, "pool_size": 4,
"statement_timeout_ms": 30000, "connect_timeout_ms": 10000}``: only ``dsn`` is required.
The connection string may hold a password, so it is never written in the config itself:
it comes from an environment variable or a config variable (``vars``, which must define
it: checked when the config is loaded), read when the backend is opened. Every key is
checked; an unknown one is ``config_invalid`` naming it.

This module imports nothing of psycopg (the plug-in is loaded at every start of raw).
"""

from __future__ import annotations

import json
import os
from collections.abc import Callable, Mapping
from typing import TYPE_CHECKING, Any, Final

import attrs

from raw_core.errors import ConfigInvalid, VarNotSelected
from raw_core.sessions.backend import SessionBackendRecord

if TYPE_CHECKING:
    from raw_store_postgres.backend import PostgresBackend

__all__ = [
    "POSTGRES_BACKEND",
    "PostgresOptions",
    "parse_options",
    "read_variables",
    "resolve_dsn",
    "validate_config",
]

_LIMITS: Final = {
    "pool_size": (1, 100, "connections"),
    "statement_timeout_ms": (1, 3_600_000, "milliseconds"),
    "connect_timeout_ms": (1_000, 600_000, "milliseconds"),
}
_DEFAULTS: Final = {"pool_size": 4, "statement_timeout_ms": 30_000, "connect_timeout_ms": 10_000}
_KEYS: Final = ("dsn", *_LIMITS)


@attrs.frozen(kw_only=True)
class PostgresOptions:
    """The checked options: where the connection string comes from (``dsn_env`` or
    ``dsn_var``, exactly one) and the numbers."""

    dsn_env: str | None = None
    dsn_var: str | None = None
    pool_size: int = 4
    statement_timeout_ms: int = 30_000
    connect_timeout_ms: int = 10_000


def _kind(value: Any) -> str:
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "a boolean"
    if isinstance(value, int | float):
        return f"the number {value!r}"
    if isinstance(value, str):
        return "a string"
    if isinstance(value, Mapping):
        return "an object"
    if isinstance(value, list | tuple):
        return "an array"
    return type(value).__name__


def _dsn_source(value: Any, field: str) -> tuple[str | None, str | None]:
    if isinstance(value, str):
        raise ConfigInvalid(
            'expected {"env": "NAME"} or {"var": "NAME"}, found a string: the connection '
            "string may hold a password, so it is read from the environment or a variable,"
            " never written in the config",
            field=field,
        )
    if not isinstance(value, Mapping) or len(value) != 1 or next(iter(value)) not in ("env", "var"):
        found = _kind(value)
        if isinstance(value, Mapping) and value:
            keys = ", ".join(json.dumps(str(key), ensure_ascii=False) for key in sorted(value))
            found = f"an object with the keys {keys}"
        elif isinstance(value, Mapping):
            found = "an empty object"
        raise ConfigInvalid(
            f'expected {{"env": "NAME"}} or {{"var": "NAME"}} (exactly one key), found {found}',
            field=field,
        )
    ((key, name),) = value.items()
    if not isinstance(name, str) or not name:
        raise ConfigInvalid(
            f"expected the name of {'an environment variable' if key == 'env' else 'a variable'}"
            f" as a non-empty string, found {_kind(name) if name != '' else 'an empty string'}",
            field=f"{field}.{key}",
        )
    return (name, None) if key == "env" else (None, name)


def parse_options(options: Mapping[str, Any], field: str = "$.sessions.backend") -> PostgresOptions:
    """The checked options of ``sessions.backend`` (``type`` is the section's own key);
    ``config_invalid`` naming the first bad field below ``field``."""
    for key in options:
        if key != "type" and key not in _KEYS:
            raise ConfigInvalid(
                f"unknown option {key!r} of the postgres session backend (it takes: "
                f"{', '.join(_KEYS)})",
                field=f"{field}.{key}",
            )
    if "dsn" not in options:
        raise ConfigInvalid(
            'expected "dsn": {"env": "NAME"} or {"var": "NAME"}, naming where the connection'
            " string comes from",
            field=f"{field}.dsn",
        )
    env, var = _dsn_source(options["dsn"], f"{field}.dsn")
    numbers: dict[str, int] = {}
    for key, (low, high, unit) in _LIMITS.items():
        value = options.get(key, _DEFAULTS[key])
        if isinstance(value, bool) or not isinstance(value, int) or not low <= value <= high:
            raise ConfigInvalid(
                f"expected an integer from {low:,} to {high:,} ({unit}), found {_kind(value)}",
                field=f"{field}.{key}",
            )
        numbers[key] = value
    return PostgresOptions(dsn_env=env, dsn_var=var, **numbers)


def validate_config(options: Mapping[str, Any], field: str) -> None:
    """The record's validator: :func:`parse_options`, keeping nothing."""
    parse_options(options, field)


def read_variables(options: Mapping[str, Any], field: str) -> dict[str, str]:
    """The record's ``variables``: the config variable the (valid) options read the
    connection string from, by its field, so that raw checks it is defined in ``vars``."""
    var = parse_options(options, field).dsn_var
    return {f"{field}.dsn.var": var} if var is not None else {}


def resolve_dsn(
    options: PostgresOptions,
    *,
    resolve_var: Callable[[str], str] | None,
    environ: Mapping[str, str] = os.environ,
    field: str = "$.sessions.backend.dsn",
) -> str:
    """The connection string, read now; ``config_invalid`` when it is unset or empty (its
    value never appears in an error)."""
    if options.dsn_env is not None:
        value = environ.get(options.dsn_env, "")
        if not value:
            raise ConfigInvalid(
                "the postgres session backend takes its connection string from the "
                f"environment variable {options.dsn_env}, which is not set",
                field=f"{field}.env",
                env=options.dsn_env,
            )
        return value
    assert options.dsn_var is not None
    if resolve_var is None:
        raise ConfigInvalid(
            f"the postgres session backend takes its connection string from the variable "
            f"{options.dsn_var}, and no variable resolver was given",
            field=f"{field}.var",
            var=options.dsn_var,
        )
    try:
        value = resolve_var(options.dsn_var)
    except VarNotSelected:
        raise ConfigInvalid(
            f"variable {options.dsn_var!r} is not defined in vars",
            field=f"{field}.var",
            var=options.dsn_var,
        ) from None
    if not value:
        raise ConfigInvalid(
            f"the variable {options.dsn_var} holding the connection string is empty",
            field=f"{field}.var",
            var=options.dsn_var,
        )
    return value


async def open_backend(
    *,
    options: Mapping[str, Any],
    expire_after_days: float,
    resolve_var: Callable[[str], str] | None = None,
    **_: Any,
) -> PostgresBackend:
    """The record's factory: check the options, read the connection string, connect."""
    parsed = parse_options(options)
    dsn = resolve_dsn(parsed, resolve_var=resolve_var)
    from raw_store_postgres.backend import PostgresBackend

    return await PostgresBackend.open(
        dsn,
        expire_after_days=expire_after_days,
        pool_size=parsed.pool_size,
        statement_timeout=parsed.statement_timeout_ms / 1000,
        connect_timeout=parsed.connect_timeout_ms / 1000,
    )


POSTGRES_BACKEND: Final = SessionBackendRecord(
    name="postgres",
    factory=open_backend,
    validate_config=validate_config,
    variables=read_variables,
)
"""The backend record the ``postgres`` plug-in registers."""
