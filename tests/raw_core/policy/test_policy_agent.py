"""load_agent binds the agent's rules to its selected tools; Agent filters what the model sees."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from raw_core.agent import Agent, load_agent
from raw_core.config import load_config
from raw_core.errors import ConfigInvalid, ToolNotExposed, ToolUnknown
from raw_core.plugins import PluginHost, ToolFolder
from raw_core.plugins.hookspecs import hookimpl


class _Builtin:
    """A stand-in for the builtin plug-in, shipping tool folders written by the test."""

    def __init__(self, folders: list[Path]) -> None:
        self.folders = folders

    @hookimpl
    def raw_register_tools(self) -> list[ToolFolder]:
        return [ToolFolder(path=folder) for folder in self.folders]


@pytest.fixture
def builtin_host(
    tmp_path: Path,
    write_tool_folder: Callable[..., Path],
    bash_schema: dict[str, Any],
    write_file_tool: dict[str, Any],
) -> PluginHost:
    """A host whose ``builtin`` plug-in ships ``bash`` and ``write_file``."""
    shipped = tmp_path / "shipped"
    folders = [
        write_tool_folder(shipped, "bash", input_schema=bash_schema),
        write_tool_folder(shipped, "write_file", **write_file_tool),
    ]
    host = PluginHost()
    host.register(_Builtin(folders), name="builtin")
    return host


def _config(tmp_path: Path, rules: list[dict[str, Any]]) -> Path:
    path = tmp_path / "raw.json"
    use = ["builtin/bash", "builtin/write_file"]
    path.write_text(json.dumps({"agents": {"coder": {"tools": {"use": use, "rules": rules}}}}))
    return path


def test_agent_policy_and_definitions(tmp_path: Path, builtin_host: PluginHost) -> None:
    config = load_config(_config(tmp_path, [{"match": "builtin/write_file", "effect": "deny"}]))
    agent = load_agent(config, host=builtin_host)
    assert [d.identity for d in agent.definitions()] == ["builtin/bash"]
    assert [d.identity for d in agent.registry.definitions()] == [
        "builtin/bash",
        "builtin/write_file",
    ]
    step_one = agent.dispatcher(host=builtin_host).select
    assert step_one("bash").identity == "builtin/bash"
    with pytest.raises(ToolNotExposed) as caught:
        step_one("write_file")
    assert caught.value.context == {"tool": "builtin/write_file", "rule": 0}
    with pytest.raises(ToolUnknown):
        step_one("nope")


def test_agent_binds_rules_when_built_without_a_policy(
    tmp_path: Path, builtin_host: PluginHost
) -> None:
    config = load_config(_config(tmp_path, [{"match": "builtin/*", "effect": "deny"}]))
    loaded = load_agent(config, host=builtin_host)
    rebuilt = Agent(name="coder", config=loaded.config, registry=loaded.registry)
    assert rebuilt.definitions() == []
    assert rebuilt.policy.hidden == {"builtin/bash": 0, "builtin/write_file": 0}


def test_load_agent_rejects_a_predicate_that_does_not_fit_a_matched_tool(
    tmp_path: Path, builtin_host: PluginHost
) -> None:
    rule = {
        "match": "builtin/*",
        "effect": "ask",
        "when": {"source": "effects", "any": "files[*].path", "regex": "/protected/"},
    }
    config = load_config(_config(tmp_path, [{"match": "*", "effect": "allow"}, rule]))
    with pytest.raises(ConfigInvalid) as caught:
        load_agent(config, host=builtin_host)
    error = caught.value
    assert error.field == "$.agents.coder.tools.rules[1].when.source"
    assert error.context["rule"] == 1
    assert error.context["tool"] == "builtin/bash"
    assert "condition_sources of builtin/bash" in error.message


def test_load_agent_accepts_effects_rule_on_the_tool_that_declares_them(
    tmp_path: Path, builtin_host: PluginHost
) -> None:
    rule = {
        "match": "builtin/write_file",
        "effect": "ask",
        "when": {"source": "effects", "any": "files[*].path", "regex": "/protected/"},
    }
    agent = load_agent(load_config(_config(tmp_path, [rule])), host=builtin_host)
    arguments = {"files": [{"path": "x", "content": ""}]}
    effects = {"files": [{"path": "/srv/protected/x", "operation": "write"}]}
    assert agent.policy.decide("builtin/write_file", arguments, effects).verdict == "ask"
    assert agent.policy.decide("builtin/bash", {"commands": []}).verdict == "allow"
