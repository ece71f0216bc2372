"""A session's runtime state: one JSON object in ``sessions.state``, typed as
:class:`~raw_core.sessions.backend.SessionState` together with the ``title`` and ``cwd`` columns.

The object's keys are ``tools`` (model-facing tool name -> digest: the
``tool_digests``), ``cache_key``, ``skills_seen`` and ``panels`` (``[[identity, panel id],
...]``): they are read with their types checked, and written exactly.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from raw_core.errors import StoreCorrupt
from raw_core.sessions.backend import SessionState
from raw_core.sessions.sqlite.entries import dumps_json

__all__ = ["state_dict", "state_from_row", "typed_state_text"]


def _corrupt(path: Path, session_id: str, problem: str) -> StoreCorrupt:
    return StoreCorrupt(
        f"the state of session {session_id} cannot be read: {problem}",
        path=str(path),
        session_id=session_id,
    )


def state_dict(text: str, path: Path, session_id: str) -> dict[str, Any]:
    """The stored object; :class:`StoreCorrupt` when it is not one."""
    try:
        value = json.loads(text)
    except ValueError as exc:
        raise _corrupt(path, session_id, str(exc)) from exc
    if not isinstance(value, dict):
        raise _corrupt(path, session_id, f"expected an object, found {type(value).__name__}")
    return value


def _string_map(value: Any, key: str, path: Path, session_id: str) -> dict[str, str]:
    if not isinstance(value, dict) or not all(
        isinstance(k, str) and isinstance(v, str) for k, v in value.items()
    ):
        raise _corrupt(path, session_id, f"expected {key} to map names to strings")
    return value


def state_from_row(
    title: str, cwd: str | None, text: str, path: Path, session_id: str
) -> SessionState:
    """The typed state of a sessions row."""
    data = state_dict(text, path, session_id)
    tools = data.get("tools")
    cache_key = data.get("cache_key")
    if cache_key is not None and not isinstance(cache_key, str):
        raise _corrupt(path, session_id, "expected cache_key to be a string")
    panels = data.get("panels", [])
    if not isinstance(panels, list) or not all(
        isinstance(p, list) and len(p) == 2 and all(isinstance(x, str) for x in p) for p in panels
    ):
        raise _corrupt(path, session_id, "expected panels to be a list of [identity, panel id]")
    return SessionState(
        title=title,
        cwd=cwd,
        tool_digests=None if tools is None else _string_map(tools, "tools", path, session_id),
        cache_key=cache_key,
        skills_seen=_string_map(data.get("skills_seen", {}), "skills_seen", path, session_id),
        panels=tuple((identity, panel) for identity, panel in panels),
    )


def typed_state_text(state: SessionState) -> str:
    """The JSON object of a typed state (its title and cwd go to their own columns)."""
    data: dict[str, Any] = {}
    if state.tool_digests is not None:
        data["tools"] = dict(state.tool_digests)
    if state.cache_key is not None:
        data["cache_key"] = state.cache_key
    if state.skills_seen:
        data["skills_seen"] = dict(state.skills_seen)
    if state.panels:
        data["panels"] = [list(key) for key in state.panels]
    return dumps_json(data)
