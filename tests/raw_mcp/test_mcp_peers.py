"""raw's MCP client against real servers nobody on this project wrote: mcp-server-time
(PyPI, stdio) and @modelcontextprotocol/server-everything (npm, over stdio and over
streamable HTTP on 127.0.0.1), through the app and through the ``raw`` command."""

from __future__ import annotations

import json
import os
import signal
import sys
from pathlib import Path
from typing import Any

import anyio
import pytest
from click.testing import CliRunner

from raw_core import App, PluginHost
from raw_core.cli import cli
from raw_core.tools.calls import ApprovalRequest, CancellationSignal, ToolCall
from tests.conftest import _descendants
from tests.raw_mcp.conftest import HttpPeer, bytes_read, make_config, wait_for_read

pytestmark = pytest.mark.anyio

TIME = {"command": [sys.executable, "-m", "mcp_server_time", "--local-timezone", "UTC"]}


def everything_servers(everything: list[str], http: HttpPeer) -> dict[str, Any]:
    return {
        "stdio": {"command": [*everything, "stdio"]},
        "http": {"url": http.url, "timeout_ms": 5000},
    }


def stdio_everything() -> int:
    """The process id of the server-everything this test's session started over stdio."""
    (pid,) = [pid for pid in _descendants(os.getpid()) if _is_stdio_everything(pid)]
    return pid


async def test_mcp_server_time_lists_calls_and_reports_an_error_result(
    mcp_host: PluginHost,
) -> None:
    config = make_config(mcp_host, {"time": TIME}, ["mcp/time/get_current_time"])
    async with App.open(config, host=mcp_host) as app, app.agent() as agent:
        definitions = agent.definitions()
        dispatcher = agent.dispatcher(host=mcp_host)

        async def call(arguments: dict[str, Any]) -> Any:
            return await dispatcher.dispatch(
                ToolCall(id="c", name="get_current_time", arguments=json.dumps(arguments))
            )

        now = await call({"timezone": "Europe/Paris"})
        wrong = await call({"timezone": "Mars/Olympus"})
        missing = await call({})
    assert [d.identity for d in definitions] == ["mcp/time/get_current_time"]
    assert "timezone" in definitions[0].input_schema["properties"]
    assert now.status == "ok"
    assert "Europe/Paris" in now.text()
    assert (wrong.status, wrong.code) == ("error", "tool_error")
    assert "Mars/Olympus" in wrong.text()
    assert missing.code == "invalid_arguments"  # raw checked the schema: nothing was sent


async def test_mcp_server_time_selects_only_what_tools_use_names(
    mcp_host: PluginHost,
) -> None:
    config = make_config(mcp_host, {"time": TIME}, ["mcp/time/convert_time"])
    async with App.open(config, host=mcp_host) as app, app.agent() as agent:
        names = [d.name for d in agent.definitions()]
        dispatcher = agent.dispatcher(host=mcp_host)
        arguments = {"source_timezone": "UTC", "time": "12:00", "target_timezone": "Asia/Tokyo"}
        converted = await dispatcher.dispatch(
            ToolCall(id="a", name="convert_time", arguments=json.dumps(arguments))
        )
        unselected = await dispatcher.dispatch(
            ToolCall(id="b", name="get_current_time", arguments='{"timezone": "UTC"}')
        )
    assert names == ["convert_time"]
    assert "21:00" in converted.text()
    assert unselected.code == "tool_unknown"


@pytest.mark.parametrize("transport", ["stdio", "http"])
async def test_server_everything_calls_results_and_rules(
    mcp_host: PluginHost, everything: list[str], everything_http: HttpPeer, transport: str
) -> None:
    servers = everything_servers(everything, everything_http)
    use = [
        f"mcp/{transport}/{name}"
        for name in ("echo", "get-sum", "get-tiny-image", "get-structured-content")
    ]
    rules = [
        {
            "match": f"mcp/{transport}/echo",
            "effect": "ask",
            "when": {"source": "arguments", "any": "message", "regex": "secret"},
        }
    ]
    asked: list[ApprovalRequest] = []

    async def decline(request: ApprovalRequest) -> bool:
        asked.append(request)
        return False

    config = make_config(mcp_host, servers, use, rules=rules)
    async with App.open(config, host=mcp_host) as app, app.agent() as agent:
        names = [d.name for d in agent.definitions()]
        dispatcher = agent.dispatcher(host=mcp_host, approval=decline)

        async def call(name: str, arguments: dict[str, Any]) -> Any:
            return await dispatcher.dispatch(
                ToolCall(id="c", name=name, arguments=json.dumps(arguments))
            )

        echoed = await call("echo", {"message": "hello"})
        asking = await call("echo", {"message": "the secret plan"})
        summed = await call("get-sum", {"a": 2, "b": 40})
        image = await call("get-tiny-image", {})
        structured = await call("get-structured-content", {"location": "Chicago"})
    assert names == ["echo", "get-sum", "get-tiny-image", "get-structured-content"]
    assert "hello" in echoed.text()
    assert asking.code == "approval_denied"
    assert [r.arguments["message"] for r in asked] == ["the secret plan"]
    assert "42" in summed.text()
    assert "image" in [b["type"] for b in image.to_dict()["content"]]
    content = structured.to_dict()["content"]
    # the server sends the JSON as text too: the model reads it once
    assert [b["type"] for b in content] == ["text"]
    assert json.loads(content[0]["text"]).keys() >= {"temperature", "conditions"}


@pytest.mark.parametrize("transport", ["stdio", "http"])
async def test_server_everything_cancel_and_timeout(
    mcp_host: PluginHost, everything: list[str], everything_http: HttpPeer, transport: str
) -> None:
    servers = everything_servers(everything, everything_http)
    servers[transport]["timeout_ms"] = 1500
    use = [f"mcp/{transport}/trigger-long-running-operation", f"mcp/{transport}/echo"]
    config = make_config(mcp_host, servers, use)
    async with App.open(config, host=mcp_host) as app, app.agent() as agent:
        dispatcher = agent.dispatcher(host=mcp_host)
        long = ToolCall(
            id="c", name="trigger-long-running-operation", arguments='{"duration": 60, "steps": 2}'
        )
        signal_ = CancellationSignal()
        results: list[Any] = []
        server = stdio_everything() if transport == "stdio" else everything_http.pid
        with anyio.fail_after(60):
            async with anyio.create_task_group() as group:

                async def run() -> None:
                    results.append(await dispatcher.dispatch(long, signal=signal_))

                before = bytes_read(server)
                group.start_soon(run)
                await anyio.to_thread.run_sync(wait_for_read, server, before)
                signal_.cancel("stopped by the user")
            timed_out = await dispatcher.dispatch(long)
            after = await dispatcher.dispatch(
                ToolCall(id="d", name="echo", arguments='{"message": "after"}')
            )
    assert results[0].code == "cancelled"
    assert timed_out.code == "timeout"
    assert "after" in after.text(), after.to_dict()


async def test_server_everything_killed_mid_call_then_restarted(
    mcp_host: PluginHost, everything: list[str], everything_http: HttpPeer
) -> None:
    servers = everything_servers(everything, everything_http)
    use = ["mcp/stdio/trigger-long-running-operation", "mcp/stdio/echo"]
    config = make_config(mcp_host, servers, use)
    async with App.open(config, host=mcp_host) as app, app.agent() as agent:
        dispatcher = agent.dispatcher(host=mcp_host)
        node = stdio_everything()
        long = ToolCall(
            id="c", name="trigger-long-running-operation", arguments='{"duration": 60, "steps": 2}'
        )
        results: list[Any] = []
        with anyio.fail_after(60):
            async with anyio.create_task_group() as group:

                async def run() -> None:
                    results.append(await dispatcher.dispatch(long))

                before = bytes_read(node)
                group.start_soon(run)
                await anyio.to_thread.run_sync(wait_for_read, node, before)
                os.kill(node, signal.SIGKILL)
            after = await dispatcher.dispatch(
                ToolCall(id="d", name="echo", arguments='{"message": "back"}')
            )
    assert results[0].code == "mcp_server_failed"
    assert "back" in after.text(), after.to_dict()


def _is_stdio_everything(pid: int) -> bool:
    try:
        argv = Path(f"/proc/{pid}/cmdline").read_text(errors="replace").split("\0")
    except OSError:
        return False
    return any("server-everything" in part for part in argv) and "stdio" in argv


def run_raw(args: list[str], config: Path, cwd: Path) -> Any:
    """``raw ARGS --config CONFIG`` in this process (the console script's own code)."""
    env = {"XDG_STATE_HOME": str(cwd / "state"), "XDG_CONFIG_HOME": str(cwd)}
    return CliRunner().invoke(cli, [*args, "--config", str(config)], env=env)


def test_raw_tools_list_and_call_against_real_servers(
    everything: list[str], everything_http: HttpPeer, tmp_path: Path
) -> None:
    document = {
        "mcp": {"servers": {"time": TIME, **everything_servers(everything, everything_http)}},
        "agents": {
            "a": {
                "tools": {
                    "use": ["mcp/time/get_current_time", "mcp/stdio/echo", "mcp/http/get-sum"]
                }
            }
        },
    }
    config = tmp_path / "raw.json"
    config.write_text(json.dumps(document))
    listed = run_raw(["tools", "list"], config, tmp_path)
    assert listed.exit_code == 0, listed.output
    assert "get_current_time  (mcp/time/get_current_time)" in listed.stdout
    assert listed.stdout.count("definition sha256:") == 3
    as_json = run_raw(["tools", "list", "--json"], config, tmp_path)
    entries = json.loads(as_json.stdout)
    assert [e["identity"] for e in entries] == [
        "mcp/time/get_current_time",
        "mcp/stdio/echo",
        "mcp/http/get-sum",
    ]
    assert all(len(e["definition_hash"]) == 64 for e in entries)
    document["agents"]["a"]["tools"]["use"] = ["mcp/time/get_current_time", "mcp/http/get-sum"]
    config.write_text(json.dumps(document))
    called = run_raw(
        ["tools", "call", "mcp/http/get-sum", '{"a": 1, "b": 2}', "--json"], config, tmp_path
    )
    assert called.exit_code == 0, called.output
    assert "3" in json.dumps(json.loads(called.stdout)["content"])
    failed = run_raw(
        ["tools", "call", "mcp/time/get_current_time", '{"timezone": "Nowhere/None"}', "--json"],
        config,
        tmp_path,
    )
    assert failed.exit_code == 1
    assert json.loads(failed.stdout)["code"] == "tool_error"
