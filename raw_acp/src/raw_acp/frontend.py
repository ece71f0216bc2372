"""The ACP client as a raw front end: a turn's events become ``session/update``s, an ask
becomes ``session/request_permission``, a tool's question (an interaction request) a form
``elicitation/create`` when the client offers it, an ``acp_plan`` panel a ``plan``.

Events arrive synchronously on the event loop, and the protocol's updates are sent
asynchronously, in order: each update goes into the connection's :class:`Outbox`, one
task sends them one after the other, and whoever needs the client to have seen every
update so far (an approval, the end of a turn) waits for the outbox to drain first.
"""

from __future__ import annotations

import logging
from collections.abc import Awaitable, Callable, Mapping
from typing import Any

import anyio
import anyio.abc
import attrs
from acp.schema import (
    AgentMessageChunk,
    ElicitationFormSessionMode,
    PermissionOption,
    SessionNotification,
    TextContentBlock,
)
from acp.utils import serialize_params

from raw_acp import elicitation, updates
from raw_core import (
    ApprovalAnswer,
    ApprovalRequest,
    BaseFrontEnd,
    InteractionRequest,
    PanelUpdate,
    thaw,
)
from raw_core.errors import AnswerInvalid, ApprovalUnavailable, InteractionUnavailable
from raw_core.runtime.events import LoopEvent, TextDelta, ToolCallFinished, ToolCallStarted
from raw_core.tools.interactions import check_answer

__all__ = ["ALLOW", "MAX_ASKS", "MAX_JOINED", "REJECT", "AcpFrontEnd", "Outbox"]

logger = logging.getLogger("raw_acp")

ALLOW = "allow_once"
"""The option id of "allow once" in a permission request."""
REJECT = "reject_once"
"""The option id of "reject once"."""

MAX_ASKS = 3
"""How many times one question is put to the client when its answers do not fit."""

MAX_JOINED = 2048
"""The most text (characters) queued fragments are joined into, in one update."""

_OPTIONS = [
    PermissionOption(option_id=ALLOW, name="Allow once", kind="allow_once"),
    PermissionOption(option_id=REJECT, name="Reject once", kind="reject_once"),
]


@attrs.frozen
class _Text:
    """Streamed text of one session, not yet sent."""

    session_id: str
    text: str


class Outbox:
    """The connection's ordered queue of session updates, and the one task that sends
    them (:meth:`run`, in the server's task group).

    Text that arrives while the previous update is still being sent is joined into one
    ``agent_message_chunk`` of up to :data:`MAX_JOINED` characters: a fast model's stream
    then costs fewer messages, and the client reads the same text in the same order.

    With ``send`` (the wire's message writer) each update is written as a
    ``session/update`` notification straight to the wire: the SDK's connection refuses
    to send anything once the input has ended, yet the requests read before the end are
    still answered, and each update of such a request must reach the client before its
    answer. Without it (a client object in process) ``client.session_update`` is called.
    """

    def __init__(
        self, client: Any, send: Callable[[dict[str, Any]], Awaitable[None]] | None = None
    ) -> None:
        self._client = client
        self._send_message = send
        self._send, self._receive = anyio.create_memory_object_stream[
            tuple[str, Any] | _Text | anyio.Event
        ](float("inf"))
        self.sent = 0

    def put(self, session_id: str, update: Any) -> None:
        """Queue one update of ``session_id``."""
        self._send.send_nowait((session_id, update))

    def put_text(self, session_id: str, text: str) -> None:
        """Queue a fragment of the assistant's text."""
        self._send.send_nowait(_Text(session_id, text))

    async def drain(self) -> None:
        """Wait until every update queued so far was sent (or failed to be)."""
        done = anyio.Event()
        self._send.send_nowait(done)
        await done.wait()

    def close(self) -> None:
        """No more updates: :meth:`run` ends once it sent what was queued."""
        self._send.close()

    def _joined(self, first: _Text) -> tuple[_Text, Any]:
        """``first`` with the text queued right after it, and the item after that."""
        pieces = [first.text]
        size = len(first.text)
        while size < MAX_JOINED:
            try:
                item = self._receive.receive_nowait()
            except anyio.WouldBlock:
                item = None
            if not isinstance(item, _Text) or item.session_id != first.session_id:
                return _Text(first.session_id, "".join(pieces)), item
            pieces.append(item.text)
            size += len(item.text)
        return _Text(first.session_id, "".join(pieces)), None

    async def _deliver(self, session_id: str, update: Any) -> None:
        try:
            if self._send_message is None:
                await self._client.session_update(session_id=session_id, update=update)
            else:
                params = serialize_params(SessionNotification(session_id=session_id, update=update))
                await self._send_message(
                    {"jsonrpc": "2.0", "method": "session/update", "params": params}
                )
            self.sent += 1
        except Exception as exc:  # the client is gone: the turn is being cancelled
            logger.debug("a session update was not sent: %s", exc)

    async def run(self) -> None:
        """Send the queued updates in order, for as long as the server runs."""
        async with self._receive:
            async for received in self._receive:
                item: Any = received
                while item is not None:
                    following = None
                    if isinstance(item, anyio.Event):
                        item.set()
                    elif isinstance(item, _Text):
                        item, following = self._joined(item)
                        chunk = AgentMessageChunk(
                            session_update="agent_message_chunk",
                            content=TextContentBlock(type="text", text=item.text),
                        )
                        await self._deliver(item.session_id, chunk)
                    else:
                        await self._deliver(*item)
                    item = following


class AcpFrontEnd(BaseFrontEnd):
    """One ACP session's front end (see the module docstring). ``identities`` maps the
    model-facing tool names of the session's agent to their identities."""

    name = "acp"
    can_approve = True

    def __init__(
        self, outbox: Outbox, client: Any, *, cwd: str | None, can_elicit: bool = False
    ) -> None:
        self.outbox = outbox
        self._client = client
        self.session_id = ""
        self.cwd = cwd
        self.identities: Mapping[str, str] = {}
        self.can_elicit = can_elicit
        """Whether the client advertised form elicitation (``elicitation.form``)."""
        self.can_interact = can_elicit
        """A tool's question (``ask_user``) is asked only through form elicitation: a
        client without it gets ``interaction_unavailable`` at once."""

    def on_event(self, event: LoopEvent) -> None:
        """Translate the events an ACP client shows; ignore the rest."""
        if isinstance(event, TextDelta):
            if event.text:
                self.outbox.put_text(self.session_id, event.text)
        elif isinstance(event, ToolCallStarted):
            self.outbox.put(
                self.session_id,
                updates.started_update(
                    event.tool_call_id,
                    event.name,
                    self.identities.get(event.name),
                    event.arguments,
                ),
            )
        elif isinstance(event, ToolCallFinished):
            self.outbox.put(
                self.session_id,
                updates.finished_update(
                    event.tool_call_id,
                    event.identity,
                    event.status,
                    event.code,
                    event.effects,
                    event.full_content,
                    self.cwd,
                ),
            )

    async def approve(self, request: ApprovalRequest) -> ApprovalAnswer | bool:
        """``session/request_permission`` with the effects apart from the arguments:
        allowed once or rejected once. A client that answers with an error, or is gone,
        cannot be asked: the call ends as ``approval_unavailable``, as in a pipe."""
        await self.outbox.drain()  # the client has seen the call it is asked about
        tool_call = updates.approval_tool_call(
            request.tool_call_id,
            request.identity,
            thaw(request.arguments),
            thaw(request.effects),
            request.reason,
            self.cwd,
        )
        try:
            response = await self._client.request_permission(
                session_id=self.session_id, tool_call=tool_call, options=_OPTIONS
            )
        except Exception as exc:
            raise ApprovalUnavailable(
                f"{request.identity} needs approval and the ACP client could not be asked: {exc}",
                tool=request.identity,
            ) from None
        outcome = response.outcome
        if getattr(outcome, "outcome", None) == "selected":
            approved = outcome.option_id == ALLOW
            return ApprovalAnswer(approved=approved, by=self.name, message=None)
        return ApprovalAnswer(
            approved=False, by=self.name, message="the client cancelled the request"
        )

    async def interact(self, request: InteractionRequest) -> Mapping[str, Any] | None:
        """The request's form as ``elicitation/create`` (form mode, tied to the session and
        the asking call). Accepted content is checked against the form: an answer that
        does not fit is asked again with what was wrong (up to :data:`MAX_ASKS` times in
        all; after that the request stays pending, as for any invalid answer, until its
        deadline or an answer by id). Declined or cancelled: ``None``, the request ends
        as cancelled. A client that answers with an error, or is gone, cannot be asked:
        ``interaction_unavailable``."""
        await self.outbox.drain()  # the client has seen the call that asks
        form = thaw(request.form)
        title = request.declaration.title if request.declaration is not None else request.panel
        message = elicitation.message_of(thaw(request.document), title)
        mode = ElicitationFormSessionMode.model_validate(
            {
                "sessionId": self.session_id,
                "toolCallId": request.tool_call_id,
                "requestedSchema": elicitation.requested_schema(form),
            }
        )
        asked = message
        for attempt in range(1, MAX_ASKS + 1):
            try:
                response = await self._client.create_elicitation(message=asked, mode=mode)
            except Exception as exc:
                raise InteractionUnavailable(
                    f"{request.identity} asks the user a question and the ACP client could"
                    f" not be asked: {exc}",
                    tool=request.identity,
                ) from None
            if response.action != "accept":  # declined or cancelled
                return None
            content = response.content or {}
            try:
                return check_answer(form, content)
            except AnswerInvalid as error:
                if attempt == MAX_ASKS:  # the request model keeps it pending
                    return dict(content)
                asked = elicitation.retry_message(message, error.context.get("errors", ()))
        raise AssertionError("unreachable")  # pragma: no cover

    async def show_panel(self, update: PanelUpdate) -> None:
        """An ``acp_plan`` panel's checklist as a ``plan``, on every revision."""
        plan = updates.plan_update(thaw(update.declaration), update.document)
        if plan is not None:
            self.outbox.put(self.session_id, plan)
