"""Naming a session on the command line: its full id, a unique prefix of it, or ``--last``
(the session with the most recent activity)."""

from __future__ import annotations

from typing import Any

from raw_core.errors import SessionNotFound, UsageInvalid

__all__ = ["resolve_session_id"]

FULL_ID_LENGTH = 32  # a session id: 32 lowercase hex digits


async def resolve_session_id(app: Any, given: str | None, *, last: bool = False) -> str:
    """The full id ``given`` names (itself, or the one session whose id starts with it), or
    the most recent session with ``last``. ``session_not_found`` when none matches, when
    the prefix matches more than one, or when there is no session to take as the last;
    ``usage_invalid`` when neither or both of an id and ``last`` are given."""
    if last:
        if given is not None:
            raise UsageInvalid("give a session id or --last, not both", field="session_id")
        newest = await app.list_sessions(limit=1)
        if not newest:
            raise SessionNotFound("there is no session yet to resume with --last")
        return str(newest[0].id)
    if given is None:
        raise UsageInvalid(
            "give a session id (or a unique prefix of one), or --last", field="session_id"
        )
    if len(given) == FULL_ID_LENGTH:  # a whole id: the command meets its own errors
        return given
    found = [info.id for info in await app.list_sessions() if info.id.startswith(given)]
    if len(found) == 1:
        return str(found[0])
    if not found:
        raise SessionNotFound(
            f"no session has the id {given!r} or an id starting with it",
            session_id=given,
        )
    shown = ", ".join(sorted(found)[:5])
    raise SessionNotFound(
        f"{len(found)} sessions have an id starting with {given!r} ({shown}): give more of the id",
        session_id=given,
    )
