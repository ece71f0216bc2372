"""The rules docs/reference/policy.md shows load against the real built-in tools and
decide as the page says."""

from __future__ import annotations

import json
import re
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import pytest
from click.testing import CliRunner

from raw_core.agent import Agent, load_agent
from raw_core.cli import cli
from raw_core.config import load_config
from raw_core.plugins import PluginHost

PAGE = Path(__file__).parents[2] / "docs" / "reference" / "policy.md"
USE = ["builtin/read_file", "builtin/write_file", "builtin/bash"]
SHELLS = [*USE, "builtin/process"]
JSON_BLOCK = re.compile(r"```json\n(.*?)```", re.S)


def recipes() -> dict[str, list[dict[str, Any]]]:
    """Each recipe's rules, by the bold title it starts with."""
    text = PAGE.read_text(encoding="utf-8")
    section = text.split("## Recipes", 1)[1].split("\n## ", 1)[0]
    found: dict[str, list[dict[str, Any]]] = {}
    for part in section.split("\n**")[1:]:
        title = part.split("**", 1)[0]
        (block,) = JSON_BLOCK.findall(part)
        found[title] = json.loads(f"[{block}]")
    return found


def agent_with(tmp_path: Path, rules: list[dict[str, Any]], use: list[str] = SHELLS) -> Agent:
    config = tmp_path / "raw.json"
    agent = {"tools": {"use": use, "rules": rules}}
    config.write_text(json.dumps({"agents": {"coder": agent}}), encoding="utf-8")
    host = PluginHost()
    host.load_entry_points()
    return load_agent(load_config(config), host=host)


def verdict(agent: Agent, identity: str, arguments: dict[str, Any]) -> str:
    tool = agent.registry.by_identity(identity)
    tool.input_validator.validate(arguments)
    effects = None
    if tool.describe_effects is not None:
        effects = tool.describe_effects(arguments, SimpleNamespace(cwd="/srv/app"))
    return str(agent.policy.decide(identity, arguments, effects).verdict)


def bash(command: str) -> tuple[str, dict[str, Any]]:
    return "builtin/bash", {"commands": [{"command": command}]}


def start(**how: Any) -> tuple[str, dict[str, Any]]:
    return "builtin/process", {"actions": [{"action": "start", "name": "p", **how}]}


def overwrite(path: str) -> tuple[str, dict[str, Any]]:
    operation = {"op": "overwrite", "path": path, "content": "x\n"}
    return "builtin/write_file", {"operations": [operation]}


CASES = {
    "Ask before deleting": [
        (bash("\\rm -rf build"), "ask"),
        (bash("ls | xargs /bin/rm"), "ask"),
        (bash("find . -name '*.pyc' -delete"), "ask"),
        (bash("$cleaner build"), "ask"),
        (bash("echo rm; grep rm notes.txt"), "allow"),
        (bash("find . -name '*.pyc'"), "allow"),
        (start(command="sleep 1; rm -rf build"), "ask"),
        (start(argv=["sudo", "rm", "-rf", "build"]), "ask"),
        (start(argv=["python", "-m", "http.server"]), "allow"),
        (("builtin/process", {"actions": [{"action": "list"}]}), "allow"),
    ],
    "Never touch `.env`, whoever writes it": [
        (overwrite(".env"), "ask"),
        (bash("echo K=1 >> .env"), "ask"),
        (bash("cp env.example .env"), "ask"),
        (overwrite("env.example"), "allow"),
        (bash("echo K=1 > env.example"), "allow"),
    ],
    "Ask before network tools": [
        (bash("curl -sS https://example.com"), "ask"),
        (bash("sudo wget https://example.com/x"), "ask"),
        (bash("git status"), "allow"),
    ],
}


def test_the_page_has_these_recipes() -> None:
    assert sorted(recipes()) == sorted(CASES)


@pytest.mark.parametrize("title", sorted(CASES))
def test_each_recipe_decides_as_the_page_says(tmp_path: Path, title: str) -> None:
    agent = agent_with(tmp_path, recipes()[title])
    for (identity, arguments), expected in CASES[title]:
        assert verdict(agent, identity, arguments) == expected, arguments


def test_the_first_example_of_the_page_loads(tmp_path: Path) -> None:
    (block,) = JSON_BLOCK.findall(PAGE.read_text(encoding="utf-8"))[:1]
    tools = json.loads("{" + block + "}")["tools"]
    assert tools["use"] == USE
    agent = agent_with(tmp_path, tools["rules"], USE)
    assert verdict(agent, *bash("sudo rm -rf /")) == "ask"
    assert verdict(agent, *bash("echo x > .git/config")) == "ask"
    assert verdict(agent, *overwrite(".env")) == "ask"
    assert verdict(agent, *bash("ls")) == "allow"


def test_the_bash_explanation_prints_what_the_page_shows(tmp_path: Path) -> None:
    text = PAGE.read_text(encoding="utf-8")
    (block,) = JSON_BLOCK.findall(text)[:1]
    config = tmp_path / "raw.json"
    config.write_text(json.dumps({"agents": {"coder": json.loads("{" + block + "}")}}))
    section = text.split("\n## raw policy explain", 1)[1]
    shown = re.search(
        r"```\n\$ raw policy explain builtin/bash '(.*?)' .*?\n(.*?)```", section, re.S
    )
    assert shown is not None
    where = ["--config", str(config), "--cwd", "/home/me/project"]
    result = CliRunner().invoke(cli, ["policy", "explain", "builtin/bash", shown[1], *where])
    assert result.exit_code == 0, result.output
    assert result.output == shown[2]
