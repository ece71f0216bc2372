"""A lone call through the session service (:func:`call_one`) and what it needs beside
the dispatcher: the front end's answers as approval and interaction callbacks (nothing is
stored: a lone call has no session), the checking of answers given by id, and the result
as the model would receive it."""

from __future__ import annotations

import os
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, Final

import anyio
import anyio.lowlevel
import attrs

from raw_core.errors import (
    AnswerInvalid,
    ApprovalDenied,
    Cancelled,
    InvalidArguments,
    RawError,
    ToolUnknown,
)
from raw_core.runtime.frontend import CallbackFrontEnd, FrontEnd
from raw_core.runtime.interactions import can_interact
from raw_core.sessions.backend import ApprovalAnswer, InteractionAnswer, PendingRequest
from raw_core.sessions.blocks import ContentBlock, TextBlock, VarPlaceholder
from raw_core.tools.calls import ToolCall
from raw_core.tools.interactions import InteractionRequest, check_answer, form_of
from raw_core.tools.resources import SessionResources
from raw_core.tools.results import ToolResult

if TYPE_CHECKING:
    from raw_core.agent import Agent
    from raw_core.plugins import PluginHost

__all__ = ["approval_of", "call_one", "checked_answer", "interactions_of", "with_values"]


def with_values(result: ToolResult, agent: Agent) -> ToolResult:
    """``result`` with each variable placeholder replaced by the variable's value (or a
    note saying why it is not available), in both its model and its full content."""

    def fill(blocks: tuple[ContentBlock, ...]) -> tuple[ContentBlock, ...]:
        filled: list[ContentBlock] = []
        for block in blocks:
            if not isinstance(block, VarPlaceholder):
                filled.append(block)
                continue
            try:
                value = agent.vars.read(block.name)
            except RawError as exc:
                value = f"[the value of {block.name} is not available: {exc.code}]"
            filled.append(TextBlock(text=value))
        return tuple(filled)

    if not any(isinstance(block, VarPlaceholder) for block in result.full_content):
        return result
    return attrs.evolve(
        result, content=fill(result.content), full_content=fill(result.full_content)
    )


def approval_of(front_end: FrontEnd) -> Any:
    """A lone call's approval callback: the front end, when it can ask."""
    if not front_end.can_approve:
        return None

    async def approve(request: Any) -> bool:
        answer = await front_end.approve(request)
        if isinstance(answer, ApprovalAnswer):
            if not answer.approved and answer.message:
                raise ApprovalDenied(
                    f"{request.identity} was declined by {answer.by}: {answer.message}",
                    for_model=f"the user declined this call: {answer.message}",
                    tool=request.identity,
                )
            return answer.approved
        return answer is True

    return approve


MAX_ASKS: Final = 3
"""How many times a lone call asks its front end before an invalid answer ends it."""


def interactions_of(front_end: FrontEnd) -> Any:
    """A lone call's interaction callback: the front end, when it can ask (nothing is
    stored, and the request's deadline bounds the wait).

    No other front end can answer a lone call by id, so an invalid answer is not kept
    pending until the deadline: the front end is asked again, :data:`MAX_ASKS` times in
    all, and then the call ends ``answer_invalid`` with the last answer's errors. Each ask
    lets the event loop run first, so the deadline and a cancellation are delivered even
    to a front end that answers without waiting."""
    if not can_interact(front_end):
        return None

    async def interact(request: InteractionRequest) -> InteractionAnswer:
        from raw_core.errors import InteractionExpired

        with anyio.move_on_after(request.timeout_ms / 1000) as scope:
            for ask in range(1, MAX_ASKS + 1):
                await anyio.lowlevel.checkpoint()
                given = await front_end.interact(request)
                if given is None:
                    raise Cancelled(
                        "the request was cancelled before it was answered",
                        for_model="the user cancelled the question without answering",
                    )
                values = given.values if isinstance(given, InteractionAnswer) else given
                try:
                    return InteractionAnswer(
                        values=check_answer(request.form, values), by=front_end.name
                    )
                except AnswerInvalid as error:
                    if ask == MAX_ASKS:
                        error.message = (
                            f"{front_end.name} answered {request.identity}'s question"
                            f" {MAX_ASKS} times with values that do not fit its form: "
                            + error.message
                        )
                        error.args = (error.message,)
                        raise
                    # ask again: nothing is stored, so no other front end can answer
        assert scope.cancelled_caught
        raise InteractionExpired(
            f"nobody answered {request.identity}'s question in time",
            for_model="the user did not answer in time",
        )

    return interact


def checked_answer(
    request: PendingRequest,
    *,
    approved: bool | None,
    values: Any,
    by: str,
    message: str | None,
) -> ApprovalAnswer | InteractionAnswer:
    """The answer to ``request`` from what a front end gave by id: ``approved`` (and a
    ``message``) for an approval, ``values`` for an interaction, checked against its form.
    ``answer_invalid`` (the request stays pending) for values that do not fit, or an
    answer of the other kind."""
    if request.kind == "interaction":
        if approved is not None or values is None:
            raise AnswerInvalid(
                f"expected values for interaction request {request.id}, found an approval",
                field="$.values",
                errors=[{"field": "$.values", "message": "expected the form's values"}],
                request_id=request.id,
            )
        form = form_of(request.show["document"])
        return InteractionAnswer(values=check_answer(form, values), by=by)
    if approved is None or values is not None:
        raise AnswerInvalid(
            f"expected approved (true or false) for approval request {request.id}",
            field="$.approved",
            errors=[{"field": "$.approved", "message": "expected true or false"}],
            request_id=request.id,
        )
    return ApprovalAnswer(approved=approved, by=by, message=message)


def check_cancellable(request: PendingRequest) -> None:
    """``answer_invalid`` (the request stays pending) unless ``request`` is an interaction:
    an approval is declined with ``approved=false``, never cancelled by id."""
    if request.kind != "interaction":
        raise AnswerInvalid(
            f"expected an interaction request to cancel, found approval request {request.id}:"
            " decline it with approved=false instead",
            field="$.approved",
            errors=[{"field": "$.approved", "message": "expected true or false"}],
            request_id=request.id,
        )


async def call_one(
    loaded: Agent,
    host: PluginHost,
    identity: str,
    arguments: str | Mapping[str, Any],
    *,
    front_end: FrontEnd | None,
    cwd: str | os.PathLike[str] | None,
    max_output_bytes: int | None,
) -> ToolResult:
    """One call of ``identity`` through agent ``loaded``'s dispatcher, as
    :meth:`raw_core.app.App.call_tool` runs it: ``front_end`` approves and answers (none:
    one that cannot ask), nothing is stored, nothing the call started outlives it, and
    the result is what the model would receive."""
    front_end = front_end if front_end is not None else CallbackFrontEnd()
    tool = next((t for t in loaded.registry if t.identity == identity), None)
    if tool is None:
        return ToolResult.from_error(
            ToolUnknown(f"{identity} is not selected by agent {loaded.name!r}", tool=identity)
        )
    # The call is the whole runtime: what its tool keeps (a process) ends with it.
    resources = SessionResources()
    dispatcher = loaded.dispatcher(
        host=host,
        approval=approval_of(front_end),
        cwd=cwd,
        max_output_bytes=max_output_bytes,
        resources=resources,
        interactions=interactions_of(front_end),
    )
    try:
        call = (
            ToolCall(id="call_1", name=tool.name, arguments=arguments)
            if isinstance(arguments, str)
            else ToolCall.with_arguments(id="call_1", name=tool.name, arguments=arguments)
        )
    except InvalidArguments as error:
        return ToolResult.from_error(error)
    try:
        result = await dispatcher.dispatch(call)
    finally:
        await resources.aclose()
    return with_values(result, loaded)
