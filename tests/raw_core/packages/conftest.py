"""Packages for the package tests: a package folder built from real files, archives of it,
a data directory holding the store, and a config file whose index the tests use."""

from __future__ import annotations

import io
import json
import os
import tarfile
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any, Literal

import pytest

from raw_core.packages import PackageStore
from raw_core.packages.tree import make_writable

TOOL_CODE = """
from pathlib import Path

with Path({marker!r}).open("a") as marker:
    marker.write({export!r} + "\\n")

def handler(args, context):
    return {{"content": [{{"type": "text", "text": "hello from " + {export!r}}}]}}
"""


def tool_manifest(folder: str) -> dict[str, Any]:
    return {
        "api_version": 2,
        "id": folder,
        "version": "1.0.0",
        "name": folder,
        "description": f"The {folder} tool of a package.",
        "input_schema": {"type": "object", "properties": {}, "additionalProperties": False},
        "entry": "./tool.py",
    }


MakePackage = Callable[..., Path]
ArchiveMode = Literal["w", "w:gz", "w:xz"]


@pytest.fixture
def marker(tmp_path: Path) -> Path:
    """The file a package's tool module appends its export's name to when imported."""
    return tmp_path / "imported.marker"


@pytest.fixture
def make_package(tmp_path: Path, marker: Path) -> MakePackage:
    """``make_package(name, tools=("greet",), manifest=None)``: a package folder whose tool
    modules write ``marker`` when imported; ``manifest`` replaces ``raw-package.json``."""

    def make(
        name: str = "acme",
        *,
        tools: tuple[str, ...] = ("greet",),
        manifest: dict[str, Any] | str | None = None,
        root: Path | None = None,
    ) -> Path:
        folder = root if root is not None else tmp_path / "sources" / name
        for export in tools:
            tool = folder / "tools" / export
            tool.mkdir(parents=True)
            (tool / "tool.json").write_text(json.dumps(tool_manifest(export)))
            (tool / "tool.py").write_text(TOOL_CODE.format(marker=str(marker), export=export))
        document = manifest
        if document is None:
            document = {
                "api_version": 1,
                "name": name,
                "version": "1.0.0",
                "description": f"The {name} package.",
                "exports": {"tools": {export: f"tools/{export}" for export in tools}},
            }
        text = document if isinstance(document, str) else json.dumps(document, indent=2)
        (folder / "raw-package.json").write_text(text)
        return folder

    return make


def archive_of(folder: Path, target: Path, *, mode: ArchiveMode, top: str | None = None) -> Path:
    """A tar archive of ``folder`` (``mode``: ``w``, ``w:gz``, ``w:xz``), its members under
    ``top`` when given, else at the archive's top."""
    with tarfile.open(target, mode) as archive:
        for path in sorted(folder.rglob("*")):
            relative = path.relative_to(folder).as_posix()
            archive.add(path, arcname=f"{top}/{relative}" if top else relative, recursive=False)
    return target


def add_member(archive: tarfile.TarFile, name: str, data: bytes = b"", **fields: Any) -> None:
    """Add one member built by hand (``type``, ``linkname``... in ``fields``)."""
    info = tarfile.TarInfo(name)
    info.size = len(data) if fields.get("type", tarfile.REGTYPE) == tarfile.REGTYPE else 0
    for key, value in fields.items():
        setattr(info, key, value)
    archive.addfile(info, io.BytesIO(data) if info.size else None)


@pytest.fixture
def store(tmp_path: Path) -> Iterator[PackageStore]:
    """A package store in a data directory of the test's own."""
    data = tmp_path / "data" / "raw"
    yield PackageStore(data)
    for entry in (data / "packages").glob("*") if (data / "packages").is_dir() else []:
        make_writable(entry)


@pytest.fixture
def config_file(tmp_path: Path) -> Path:
    """A config file of one agent selecting ``pkg/acme/tools/greet``."""
    project = tmp_path / "project"
    project.mkdir()
    path = project / "raw.json"
    path.write_text(json.dumps({"agents": {"a": {"tools": {"use": ["pkg/acme/tools/greet"]}}}}))
    return path


def store_listing(store: PackageStore) -> list[str]:
    """Everything in the store's folder but its lock file: entries and staging folders."""
    if not store.root.is_dir():
        return []
    return sorted(p.name for p in store.root.iterdir() if p.name != ".lock")


def environment(tmp_path: Path) -> dict[str, str]:
    """The environment of a ``raw`` subprocess whose data and config dirs are the test's."""
    return {
        **os.environ,
        "XDG_DATA_HOME": str(tmp_path / "data"),
        "XDG_CONFIG_HOME": str(tmp_path / "config"),
    }
