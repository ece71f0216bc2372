"""``raw tools fork``: copy a plug-in's tool (``builtin/bash``) out as an editable tool folder.

The copy is a new tool: its folder name is its id, and ``tool.json``'s ``id`` is set to it.
Everything else of the folder is copied as it is, except Python's caches. The copy is made
in a hidden temporary folder beside the destination and renamed into place, so a failed
fork leaves nothing half-copied; an existing destination is never overwritten.
"""

from __future__ import annotations

import json
import os
import secrets
import shutil
from pathlib import Path
from typing import NoReturn

import click

from raw_core.cli._output import EXIT_ERROR, EXIT_USAGE, fail
from raw_core.errors import RawError, ToolNotFound, UsageInvalid

__all__ = ["fork"]

_IGNORED = shutil.ignore_patterns("__pycache__", "*.pyc", "*.pyo")


def _refuse(message: str, *, field: str | None = None) -> NoReturn:
    """A fork raw will not make: ``raw: usage_invalid: message`` and the command's
    ``--help``, exit 2."""
    fail(UsageInvalid(message, field=field), as_json=False, exit_code=EXIT_USAGE)


def _source(name: str) -> tuple[str, Path]:
    """The identity and folder of the plug-in tool ``name`` (``bash`` means ``builtin/bash``)."""
    from raw_core import PluginHost, parse_identity
    from raw_core.app import RESERVED_SOURCES

    text = name if "/" in name else f"builtin/{name}"
    try:
        identity = parse_identity(text)
    except ValueError as exc:
        _refuse(str(exc), field="NAME")
    if identity.source in RESERVED_SOURCES:
        _refuse(
            f"{text} is not a plug-in's tool; fork copies tools that plug-ins ship, such as"
            " builtin/bash (a local/ or agent/ tool is already a folder you can copy)"
        )
    host = PluginHost()
    host.load_entry_points()
    tools = host.tool_folders().get(identity.source)
    record = tools.get(identity.folder) if tools is not None else None
    if record is None:
        offered = sorted(
            f"{plugin}/{tool}"
            for plugin, folders in host.tool_folders().items()
            for tool in folders
        )
        raise ToolNotFound(
            f"no installed plug-in ships {text} (installed: {', '.join(offered) or 'none'})",
            tool=text,
        )
    return text, record.path


def _destination(dest: Path | None, source_folder: str) -> Path:
    from raw_core import user_tools_dir

    if dest is None:
        return user_tools_dir() / source_folder
    target = Path(os.path.abspath(dest))
    if target.is_dir():
        return target / source_folder
    return target


def _copy(source: Path, target: Path) -> None:
    """Copy ``source`` to ``target`` through a temporary folder, with the new id."""
    target.parent.mkdir(parents=True, exist_ok=True)
    temp = target.parent / f".{target.name}.fork-{secrets.token_hex(4)}"
    try:
        shutil.copytree(source, temp, ignore=_IGNORED)
        manifest = temp / "tool.json"
        data = json.loads(manifest.read_text(encoding="utf-8"))
        data["id"] = target.name
        manifest.write_text(json.dumps(data, indent=2, ensure_ascii=False) + "\n", "utf-8")
        if target.exists() or target.is_symlink():
            raise FileExistsError(f"{target} appeared while copying")
        os.rename(temp, target)
    finally:
        if temp.exists():
            shutil.rmtree(temp, ignore_errors=True)


@click.command("fork")
@click.argument("name")
@click.argument("dest", required=False, type=click.Path(path_type=Path))
def fork(name: str, dest: Path | None) -> None:
    """Copy the shipped tool NAME (builtin/bash, or just bash) to DEST for editing.

    DEST is the new tool folder; its last component becomes the tool's id (lowercase
    letters, digits, _ and -, starting with a letter). When DEST is an existing folder the
    copy goes inside it, keeping NAME's folder name. Without DEST the copy goes to the local
    tools folder ($XDG_CONFIG_HOME/raw/tools, or ~/.config/raw/tools) and loads as
    local/<folder>. An existing folder is never overwritten.

    Exits 0 when the copy was made, 2 for a usage error (unknown tool, bad, existing or
    unwritable destination), 1 when the copy does not load.
    """
    from raw_core import ToolLoader, user_tools_dir
    from raw_core.app import SEGMENT_RE

    try:
        identity, source = _source(name)
    except RawError as exc:
        fail(exc, as_json=False)
    target = _destination(dest, source.name)
    new_id = target.name
    if not SEGMENT_RE.fullmatch(new_id):
        _refuse(
            f"the new folder name {new_id!r} is not a valid tool id: use lowercase letters,"
            " digits, _ and -, starting with a letter",
            field="DEST",
        )
    if target.exists() or target.is_symlink():
        _refuse(
            f"{target} already exists; choose another destination (nothing was copied)",
            field="DEST",
        )
    try:
        _copy(source, target)
    except OSError as exc:
        _refuse(f"cannot copy {source} to {target}: {exc}", field="DEST")
    local_dir = user_tools_dir()
    identity_hint = f"local/{new_id}" if target.parent == local_dir else None
    try:
        tool = ToolLoader().load(target, identity=identity_hint or f"local/{new_id}")
    except RawError as exc:
        exc.message = f"the copy at {target} does not load: {exc.message}"
        fail(exc, as_json=False, exit_code=EXIT_ERROR)
    click.echo(f"forked {identity} to {target} (id {new_id!r})")
    if identity_hint is not None:
        click.echo(f"select it as {identity_hint} in an agent's tools.use")
    else:
        click.echo(
            f"it loads as local/{new_id} from {local_dir}, or as agent/{new_id} from tools/"
            " beside a config file"
        )
    click.echo(
        f'its model-facing name is still {tool.name!r}: change "name" in tool.json to'
        f" select it beside {identity}"
    )
