"""Spec 000, "Interaction requests": a local tool asks the user with
``context.interactions.request({panel, document, timeout_ms?})``.

One test per clause: exactly one form block; the 30-minute default and the 24-hour cap;
each state reached (answered, expired, cancelled by the turn; interrupted is in
tests/raw_builtin_tools/test_builtin_ask_user.py, where raw itself is killed); an invalid
answer kept pending; answering grants no permission; the handler's time limit paused while
a request is pending; and one approval and one interaction pending in one session, both
listed and answered through the app by a second front end.
"""

from __future__ import annotations

import json
from datetime import timedelta
from pathlib import Path
from typing import Any

import anyio
import pytest

from raw_core import App, CallbackFrontEnd, Reply, ScriptedProvider
from raw_core.errors import AnswerInvalid, RequestNotPending
from raw_core.plugins import PluginHost
from raw_core.sessions.sqlite import ToolResultMessage

pytestmark = pytest.mark.anyio

WAIT = 30.0  # seconds: a bound on waits that end on an event, never a timing assumption

FORM: dict[str, Any] = {
    "blocks": [
        {"type": "text", "text": "Before I go on:"},
        {
            "type": "form",
            "fields": [
                {"type": "text", "id": "name", "label": "Your name", "required": True},
                {
                    "type": "single_select",
                    "id": "tone",
                    "label": "Tone",
                    "options": [
                        {"value": "short", "label": "Short"},
                        {"value": "long", "label": "Long"},
                    ],
                    "default": "short",
                },
                {
                    "type": "multi_select",
                    "id": "parts",
                    "label": "Parts",
                    "options": [
                        {"value": "a", "label": "A"},
                        {"value": "b", "label": "B"},
                        {"value": "c", "label": "C"},
                    ],
                    "min_selected": 1,
                    "max_selected": 2,
                },
            ],
        },
    ]
}

# Works ``before`` seconds, asks, then works ``after`` seconds, and returns the answer's
# values as JSON.
ASK = """
import json

import anyio


async def handler(args, context):
    await anyio.sleep(args.get("before", 0))
    answer = await context.interactions.request(
        panel=args.get("panel", "question"),
        document=args["document"],
        timeout_ms=args.get("timeout_ms"),
    )
    await anyio.sleep(args.get("after", 0))
    return {"content": [{"type": "text", "text": json.dumps({"by": answer.by, **answer.values})}]}
"""

ECHO = """
def handler(args, context):
    return {"content": [{"type": "text", "text": args["text"]}]}
"""


def _tool(root: Path, name: str, code: str, schema: dict[str, Any], **extra: Any) -> None:
    folder = root / "tools" / name
    folder.mkdir(parents=True)
    manifest = {
        "api_version": 2,
        "id": name,
        "version": "1.0.0",
        "name": name,
        "description": f"The {name} test tool.",
        "input_schema": schema,
        "condition_sources": ["arguments"],
        "entry": "./tool.py",
        **extra,
    }
    (folder / "tool.json").write_text(json.dumps(manifest))
    (folder / "tool.py").write_text(code)


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


@pytest.fixture
def project(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.setenv("XDG_STATE_HOME", str(tmp_path / "state"))
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path / "xdg"))
    _tool(
        tmp_path,
        "ask",
        ASK,
        {"type": "object"},
        panels=[{"id": "question", "title": "A question", "placement": "chat"}],
    )
    _tool(
        tmp_path,
        "echo",
        ECHO,
        {
            "type": "object",
            "properties": {"text": {"type": "string"}},
            "required": ["text"],
        },
    )
    config = {
        "agents": {
            "a": {
                "handler_timeout_ms": 300,
                "tools": {
                    "use": ["agent/ask", "agent/echo"],
                    "rules": [{"match": "agent/echo", "effect": "ask"}],
                },
            }
        }
    }
    (tmp_path / "raw.json").write_text(json.dumps(config))
    return tmp_path


async def _turn(
    project: Path,
    calls: list[tuple[str, dict[str, Any]]],
    front_end: CallbackFrontEnd,
    *,
    approval_wait: float = 0.0,
    during: Any = None,
) -> tuple[list[ToolResultMessage], list[dict[str, Any]], App, str]:
    """One turn making ``calls``; the results, the display history's request entries, the
    app (closed) and the session id. ``during(app, session)`` runs beside the turn."""
    model = ScriptedProvider([Reply(tool_calls=tuple(calls)), Reply(text="done")])
    async with App.open(
        project / "raw.json", host=PluginHost(), provider=model, approval_wait=approval_wait
    ) as app:
        async with app.open_session(front_end=front_end) as session:
            with anyio.fail_after(WAIT):
                async with anyio.create_task_group() as group:
                    if during is not None:
                        group.start_soon(during, app, session)
                    await session.run_turn("go")
        page = await app.page(session.id)
    results = [i.message for i in page.items if isinstance(i.message, ToolResultMessage)]
    requests = [i.to_dict() for i in page.items if i.kind == "request"]
    return results, requests, app, session.id


def _text(result: ToolResultMessage) -> str:
    block = result.content[0]
    return str(getattr(block, "text", ""))


# --- the request ---------------------------------------------------------------------------


async def test_an_answered_request_gives_the_tool_the_checked_values(project: Path) -> None:
    asked: list[Any] = []
    events: list[dict[str, Any]] = []

    async def interact(request: Any) -> dict[str, Any]:
        asked.append(request)
        return {"name": "Ada", "parts": ["a", "c"]}  # tone left out: its default

    front_end = CallbackFrontEnd(
        interact=interact, on_event=lambda e: events.append(e.to_dict()), name="tester"
    )
    results, requests, _, _ = await _turn(project, [("ask", {"document": FORM})], front_end)
    (result,) = results
    assert result.status == "ok", _text(result)
    assert json.loads(_text(result)) == {
        "by": "tester",
        "name": "Ada",
        "tone": "short",
        "parts": ["a", "c"],
    }
    (request,) = asked
    assert (request.identity, request.panel, request.declaration.title) == (
        "agent/ask",
        "question",
        "A question",
    )
    assert request.form["fields"][0]["id"] == "name"
    opened, ended = requests
    assert opened["request_id"] == ended["request_id"]
    assert (opened["request_kind"], opened["state"], opened["answer"]) == (
        "interaction",
        "pending",
        None,
    )
    assert opened["show"]["document"] == FORM
    assert ended["state"] == "answered"
    assert ended["answer"] == {
        "values": {"name": "Ada", "tone": "short", "parts": ["a", "c"]},
        "by": "tester",
    }
    kinds = [e["type"] for e in events]
    assert kinds.index("interaction_requested") < kinds.index("interaction_ended")
    ended_event = next(e for e in events if e["type"] == "interaction_ended")
    assert ended_event["state"] == "answered"


async def test_the_document_holds_exactly_one_form_block(project: Path) -> None:
    form = FORM["blocks"][1]
    none = {"blocks": [{"type": "text", "text": "no form"}]}
    two = {"blocks": [form, form]}
    broken = {"blocks": [{"type": "form", "fields": []}]}
    asked: list[Any] = []

    async def interact(request: Any) -> None:
        asked.append(request)

    calls: list[tuple[str, dict[str, Any]]] = [
        ("ask", {"document": d}) for d in (none, two, broken)
    ]
    calls.append(("ask", {"document": FORM, "panel": "elsewhere"}))
    results, requests, _, _ = await _turn(project, calls, CallbackFrontEnd(interact=interact))
    assert [r.error_code for r in results] == [
        "panel_invalid",
        "panel_invalid",
        "panel_invalid",
        "panel_undeclared",
    ]
    assert "exactly one form block" in _text(results[0])
    assert asked == []  # nothing was asked
    assert requests == []  # nor stored


async def test_the_default_deadline_is_30_minutes_and_the_cap_24_hours(project: Path) -> None:
    day = 24 * 60 * 60 * 1000

    async def interact(request: Any) -> dict[str, Any]:
        return {"name": "x", "parts": ["b"]}

    calls: list[tuple[str, dict[str, Any]]] = [
        ("ask", {"document": FORM}),
        ("ask", {"document": FORM, "timeout_ms": day}),
        ("ask", {"document": FORM, "timeout_ms": day + 1}),
        ("ask", {"document": FORM, "timeout_ms": 0}),
    ]
    results, requests, _, _ = await _turn(project, calls, CallbackFrontEnd(interact=interact))
    assert [r.status for r in results[:2]] == ["ok", "ok"]
    assert [r.error_code for r in results[2:]] == ["panel_invalid", "panel_invalid"]
    assert "24 hours" in _text(results[2])
    opened = [r for r in requests if r["state"] == "pending"]
    assert len(opened) == 2
    async with App.open(project / "raw.json", host=PluginHost()) as app:
        backend = await app.backend()
        stored = [await backend.get_request(r["request_id"]) for r in opened]
    spans = [r.deadline - r.created_at for r in stored if r.deadline is not None]
    assert abs(spans[0] - timedelta(minutes=30)) < timedelta(seconds=5)
    assert abs(spans[1] - timedelta(hours=24)) < timedelta(seconds=5)


async def test_a_request_nobody_answers_expires(project: Path) -> None:
    async def never(request: Any) -> None:
        await anyio.Event().wait()

    calls = [("ask", {"document": FORM, "timeout_ms": 200})]
    results, requests, _, _ = await _turn(project, calls, CallbackFrontEnd(interact=never))
    (result,) = results
    assert result.error_code == "interaction_expired"
    assert _text(result) == "error [interaction_expired]: the user did not answer in time"
    assert [r["state"] for r in requests] == ["pending", "expired"]
    assert requests[1]["answer"] is None


async def test_cancelling_the_turn_cancels_the_request(project: Path) -> None:
    asked = anyio.Event()

    async def interact(request: Any) -> None:
        asked.set()
        await anyio.Event().wait()

    async def cancel(app: App, session: Any) -> None:
        await asked.wait()
        session.cancel("stop")

    results, requests, _, _ = await _turn(
        project, [("ask", {"document": FORM})], CallbackFrontEnd(interact=interact), during=cancel
    )
    (result,) = results
    assert result.error_code == "cancelled"
    assert [r["state"] for r in requests] == ["pending", "cancelled"]


async def test_the_person_cancelling_the_form_cancels_the_request(project: Path) -> None:
    async def skip(request: Any) -> None:
        return None

    results, requests, _, _ = await _turn(
        project, [("ask", {"document": FORM})], CallbackFrontEnd(interact=skip)
    )
    (result,) = results
    assert result.error_code == "cancelled"
    assert "cancelled the question" in _text(result)
    assert [r["state"] for r in requests] == ["pending", "cancelled"]


async def test_nobody_to_ask_is_interaction_unavailable_at_once(project: Path) -> None:
    results, requests, _, _ = await _turn(
        project, [("ask", {"document": FORM})], CallbackFrontEnd()
    )
    (result,) = results
    assert result.error_code == "interaction_unavailable"
    assert requests == []  # nothing stored, nothing waited for


# --- answers by id, from a second front end ------------------------------------------------


async def test_an_invalid_answer_is_refused_and_the_request_stays_pending(project: Path) -> None:
    requested = anyio.Event()
    refused: list[AnswerInvalid] = []

    def on_event(event: Any) -> None:
        if event.to_dict()["type"] == "interaction_requested":
            requested.set()

    async def answer(app: App, session: Any) -> None:
        await requested.wait()
        (pending,) = await app.pending_requests(session.id)
        for values in (
            {"name": "Ada", "parts": ["a", "b", "c"], "extra": "x"},
            {"name": "  ", "tone": "loud", "parts": []},
        ):
            with pytest.raises(AnswerInvalid) as caught:
                await app.answer_request(pending.id, values=values, by="dashboard")
            refused.append(caught.value)
            assert (await app.pending_requests(session.id)) == (pending,)
        with pytest.raises(AnswerInvalid):  # an approval's answer for an interaction
            await app.answer_request(pending.id, approved=True, by="dashboard")
        await app.answer_request(pending.id, values={"name": "Ada", "parts": ["b"]}, by="dashboard")

    results, requests, _, _ = await _turn(
        project,
        [("ask", {"document": FORM})],
        CallbackFrontEnd(on_event=on_event),
        approval_wait=WAIT,
        during=answer,
    )
    first, second = refused
    assert first.code == "answer_invalid"
    assert {e["field"] for e in first.context["errors"]} == {"$.values.extra", "$.values.parts"}
    assert {e["field"] for e in second.context["errors"]} == {
        "$.values.name",
        "$.values.tone",
        "$.values.parts",
    }
    (result,) = results
    assert json.loads(_text(result))["by"] == "dashboard"
    assert [r["state"] for r in requests] == ["pending", "answered"]


async def test_an_approval_and_an_interaction_of_one_session_are_answered_by_id(
    project: Path,
) -> None:
    """The second, test front end: from a task of its own it lists the session's pending
    requests — an approval, then a question (a turn runs its calls in order, so they are
    pending one after the other) — and answers each through the app, by id."""
    arrived = [anyio.Event()]  # the newest is set when a request opens
    listed: list[tuple[str, ...]] = []

    def on_event(event: Any) -> None:
        if event.to_dict()["type"] in ("approval_requested", "interaction_requested"):
            arrived[-1].set()

    async def front_end_two(app: App, session: Any) -> None:
        for _ in range(3):
            await arrived[-1].wait()
            arrived.append(anyio.Event())
            (pending,) = await app.pending_requests(session.id)
            listed.append((pending.kind, pending.show["identity"]))
            if pending.kind == "interaction":
                assert pending.show["document"] == FORM
                await app.answer_request(
                    pending.id, values={"name": "Bo", "parts": ["a"]}, by="second"
                )
            elif pending.show["arguments"] == {"text": "hi"}:
                await app.answer_request(pending.id, approved=False, by="second", message="not now")
            else:
                await app.answer_request(pending.id, approved=True, by="second")

    calls: list[tuple[str, dict[str, Any]]] = [
        ("echo", {"text": "hi"}),
        ("ask", {"document": FORM}),
        ("echo", {"text": "again"}),
    ]
    results, requests, _, _ = await _turn(
        project,
        calls,
        CallbackFrontEnd(on_event=on_event),
        approval_wait=WAIT,
        during=front_end_two,
    )
    declined, asked, approved = results
    assert listed == [
        ("approval", "agent/echo"),
        ("interaction", "agent/ask"),
        ("approval", "agent/echo"),
    ]
    assert declined.error_code == "approval_denied"
    assert _text(declined) == "error [approval_denied]: the user declined this call: not now"
    assert json.loads(_text(asked))["by"] == "second"
    # answering the question granted nothing: the next call still needed its approval
    assert (approved.status, _text(approved)) == ("ok", "again")
    assert [(r["request_kind"], r["state"]) for r in requests] == [
        ("approval", "pending"),
        ("approval", "denied"),
        ("interaction", "pending"),
        ("interaction", "answered"),
        ("approval", "pending"),
        ("approval", "approved"),
    ]
    assert requests[1]["answer"] == {"approved": False, "by": "second", "message": "not now"}


async def test_a_second_front_end_cancels_an_interaction_by_id(project: Path) -> None:
    """Form response actions submit or cancel: the second front end lists the pending
    approval and question and cancels each by id — the approval is refused (it is
    declined, never cancelled) and stays pending until declined; the question is
    cancelled, and the waiting call ends ``cancelled`` at once."""
    arrived = [anyio.Event()]
    refused: list[AnswerInvalid] = []

    def on_event(event: Any) -> None:
        if event.to_dict()["type"] in ("approval_requested", "interaction_requested"):
            arrived[-1].set()

    async def front_end_two(app: App, session: Any) -> None:
        for _ in range(2):
            await arrived[-1].wait()
            arrived.append(anyio.Event())
            (pending,) = await app.pending_requests(session.id)
            if pending.kind == "approval":
                with pytest.raises(AnswerInvalid) as caught:
                    await app.cancel_request(pending.id, by="second")
                refused.append(caught.value)
                assert (await app.pending_requests(session.id)) == (pending,)
                await app.answer_request(pending.id, approved=True, by="second")
            else:
                cancelled = await app.cancel_request(pending.id, by="second")
                assert (cancelled.state, cancelled.answer) == ("cancelled", None)
                with pytest.raises(RequestNotPending) as late:
                    await app.cancel_request(pending.id, by="second")
                assert late.value.context["state"] == "cancelled"

    results, requests, _, _ = await _turn(
        project,
        [("echo", {"text": "hi"}), ("ask", {"document": FORM})],
        CallbackFrontEnd(on_event=on_event),
        approval_wait=WAIT,
        during=front_end_two,
    )
    approved, asked = results
    (refusal,) = refused
    assert refusal.code == "answer_invalid"
    assert (approved.status, _text(approved)) == ("ok", "hi")
    assert asked.error_code == "cancelled"
    assert [(r["request_kind"], r["state"]) for r in requests] == [
        ("approval", "pending"),
        ("approval", "approved"),
        ("interaction", "pending"),
        ("interaction", "cancelled"),
    ]


# --- the handler's time limit ---------------------------------------------------------------


async def test_the_handler_time_limit_is_paused_while_a_request_is_pending(
    project: Path,
) -> None:
    """The agent's handler limit is 300 ms. The person takes 600 ms to answer: the call
    goes on (the request's deadline decided). Working 100 ms after the answer fits in what
    is left of the limit; working 600 ms after it does not: the clock runs again."""

    async def slow_person(request: Any) -> dict[str, Any]:
        await anyio.sleep(0.6)  # longer than the handler's whole limit
        return {"name": "Ada", "parts": ["a"]}

    calls = [("ask", {"document": FORM, "after": 0.1}), ("ask", {"document": FORM, "after": 0.6})]
    results, _, _, _ = await _turn(project, calls, CallbackFrontEnd(interact=slow_person))
    paused, resumed = results
    assert paused.status == "ok", _text(paused)
    assert resumed.error_code == "timeout"


async def test_a_request_made_after_the_handler_first_waited_pauses_the_limit_too(
    project: Path,
) -> None:
    """The handler waits before it asks, so its time limit is already running when it
    first reads ``context.interactions``: the pending request still pauses it."""

    async def slow_person(request: Any) -> dict[str, Any]:
        await anyio.sleep(0.6)  # longer than the handler's whole limit
        return {"name": "Ada", "parts": ["a"]}

    calls = [("ask", {"document": FORM, "before": 0.05, "after": 0.05})]
    results, _, _, _ = await _turn(project, calls, CallbackFrontEnd(interact=slow_person))
    (paused,) = results
    assert paused.status == "ok", _text(paused)


async def test_a_lone_call_asks_too_and_a_decline_message_reaches_the_model(
    project: Path,
) -> None:
    """``App.call_tool`` (``raw tools call``) stores nothing: the front end is asked
    directly, for a question and for an approval alike."""
    from raw_core import ApprovalAnswer

    async def interact(request: Any) -> dict[str, Any]:
        return {"name": "Cy", "parts": ["c"]}

    async def decline(request: Any) -> ApprovalAnswer:
        return ApprovalAnswer(approved=False, by="cli", message="use the staging copy")

    front_end = CallbackFrontEnd(interact=interact, approve=decline, name="cli")
    async with App.open(project / "raw.json", host=PluginHost()) as app:
        asked = await app.call_tool("agent/ask", {"document": FORM}, front_end=front_end)
        declined = await app.call_tool("agent/echo", {"text": "hi"}, front_end=front_end)
        unavailable = await app.call_tool("agent/ask", {"document": FORM})
    assert json.loads(asked.content[0].text)["name"] == "Cy"  # type: ignore[union-attr]
    assert declined.code == "approval_denied"
    assert declined.content[0].text == (  # type: ignore[union-attr]
        "error [approval_denied]: the user declined this call: use the staging copy"
    )
    assert unavailable.code == "interaction_unavailable"


async def test_a_lone_call_whose_front_end_keeps_answering_wrong_ends(project: Path) -> None:
    """A lone call has no session another front end could answer through: a front end
    that answers invalidly at once is asked again a few times (never in a loop that holds
    the event loop), then the call ends ``answer_invalid`` with the fields' errors."""
    asks = 0

    async def invalid(request: Any) -> dict[str, Any]:
        nonlocal asks
        asks += 1
        if asks > 50:  # asked again and again: stop the test, not the machine
            raise RuntimeError("asked without end")
        return {"name": "", "tone": "zz"}

    front_end = CallbackFrontEnd(interact=invalid, name="cli")
    async with App.open(project / "raw.json", host=PluginHost()) as app:
        with anyio.fail_after(WAIT):
            result = await app.call_tool("agent/ask", {"document": FORM}, front_end=front_end)
    assert result.code == "answer_invalid", result.text()
    assert asks == 3
    fields = {error["field"] for error in result.details["errors"]}
    assert "$.values.tone" in fields


async def test_a_lone_calls_deadline_holds_while_a_front_end_answers_wrong(
    project: Path,
) -> None:
    """Each ask waits on the event loop: the request's own deadline still ends it."""

    async def slow_and_wrong(request: Any) -> dict[str, Any]:
        await anyio.sleep(WAIT)
        return {"name": "", "tone": "zz"}

    front_end = CallbackFrontEnd(interact=slow_and_wrong, name="cli")
    async with App.open(project / "raw.json", host=PluginHost()) as app:
        with anyio.fail_after(WAIT / 2):
            result = await app.call_tool(
                "agent/ask", {"document": FORM, "timeout_ms": 200}, front_end=front_end
            )
    assert result.code == "interaction_expired"


def test_an_answers_values_are_frozen_as_arguments_are() -> None:
    """docs/interactions.md: a multi_select field's array is a tuple in
    ``answer.values`` (a read-only mapping), a JSON array wherever the answer is JSON."""
    from raw_core import FrozenDict, InteractionAnswer, thaw

    answer = InteractionAnswer(values={"name": "Ada", "parts": ["a", "c"]}, by="tester")
    assert isinstance(answer.values, FrozenDict)
    assert answer.values["parts"] == ("a", "c")
    assert json.loads(json.dumps(answer.values)) == {"name": "Ada", "parts": ["a", "c"]}
    assert thaw(answer.values) == answer.to_dict()["values"] == {"name": "Ada", "parts": ["a", "c"]}


async def test_a_document_holding_a_lone_surrogate_is_asked_as_json_holds_it(
    project: Path,
) -> None:
    """JSON holds a lone surrogate and UTF-8 does not: the document is measured as stored
    (its ``\\u`` escape), not refused by a Python error."""
    document = {"blocks": [{"type": "text", "text": "odd \ud800 text"}, *FORM["blocks"][1:]]}
    asked: list[Any] = []

    async def person(request: Any) -> dict[str, Any]:
        asked.append(request)
        return {"name": "Ada", "parts": ["a"]}

    results, _, _, _ = await _turn(
        project, [("ask", {"document": document})], CallbackFrontEnd(interact=person)
    )
    (answered,) = results
    assert answered.status == "ok", _text(answered)
    assert len(asked) == 1
