"""The contract every session backend passes (raw_core.sessions.backend.SessionBackend).

Reusable: a backend's test module subclasses :class:`BackendContract` and provides the
fixture ``backend_factory``, an async callable. Within one test, its first call opens a
backend in a fresh, empty place (a folder, a database); every further call opens another
backend object on the same place, as another process or front end would. The fixture
closes what it opened. For example::

    class TestMyBackend(BackendContract):
        @pytest.fixture
        async def backend_factory(self, tmp_path) -> AsyncIterator[BackendFactory]:
            ...

The factory takes two keyword arguments, passed on to the backend: ``expire_after_days``
(as a backend record's factory takes it) and ``clock``, a callable returning the current
time (an aware datetime) that the backend uses instead of the system clock for every time
it stamps and every expiry it judges. The expiry tests move that clock instead of waiting.

The tests wait on events, never on time: every wait is bounded generously with
``anyio.fail_after``, so a broken backend fails instead of hanging.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from datetime import UTC, datetime, timedelta
from typing import Any, Final

import anyio
import anyio.lowlevel
import pytest

from raw_core.errors import (
    InvalidCursor,
    RequestNotFound,
    RequestNotPending,
    SessionExpired,
    SessionLocked,
    SessionNotFound,
)
from raw_core.sessions.backend import (
    MAX_TOOL_OUTPUT_BYTES,
    ApprovalAnswer,
    DisplayItem,
    InteractionAnswer,
    ModelOnly,
    PanelUpdate,
    PendingRequest,
    RequestEntry,
    SessionBackend,
    SessionState,
    ToolOutput,
    document_json,
)
from raw_core.sessions.blocks import JsonBlock
from raw_core.sessions.sqlite import (
    AssistantMessage,
    Message,
    TextBlock,
    ToolCall,
    ToolResultMessage,
    UserMessage,
    new_request_id,
    tool_output_for,
)

__all__ = ["BackendContract", "BackendFactory", "Clock"]

BackendFactory = Callable[..., Awaitable[SessionBackend]]
"""First call: a backend in a fresh place; later calls: another backend on that place.
Keyword arguments (``expire_after_days``, ``clock``) go to the backend."""

DAYS = 30  # the expiry the expiry tests open their backends with


class Clock:
    """A clock a test moves by hand; a backend opened with it takes its time as now."""

    def __init__(self, now: datetime | None = None) -> None:
        self.now = now if now is not None else datetime.now(UTC)

    def __call__(self) -> datetime:
        return self.now

    def advance(self, **delta: float) -> None:
        self.now += timedelta(**delta)


WAIT = 10.0  # seconds: a bound on waits that should end at once, never a timing assumption


def user(text: str) -> UserMessage:
    return UserMessage.from_text(text)


def text_of(item: DisplayItem | Message | None) -> str:
    message = item.message if isinstance(item, DisplayItem) else item
    if isinstance(message, AssistantMessage):
        return message.text
    assert isinstance(message, UserMessage), message
    block = message.content[0]
    assert isinstance(block, TextBlock)
    return block.text


def _to_the_millisecond(moment: datetime) -> datetime:
    """Backends keep times to the millisecond at least."""
    return moment.replace(microsecond=moment.microsecond // 1000 * 1000)


def request_for(session_id: str, *, deadline: datetime | None = None) -> PendingRequest:
    return PendingRequest(
        id=new_request_id(),
        session_id=session_id,
        kind="approval",
        tool_call_id="call_1",
        show={"identity": "builtin/bash", "arguments": {"command": "rm -rf x"}},
        created_at=_to_the_millisecond(datetime.now(UTC)),
        deadline=deadline,
    )


FORM: Final = {
    "blocks": [{"type": "form", "fields": [{"type": "text", "id": "name", "label": "Your name"}]}]
}


def interaction_for(session_id: str) -> PendingRequest:
    return PendingRequest(
        id=new_request_id(),
        session_id=session_id,
        kind="interaction",
        tool_call_id="call_2",
        show={"identity": "agent/ask", "panel": "ask", "document": FORM},
        created_at=_to_the_millisecond(datetime.now(UTC)),
        deadline=_to_the_millisecond(datetime.now(UTC) + timedelta(minutes=30)),
    )


async def append(backend: SessionBackend, session_id: str, entries: list[Any]) -> None:
    async with backend.open_writer(session_id, wait=WAIT) as writer:
        await writer.append(entries)


@pytest.mark.anyio
class BackendContract:
    """Subclass and provide the ``backend_factory`` fixture."""

    # --- sessions ---

    async def test_create_info_and_list(self, backend_factory: BackendFactory) -> None:
        backend = await backend_factory()
        assert isinstance(backend, SessionBackend)
        first = await backend.create(title="first", cwd="/home/me/a")
        second = await backend.create(title="second")
        assert first.id != second.id
        assert (first.title, first.cwd) == ("first", "/home/me/a")
        assert second.cwd is None
        assert await backend.info(first.id) == first
        await append(backend, first.id, [user("renews the first")])
        listed = await backend.list_sessions()
        assert [s.id for s in listed] == [first.id, second.id]
        assert [s.id for s in await backend.list_sessions(limit=1)] == [first.id]
        # A limit past what the database's integers hold is no limit, not an overflow.
        assert await backend.list_sessions(limit=2**63) == listed
        assert await backend.list_sessions(limit=10**30) == listed
        other = await backend_factory()
        assert [s.id for s in await other.list_sessions()] == [first.id, second.id]
        with pytest.raises(SessionNotFound) as caught:
            await backend.info("f" * 32)
        assert caught.value.code == "session_not_found"

    async def test_the_two_streams(self, backend_factory: BackendFactory) -> None:
        backend = await backend_factory()
        session = await backend.create()
        call = ToolCall(id="c1", name="read_file", arguments='{"path": "a"}')
        result = ToolResultMessage(
            tool_call_id="c1", status="ok", content=(TextBlock(text="capped"),)
        )
        output = tool_output_for("c1", [TextBlock(text="the whole output")])
        approval = RequestEntry(
            request_id=new_request_id(),
            request_kind="approval",
            tool_call_id="c1",
            state="approved",
            show={"identity": "builtin/read_file", "arguments": {"path": "a"}, "effects": None},
            deadline=_to_the_millisecond(datetime.now(UTC)),
            answer=ApprovalAnswer(approved=True, by="terminal", message="fine"),
        )
        reminder = ModelOnly(message=user("a reminder for the model"))
        async with backend.open_writer(session.id) as writer:
            await writer.append([user("read a"), AssistantMessage(tool_calls=(call,))])
            await writer.append([approval, result, output, reminder])
            await writer.append([])  # a no-op
            assert await writer.read_context() == (
                user("read a"),
                AssistantMessage(tool_calls=(call,)),
                result,
                reminder.message,
            )
        page = await backend.page(session.id)
        assert [item.kind for item in page.items] == [
            "message",
            "message",
            "request",
            "message",
            "tool_output",
        ]
        assert [item.entry for item in page.items[2:]] == [approval, result, output]
        assert page.items[2].message is None
        seqs = [item.seq for item in page.items]
        assert seqs == sorted(seqs)
        assert seqs[0] == 1
        context = await backend.read_context(session.id)
        assert context[-1] == reminder.message
        assert len(context) == 4

    async def test_paging_both_ways(self, backend_factory: BackendFactory) -> None:
        backend = await backend_factory()
        session, other = await backend.create(), await backend.create()
        await append(backend, session.id, [user(f"m{i}") for i in range(7)])
        seen: list[str] = []
        cursor: str | None = None
        while True:
            page = await backend.page(session.id, cursor, limit=3)
            seen += [text_of(item) for item in page.items]
            assert page.next_cursor is not None
            cursor = page.next_cursor
            if not page.has_more:
                break
        assert seen == [f"m{i}" for i in range(7)]
        assert (await backend.page(session.id, cursor)).items == ()
        await append(backend, session.id, [user("m7")])
        assert [text_of(i) for i in (await backend.page(session.id, cursor)).items] == ["m7"]

        newest: list[str] = []
        back: str | None = None
        while True:
            page = await backend.page(session.id, back, limit=3, newest_first=True)
            newest += [text_of(item) for item in page.items]
            back = page.next_cursor
            if back is None:
                break
            assert page.has_more
        assert newest == [f"m{i}" for i in reversed(range(8))]

        with pytest.raises(InvalidCursor) as foreign:
            await backend.page(other.id, cursor)
        assert foreign.value.code == "invalid_cursor"
        with pytest.raises(InvalidCursor) as other_order:
            await backend.page(session.id, cursor, newest_first=True)
        # Worded for every front end: no argument name of the Python API.
        assert other_order.value.message == (
            "expected a cursor that pages newest first, found one that pages oldest first"
            " (a cursor keeps the order of the page that returned it)"
        )
        with pytest.raises(InvalidCursor):
            await backend.page(session.id, "not a cursor")

    async def test_a_tail_cursor_pages_only_later_items(
        self, backend_factory: BackendFactory
    ) -> None:
        backend = await backend_factory()
        session = await backend.create()
        await append(backend, session.id, [user("before")])
        tail = await backend.tail_cursor(session.id)
        assert (await backend.page(session.id, tail)).items == ()
        await append(backend, session.id, [user("after")])
        assert [text_of(i) for i in (await backend.page(session.id, tail)).items] == ["after"]

    # --- following a session ---

    async def test_wait_for_items_wakes_on_an_append_here_and_elsewhere(
        self, backend_factory: BackendFactory
    ) -> None:
        backend = await backend_factory()
        elsewhere = await backend_factory()
        session = await backend.create()
        tail = await backend.tail_cursor(session.id)
        async with backend.open_writer(session.id) as writer:
            with anyio.fail_after(WAIT):
                async with anyio.create_task_group() as group:
                    waited: list[list[str]] = []

                    async def follow(on: SessionBackend) -> None:
                        page = await on.wait_for_items(session.id, tail)
                        waited.append([text_of(item) for item in page.items])

                    group.start_soon(follow, backend)
                    group.start_soon(follow, elsewhere)
                    await (
                        anyio.lowlevel.checkpoint()
                    )  # let both start waiting (either order is fine)
                    await writer.append([user("live")])
        assert waited == [["live"], ["live"]]
        # a page that already holds items returns at once
        with anyio.fail_after(WAIT):
            page = await elsewhere.wait_for_items(session.id, tail)
        assert [text_of(item) for item in page.items] == ["live"]

    async def test_a_wait_is_bounded_by_its_caller(self, backend_factory: BackendFactory) -> None:
        backend = await backend_factory()
        session = await backend.create()
        tail = await backend.tail_cursor(session.id)
        with anyio.fail_after(WAIT), anyio.move_on_after(0.01) as scope:
            await backend.wait_for_items(session.id, tail)
        assert scope.cancelled_caught

    # --- one writer ---

    async def test_one_writer_at_a_time(self, backend_factory: BackendFactory) -> None:
        backend = await backend_factory()
        elsewhere = await backend_factory()
        session = await backend.create()
        order: list[str] = []
        first_has_it, locked_out = anyio.Event(), anyio.Event()
        with anyio.fail_after(WAIT):
            async with anyio.create_task_group() as group:

                async def second() -> None:
                    await first_has_it.wait()
                    with pytest.raises(SessionLocked) as caught:
                        async with elsewhere.open_writer(session.id, wait=0):
                            pass
                    assert caught.value.code == "session_locked"
                    order.append("locked out")
                    locked_out.set()
                    async with elsewhere.open_writer(session.id, wait=WAIT) as writer:
                        order.append("second has it")
                        await writer.append([user("second")])

                group.start_soon(second)
                async with backend.open_writer(session.id) as writer:
                    first_has_it.set()
                    await locked_out.wait()
                    await writer.append([user("first")])
                    order.append("first lets go")
        assert order == ["locked out", "first lets go", "second has it"]
        assert [text_of(i) for i in (await backend.page(session.id)).items] == [
            "first",
            "second",
        ]

    # --- compaction and state ---

    async def test_compaction_replaces_a_context_prefix_only(
        self, backend_factory: BackendFactory
    ) -> None:
        backend = await backend_factory()
        session = await backend.create()
        async with backend.open_writer(session.id) as writer:
            await writer.append([user("a"), AssistantMessage(text="b"), user("c")])
            await writer.compact(user("summary of a and b"), replace_first=2)
            assert [text_of(m) for m in await writer.read_context()] == [
                "summary of a and b",
                "c",
            ]
            with pytest.raises(ValueError, match="expected"):
                await writer.compact(AssistantMessage(text="x", tool_calls=()), replace_first=9)
        assert [text_of(i) for i in (await backend.page(session.id)).items] == ["a", "b", "c"]

    async def test_typed_state_round_trips(self, backend_factory: BackendFactory) -> None:
        backend = await backend_factory()
        session = await backend.create(title="before")
        assert await backend.state(session.id) == SessionState(title="before")
        state = SessionState(
            title="after",
            cwd="/home/me/project",
            tool_digests={"read_file": "abc123"},
            cache_key="key-1",
            skills_seen={"testing": "def456"},
            panels=(("builtin/todo", "todo"), ("agent/board", "plan")),
        )
        async with backend.open_writer(session.id) as writer:
            await writer.set_state(state)
            assert await writer.state() == state
        elsewhere = await backend_factory()
        assert await elsewhere.state(session.id) == state
        info = await elsewhere.info(session.id)
        assert (info.title, info.cwd) == ("after", "/home/me/project")
        assert info.last_activity == session.last_activity  # state is not activity

    async def test_a_title_no_store_can_keep_as_text_is_stored_with_u_fffd(
        self, backend_factory: BackendFactory
    ) -> None:
        # A first prompt may hold a lone surrogate (JSON allows "\ud800") or a NUL; the
        # title made from it is still stored, by create and by a state change alike.
        backend = await backend_factory()
        session = await backend.create(title="fix \ud800 and \x00 it")
        assert session.title == "fix \ufffd and \ufffd it"
        async with backend.open_writer(session.id) as writer:
            await writer.set_state(SessionState(title="then \udfff"))
        elsewhere = await backend_factory()
        assert (await elsewhere.info(session.id)).title == "then \ufffd"
        assert [s.title for s in await elsewhere.list_sessions()] == ["then \ufffd"]

    async def test_panel_updates_are_display_only_and_round_trip(
        self, backend_factory: BackendFactory
    ) -> None:
        backend = await backend_factory()
        session = await backend.create()
        declaration = {"id": "todo", "title": "Tasks", "placement": "sidebar"}
        document = {"blocks": [{"type": "checklist", "items": [{"text": "a", "status": "done"}]}]}
        accepted = PanelUpdate(
            tool_call_id="c1",
            identity="builtin/todo",
            panel="todo",
            op="replace",
            source="result",
            revision=3,
            document_text=document_json(document),
            declaration=declaration,
        )
        rejected = PanelUpdate(
            tool_call_id="c1",
            identity="builtin/todo",
            panel="todo",
            op="patch",
            source="context",
            revision=3,
            error={"code": "panel_invalid", "message": "bad", "field": "$.patch"},
            declaration=declaration,
        )
        async with backend.open_writer(session.id) as writer:
            await writer.append([user("plan"), accepted, rejected])
            assert await writer.read_context() == (user("plan"),)
        page = await (await backend_factory()).page(session.id)
        assert [item.kind for item in page.items] == ["message", "panel", "panel"]
        assert [item.entry.to_dict() for item in page.items[1:]] == [
            accepted.to_dict(),
            rejected.to_dict(),
        ]
        assert page.items[1].message is None
        shown = page.items[1].to_dict()
        assert shown["document"] == document
        assert shown["error"] is None
        assert page.items[2].to_dict()["error"]["field"] == "$.patch"

    # --- pending requests ---

    async def test_a_request_answered_elsewhere(self, backend_factory: BackendFactory) -> None:
        backend = await backend_factory()
        front_end = await backend_factory()
        session = await backend.create()
        request = request_for(session.id)
        async with backend.open_writer(session.id) as writer:
            await writer.add_request(request)
            assert await front_end.list_requests(session.id) == (request,)
            assert await front_end.get_request(request.id) == request
            with anyio.fail_after(WAIT):
                async with anyio.create_task_group() as group:
                    answered: list[PendingRequest] = []

                    async def wait() -> None:
                        answered.append(await backend.wait_for_answer(request.id))

                    group.start_soon(wait)
                    await anyio.lowlevel.checkpoint()
                    yes = ApprovalAnswer(approved=True, by="dashboard", message="go on")
                    stored = await front_end.answer_request(request.id, yes)
            assert stored.state == "approved"
            assert stored.answer == yes
            assert stored.answered_at is not None
            assert answered == [stored]
            with pytest.raises(RequestNotPending) as late:
                await backend.answer_request(request.id, ApprovalAnswer(approved=False, by="x"))
            assert late.value.code == "request_not_pending"
            assert late.value.context["state"] == "approved"
            # the writer's own close after someone answered returns that answer
            closed = await writer.close_request(request.id, "cancelled")
            assert closed == stored
        assert await backend.list_requests(session.id) == ()
        assert await backend.list_requests(session.id, pending_only=False) == (stored,)

    async def test_the_writer_closes_its_own_requests(
        self, backend_factory: BackendFactory
    ) -> None:
        backend = await backend_factory()
        elsewhere = await backend_factory()
        session = await backend.create()
        asked, expiring = request_for(session.id), request_for(session.id)
        async with backend.open_writer(session.id) as writer:
            await writer.add_request(asked)
            await writer.add_request(expiring)
            assert [r.id for r in await backend.list_requests(session.id)] == [
                asked.id,
                expiring.id,
            ]
            with anyio.fail_after(WAIT):
                async with anyio.create_task_group() as group:
                    seen: list[PendingRequest] = []

                    async def wait() -> None:
                        seen.append(await elsewhere.wait_for_answer(expiring.id))

                    group.start_soon(wait)
                    await anyio.lowlevel.checkpoint()
                    no = ApprovalAnswer(approved=False, by="terminal")
                    denied = await writer.close_request(asked.id, "denied", no)
                    expired = await writer.close_request(expiring.id, "expired")
            assert (denied.state, denied.answer) == ("denied", no)
            assert (expired.state, expired.answer) == ("expired", None)
            assert seen == [expired]
            with pytest.raises(RequestNotPending) as caught:
                await elsewhere.answer_request(expiring.id, ApprovalAnswer(approved=True, by="x"))
            assert caught.value.context["state"] == "expired"

    async def test_interaction_requests_and_their_states(
        self, backend_factory: BackendFactory
    ) -> None:
        backend = await backend_factory()
        elsewhere = await backend_factory()
        session = await backend.create()
        asked, left, approval = (
            interaction_for(session.id),
            interaction_for(session.id),
            request_for(session.id),
        )
        async with backend.open_writer(session.id) as writer:
            for request in (asked, left, approval):
                await writer.add_request(request)
            opened = RequestEntry.of(asked)
            await writer.append([opened])
            assert await elsewhere.get_request(asked.id) == asked
            # an answer of the other kind's type is refused and changes nothing
            with pytest.raises(ValueError, match="kind interaction"):
                await elsewhere.answer_request(asked.id, ApprovalAnswer(approved=True, by="x"))
            with pytest.raises(ValueError, match="kind approval"):
                await elsewhere.answer_request(
                    approval.id, InteractionAnswer(values={"name": "x"}, by="x")
                )
            assert (await backend.get_request(asked.id)).state == "pending"
            given = InteractionAnswer(values={"name": "Ada"}, by="dashboard")
            answered = await elsewhere.answer_request(asked.id, given)
            assert (answered.state, answered.answer) == ("answered", given)
            interrupted = await writer.close_request(left.id, "interrupted")
            assert (interrupted.state, interrupted.answer) == ("interrupted", None)
            with pytest.raises(ValueError, match="kind approval"):
                await writer.close_request(approval.id, "answered", given)
            ended = RequestEntry.of(answered)
            await writer.append([ended, RequestEntry.of(interrupted)])
        assert [r.state for r in await backend.list_requests(session.id, pending_only=False)] == [
            "answered",
            "interrupted",
            "pending",
        ]
        page = await elsewhere.page(session.id)
        assert [item.entry for item in page.items] == [opened, ended, RequestEntry.of(interrupted)]
        assert page.items[1].to_dict()["answer"] == {"values": {"name": "Ada"}, "by": "dashboard"}
        assert await backend.read_context(session.id) == ()

    async def test_an_interaction_request_is_cancelled_by_id(
        self, backend_factory: BackendFactory
    ) -> None:
        backend = await backend_factory()
        front_end = await backend_factory()
        session = await backend.create()
        asked, approval = interaction_for(session.id), request_for(session.id)
        async with backend.open_writer(session.id) as writer:
            await writer.add_request(asked)
            await writer.add_request(approval)
            with anyio.fail_after(WAIT):
                async with anyio.create_task_group() as group:
                    seen: list[PendingRequest] = []

                    async def wait() -> None:
                        seen.append(await backend.wait_for_answer(asked.id))

                    group.start_soon(wait)
                    await anyio.lowlevel.checkpoint()
                    cancelled = await front_end.cancel_request(asked.id, by="dashboard")
            assert (cancelled.state, cancelled.answer) == ("cancelled", None)
            assert cancelled.answered_at is not None
            assert seen == [cancelled]
            # the first end wins: neither a second cancel nor an answer changes it
            with pytest.raises(RequestNotPending) as late:
                await backend.cancel_request(asked.id, by="terminal")
            assert late.value.context["state"] == "cancelled"
            with pytest.raises(RequestNotPending):
                await backend.answer_request(
                    asked.id, InteractionAnswer(values={"name": "Ada"}, by="x")
                )
            # an approval is declined, never cancelled this way; it stays pending
            with pytest.raises(ValueError, match="approved=false"):
                await front_end.cancel_request(approval.id, by="dashboard")
            assert (await backend.get_request(approval.id)).state == "pending"
            answered = interaction_for(session.id)
            await writer.add_request(answered)
            await backend.answer_request(
                answered.id, InteractionAnswer(values={"name": "Ada"}, by="x")
            )
            with pytest.raises(RequestNotPending) as after:
                await front_end.cancel_request(answered.id, by="dashboard")
            assert after.value.context["state"] == "answered"
        with pytest.raises(RequestNotFound):
            await backend.cancel_request(new_request_id(), by="dashboard")
        with pytest.raises(RequestNotFound):
            await backend.cancel_request("not-an-id", by="dashboard")

    async def test_an_answer_after_the_deadline_expires_the_request(
        self, backend_factory: BackendFactory
    ) -> None:
        backend = await backend_factory()
        session = await backend.create()
        past = request_for(session.id, deadline=datetime.now(UTC) - timedelta(seconds=1))
        async with backend.open_writer(session.id) as writer:
            await writer.add_request(past)
        with pytest.raises(RequestNotPending) as caught:
            await backend.answer_request(past.id, ApprovalAnswer(approved=True, by="terminal"))
        assert caught.value.context["state"] == "expired"
        assert (await backend.get_request(past.id)).state == "expired"

    async def test_unknown_requests(self, backend_factory: BackendFactory) -> None:
        backend = await backend_factory()
        missing = new_request_id()
        with pytest.raises(RequestNotFound) as caught:
            await backend.get_request(missing)
        assert caught.value.code == "request_not_found"
        with pytest.raises(RequestNotFound):
            await backend.answer_request(missing, ApprovalAnswer(approved=True, by="terminal"))

    # --- deleting and expiring ---

    async def test_delete_removes_the_session_and_its_requests(
        self, backend_factory: BackendFactory
    ) -> None:
        backend = await backend_factory()
        session, kept = await backend.create(), await backend.create()
        request = request_for(session.id)
        async with backend.open_writer(session.id) as writer:
            await writer.append([user("gone")])
            await writer.add_request(request)
            with pytest.raises(SessionLocked):
                await backend.delete(session.id, wait=0)
        await backend.delete(session.id)
        with pytest.raises(SessionNotFound):
            await backend.info(session.id)
        with pytest.raises(SessionNotFound):
            await backend.page(session.id)
        with pytest.raises(RequestNotFound):
            await backend.get_request(request.id)
        assert [s.id for s in await backend.list_sessions()] == [kept.id]

    async def test_prune_removes_expired_sessions_only(
        self, backend_factory: BackendFactory
    ) -> None:
        backend = await backend_factory()
        idle = await backend.create()
        busy = await backend.create()
        later = idle.last_activity + timedelta(days=365)
        assert await backend.prune(idle.last_activity) == ()
        async with backend.open_writer(busy.id):
            assert await backend.prune(later) == (idle.id,)  # the one being written stays
        assert [s.id for s in await backend.list_sessions()] == [busy.id]

    async def test_an_expired_session_is_not_listed_read_or_revived(
        self, backend_factory: BackendFactory
    ) -> None:
        clock = Clock()
        backend = await backend_factory(clock=clock, expire_after_days=DAYS)
        idle, talking = await backend.create(title="idle"), await backend.create()
        assert abs(idle.created_at - clock.now) < timedelta(seconds=1)  # the clock's time
        await append(backend, idle.id, [user("said once")])
        said = (await backend.info(idle.id)).last_activity
        clock.advance(days=DAYS - 10)
        await append(backend, talking.id, [user("still talking")])
        clock.advance(days=10, seconds=1)  # idle: past the expiry; talking: 10 days idle
        assert [s.id for s in await backend.list_sessions()] == [talking.id]
        expired_at = said + timedelta(days=DAYS)
        reads: list[Callable[[str], Awaitable[Any]]] = [
            backend.info,
            backend.page,
            backend.tail_cursor,
            backend.read_context,
            backend.state,
            backend.list_requests,
        ]
        for read in reads:
            with pytest.raises(SessionExpired) as caught:
                await read(idle.id)
            assert caught.value.code == "session_expired"
            assert caught.value.context["session_id"] == idle.id
            assert datetime.fromisoformat(caught.value.context["expired_at"]) == expired_at
        with pytest.raises(SessionExpired):
            async with backend.open_writer(idle.id, wait=WAIT) as writer:
                await writer.append([user("revived?")])
        assert [s.id for s in await backend.list_sessions()] == [talking.id]
        # Seen from before it expired, the session is as it was: no read and no refused
        # writer renewed it or added to it, and reading deleted nothing.
        before = await backend_factory(clock=Clock(expired_at - timedelta(seconds=1)))
        assert (await before.info(idle.id)).last_activity == said
        assert [text_of(i) for i in (await before.page(idle.id)).items] == ["said once"]
        assert [s.id for s in await before.list_sessions()] == [talking.id, idle.id]

    @pytest.mark.parametrize("first_write", ["create", "open_writer"])
    async def test_the_first_write_of_a_backend_deletes_expired_sessions(
        self, backend_factory: BackendFactory, first_write: str
    ) -> None:
        clock = Clock()
        backend = await backend_factory(clock=clock, expire_after_days=DAYS)
        expired, kept = await backend.create(), await backend.create()
        request = request_for(expired.id)
        async with backend.open_writer(expired.id) as writer:
            await writer.append([user("old")])
            await writer.add_request(request)
        clock.advance(days=DAYS - 1)
        await append(backend, kept.id, [user("recent")])
        clock.advance(days=2)
        later = await backend_factory(clock=clock, expire_after_days=DAYS)
        with pytest.raises(SessionExpired):
            await later.info(expired.id)  # reading deletes nothing
        if first_write == "create":
            await later.create()
        else:
            with pytest.raises(SessionExpired):
                async with later.open_writer(expired.id, wait=WAIT):
                    pass
        # Even a clock from before the expiry finds nothing left of it, requests included.
        before = await backend_factory(clock=Clock(expired.created_at))
        with pytest.raises(SessionNotFound):
            await before.info(expired.id)
        with pytest.raises(RequestNotFound):
            await before.get_request(request.id)
        assert [text_of(i) for i in (await before.page(kept.id)).items] == ["recent"]

    # --- tool output ---

    async def test_tool_output_is_kept_up_to_the_cap(self, backend_factory: BackendFactory) -> None:
        backend = await backend_factory()
        session = await backend.create()
        big = "é" * (MAX_TOOL_OUTPUT_BYTES // 2 + 10)  # two bytes each: past the cap
        output = tool_output_for("c1", [TextBlock(text=big), JsonBlock(json_text="1")])
        assert output.truncated
        (block,) = output.content
        assert isinstance(block, TextBlock)
        assert len(block.text.encode("utf-8")) <= MAX_TOOL_OUTPUT_BYTES
        assert block.text.endswith("bytes kept]")
        await append(backend, session.id, [output])
        (item,) = (await backend.page(session.id)).items
        assert item.entry == output
        too_big = ToolOutput(tool_call_id="c2", content=(TextBlock(text=big),))
        with pytest.raises(ValueError, match="at most"):
            await append(backend, session.id, [too_big])
        assert len((await backend.page(session.id)).items) == 1
