"""The pieces of raw-acp that need no process: what events become, the outbox's order,
the config's ``acp`` key, the refusal of a client's MCP servers, and a form as an
elicitation."""

from __future__ import annotations

from typing import Any

import anyio
import pytest
from acp import RequestError
from acp.schema import CreateElicitationResponse, ElicitationSchema, McpServerStdio
from pydantic import TypeAdapter

from raw_acp import elicitation, updates
from raw_acp.client_mcp import AcpSection, ClientServers, parse_acp_section
from raw_acp.frontend import MAX_ASKS, MAX_JOINED, AcpFrontEnd, Outbox
from raw_core import Config, InteractionRequest
from raw_core.errors import ConfigInvalid, InteractionUnavailable


def test_a_calls_kind_comes_from_its_effects_then_its_tool() -> None:
    assert updates.tool_kind("builtin/read_file") == "read"
    assert updates.tool_kind("builtin/bash") == "execute"
    assert updates.tool_kind("mcp/time/get_current_time") == "other"
    deleting = {"files": [{"path": "a", "operation": "delete"}]}
    assert updates.tool_kind("builtin/write_file", deleting) == "delete"
    moving = {
        "files": [
            {"path": "a", "operation": "rename_source"},
            {"path": "b", "operation": "rename_destination"},
        ]
    }
    assert updates.tool_kind("builtin/write_file", moving) == "move"
    writing = {"files": [{"path": "a", "operation": "write"}]}
    assert updates.tool_kind("builtin/write_file", writing) == "edit"


def test_locations_are_the_effects_files_made_absolute_each_once() -> None:
    effects = {
        "files": [
            {"path": "src/a.py", "operation": "write"},
            {"path": "/etc/hosts", "operation": "write"},
            {"path": "src/./a.py", "operation": "write"},
            {"operation": "write"},
            "not an entry",
        ]
    }
    found = [location.path for location in updates.locations(effects, "/work")]
    assert found == ["/work/src/a.py", "/etc/hosts"]
    assert updates.locations(None, "/work") == []
    assert updates.locations({"files": "nope"}, "/work") == []


def test_only_an_acp_plan_panel_becomes_a_plan() -> None:
    document = {
        "blocks": [
            {"type": "text", "text": "not a plan"},
            {"type": "checklist", "items": [{"text": "a", "status": "done"}]},
            {"type": "checklist", "items": [{"text": "b", "status": "pending"}]},
        ]
    }
    assert updates.plan_update({"acp_plan": False}, document) is None
    assert updates.plan_update(None, document) is None
    plan = updates.plan_update({"acp_plan": True}, document)
    assert plan is not None
    assert [(e.content, e.status) for e in plan.entries] == [("a", "completed"), ("b", "pending")]
    closed = updates.plan_update({"acp_plan": True}, None)
    assert closed is not None
    assert closed.entries == []


class _Client:
    def __init__(self) -> None:
        self.sent: list[tuple[str, Any]] = []

    async def session_update(self, session_id: str, update: Any) -> None:
        self.sent.append((session_id, update))


@pytest.mark.anyio
async def test_the_outbox_keeps_order_and_joins_queued_text() -> None:
    client = _Client()
    outbox = Outbox(client)
    plan = updates.plan_update({"acp_plan": True}, {"blocks": []})
    for piece in ("Hel", "lo", " world"):
        outbox.put_text("s1", piece)
    outbox.put("s1", plan)
    outbox.put_text("s1", "after")
    outbox.put_text("s2", "other session")
    outbox.put_text("s1", "x" * (MAX_JOINED + 10))
    outbox.put_text("s1", "tail")
    async with anyio.create_task_group() as group:
        group.start_soon(outbox.run)
        with anyio.fail_after(10):
            await outbox.drain()
        outbox.close()
    shown = [
        (sid, getattr(getattr(u, "content", None), "text", u.session_update))
        for sid, u in client.sent
    ]
    assert shown == [
        ("s1", "Hello world"),
        ("s1", "plan"),
        ("s1", "after"),
        ("s2", "other session"),
        ("s1", "x" * (MAX_JOINED + 10)),
        ("s1", "tail"),
    ]


def test_the_acp_key_is_checked() -> None:
    assert parse_acp_section({}) == AcpSection(client_mcp_servers=False)
    assert parse_acp_section({"client_mcp_servers": True}).client_mcp_servers is True
    with pytest.raises(ConfigInvalid) as caught:
        parse_acp_section({"client_mcp_servers": "yes"})
    assert caught.value.field == "$.acp.client_mcp_servers"
    with pytest.raises(ConfigInvalid) as unknown:
        parse_acp_section({"servers": []})
    assert unknown.value.field == "$.acp.servers"
    with pytest.raises(ConfigInvalid):
        parse_acp_section([])


def _server(**fields: Any) -> McpServerStdio:
    return McpServerStdio.model_validate(
        {"name": "time", "command": "/usr/bin/true", "args": [], "env": [], **fields}
    )


def test_client_mcp_servers_need_the_opt_in_and_no_secrets() -> None:
    assert ClientServers.parse([], Config(agents={})) == ClientServers()
    with pytest.raises(RequestError) as refused:
        ClientServers.parse([_server()], Config(agents={}))
    assert "client_mcp_servers" in str(refused.value.data)
    opted = Config(agents={}, sections={"acp": AcpSection(client_mcp_servers=True)})
    assert ClientServers.parse([_server(args=["-x"])], opted).servers == (
        ("time", ("/usr/bin/true", "-x")),
    )
    with pytest.raises(RequestError) as secret:
        ClientServers.parse([_server(env=[{"name": "TOKEN", "value": "s3cret"}])], opted)
    assert "s3cret" not in str(secret.value.data)
    with pytest.raises(RequestError):
        ClientServers.parse([_server(), _server()], opted)


def test_a_replayed_approval_is_its_end_with_the_effects_apart() -> None:
    from types import SimpleNamespace

    from raw_acp.history import _item_updates
    from raw_core import ApprovalAnswer, RequestEntry

    effects = {"files": [{"path": "/w/a.txt", "operation": "delete"}]}
    show = {"identity": "builtin/write_file", "arguments": {"x": 1}, "effects": effects}
    front_end: Any = SimpleNamespace(cwd="/w", identities={})
    opened = RequestEntry(
        request_id="req_1", request_kind="approval", tool_call_id="c1", state="pending", show=show
    )
    ended = RequestEntry(
        request_id="req_1",
        request_kind="approval",
        tool_call_id="c1",
        state="denied",
        show=show,
        answer=ApprovalAnswer(approved=False, by="acp"),
    )
    assert _item_updates(opened, front_end, {}) == []
    (update,) = _item_updates(ended, front_end, {})
    data = update.model_dump(by_alias=True, exclude_none=True)
    assert data["kind"] == "delete"
    assert data["_meta"]["raw"]["approval"] == "denied"


# --- a tool's question as form elicitation ----------------------------------------------

FORM = {
    "type": "form",
    "title": "Pick",
    "fields": [
        {"type": "text", "id": "why", "label": "Why?", "placeholder": "a reason"},
        {
            "type": "multi_select",
            "id": "tags",
            "label": "Tags",
            "options": [{"value": "a", "label": "A"}, {"value": "b", "label": "B"}],
            "min_selected": 1,
            "max_selected": 2,
            "default": ["a"],
        },
    ],
}


def test_a_form_becomes_the_requested_schema_and_its_texts_the_message() -> None:
    schema = elicitation.requested_schema(FORM)
    assert schema == {
        "type": "object",
        "title": "Pick",
        "required": ["tags"],
        "properties": {
            "why": {"type": "string", "title": "Why?", "description": "a reason"},
            "tags": {
                "type": "array",
                "title": "Tags",
                "items": {"anyOf": [{"const": "a", "title": "A"}, {"const": "b", "title": "B"}]},
                "minItems": 1,
                "maxItems": 2,
                "default": ["a"],
            },
        },
    }
    ElicitationSchema.model_validate(schema)  # what the protocol accepts
    document = {"blocks": [{"type": "text", "text": "Before you go:"}, FORM]}
    assert elicitation.message_of(document, "Questions") == "Pick\n\nBefore you go:"
    assert elicitation.message_of({"blocks": [{**FORM, "title": ""}]}, "Questions") == "Questions"


class _Eliciting:
    """The client's side of ``elicitation/create``: each answer in turn (an exception is
    raised), recording the messages it was sent."""

    def __init__(self, *answers: Any) -> None:
        self.answers = list(answers)
        self.messages: list[str] = []

    async def create_elicitation(self, message: str, mode: Any, **kwargs: Any) -> Any:
        self.messages.append(message)
        answer = self.answers.pop(0)
        if isinstance(answer, Exception):
            raise answer
        return TypeAdapter(CreateElicitationResponse).validate_python(answer)


async def _interact(client: _Eliciting) -> Any:
    outbox = Outbox(client)
    front_end = AcpFrontEnd(outbox, client, cwd="/work", can_elicit=True)
    request = InteractionRequest(
        identity="local/pick",
        tool_call_id="call-1",
        panel="questions",
        document={"blocks": [FORM]},
        timeout_ms=60_000,
        signal=None,
    )
    found: list[Any] = []
    async with anyio.create_task_group() as group:
        group.start_soon(outbox.run)
        with anyio.fail_after(10):
            try:
                found.append(await front_end.interact(request))
            except InteractionUnavailable as error:
                found.append(error)
            finally:
                outbox.close()
    if isinstance(found[0], Exception):
        raise found[0]
    return found[0]


@pytest.mark.anyio
async def test_a_wrong_answer_is_asked_again_at_most_max_asks_times() -> None:
    wrong = {"action": "accept", "content": {"tags": ["c"]}}
    client = _Eliciting(*[wrong] * (MAX_ASKS + 1))
    # The last wrong answer goes to the request model, which keeps the request pending.
    assert await _interact(client) == {"tags": ["c"]}
    assert len(client.messages) == MAX_ASKS
    assert client.messages[0] == "Pick"
    assert client.messages[1].startswith("The previous answer did not fit the form:\n- tags: ")
    fixed = _Eliciting(wrong, {"action": "accept", "content": {"tags": ["b"], "why": "x"}})
    assert await _interact(fixed) == {"why": "x", "tags": ["b"]}
    assert await _interact(_Eliciting({"action": "accept"})) == {"why": "", "tags": ["a"]}


@pytest.mark.anyio
async def test_a_client_that_cannot_be_asked_is_interaction_unavailable() -> None:
    assert await _interact(_Eliciting({"action": "decline"})) is None
    with pytest.raises(InteractionUnavailable) as caught:
        await _interact(_Eliciting(RequestError.method_not_found("elicitation/create")))
    assert "could not be asked" in caught.value.message
    outbox = Outbox(None)
    assert AcpFrontEnd(outbox, None, cwd=None).can_interact is False  # no elicitation: no ask
    outbox.close()
    await outbox.run()
