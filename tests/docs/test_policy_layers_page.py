"""The worked example of layers and floors in docs/reference/policy.md runs as the page
says: its three files, written where the page puts them (in a temporary home), give the
explanation and the lint report the page prints."""

from __future__ import annotations

import json
import re
import shlex
from pathlib import Path

import pytest
from click.testing import CliRunner

from raw_core.cli import cli

PAGE = Path(__file__).parents[2] / "docs" / "reference" / "policy.md"
LAYER = re.compile(r"<!-- layer: (\w+) (\S+) -->\n```json\n(.*?)```", re.S)
SHOWN = re.compile(r"<!-- (explain|lint): layers -->\n```\n\$ (.*?)\n(.*?)```", re.S)


@pytest.fixture
def page_home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> dict[str, str]:
    """The page's files under tmp_path; returns each real path → the page's path."""
    text = PAGE.read_text(encoding="utf-8").split("### A worked example", 1)[1]
    shown = {}
    for kind, where, body in LAYER.findall(text):
        json.loads(body)
        real = {
            "managed": tmp_path / "admin" / "managed.json",
            "user": tmp_path / "xdg" / "raw" / "config.json",
            "project": tmp_path / "project" / "raw.json",
        }[kind]
        real.parent.mkdir(parents=True, exist_ok=True)
        real.write_text(body, encoding="utf-8")
        shown[str(real)] = where
    assert sorted(shown.values()) == [
        "/etc/raw/managed.json",
        "/home/me/.config/raw/config.json",
        "/home/me/project/raw.json",
    ]
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path / "xdg"))
    monkeypatch.setenv("RAW_MANAGED_CONFIG", str(tmp_path / "admin" / "managed.json"))
    monkeypatch.chdir(tmp_path / "project")
    assert CliRunner().invoke(cli, ["config", "trust"]).exit_code == 0
    return shown


@pytest.mark.parametrize("command", ["explain", "lint"])
def test_the_worked_example_prints_what_the_page_shows(
    page_home: dict[str, str], command: str
) -> None:
    text = PAGE.read_text(encoding="utf-8")
    found = {kind: (line, output) for kind, line, output in SHOWN.findall(text)}
    line, output = found[command]
    args = shlex.split(line)
    assert args[0] == "raw"
    result = CliRunner().invoke(cli, args[1:])
    printed = result.output
    for real, shown in page_home.items():
        printed = printed.replace(real, shown)
    assert printed == output
    assert result.exit_code == (1 if command == "lint" else 0)
