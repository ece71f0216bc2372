"""What raw adds to one MCP tool call, over the MCP SDK's own call on the same server.

One run starts mcp-server-time once, over stdio, through raw's ``mcp/`` source, and times
the same call two ways on that one server process, in alternating rounds:

* the SDK: ``Client.call_tool`` on the SDK client raw's connection holds;
* raw: a dispatcher running all seven steps for ``mcp/time/get_current_time`` — the
  model's JSON text parsed and validated against the tool's schema, the rules, the
  definition check, the call, the result mapped to raw's blocks and capped.

Run: ``uv run python benchmarks/bench_mcp.py``.
"""

from __future__ import annotations

import json
import statistics
import sys
import time
from typing import Any

import anyio

from raw_core import PluginHost
from raw_core.config import parse_config
from raw_core.dispatch import Dispatcher
from raw_core.policy import Policy
from raw_core.tools.calls import ToolCall
from raw_core.tools.identity import parse_identity
from raw_core.tools.loader import ToolLoader
from raw_core.tools.registry import Registry
from raw_core.tools.sources import SourceContext
from raw_mcp.source import McpSource

ROUNDS = 7
CALLS = 200
ARGUMENTS = {"timezone": "UTC"}
COMMAND = [sys.executable, "-m", "mcp_server_time", "--local-timezone", "UTC"]


async def sdk_round(client: Any) -> float:
    start = time.perf_counter()
    for _ in range(CALLS):
        await client.call_tool("get_current_time", ARGUMENTS)
    return (time.perf_counter() - start) / CALLS


async def raw_round(dispatcher: Dispatcher) -> float:
    call = ToolCall(id="call_1", name="get_current_time", arguments=json.dumps(ARGUMENTS))
    start = time.perf_counter()
    for _ in range(CALLS):
        result = await dispatcher.dispatch(call)
        assert result.status == "ok", result.to_dict()
    return (time.perf_counter() - start) / CALLS


async def main() -> None:
    host = PluginHost()
    host.load_entry_points()
    document = {
        "mcp": {"servers": {"time": {"command": COMMAND}}},
        "agents": {"bench": {"tools": {"use": ["mcp/time/get_current_time"]}}},
    }
    config = parse_config(json.dumps(document), host=host)
    sdk: list[float] = []
    raw: list[float] = []
    async with anyio.create_task_group() as tasks:
        context = SourceContext(
            config=config,
            host=host,
            loader=ToolLoader(),
            plugin="mcp-client",
            section=config.sections["mcp"],
            tasks=tasks,
        )
        source = McpSource(context)
        await source.open()
        try:
            tool = await source.resolve(parse_identity("mcp/time/get_current_time"))
            dispatcher = Dispatcher(Registry([tool]), Policy.bind([], [tool]), host=host)
            connection = source.connection("time")
            assert connection is not None
            client = connection.client
            await sdk_round(client)  # warm both paths once
            await raw_round(dispatcher)
            for _ in range(ROUNDS):
                sdk.append(await sdk_round(client))
                raw.append(await raw_round(dispatcher))
        finally:
            await source.close()
            tasks.cancel_scope.cancel()
    sdk_us, raw_us = statistics.median(sdk) * 1e6, statistics.median(raw) * 1e6
    print(f"{ROUNDS} rounds of {CALLS} calls of get_current_time, one server (medians)")
    print("| path | µs per call |\n| --- | --- |")
    print(f"| MCP SDK `Client.call_tool` | {sdk_us:.0f} |")
    print(f"| raw dispatcher, seven steps | {raw_us:.0f} |")
    print(f"| raw's overhead | {raw_us - sdk_us:.0f} ({(raw_us / sdk_us - 1) * 100:.0f} %) |")


if __name__ == "__main__":
    anyio.run(main)
