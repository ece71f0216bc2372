"""Raw's SQLite backend as a backend record: the ``sessions.backend`` options it takes
(``directory``) and the factory the session service opens it with."""

from __future__ import annotations

import json
import os
from collections.abc import Callable, Mapping
from typing import Any, Final

from raw_core._convert import json_kind
from raw_core.errors import ConfigInvalid
from raw_core.sessions.backend import SessionBackendRecord
from raw_core.sessions.sqlite.backend import SqliteBackend
from raw_core.sessions.sqlite.store import DEFAULT_EXPIRE_AFTER_DAYS

__all__ = ["SQLITE_BACKEND", "validate_config"]


def validate_config(options: Mapping[str, Any], field: str) -> None:
    """Check the ``sessions.backend`` options of the SQLite backend: only ``directory``, an
    absolute path or one starting with ``~`` (``type`` is the section's own key). The
    config makes the same checks when it is loaded
    (:func:`raw_core.config._checks.sqlite_problems`), so that ``raw config validate``
    reports what opening the backend would refuse."""
    for key, value in options.items():
        if key == "type":
            continue
        if key != "directory":
            raise ConfigInvalid(
                "unknown field (the sqlite backend takes: directory)", field=f"{field}.{key}"
            )
        if not isinstance(value, str) or not value:
            kind = "an empty string" if value == "" else json_kind(value)
            raise ConfigInvalid(
                f"expected the folder of the session store as a non-empty string, found {kind}",
                field=f"{field}.directory",
            )
        if not os.path.isabs(os.path.expanduser(value)):
            raise ConfigInvalid(
                "expected an absolute folder (or one starting with ~), found"
                f" {json.dumps(value, ensure_ascii=False)}",
                field=f"{field}.directory",
            )


def _directory(options: Mapping[str, Any]) -> str | None:
    directory = options.get("directory")
    return None if directory is None else os.path.expanduser(directory)


async def _open_backend(
    *,
    options: Mapping[str, Any],
    expire_after_days: float = DEFAULT_EXPIRE_AFTER_DAYS,
    resolve_var: Callable[[str], str] | None = None,
    **_: Any,
) -> SqliteBackend:
    """The record's factory: the backend in ``options["directory"]`` or the default one
    (SQLite reads no variable)."""
    return await SqliteBackend.open(_directory(options), expire_after_days=expire_after_days)


SQLITE_BACKEND: Final = SessionBackendRecord(
    name="sqlite", factory=_open_backend, validate_config=validate_config
)
"""Raw's own session backend, as a plug-in would register one."""
