"""Interaction requests as stored requests: a tool's question, answered by whichever front
end answers first.

When a handler calls ``context.interactions.request(...)``
(:mod:`raw_core.tools.interactions`), the session's :class:`InteractionBroker` stores a
:class:`~raw_core.sessions.backend.PendingRequest` of kind ``interaction`` (what to show: the
tool, its panel, the form document; its deadline), writes it to the display history as a
:class:`~raw_core.sessions.backend.RequestEntry`, emits
:class:`~raw_core.runtime.events.InteractionRequested`, and waits for the first of:

* the session's own front end answering (:meth:`raw_core.runtime.frontend.FrontEnd.interact`;
  ``None`` from it means the person cancelled the form);
* any front end answering by id through the session service
  (:meth:`raw_core.app.App.answer_request`, which checks the values against the form
  first: an invalid answer is refused and the request stays pending);
* the deadline (``expired``: the call gets ``interaction_expired``);
* the call or its turn being cancelled (``cancelled``).

The end is written to the display history (a second entry: final state, who answered and
with what) and announced as :class:`~raw_core.runtime.events.InteractionEnded`. The model
reads only what the tool makes of the answer. :func:`interrupt_pending` ends the requests a
stopped raw left pending, when the session is opened again.
"""

from __future__ import annotations

import logging
from collections.abc import Awaitable, Callable
from datetime import UTC, datetime, timedelta
from typing import Any

import anyio

from raw_core.errors import AnswerInvalid, Cancelled, InteractionExpired
from raw_core.frozen import thaw
from raw_core.runtime.events import (
    ApprovalAnswered,
    InteractionEnded,
    InteractionRequested,
    LoopEvent,
)
from raw_core.runtime.frontend import FrontEnd
from raw_core.sessions.backend import (
    InteractionAnswer,
    PendingRequest,
    RequestEntry,
    SessionBackend,
    SessionWriter,
    new_request_id,
)
from raw_core.tools.interactions import InteractionRequest, check_answer

__all__ = ["InteractionBroker", "interrupt_pending"]

logger = logging.getLogger("raw_core.runtime")


def first_error(group: BaseExceptionGroup[Any]) -> BaseException:
    """The first exception in ``group``, however deeply nested (what a broker's wait
    raises when its task group ends in an error)."""
    first = group.exceptions[0]
    return first_error(first) if isinstance(first, BaseExceptionGroup) else first


def ignore_event(event: LoopEvent) -> None:
    """Where events go before the session sets the broker's emitter."""


def can_interact(front_end: FrontEnd) -> bool:
    """Whether ``front_end.interact`` can ask a person (``can_interact``; a front end
    written before interactions existed cannot)."""
    return getattr(front_end, "can_interact", False) is True


class InteractionBroker:
    """The interaction callback of one session's dispatcher (see the module docstring)."""

    def __init__(
        self,
        *,
        session_id: str,
        writer: SessionWriter,
        backend: SessionBackend,
        front_end: FrontEnd,
    ) -> None:
        self.session_id = session_id
        self._writer = writer
        self._backend = backend
        self._front_end = front_end
        self.emit: Callable[[LoopEvent], None] = ignore_event

    async def __call__(self, request: InteractionRequest) -> InteractionAnswer:
        """Store the request, wait for its first answer, record the end; the answer.
        Raises ``interaction_expired`` when the deadline passed and ``cancelled`` when the
        call or turn was cancelled or the person cancelled the form."""
        now = datetime.now(UTC)
        declaration = request.declaration
        record = PendingRequest(
            id=new_request_id(),
            session_id=self.session_id,
            kind="interaction",
            tool_call_id=request.tool_call_id,
            show={
                "identity": request.identity,
                "panel": request.panel,
                "title": declaration.title if declaration is not None else request.panel,
                "document": thaw(request.document),
            },
            created_at=now,
            deadline=now + timedelta(milliseconds=request.timeout_ms),
        )
        await self._writer.add_request(record)
        await self._writer.append([RequestEntry.of(record)])
        assert record.deadline is not None
        self.emit(
            InteractionRequested(
                request_id=record.id,
                tool_call_id=record.tool_call_id,
                identity=request.identity,
                panel=request.panel,
                document=record.show["document"],
                deadline=record.deadline.isoformat(),
            )
        )
        final = await until_ended(
            self._writer, record, self._first_answer(record, request), self.emit
        )
        if final.state == "answered" and isinstance(final.answer, InteractionAnswer):
            return final.answer
        if final.state == "expired":
            raise InteractionExpired(
                f"nobody answered {request.identity}'s question within"
                f" {request.timeout_ms / 1000:g} s",
                for_model="the user did not answer in time",
                request_id=record.id,
            )
        raise Cancelled(
            "the request was cancelled before it was answered",
            for_model="the user cancelled the question without answering",
        )

    async def _first_answer(
        self, record: PendingRequest, request: InteractionRequest
    ) -> PendingRequest:
        found: list[InteractionAnswer | PendingRequest | None] = []
        try:
            with anyio.move_on_after(request.timeout_ms / 1000):
                await self._race(record, request, found)
        except BaseExceptionGroup as group_error:
            raise first_error(group_error) from None
        stored = next((f for f in found if isinstance(f, PendingRequest)), None)
        if stored is not None:  # an answer given by id (or the request's end) stands
            return stored
        answer = next((f for f in found if isinstance(f, InteractionAnswer)), None)
        if answer is not None:
            return await self._writer.close_request(record.id, "answered", answer)
        if found:  # the person cancelled the form
            return await self._writer.close_request(record.id, "cancelled")
        return await self._writer.close_request(record.id, "expired")

    async def _race(
        self,
        record: PendingRequest,
        request: InteractionRequest,
        found: list[InteractionAnswer | PendingRequest | None],
    ) -> None:
        form = request.form
        front_end = self._front_end
        async with anyio.create_task_group() as group:

            async def ask_front_end() -> None:
                given = await front_end.interact(request)
                if given is None:
                    found.append(None)
                    group.cancel_scope.cancel()
                    return
                values = given.values if isinstance(given, InteractionAnswer) else given
                try:
                    checked = check_answer(form, values)
                except AnswerInvalid as error:  # keep waiting: another front end may answer
                    logger.warning("front end %s gave an invalid answer: %s", front_end.name, error)
                    return
                found.append(InteractionAnswer(values=checked, by=front_end.name))
                group.cancel_scope.cancel()

            async def wait_for_others() -> None:
                found.append(await self._backend.wait_for_answer(record.id))
                group.cancel_scope.cancel()

            if can_interact(front_end):
                group.start_soon(ask_front_end)
            group.start_soon(wait_for_others)


async def until_ended(
    writer: SessionWriter,
    record: PendingRequest,
    first_answer: Awaitable[PendingRequest],
    emit: Callable[[LoopEvent], None],
) -> PendingRequest:
    """The request ``record`` once ``first_answer`` has ended it, its end recorded
    (:func:`record_end`) whatever happens: when the call or turn is cancelled while it
    waits, it is closed as ``cancelled`` first. Both brokers wait for their answers here."""
    final: PendingRequest | None = None
    try:
        final = await first_answer
    finally:
        with anyio.CancelScope(shield=True):
            if final is None:  # cancelled while it waited
                final = await writer.close_request(record.id, "cancelled")
            await record_end(writer, final, emit)
    return final


async def record_end(
    writer: SessionWriter, final: PendingRequest, emit: Callable[[LoopEvent], None]
) -> None:
    """The display history's entry for a request's end, and the event announcing it."""
    await writer.append([RequestEntry.of(final)])
    answer = final.answer.to_dict() if final.answer is not None else None
    if final.kind == "interaction":
        emit(
            InteractionEnded(
                request_id=final.id,
                tool_call_id=final.tool_call_id,
                state=final.state,
                answer=answer,
            )
        )
    else:
        emit(
            ApprovalAnswered(
                request_id=final.id,
                tool_call_id=final.tool_call_id,
                state=final.state,
                answer=answer,
            )
        )


async def interrupt_pending(
    writer: SessionWriter, backend: SessionBackend, emit: Callable[[LoopEvent], None]
) -> dict[str, PendingRequest]:
    """End the requests a stopped raw left pending in the writer's session as
    ``interrupted`` (nobody else can be waiting for them: the caller holds the session's
    one writer), recording each end; the ended requests by their call's id."""
    ended: dict[str, PendingRequest] = {}
    for request in await backend.list_requests(writer.session_id, pending_only=True):
        final = await writer.close_request(request.id, "interrupted")
        await record_end(writer, final, emit)
        ended[final.tool_call_id] = final
    return ended
