"""Shared fixtures: real tool folders in temporary directories, and empty plug-in hosts."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from raw_core.plugins import PluginHost

HANDLER = """
from pathlib import Path
Path(__file__).with_name("imported.marker").write_text("imported")

def handler(args, context):
    return {"content": [{"type": "text", "text": "ok"}]}
"""


def manifest_for(folder_name: str, **overrides: Any) -> dict[str, Any]:
    """A valid manifest for a folder, with ``overrides`` applied (None deletes a key)."""
    manifest: dict[str, Any] = {
        "api_version": 2,
        "id": folder_name,
        "version": "1.0.0",
        "name": folder_name,
        "description": f"The {folder_name} test tool.",
        "input_schema": {"type": "object", "properties": {}, "additionalProperties": False},
        "entry": "./tool.py",
    }
    for key, value in overrides.items():
        if value is None:
            manifest.pop(key, None)
        else:
            manifest[key] = value
    return manifest


MakeTool = Callable[..., Path]


@pytest.fixture
def make_tool(tmp_path: Path) -> MakeTool:
    """Write a tool folder: ``make_tool("folder", root=..., code=..., manifest=..., **fields)``.

    The default entry module writes ``imported.marker`` beside itself when imported, so a
    test can prove that a rejected tool's code never ran.
    """

    def make(
        folder_name: str = "sample",
        /,
        *,
        root: Path | None = None,
        code: str = HANDLER,
        manifest: dict[str, Any] | str | None = None,
        **fields: Any,
    ) -> Path:
        folder = (root if root is not None else tmp_path / "tools") / folder_name
        folder.mkdir(parents=True, exist_ok=True)
        document = manifest if manifest is not None else manifest_for(folder_name, **fields)
        text = document if isinstance(document, str) else json.dumps(document, indent=2)
        (folder / "tool.json").write_text(text, encoding="utf-8")
        (folder / "tool.py").write_text(code, encoding="utf-8")
        return folder

    return make


def was_imported(folder: Path) -> bool:
    """Whether the default entry module of ``folder`` has run."""
    return (folder / "imported.marker").exists()


@pytest.fixture
def imported() -> Callable[[Path], bool]:
    """``imported(folder)``: whether the default entry module of ``folder`` has run."""
    return was_imported


@pytest.fixture
def manifest() -> Callable[..., dict[str, Any]]:
    """``manifest(folder_name, **overrides)``: a valid manifest with changes applied."""
    return manifest_for


@pytest.fixture
def host() -> PluginHost:
    """A plug-in host with no plug-ins: each test registers what it needs."""
    return PluginHost()
