"""Fixtures for the policy tests: real tool folders (tool.json + tool.py) written into tmp_path.

The suite runs with ``--import-mode=importlib``, so test modules cannot import this file:
they receive what they need through fixtures.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

import pytest

BASH_SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {
        "commands": {
            "type": "array",
            "minItems": 1,
            "maxItems": 16,
            "items": {
                "type": "object",
                "properties": {
                    "command": {"type": "string"},
                    "timeout_ms": {"type": "integer", "minimum": 1},
                },
                "required": ["command"],
                "additionalProperties": False,
            },
        }
    },
    "required": ["commands"],
    "additionalProperties": False,
}

WRITE_SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {
        "files": {
            "type": "array",
            "items": {
                "type": "object",
                "properties": {"path": {"type": "string"}, "content": {"type": "string"}},
                "required": ["path", "content"],
                "additionalProperties": False,
            },
        }
    },
    "required": ["files"],
    "additionalProperties": False,
}

WRITE_EFFECTS_SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {
        "files": {
            "type": "array",
            "items": {
                "type": "object",
                "properties": {
                    "path": {"type": "string"},
                    "operation": {"enum": ["write", "delete"]},
                },
                "required": ["path", "operation"],
            },
        }
    },
    "required": ["files"],
}

HANDLER = """
def handler(args, context):
    return {"content": [{"type": "text", "text": "ok"}]}
"""

WRITE_MODULE = (
    HANDLER
    + """
import posixpath


def validate_args(args):
    for entry in args["files"]:
        if entry["path"] == "":
            return "path must not be empty"
    return None


def describe_effects(args, context):
    return {
        "files": [
            {
                "path": posixpath.normpath(posixpath.join(context.cwd, entry["path"])),
                "operation": "write",
            }
            for entry in args["files"]
        ]
    }
"""
)

ToolMaker = Callable[..., Path]


def _write_tool(
    parent: Path,
    name: str,
    *,
    input_schema: dict[str, Any] | None = None,
    effects_schema: dict[str, Any] | None = None,
    condition_sources: Sequence[str] = ("arguments",),
    module: str = HANDLER,
    description: str = "A test tool.",
) -> Path:
    """Write ``parent/name`` holding tool.json and tool.py; return the folder."""
    folder = parent / name
    folder.mkdir(parents=True, exist_ok=True)
    manifest: dict[str, Any] = {
        "api_version": 2,
        "id": name,
        "version": "1.0.0",
        "name": name,
        "description": description,
        "input_schema": input_schema if input_schema is not None else BASH_SCHEMA,
        "entry": "./tool.py",
        "condition_sources": list(condition_sources),
    }
    if effects_schema is not None:
        manifest["effects_schema"] = effects_schema
    (folder / "tool.json").write_text(json.dumps(manifest, indent=2), encoding="utf-8")
    (folder / "tool.py").write_text(module, encoding="utf-8")
    return folder


@pytest.fixture
def write_tool_folder() -> ToolMaker:
    """``write_tool_folder(parent, name, input_schema=..., effects_schema=...,
    condition_sources=..., module=...)`` writes a real tool folder and returns it."""
    return _write_tool


@pytest.fixture
def bash_schema() -> dict[str, Any]:
    """A bash-like input schema: ``{"commands": [{"command", "timeout_ms"?}]}``."""
    return BASH_SCHEMA


@pytest.fixture
def write_file_tool() -> dict[str, Any]:
    """Manifest fields and module of a write-like tool whose effects list file paths."""
    return {
        "input_schema": WRITE_SCHEMA,
        "effects_schema": WRITE_EFFECTS_SCHEMA,
        "condition_sources": ("arguments", "effects"),
        "module": WRITE_MODULE,
    }


@pytest.fixture
def write_config(tmp_path: Path) -> Callable[..., Path]:
    """``write_config(use, rules)`` writes ``tmp_path/raw.json`` for one agent ``coder``."""

    def write(use: Sequence[str], rules: Sequence[dict[str, Any]] = ()) -> Path:
        path = tmp_path / "raw.json"
        config = {"agents": {"coder": {"tools": {"use": list(use), "rules": list(rules)}}}}
        path.write_text(json.dumps(config, indent=2), encoding="utf-8")
        return path

    return write
