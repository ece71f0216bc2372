"""The mcp/ source against a real MCP server (tests/raw_mcp/mcp_test_server.py, on the
SDK's MCPServer), through the app as every front end uses it: only what is selected is
started and added, calls go through the whole dispatch pipeline, and a server that is
cancelled, times out, dies or changes under the session gives a clear result."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import anyio
import pytest

from raw_core import App, PluginHost
from raw_core.errors import RawError
from raw_core.tools.calls import ApprovalRequest, CancellationSignal, ToolCall
from tests.raw_mcp.conftest import (
    alive,
    make_config,
    server_entry,
    wait_for_file,
    wait_until_gone,
)

pytestmark = pytest.mark.anyio


async def load_error(app: App) -> RawError:
    with pytest.raises(RawError) as caught:
        async with app.agent():
            pass
    return caught.value


async def test_only_the_selected_tools_of_the_named_servers_are_added(
    mcp_host: PluginHost, marks: Path, tmp_path: Path
) -> None:
    servers = {
        "t": server_entry(marks),
        # Never started: no selected tool names it (its command does not even exist).
        "unused": {"command": [str(tmp_path / "no-such-server")]},
    }
    config = make_config(mcp_host, servers, ["mcp/t/echo", "mcp/t/files.search"])
    async with App.open(config, host=mcp_host) as app:
        listing = await app.list_tools()
    assert [(d.identity, d.name) for d in listing.definitions] == [
        ("mcp/t/echo", "echo"),
        ("mcp/t/files.search", "files_search"),
    ]
    echo = listing.definitions[0]
    assert echo.description == "Echo the text back."
    assert echo.input_schema["properties"]["text"]["type"] == "string"


async def test_the_paged_tool_list_is_read_in_full(mcp_host: PluginHost, marks: Path) -> None:
    entry = server_entry(marks)
    entry["env"]["MCP_TEST_PAGE"] = {"env": "RAW_MCP_TEST_PAGE"}
    config = make_config(mcp_host, {"t": entry}, ["mcp/t/env", "mcp/t/no_such_tool"])
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("RAW_MCP_TEST_PAGE", "2")
        async with App.open(config, host=mcp_host) as app:
            error = await load_error(app)
    # env is on the last page: found; the missing tool's error names every tool listed.
    assert error.code == "tool_not_found"
    assert error.context["field"] == "$.agents.a.tools.use[1]"
    assert "mcp/t/no_such_tool" in error.message
    for name in ("echo", "add", "files.search", "slow", "crash", "picture", "env"):
        assert name in error.message


async def test_calls_map_results_to_blocks_and_errors_to_results(
    mcp_host: PluginHost, marks: Path
) -> None:
    use = ["mcp/t/echo", "mcp/t/add", "mcp/t/fail", "mcp/t/picture"]
    config = make_config(mcp_host, {"t": server_entry(marks)}, use)
    async with App.open(config, host=mcp_host) as app, app.agent() as agent:
        dispatcher = agent.dispatcher(host=mcp_host)

        async def call(name: str, arguments: dict[str, Any]) -> Any:
            return await dispatcher.dispatch(
                ToolCall(id="c", name=name, arguments=json.dumps(arguments))
            )

        echoed = await call("echo", {"text": "héllo"})
        added = await call("add", {"a": 2, "b": 3})
        failed = await call("fail", {"reason": "no such file"})
        picture = await call("picture", {})
        invalid = await call("add", {"a": "two", "b": 3})
    assert echoed.status == "ok"
    assert echoed.to_dict()["content"][0] == {"type": "text", "text": "héllo"}
    assert {"type": "json", "json": {"result": 5}} in added.to_dict()["content"]
    assert (failed.status, failed.code) == ("error", "tool_error")
    assert [b["type"] for b in picture.to_dict()["content"]] == ["text", "image"]
    assert picture.to_dict()["content"][1]["media_type"] == "image/png"
    # raw validates against the tool's schema before anything is sent
    assert (invalid.code, invalid.details.get("field")) == ("invalid_arguments", "$.a")


async def test_a_cancelled_call_sends_the_protocols_cancel(
    mcp_host: PluginHost, marks: Path
) -> None:
    config = make_config(mcp_host, {"t": server_entry(marks)}, ["mcp/t/slow", "mcp/t/echo"])
    async with App.open(config, host=mcp_host) as app, app.agent() as agent:
        dispatcher = agent.dispatcher(host=mcp_host)
        signal = CancellationSignal()
        call = ToolCall(id="c", name="slow", arguments='{"seconds": 120}')
        results: list[Any] = []

        async def run() -> None:
            results.append(await dispatcher.dispatch(call, signal=signal))

        with anyio.fail_after(60):
            async with anyio.create_task_group() as group:
                group.start_soon(run)
                await anyio.to_thread.run_sync(wait_for_file, marks / "slow.started")
                signal.cancel("the user pressed Ctrl-C")
            # the server stopped the handler: it received notifications/cancelled
            await anyio.to_thread.run_sync(wait_for_file, marks / "slow.cancelled")
            after = await dispatcher.dispatch(
                ToolCall(id="d", name="echo", arguments='{"text": "still here"}')
            )
    assert results[0].code == "cancelled"
    assert after.status == "ok"


async def test_a_call_past_timeout_ms_is_cancelled_and_the_next_restarts_the_server(
    mcp_host: PluginHost, marks: Path
) -> None:
    entry = {**server_entry(marks), "timeout_ms": 500}
    config = make_config(mcp_host, {"t": entry}, ["mcp/t/slow", "mcp/t/crash"])
    async with App.open(config, host=mcp_host) as app:
        with anyio.fail_after(60):
            timed_out = await app.call_tool("mcp/t/slow", {"seconds": 120})
    assert timed_out.code == "timeout"
    assert "timeout_ms" in (timed_out.message or "")
    assert wait_for_file(marks / "slow.cancelled") == "cancelled"


async def test_a_server_killed_mid_call_is_an_error_and_the_next_call_restarts_it(
    mcp_host: PluginHost, marks: Path
) -> None:
    config = make_config(mcp_host, {"t": server_entry(marks)}, ["mcp/t/crash", "mcp/t/env"])
    async with App.open(config, host=mcp_host) as app, app.agent() as agent:
        dispatcher = agent.dispatcher(host=mcp_host)
        with anyio.fail_after(60):
            crashed = await dispatcher.dispatch(ToolCall(id="c", name="crash", arguments="{}"))
            first_pid = int(wait_for_file(marks / "crash.started"))
            again = await dispatcher.dispatch(
                ToolCall(id="d", name="env", arguments='{"name": "MCP_TEST_DIR"}')
            )
    assert crashed.code == "mcp_server_failed"
    assert "the next call starts it again" in (crashed.message or "")
    assert again.status == "ok", again.to_dict()
    assert again.to_dict()["content"][0]["text"] == str(marks)
    assert not alive(first_pid)


async def test_closing_the_session_stops_the_server_with_its_process_group(
    mcp_host: PluginHost, marks: Path
) -> None:
    config = make_config(mcp_host, {"t": server_entry(marks)}, ["mcp/t/spawn_child"])
    async with App.open(config, host=mcp_host) as app:
        result = await app.call_tool("mcp/t/spawn_child", {})
    child = int(result.text().split("\n")[0])
    assert wait_until_gone(child), "the server's child outlived the session"


async def test_a_when_rule_on_an_mcp_tools_argument_asks(mcp_host: PluginHost, marks: Path) -> None:
    rules = [
        {
            "match": "mcp/t/*",
            "effect": "ask",
            "when": {"source": "arguments", "any": "text", "regex": "^rm "},
        }
    ]
    config = make_config(mcp_host, {"t": server_entry(marks)}, ["mcp/t/echo"], rules=rules)
    asked: list[ApprovalRequest] = []

    async def decline(request: ApprovalRequest) -> bool:
        asked.append(request)
        return False

    async with App.open(config, host=mcp_host) as app, app.agent() as agent:
        dispatcher = agent.dispatcher(host=mcp_host, approval=decline)
        plain = await dispatcher.dispatch(ToolCall(id="a", name="echo", arguments='{"text": "ls"}'))
        risky = await dispatcher.dispatch(
            ToolCall(id="b", name="echo", arguments='{"text": "rm -rf /"}')
        )
    assert plain.status == "ok"
    assert risky.code == "approval_denied"
    assert [r.identity for r in asked] == ["mcp/t/echo"]
    assert dict(asked[0].arguments) == {"text": "rm -rf /"}


async def test_a_rule_on_a_field_the_schema_lacks_is_a_config_error(
    mcp_host: PluginHost, marks: Path
) -> None:
    rules = [
        {
            "match": "mcp/t/echo",
            "effect": "ask",
            "when": {"source": "arguments", "any": "nope", "regex": "x"},
        }
    ]
    config = make_config(mcp_host, {"t": server_entry(marks)}, ["mcp/t/echo"], rules=rules)
    async with App.open(config, host=mcp_host) as app:
        error = await load_error(app)
    assert error.code == "config_invalid"
    assert error.context.get("tool") == "mcp/t/echo"


async def test_two_servers_with_one_tool_name_conflict_until_one_is_renamed(
    mcp_host: PluginHost, marks: Path
) -> None:
    servers = {"one": server_entry(marks), "two": server_entry(marks)}
    use = ["mcp/one/echo", "mcp/two/echo"]
    async with App.open(make_config(mcp_host, servers, use), host=mcp_host) as app:
        error = await load_error(app)
    assert error.code == "tool_name_conflict"
    servers["two"] = {**servers["two"], "tools": {"echo": {"name": "echo_two"}}}
    config = make_config(mcp_host, servers, use)
    async with App.open(config, host=mcp_host) as app, app.agent() as agent:
        names = [d.name for d in agent.definitions()]
        result = await agent.dispatcher(host=mcp_host).dispatch(
            ToolCall(id="a", name="echo_two", arguments='{"text": "via the rename"}')
        )
    assert names == ["echo", "echo_two"]
    assert result.text().startswith("via the rename")


async def test_a_server_that_cannot_start_is_mcp_server_failed(
    mcp_host: PluginHost, tmp_path: Path
) -> None:
    missing = {"s": {"command": [str(tmp_path / "no-such-server")]}}
    async with App.open(make_config(mcp_host, missing, ["mcp/s/x"]), host=mcp_host) as app:
        error = await load_error(app)
    assert error.code == "mcp_server_failed"
    assert "no such program" in error.message
    assert error.context["field"] == "$.agents.a.tools.use[0]"
    exits = {"s": {"command": ["sh", "-c", "echo 'bad token' >&2; exit 1"]}}
    async with App.open(make_config(mcp_host, exits, ["mcp/s/x"]), host=mcp_host) as app:
        error = await load_error(app)
    assert error.code == "mcp_server_failed"
    assert "bad token" in error.message  # its stderr says why


async def test_a_secrets_value_never_appears_in_an_error(
    mcp_host: PluginHost, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("RAW_MCP_SECRET", "s3cr3t-value")
    entry = {
        "command": ["sh", "-c", 'echo "started with $TOKEN" >/dev/null; exit 1'],
        "env": {"TOKEN": {"env": "RAW_MCP_SECRET"}},
    }
    async with App.open(make_config(mcp_host, {"s": entry}, ["mcp/s/x"]), host=mcp_host) as app:
        error = await load_error(app)
    assert error.code == "mcp_server_failed"
    assert "s3cr3t-value" not in json.dumps(error.to_dict())
    monkeypatch.delenv("RAW_MCP_SECRET")
    async with App.open(make_config(mcp_host, {"s": entry}, ["mcp/s/x"]), host=mcp_host) as app:
        error = await load_error(app)
    assert error.code == "mcp_server_failed"
    assert "RAW_MCP_SECRET, which is not set" in error.message
    assert error.context["field"] == "$.mcp.servers.s.env.TOKEN"
    assert error.context["tool"] == "mcp/s/x"
