"""Opening the session backend a config names: raw's SQLite store, or a plug-in's.

A plug-in's factory is called as ``factory(options=..., expire_after_days=...,
resolve_var=...)``: ``resolve_var(name)`` reads a config variable (``vars``), so an option
such as a connection string can be ``{"var": "NAME"}`` instead of a value in the file."""

from __future__ import annotations

import os
from typing import TYPE_CHECKING

from raw_core.config import Config
from raw_core.errors import ConfigInvalid, RawError, StoreUnavailable
from raw_core.plugins import PluginHost
from raw_core.sessions.backend import SessionBackend, SessionBackendRecord

if TYPE_CHECKING:
    from raw_core.agent.variables import VarCache

__all__ = ["open_backend"]


async def open_backend(
    config: Config,
    host: PluginHost,
    store_dir: str | os.PathLike[str] | None,
    expire_after_days: float | None,
    *,
    var_cache: VarCache | None = None,
) -> SessionBackend:
    """The backend ``sessions.backend`` names (raw's SQLite store by default); the
    variables its options name are read through ``var_cache``."""
    from raw_core.sessions.sqlite import SQLITE_BACKEND, SqliteBackend

    sessions = config.sessions
    days = expire_after_days if expire_after_days is not None else sessions.expire_after_days
    if store_dir is not None:
        try:
            return await SqliteBackend.open(store_dir, expire_after_days=days)
        except OSError as exc:
            raise _unavailable("sqlite", exc) from exc
    chosen = sessions.backend
    records: dict[str, SessionBackendRecord] = {
        SQLITE_BACKEND.name: SQLITE_BACKEND,
        **host.session_backends(),
    }
    record = records.get(chosen.type)
    if record is None:
        known = ", ".join(sorted(records))
        raise ConfigInvalid(
            f"no session backend is named {chosen.type!r} (available: {known})",
            field="$.sessions.backend.type",
        )
    if record.validate_config is not None:
        record.validate_config(chosen.options, "$.sessions.backend")
    from raw_core.agent.variables import VarService

    variables = VarService(config.vars, (), base_dir=config.directory, cache=var_cache)
    try:
        return await record.factory(
            options=chosen.options, expire_after_days=days, resolve_var=variables.read_defined
        )
    except RawError:
        raise
    except OSError as exc:
        raise _unavailable(chosen.type, exc) from exc
    except Exception as exc:
        raise ConfigInvalid(
            f"session backend {chosen.type!r} failed to open: {type(exc).__name__}: {exc}",
            field="$.sessions.backend",
        ) from exc


def _unavailable(backend: str, error: OSError) -> StoreUnavailable:
    """``store_unavailable`` for the store's location failing (a folder that is a file, a
    database file that is a folder, no permission), naming the path: it is where the
    store lives, not the config, that is at fault."""
    where = error.filename
    reason = error.strerror or type(error).__name__
    message = f"the session store cannot be opened: {reason}"
    context: dict[str, str] = {"backend": backend}
    if where is not None:
        message += f": {where}"
        context["path"] = str(where)
    return StoreUnavailable(message, **context)
