"""The session service's reads (and deletions) of stored sessions: what a front end lists,
pages and follows. Each asks the session backend and nothing else: no agent is loaded and
no runtime made, so a command that only lists sessions starts fast."""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from datetime import datetime

    from raw_core.sessions.backend import (
        DisplayPage,
        PendingRequest,
        SessionBackend,
        SessionInfo,
    )

__all__ = ["StoreReads"]


class StoreReads:
    """The part of :class:`~raw_core.app.App` that reads the store; :meth:`backend` is
    the App's (the backend, opened on first use)."""

    async def backend(self) -> SessionBackend:
        """The session backend (see :meth:`raw_core.app.App.backend`)."""
        raise NotImplementedError

    async def pending_requests(self, session_id: str) -> tuple[PendingRequest, ...]:
        """The session's requests that wait for an answer (approvals and interactions,
        each with its id, kind, what to show and deadline), oldest first."""
        return await (await self.backend()).list_requests(session_id, pending_only=True)

    async def list_sessions(self, *, limit: int | None = None) -> tuple[SessionInfo, ...]:
        """Sessions, most recent activity first."""
        return await (await self.backend()).list_sessions(limit=limit)

    async def session_info(self, session_id: str) -> SessionInfo:
        """One session's title, times and working directory."""
        return await (await self.backend()).info(session_id)

    async def page(
        self,
        session_id: str,
        cursor: str | None = None,
        *,
        limit: int = 100,
        newest_first: bool = False,
    ) -> DisplayPage:
        """A page of the session's display history (what the user saw)."""
        return await (await self.backend()).page(
            session_id, cursor, limit=limit, newest_first=newest_first
        )

    async def tail_cursor(self, session_id: str) -> str:
        """A cursor after the session's last item: :meth:`follow` from it gets only what
        comes next (show the newest page, then follow the live session)."""
        return await (await self.backend()).tail_cursor(session_id)

    async def follow(self, session_id: str, cursor: str, *, limit: int = 100) -> DisplayPage:
        """The next page after ``cursor`` as soon as the session grows (a turn another front
        end runs, in this process or another); bound it with ``anyio.move_on_after``."""
        return await (await self.backend()).wait_for_items(session_id, cursor, limit=limit)

    async def delete_session(self, session_id: str) -> None:
        """Delete a session and its history; ``session_locked`` while it is open."""
        await (await self.backend()).delete(session_id)

    async def prune(self, now: datetime | None = None) -> tuple[str, ...]:
        """Delete the expired sessions; their ids."""
        return await (await self.backend()).prune(now)
