"""The session service: two front ends on one session, approvals as stored requests
answered by id, and what the display history keeps of what the user saw."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import anyio
import pytest

from raw_core import Reply, ScriptedProvider
from raw_core.app import App
from raw_core.errors import RequestNotPending
from raw_core.plugins import PluginHost
from raw_core.runtime.frontend import CallbackFrontEnd
from raw_core.sessions.sqlite import AssistantMessage, TextBlock, ToolResultMessage, UserMessage

pytestmark = pytest.mark.anyio


def texts(items: Any) -> list[str]:
    """The plain text of each message item of a page, in order."""
    found = []
    for item in items:
        message = item.message
        if isinstance(message, UserMessage):
            found.append(" ".join(b.text for b in message.content if isinstance(b, TextBlock)))
        elif isinstance(message, AssistantMessage):
            found.append(message.text)
        elif isinstance(message, ToolResultMessage):
            found.append(" ".join(b.text for b in message.content if isinstance(b, TextBlock)))
    return found


async def echo_turn(
    project: Path,
    host: PluginHost,
    store: Path,
    text: str,
    *,
    front_end: Any = None,
    approval_wait: float = 0.0,
) -> tuple[Any, tuple[Any, ...], tuple[Any, ...]]:
    """One turn in which the model calls echo with ``text`` and then answers: the session's
    display page, its pending requests after the turn, and its model context."""
    model = ScriptedProvider([Reply(tool_calls=(("echo", {"text": text}),)), Reply(text="ok")])
    async with App.open(
        project / "raw.json",
        host=host,
        store_dir=store,
        provider=model,
        approval_wait=approval_wait,
    ) as app:
        async with app.open_session(front_end=front_end) as session:
            await session.run_turn("go")
        page = await app.page(session.id)
        pending = await app.pending_requests(session.id)
        context = await (await app.backend()).read_context(session.id)
    return page, pending, context


async def test_a_turn_one_front_end_runs_is_followed_listed_paged_and_resumed_by_another(
    project: Path, host: PluginHost, tmp_path: Path
) -> None:
    store = tmp_path / "sessions"
    config = project / "raw.json"
    first_model = ScriptedProvider(
        [Reply(tool_calls=(("echo", {"text": "hi there"}),)), Reply(text="done")]
    )
    second_model = ScriptedProvider([Reply(text="again")])
    followed: list[Any] = []
    async with (
        App.open(config, host=host, store_dir=store, provider=first_model) as first,
        App.open(config, host=host, store_dir=store, provider=second_model) as second,
    ):
        async with first.open_session(front_end=CallbackFrontEnd(name="first")) as session:
            session_id = session.id
            cursor = await second.tail_cursor(session_id)

            async def follow() -> None:
                nonlocal cursor
                with anyio.fail_after(20):
                    while "done" not in texts(followed):
                        page = await second.follow(session_id, cursor)
                        followed.extend(page.items)
                        assert page.next_cursor is not None
                        cursor = page.next_cursor

            async with anyio.create_task_group() as group:
                group.start_soon(follow)
                ended = await session.run_turn("say hi")
        assert ended.reason == "completed"
        assert texts(followed) == ["say hi", "", "hi there", "done"]

        listed = await second.list_sessions()
        assert [info.id for info in listed] == [session_id]
        assert listed[0].title == "say hi"  # an untitled session takes its first prompt
        assert listed[0].cwd is not None
        page = await second.page(session_id, limit=2)
        assert texts(page.items) == ["say hi", ""]
        assert page.has_more
        assert page.next_cursor is not None
        rest = await second.page(session_id, page.next_cursor)
        assert texts(rest.items) == ["hi there", "done"]

        async with second.open_session(session_id, front_end=CallbackFrontEnd()) as resumed:
            again = await resumed.run_turn("once more")
        assert again.reason == "completed"
        sent = second_model.requests[0].messages
        assert [type(m).__name__ for m in sent] == [
            "UserMessage",
            "AssistantMessage",
            "ToolResultMessage",
            "AssistantMessage",
            "UserMessage",
        ]
        seen_by_first = await first.page(session_id)
        assert texts(seen_by_first.items)[-2:] == ["once more", "again"]


async def test_an_approval_is_a_stored_request_any_front_end_answers_by_id(
    project: Path, host: PluginHost, tmp_path: Path
) -> None:
    store = tmp_path / "sessions"
    config = project / "raw.json"
    model = ScriptedProvider(
        [Reply(tool_calls=(("echo", {"text": "ask first"}),)), Reply(text="ok")]
    )
    asked = anyio.Event()
    request_ids: list[str] = []
    events: list[dict[str, Any]] = []

    def on_event(event: Any) -> None:
        data = event.to_dict()
        events.append(data)
        if data["type"] == "approval_requested":
            request_ids.append(data["request_id"])
            asked.set()

    headless = CallbackFrontEnd(on_event=on_event, name="script")
    async with (
        App.open(config, host=host, store_dir=store, provider=model, approval_wait=30) as app,
        App.open(config, host=host, store_dir=store) as dashboard,
    ):
        async with app.open_session(front_end=headless) as session:

            async def answer_elsewhere() -> None:
                with anyio.fail_after(20):
                    await asked.wait()
                pending = await dashboard.pending_requests(session.id)
                assert [r.id for r in pending] == request_ids
                assert pending[0].show["identity"] == "agent/echo"
                assert pending[0].show["arguments"] == {"text": "ask first"}
                answered = await dashboard.answer_request(
                    request_ids[0], approved=True, by="dashboard"
                )
                assert answered.state == "approved"

            async with anyio.create_task_group() as group:
                group.start_soon(answer_elsewhere)
                ended = await session.run_turn("go")
            session_id = session.id
        assert ended.reason == "completed"
        finished = [e for e in events if e["type"] == "tool_call_finished"]
        assert finished[0]["status"] == "ok"
        answered_events = [e for e in events if e["type"] == "approval_answered"]
        assert answered_events == [
            {
                "type": "approval_answered",
                "request_id": request_ids[0],
                "tool_call_id": finished[0]["tool_call_id"],
                "state": "approved",
                "answer": {"approved": True, "by": "dashboard", "message": None},
            }
        ]
        with pytest.raises(RequestNotPending):
            await dashboard.answer_request(request_ids[0], approved=False, by="late")
        assert await dashboard.pending_requests(session_id) == ()
        page = await dashboard.page(session_id)
        approvals = [item for item in page.items if item.kind == "request"]
        assert len(approvals) == 2  # as it opened, and as it ended
        assert approvals[0].to_dict()["state"] == "pending"
        shown = approvals[1].to_dict()
        assert shown["state"] == "approved"
        assert shown["answer"] == {"approved": True, "by": "dashboard", "message": None}
        assert shown["show"]["identity"] == "agent/echo"
        assert shown["show"]["arguments"] == {"text": "ask first"}
        # The model context holds the messages only, never the approval.
        context = await (await dashboard.backend()).read_context(session_id)
        assert [type(m).__name__ for m in context] == [
            "UserMessage",
            "AssistantMessage",
            "ToolResultMessage",
            "AssistantMessage",
        ]


async def test_the_session_front_end_can_answer_and_its_name_is_recorded(
    project: Path, host: PluginHost, tmp_path: Path
) -> None:
    async def decline(request: Any) -> bool:
        assert request.identity == "agent/echo"
        return False

    front_end = CallbackFrontEnd(approve=decline, name="terminal")
    page, _, _ = await echo_turn(project, host, tmp_path / "s", "ask me", front_end=front_end)
    kinds = [item.kind for item in page.items]
    assert kinds == ["message", "message", "request", "request", "message", "message"]
    approval = page.items[3].to_dict()
    assert approval["state"] == "denied"
    assert approval["answer"]["by"] == "terminal"
    result = page.items[4].message
    assert isinstance(result, ToolResultMessage)
    assert result.error_code == "approval_denied"


async def test_an_approval_nobody_answers_expires_as_approval_unavailable(
    project: Path, host: PluginHost, tmp_path: Path
) -> None:
    page, pending, _ = await echo_turn(project, host, tmp_path / "s", "ask me", approval_wait=0.2)
    assert pending == ()
    approval = [item for item in page.items if item.kind == "request"][-1].to_dict()
    assert approval["state"] == "expired"
    assert approval["answer"] is None
    result = next(
        item.message for item in page.items if isinstance(item.message, ToolResultMessage)
    )
    assert result.error_code == "approval_unavailable"


async def test_without_anybody_to_ask_an_ask_ends_at_once_and_stores_no_request(
    project: Path, host: PluginHost, tmp_path: Path
) -> None:
    page, pending, _ = await echo_turn(project, host, tmp_path / "s", "ask me")
    assert pending == ()
    assert [item.kind for item in page.items] == ["message"] * 4
    result = page.items[2].message
    assert isinstance(result, ToolResultMessage)
    assert result.error_code == "approval_unavailable"


async def test_the_display_history_keeps_the_whole_output_the_model_got_capped(
    project: Path, host: PluginHost, tmp_path: Path
) -> None:
    long_text = "line of output\n" * 40  # 600 bytes; the agent's cap is 160
    page, _, context = await echo_turn(project, host, tmp_path / "s", long_text)
    kinds = [item.kind for item in page.items]
    assert kinds == ["message", "message", "message", "tool_output", "message"]
    result, output = page.items[2], page.items[3].to_dict()
    assert isinstance(result.message, ToolResultMessage)
    capped = result.message.content[0]
    assert isinstance(capped, TextBlock)
    assert len(capped.text.encode()) < len(long_text)
    assert output["tool_call_id"] == result.message.tool_call_id
    assert output["content"] == [{"type": "text", "text": long_text}]
    assert output["truncated"] is False
    # The model context keeps only the capped copy.
    assert [type(m).__name__ for m in context] == [
        "UserMessage",
        "AssistantMessage",
        "ToolResultMessage",
        "AssistantMessage",
    ]
    assert context[2] == result.message


async def test_another_front_end_in_the_process_can_cancel_a_running_turn(
    project: Path, host: PluginHost, tmp_path: Path
) -> None:
    started = anyio.Event()
    model = ScriptedProvider([Reply(tool_calls=(("slow", {"seconds": 30}),)), Reply(text="ok")])

    def on_event(event: Any) -> None:
        if event.to_dict()["type"] == "tool_call_started":
            started.set()

    async with App.open(
        project / "raw.json", host=host, store_dir=tmp_path / "s", provider=model
    ) as app:
        front_end = CallbackFrontEnd(on_event=on_event)
        async with app.open_session(agent="b", front_end=front_end) as session:

            async def cancel_it() -> None:
                with anyio.fail_after(20):
                    await started.wait()
                assert app.cancel(session.id, "stopped from the dashboard")

            async with anyio.create_task_group() as group:
                group.start_soon(cancel_it)
                ended = await session.run_turn("go")
        assert ended.reason == "cancelled"
        assert not app.cancel(session.id)


async def test_a_front_end_that_fails_to_answer_declines_with_its_own_error(
    project: Path, host: PluginHost, tmp_path: Path
) -> None:
    async def broken(request: Any) -> bool:
        raise RuntimeError("the terminal went away")

    events: list[Any] = []
    front_end = CallbackFrontEnd(approve=broken, on_event=events.append, name="terminal")
    page, pending, _ = await echo_turn(project, host, tmp_path / "s", "ask me", front_end=front_end)
    result = next(i.message for i in page.items if isinstance(i.message, ToolResultMessage))
    assert result.error_code == "approval_denied"
    text = result.content[0]
    assert isinstance(text, TextBlock)  # the model reads a plain sentence, no host text
    assert text.text == (
        "error [approval_denied]: asking the user for approval failed, so the call did not run"
    )
    (finished,) = [e.to_dict() for e in events if type(e).__name__ == "ToolCallFinished"]
    shown = finished["full_content"][0]["text"]  # the host sees why
    assert "RuntimeError: the terminal went away" in shown
    assert "ExceptionGroup" not in shown
    assert pending == ()
    approval = [i.to_dict() for i in page.items if i.kind == "request"][-1]
    assert approval["state"] == "cancelled"
