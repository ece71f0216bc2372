"""docs/acp.md: its raw config is valid with raw-acp, its Zed settings start ``raw acp``
with options the command has, and its option table is the command's."""

from __future__ import annotations

import json
import re
import subprocess
import sys
from pathlib import Path

import raw_acp.plugin
import raw_mcp.plugin
from raw_acp import AcpSection
from raw_core import PluginHost
from raw_core.config import parse_config

PAGE = Path(__file__).parents[2] / "docs" / "acp.md"
FILES = re.compile(r"<!-- file: (?P<name>[^ ]+) -->\n```json\n(?P<body>.*?)```", re.S)


def _files() -> dict[str, str]:
    return {m["name"]: m["body"] for m in FILES.finditer(PAGE.read_text(encoding="utf-8"))}


def _help() -> str:
    done = subprocess.run(
        [sys.executable, "-m", "raw_core", "acp", "--help"],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert done.returncode == 0, done.stderr
    return done.stdout


def test_the_config_opting_in_to_client_servers_is_valid() -> None:
    host = PluginHost()
    host.register(raw_acp.plugin, name="acp")
    host.register(raw_mcp.plugin, name="mcp-client")
    config = parse_config(_files()["acp-mcp.json"], host=host)
    assert config.sections["acp"] == AcpSection(client_mcp_servers=True)


def test_the_zed_settings_start_raw_acp_with_its_options() -> None:
    server = json.loads(_files()["zed-settings.json"])["agent_servers"]["raw"]
    assert server["command"] == "raw"
    assert server["args"][0] == "acp"
    shown = _help()
    for option in (arg for arg in server["args"] if arg.startswith("--")):
        assert option in shown


def test_the_option_table_is_the_commands() -> None:
    text = PAGE.read_text(encoding="utf-8")
    table = text.split("## Options", 1)[1].split("\n## ", 1)[0]
    documented = set(re.findall(r"^\| `(--[a-z-]+)", table, re.M))
    offered = set(re.findall(r"^\s+(--[a-z-]+)", _help(), re.M)) - {"--help"}
    assert documented == offered
