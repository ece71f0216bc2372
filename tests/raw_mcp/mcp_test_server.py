"""A small MCP server for raw's MCP tests, on the SDK's MCPServer (stdio).

Run as ``python mcp_test_server.py [--http PORT]``. ``MCP_TEST_DIR`` names a folder where
the tools leave markers the tests wait on (``slow.started``, ``slow.cancelled``,
``child.pid``). ``MCP_TEST_PAGE`` (a number) pages the tool list; ``MCP_TEST_DESCRIPTION``
names a file whose text is the ``echo`` tool's description (a definition that changes).
``plan`` returns a text item carrying its ``update`` argument as a raw panel update in
``_meta`` (``"raw.panel/2"``), beside a plain text item and one with other ``_meta``;
``respond`` returns the result whose JSON text it is given.
"""

from __future__ import annotations

import base64
import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import anyio
from mcp.server.mcpserver import MCPServer
from mcp.types import (
    CallToolResult,
    ImageContent,
    ListToolsResult,
    PaginatedRequestParams,
    TextContent,
)

DIR = Path(os.environ.get("MCP_TEST_DIR", "."))
PAGE = int(os.environ.get("MCP_TEST_PAGE", "0"))
PNG = base64.b64encode(
    bytes.fromhex(
        "89504e470d0a1a0a0000000d4948445200000001000000010806000000"
        "1f15c4890000000d49444154789c6360000000000200015e2c0aa80000000049454e44ae426082"
    )
).decode()


class PagedServer(MCPServer):
    """Lists its tools ``MCP_TEST_PAGE`` at a time (all at once when 0)."""

    async def _handle_list_tools(self, ctx: Any, params: PaginatedRequestParams | None) -> Any:
        tools = await self.list_tools()
        if not PAGE:
            return ListToolsResult(tools=tools)
        start = int(params.cursor) if params is not None and params.cursor else 0
        end = start + PAGE
        return ListToolsResult(
            tools=tools[start:end], next_cursor=str(end) if end < len(tools) else None
        )


def _description() -> str:
    file = os.environ.get("MCP_TEST_DESCRIPTION")
    if file and Path(file).is_file():
        return Path(file).read_text(encoding="utf-8").strip()
    return "Echo the text back."


server = PagedServer("raw-test")


@server.tool(description=_description())
def echo(text: str) -> str:
    return text


@server.tool(description="Add two numbers.")
def add(a: int, b: int) -> int:
    return a + b


@server.tool(name="files.search", description="A tool whose name has a dot.")
def files_search(pattern: str) -> str:
    return f"searched {pattern}"


@server.tool(description="Sleep, and mark when it starts and when it is cancelled.")
async def slow(seconds: float) -> str:
    (DIR / "slow.started").write_text("started")
    try:
        await anyio.sleep(seconds)
    except BaseException:
        (DIR / "slow.cancelled").write_text("cancelled")
        raise
    return "done"


@server.tool(description="Exit the server in the middle of the call.")
async def crash() -> str:
    (DIR / "crash.started").write_text(str(os.getpid()))
    os._exit(3)


@server.tool(description="Start a child process that outlives nothing; return its pid.")
def spawn_child() -> str:
    child = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(600)"])
    (DIR / "child.pid").write_text(str(child.pid))
    return str(child.pid)


@server.tool(description="Report an error as a tool result.")
def fail(reason: str) -> str:
    raise ValueError(reason)


@server.tool(description="Return a text block and a tiny image.")
def picture() -> list[TextContent | ImageContent]:
    return [
        TextContent(type="text", text="a red dot"),
        ImageContent(type="image", data=PNG, mime_type="image/png"),
    ]


@server.tool(description="Update the plan panel with the JSON text of a panel update.")
def plan(update: str, fail: bool = False) -> CallToolResult:
    return CallToolResult(
        content=[
            TextContent(
                type="text", text="plan updated", _meta={"raw.panel/2": json.loads(update)}
            ),
            TextContent(type="text", text="kept"),
            TextContent(type="text", text="noted", _meta={"example.org/note": {"n": 1}}),
        ],
        is_error=fail,
    )


@server.tool(description="Return the MCP tool result whose JSON text is given.")
def respond(result: str) -> CallToolResult:
    return CallToolResult.model_validate(json.loads(result))


@server.tool(description="Return the value of one environment variable.")
def env(name: str) -> str:
    return os.environ.get(name, "<unset>")


if __name__ == "__main__":
    if len(sys.argv) == 3 and sys.argv[1] == "--http":
        server.run("streamable-http", host="127.0.0.1", port=int(sys.argv[2]))
    else:
        server.run()
