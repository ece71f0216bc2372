"""The pieces of raw-acp that need no process: what events become, the outbox's order,
the config's ``acp`` key, and the refusal of a client's MCP servers."""

from __future__ import annotations

from typing import Any

import anyio
import pytest
from acp import RequestError
from acp.schema import McpServerStdio

from raw_acp import updates
from raw_acp.client_mcp import AcpSection, ClientServers, parse_acp_section
from raw_acp.frontend import MAX_JOINED, Outbox
from raw_core import Config
from raw_core.errors import ConfigInvalid


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
