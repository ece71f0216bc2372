"""Approvals as stored requests: one record per ask, answered by whichever front end
answers first.

When a rule or hook asks about a call (dispatch step 6), the session's
:class:`ApprovalBroker` stores a :class:`~raw_core.sessions.backend.PendingRequest` (its id, what
to show, its deadline), emits :class:`~raw_core.runtime.events.ApprovalRequested`, and then waits
for the first of:

* the session's own front end answering (:meth:`raw_core.runtime.frontend.FrontEnd.approve`);
* any front end answering by id through the session service
  (:meth:`raw_core.app.App.answer_request`), in this process or another one;
* the deadline (when the front end cannot ask: ``approval_wait`` seconds), after which the
  request is ``expired`` and the call ends as ``approval_unavailable``;
* the call being cancelled (the request is then ``cancelled``).

The request is written to the display history as a
:class:`~raw_core.sessions.backend.RequestEntry` when it opens (what is asked: the identity, the
name, the original arguments and the intended effects apart) and again when it ends (its final
state, who answered, and the message of a person who declined), and its end is announced as
:class:`~raw_core.runtime.events.ApprovalAnswered`. The model context is not touched: the model
reads only the call's result — a declined call's result carries the person's message.
"""

from __future__ import annotations

from collections.abc import Callable
from datetime import UTC, datetime, timedelta

import anyio

from raw_core.errors import ApprovalDenied, ApprovalUnavailable, Cancelled
from raw_core.frozen import thaw
from raw_core.runtime.events import ApprovalRequested, LoopEvent
from raw_core.runtime.frontend import FrontEnd
from raw_core.runtime.interactions import first_error, ignore_event, until_ended
from raw_core.sessions.backend import (
    ApprovalAnswer,
    PendingRequest,
    RequestEntry,
    RequestState,
    SessionBackend,
    SessionWriter,
    new_request_id,
)
from raw_core.tools.calls import ApprovalRequest

__all__ = ["ApprovalBroker"]


class ApprovalBroker:
    """The approval callback of one session's dispatcher (see the module docstring)."""

    def __init__(
        self,
        *,
        session_id: str,
        writer: SessionWriter,
        backend: SessionBackend,
        front_end: FrontEnd,
        wait: float,
    ) -> None:
        self.session_id = session_id
        self._writer = writer
        self._backend = backend
        self._front_end = front_end
        self._wait = wait
        self.emit: Callable[[LoopEvent], None] = ignore_event

    async def __call__(self, request: ApprovalRequest) -> bool:
        """Store the request, wait for its first answer, record the outcome; True when
        approved. Raises ``approval_unavailable`` when it expired unanswered and
        ``cancelled`` when the call was cancelled meanwhile."""
        now = datetime.now(UTC)
        asks = self._front_end.can_approve
        record = PendingRequest(
            id=new_request_id(),
            session_id=self.session_id,
            kind="approval",
            tool_call_id=request.tool_call_id,
            show={
                "identity": request.identity,
                "name": request.name,
                "arguments": thaw(request.arguments),
                "effects": thaw(request.effects),
                "reason": request.reason,
            },
            created_at=now,
            deadline=None if asks else now + timedelta(seconds=self._wait),
        )
        await self._writer.add_request(record)
        await self._writer.append([RequestEntry.of(record)])
        self.emit(
            ApprovalRequested(
                request_id=record.id,
                tool_call_id=record.tool_call_id,
                identity=request.identity,
                name=request.name,
                arguments=record.show["arguments"],
                effects=record.show["effects"],
                reason=request.reason,
                deadline=record.deadline.isoformat() if record.deadline is not None else None,
            )
        )
        final = await until_ended(
            self._writer, record, self._first_answer(record, request), self.emit
        )
        if final.state == "approved":
            return True
        if final.state == "denied":
            answer = final.answer
            said = answer.message if isinstance(answer, ApprovalAnswer) and answer.message else None
            by = f" by {answer.by}" if answer is not None else ""
            # What the user wrote when declining was written for the model: it reaches it.
            raise ApprovalDenied(
                f"{request.identity} was declined{by}" + (f": {said}" if said else ""),
                for_model="the user declined this call" + (f": {said}" if said else ""),
                tool=request.identity,
            )
        if final.state == "cancelled":
            raise Cancelled("the call was cancelled while it waited for approval")
        raise ApprovalUnavailable(
            f"{request.identity} needs approval and nobody answered within {self._wait:g} s",
            tool=request.identity,
        )

    async def _first_answer(
        self, record: PendingRequest, request: ApprovalRequest
    ) -> PendingRequest:
        """Race the front end against answers given by id; close the request with the
        winner (a stored answer always wins over a later one)."""
        answer: ApprovalAnswer | None = None
        stored: PendingRequest | None = None
        answers: list[ApprovalAnswer | PendingRequest] = []
        try:
            await self._race(record, request, answers)
        except BaseExceptionGroup as group_error:
            # A front end's failure surfaces as itself, not wrapped in the group.
            raise first_error(group_error) from None
        for found in answers:
            if isinstance(found, PendingRequest):
                stored = found
            else:
                answer = found
        if stored is not None:
            return stored
        state: RequestState = "expired"
        if answer is not None:
            state = "approved" if answer.approved else "denied"
        return await self._writer.close_request(record.id, state, answer)

    async def _race(
        self,
        record: PendingRequest,
        request: ApprovalRequest,
        answers: list[ApprovalAnswer | PendingRequest],
    ) -> None:
        """Wait for the first of the front end's answer and an answer given by id (or the
        deadline); put what came in ``answers``."""
        async with anyio.create_task_group() as group:

            async def ask_front_end() -> None:
                given = await self._front_end.approve(request)
                answers.append(
                    given
                    if isinstance(given, ApprovalAnswer)
                    else ApprovalAnswer(approved=given is True, by=self._front_end.name)
                )
                group.cancel_scope.cancel()

            async def wait_for_others() -> None:
                answers.append(await self._backend.wait_for_answer(record.id))
                group.cancel_scope.cancel()

            if self._front_end.can_approve:
                group.start_soon(ask_front_end)
            else:
                group.cancel_scope.deadline = anyio.current_time() + self._wait
            group.start_soon(wait_for_others)
