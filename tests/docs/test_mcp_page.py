"""docs/mcp.md: every config on the page is valid with raw-mcp, and ``raw tools list`` on
its stdio example (mcp-server-time, run with this interpreter instead of ``uvx``) prints
what the page shows."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

import raw_mcp.plugin
from raw_core import PluginHost
from raw_core.config import parse_config
from tests.conftest import raw_script

PAGE = Path(__file__).parents[2] / "docs" / "mcp.md"
FILES = re.compile(r"<!-- file: (?P<name>[^ ]+) -->\n```json\n(?P<body>.*?)```", re.S)
RESULT = re.compile(r"<!-- mcp-result -->\n```json\n(?P<body>.*?)```", re.S)
READS = re.compile(r"<!-- model-reads -->\n```\n(?P<body>.*?)```", re.S)
OUTPUT = re.compile(
    r"<!-- output: (?P<name>[^ ]+) -->\n```\n\$ (?P<command>.*?)\n(?P<body>.*?)```", re.S
)


def configs() -> dict[str, str]:
    return {m["name"]: m["body"] for m in FILES.finditer(PAGE.read_text(encoding="utf-8"))}


@pytest.mark.parametrize("name", sorted(configs()))
def test_each_config_on_the_page_is_valid(name: str) -> None:
    host = PluginHost()
    host.register(raw_mcp.plugin, name="mcp-client")
    config = parse_config(configs()[name], host=host)
    assert config.sections["mcp"].servers


def test_raw_tools_list_prints_what_the_page_shows(tmp_path: Path) -> None:
    (shown,) = OUTPUT.finditer(PAGE.read_text(encoding="utf-8"))
    document = json.loads(configs()[shown["name"]])
    command = document["mcp"]["servers"]["time"]["command"]
    assert command[:2] == ["uvx", "mcp-server-time"]
    command[:2] = [sys.executable, "-m", "mcp_server_time"]
    config = tmp_path / shown["name"]
    config.write_text(json.dumps(document))
    args = shown["command"].split()[1:]
    assert args[-1] == shown["name"]
    listed = subprocess.run(
        [raw_script(), *args[:-1], str(config)],
        capture_output=True,
        text=True,
        timeout=120,
        cwd=tmp_path,
        env={**os.environ, "TZ": "UTC", "XDG_CONFIG_HOME": str(tmp_path)},
        stdin=subprocess.DEVNULL,
    )
    assert listed.returncode == 0, listed.stderr
    actual = listed.stdout.splitlines()
    expected = shown["body"].splitlines()
    assert len(actual) == len(expected)
    for want, got in zip(expected, actual, strict=True):
        if want.endswith("..."):
            assert got.startswith(want[:-3]), (want, got)
        else:
            assert got == want


@pytest.mark.anyio
@pytest.mark.parametrize("anyio_backend", ["asyncio"])
async def test_the_rules_example_asks_as_the_page_says(anyio_backend: str) -> None:
    from raw_core import App

    document = json.loads(configs()["rules.json"])
    document["mcp"]["servers"]["time"]["command"] = [sys.executable, "-m", "mcp_server_time"]
    host = PluginHost()
    host.register(raw_mcp.plugin, name="mcp-client")
    config = parse_config(json.dumps(document), host=host)
    call = {"source_timezone": "UTC", "time": "12:00", "target_timezone": "America/New_York"}
    async with App.open(config, host=host) as app:
        asks = await app.explain("mcp/time/convert_time", call)
        allows = await app.explain("mcp/time/convert_time", {**call, "target_timezone": "UTC"})
    assert (asks.verdict, allows.verdict) == ("ask", "allow")


@pytest.mark.anyio
@pytest.mark.parametrize("anyio_backend", ["asyncio"])
async def test_the_panel_result_example_updates_the_panel_as_the_page_says(
    anyio_backend: str, tmp_path: Path
) -> None:
    from raw_core import App
    from raw_core.tools.calls import ToolCall
    from tests.raw_mcp.conftest import SERVER

    text = PAGE.read_text(encoding="utf-8")
    result = RESULT.search(text)
    assert result is not None
    reads = READS.search(text, result.end())
    assert reads is not None
    document = json.loads(configs()["panels.json"])
    declared = document["mcp"]["servers"]["planner"]["tools"]["plan"]["panels"]
    servers = {
        "t": {"command": [sys.executable, str(SERVER)], "tools": {"respond": {"panels": declared}}}
    }
    host = PluginHost()
    host.register(raw_mcp.plugin, name="mcp-client")
    config = parse_config(
        json.dumps(
            {"mcp": {"servers": servers}, "agents": {"a": {"tools": {"use": ["mcp/t/respond"]}}}}
        ),
        host=host,
    )
    arguments = json.dumps({"result": result["body"]})
    async with App.open(config, host=host) as app, app.agent() as agent:
        answered = await agent.dispatcher(host=host).dispatch(
            ToolCall(id="c", name="respond", arguments=arguments)
        )
    assert answered.status == "ok"
    assert answered.text().splitlines() == reads["body"].splitlines()
    ((update),) = answered.panels
    sent = json.loads(result["body"])["content"][0]["_meta"]["raw.panel/2"]
    assert (update.panel, update.revision, update.document) == ("todo", 1, sent["document"])
