"""The config's mcp key: every key checked, unknown keys refused with their path, no
literal secret accepted; and raw-core without raw-mcp says what to install. Nothing
here starts a server or imports the MCP SDK."""

from __future__ import annotations

import json
import subprocess
import sys
from typing import Any

import pytest

from raw_core import PluginHost
from raw_core.config import parse_config
from raw_core.errors import ConfigInvalid, RawError
from raw_core.tools.loader import ToolLoader
from raw_core.tools.sources import SessionSources
from raw_mcp.config import HttpServer, StdioServer, parse_mcp_section
from raw_mcp.content import result_content
from raw_mcp.names import model_name


def problems(value: Any) -> dict[str, str]:
    with pytest.raises(ConfigInvalid) as caught:
        parse_mcp_section(value)
    return {p["path"]: p["message"] for p in caught.value.context["problems"]}


def test_a_stdio_and_an_http_server_parse() -> None:
    section = parse_mcp_section(
        {
            "servers": {
                "time": {
                    "command": ["uvx", "mcp-server-time"],
                    "env": {"TZ": {"env": "TZ"}},
                    "cwd": "servers",
                    "timeout_ms": 5000,
                    "tools": {"get_current_time": {"name": "now"}},
                },
                "search": {
                    "url": "http://127.0.0.1:3001/mcp",
                    "headers": {"Authorization": {"var": "TOKEN", "prefix": "Bearer "}},
                },
            }
        }
    )
    time, search = section.servers["time"], section.servers["search"]
    assert isinstance(time.transport, StdioServer)
    assert time.transport.command == ("uvx", "mcp-server-time")
    assert time.timeout_ms == 5000
    assert time.tools["get_current_time"].name == "now"
    assert isinstance(search.transport, HttpServer)
    assert search.secrets()["headers.Authorization"].describe() == "var:TOKEN"
    assert section.variables() == {"TOKEN": "$.mcp.servers.search.headers.Authorization.var"}


@pytest.mark.parametrize(
    ("value", "path", "words"),
    [
        ({"servers": {}, "extra": 1}, "$.mcp.extra", "unknown field"),
        (
            {"servers": {"t": {"command": ["x"], "colour": "red"}}},
            "$.mcp.servers.t.colour",
            "unknown field",
        ),
        ({"servers": {"T": {"command": ["x"]}}}, "$.mcp.servers.T", "lowercase"),
        ({"servers": {"t": {}}}, "$.mcp.servers.t", "exactly one of"),
        (
            {"servers": {"t": {"command": ["x"], "url": "http://h/"}}},
            "$.mcp.servers.t",
            "exactly one of",
        ),
        ({"servers": {"t": {"command": []}}}, "$.mcp.servers.t.command", "argv"),
        ({"servers": {"t": {"command": "mcp-server-time"}}}, "$.mcp.servers.t.command", "argv"),
        ({"servers": {"t": {"url": "ftp://h/"}}}, "$.mcp.servers.t.url", "http://"),
        (
            {"servers": {"t": {"url": "http://h/", "cwd": "."}}},
            "$.mcp.servers.t.cwd",
            "HTTP server",
        ),
        ({"servers": {"t": {"command": ["x"], "headers": {}}}}, "$.mcp.servers.t.headers", "stdio"),
        (
            {"servers": {"t": {"command": ["x"], "env": {"K": "literal-secret"}}}},
            "$.mcp.servers.t.env.K",
            "never written",
        ),
        (
            {"servers": {"t": {"command": ["x"], "env": {"K": {"env": "A", "var": "B"}}}}},
            "$.mcp.servers.t.env.K",
            "exactly one",
        ),
        (
            {"servers": {"t": {"command": ["x"], "env": {"K": {"env": "A", "x": 1}}}}},
            "$.mcp.servers.t.env.K.x",
            "unknown field",
        ),
        (
            {"servers": {"t": {"command": ["x"], "timeout_ms": 0}}},
            "$.mcp.servers.t.timeout_ms",
            "milliseconds",
        ),
        (
            {"servers": {"t": {"command": ["x"], "timeout_ms": True}}},
            "$.mcp.servers.t.timeout_ms",
            "milliseconds",
        ),
        (
            {"servers": {"t": {"command": ["x"], "tools": {"a": {"name": "has space"}}}}},
            "$.mcp.servers.t.tools.a.name",
            "model-facing name",
        ),
        (
            {"servers": {"t": {"command": ["x"], "tools": {"a": {"nick": "b"}}}}},
            "$.mcp.servers.t.tools.a.nick",
            "unknown field",
        ),
        (
            {
                "servers": {
                    "t": {
                        "command": ["x"],
                        "tools": {"a": {"panels": [{"id": "Bad", "title": "x"}]}},
                    }
                }
            },
            "$.mcp.servers.t.tools.a.panels[0].id",
            "panel id",
        ),
    ],
)
def test_every_key_is_checked_with_its_path(value: Any, path: str, words: str) -> None:
    found = problems(value)
    assert path in found, found
    assert words in found[path]


def test_a_literal_secret_never_appears_in_the_error() -> None:
    found = problems({"servers": {"t": {"command": ["x"], "env": {"K": "hunter2-token"}}}})
    assert "hunter2-token" not in json.dumps(found)


def test_panels_are_declared_on_a_tool() -> None:
    section = parse_mcp_section(
        {
            "servers": {
                "t": {
                    "command": ["x"],
                    "tools": {"plan": {"panels": [{"id": "todo", "title": "To do"}]}},
                }
            }
        }
    )
    (panel,) = section.servers["t"].tools["plan"].panels
    assert (panel.id, panel.title, panel.placement) == ("todo", "To do", "sidebar")


def test_the_mcp_key_and_mcp_tools_without_raw_mcp_say_what_to_install(
    host: PluginHost, tmp_path: Any
) -> None:
    document = {"agents": {"a": {"tools": {"use": ["mcp/time/get_current_time"]}}}}
    config = parse_config(json.dumps(document), host=host)
    sources = SessionSources(config, host=host, loader=ToolLoader(), local_dir=tmp_path)
    with pytest.raises(RawError) as caught:
        sources.source("mcp")
    assert caught.value.code == "tool_source_unavailable"
    assert "pip install raw-mcp" in caught.value.message
    with pytest.raises(ConfigInvalid) as refused:
        parse_config(json.dumps({**document, "mcp": {"servers": {}}}), host=host)
    assert refused.value.field == "$.mcp"
    assert "raw-mcp" in refused.value.message


def test_the_plugin_and_a_config_check_import_no_mcp_sdk() -> None:
    code = (
        "import sys, json\n"
        "from raw_core import PluginHost\n"
        "from raw_core.config import parse_config\n"
        "host = PluginHost(); host.load_entry_points()\n"
        "doc = {'mcp': {'servers': {'t': {'command': ['x']}}},"
        " 'agents': {'a': {'tools': {'use': ['mcp/t/x']}}}}\n"
        "parse_config(json.dumps(doc), host=host)\n"
        "print(json.dumps(sorted(m for m in sys.modules if m.split('.')[0] in"
        " ('mcp', 'mcp_types', 'httpx2', 'starlette'))))\n"
    )
    found = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, timeout=120, check=True
    )
    assert json.loads(found.stdout) == []


@pytest.mark.parametrize(
    ("tool", "expected"),
    [
        ("get_current_time", "get_current_time"),
        ("get-sum", "get-sum"),
        ("files.search", "files_search"),
        ("a b/c", "a_b_c"),
        ("2fa", "_2fa"),
    ],
)
def test_the_model_facing_name_rule(tool: str, expected: str) -> None:
    assert model_name(tool) == expected


def test_a_long_name_is_cut_and_hashed_apart() -> None:
    first, second = model_name("x" * 100 + "a"), model_name("x" * 100 + "b")
    assert len(first) == len(second) == 64
    assert first != second
    assert first.startswith("x" * 55 + "_")


def test_result_content_maps_each_kind() -> None:
    result = result_content(
        {
            "content": [
                {"type": "text", "text": '{"a": 1}'},
                {"type": "image", "data": "AAAA", "mimeType": "image/png"},
                {"type": "image", "data": "AAAA", "mimeType": "image/tiff"},
                {
                    "type": "resource",
                    "resource": {"uri": "file:///a.txt", "mimeType": "text/plain", "text": "hi"},
                },
                {"type": "resource", "resource": {"uri": "file:///b.bin", "blob": "AAAA"}},
                {"type": "resource_link", "uri": "demo://x", "name": "x"},
                {"type": "audio", "data": "AAAA", "mimeType": "audio/wav"},
            ],
            "structuredContent": {"a": 1},
            "isError": True,
        }
    )
    blocks = result["content"]
    assert result["is_error"] is True
    assert [b["type"] for b in blocks] == ["text", "image", "text", "text", "text", "text", "text"]
    assert "image/tiff" in blocks[2]["text"]
    assert blocks[3]["text"] == "[resource file:///a.txt (text/plain)]\nhi"
    assert "3 bytes of binary data" in blocks[4]["text"]
    assert "demo://x" in blocks[5]["text"]
    assert "audio" in blocks[6]["text"]
    # structured content that a text block already holds is not sent twice
    assert not any(b["type"] == "json" for b in blocks)
    assert result_content({"content": [], "structuredContent": {"b": 2}})["content"] == [
        {"type": "json", "json": {"b": 2}}
    ]
