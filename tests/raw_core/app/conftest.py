"""A project for the session service's tests: a config with agent/ tools and the starter
built-ins, skills and a variable, and a plug-in host holding only the built-in tools."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from raw_core.plugins import PluginHost

SECRET = "app-secret-5d1c"

ECHO = """
def handler(args, context):
    return {"content": [{"type": "text", "text": args["text"]}]}
"""

# Sleeps in small steps, so a thread abandoned at a timeout ends soon after the test.
SLOW = """
import time

def handler(args, context):
    deadline = time.monotonic() + args["seconds"]
    while time.monotonic() < deadline and not context.signal.cancelled:
        time.sleep(0.01)
    return {"content": [{"type": "text", "text": "woke"}]}
"""

TEXT = {
    "type": "object",
    "properties": {"text": {"type": "string"}},
    "required": ["text"],
    "additionalProperties": False,
}
SECONDS = {
    "type": "object",
    "properties": {"seconds": {"type": "number"}},
    "required": ["seconds"],
    "additionalProperties": False,
}


def write_tool(root: Path, name: str, code: str, schema: dict[str, Any]) -> None:
    folder = root / "tools" / name
    folder.mkdir(parents=True, exist_ok=True)
    manifest = {
        "api_version": 2,
        "id": name,
        "version": "1.0.0",
        "name": name,
        "description": f"The {name} test tool.",
        "input_schema": schema,
        "condition_sources": ["arguments"],
        "entry": "./tool.py",
    }
    (folder / "tool.json").write_text(json.dumps(manifest))
    (folder / "tool.py").write_text(code)


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


@pytest.fixture
def project(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """``raw.json`` with agent ``a`` (the default: echo, slow, three skill and variable
    tools; an ask rule for echo texts that start with "ask"; a 160-byte result cap and a
    300 ms handler limit), agent ``b`` (echo and slow, no rules, the default limits), one
    skill and one variable."""
    monkeypatch.setenv("RAW_APP_SECRET", SECRET)
    write_tool(tmp_path, "echo", ECHO, TEXT)
    write_tool(tmp_path, "slow", SLOW, SECONDS)
    skill = tmp_path / "skills" / "review"
    skill.mkdir(parents=True)
    (skill / "SKILL.md").write_text(
        "---\nname: review\ndescription: How to review a change.\n---\nRead the diff first.\n"
    )
    config = {
        "vars": {"TOKEN": {"description": "The service token", "from": {"env": "RAW_APP_SECRET"}}},
        "skills": {"paths": ["skills"]},
        "agents": {
            "a": {
                "max_output_bytes": 160,
                "handler_timeout_ms": 300,
                "tools": {
                    "use": [
                        "agent/echo",
                        "agent/slow",
                        "builtin/list_skills",
                        "builtin/list_vars",
                        "builtin/read_var",
                    ],
                    "rules": [
                        {
                            "match": "agent/echo",
                            "effect": "ask",
                            "when": {"source": "arguments", "any": "text", "regex": "^ask"},
                        }
                    ],
                },
                "skills": {"use": ["review"]},
                "vars": {"use": ["TOKEN"]},
            },
            "b": {"tools": {"use": ["agent/echo", "agent/slow"]}},
        },
        "default_agent": "a",
    }
    (tmp_path / "raw.json").write_text(json.dumps(config))
    return tmp_path


@pytest.fixture
def host() -> PluginHost:
    from raw_builtin_tools import plugin

    only_builtin = PluginHost()
    only_builtin.register(plugin, name="builtin")
    return only_builtin
