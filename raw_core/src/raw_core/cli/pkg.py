"""``raw pkg``: install, list, show, remove and collect packages (spec 004, "Packages").

Each command reads and writes files only: installing or inspecting a package imports none
of its code. The package modules (and ``tarfile``) are imported when a command runs, never
at ``raw --help``.
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

import click

from raw_core.cli._output import EXIT_ERROR, EXIT_OK, emit_json, fail
from raw_core.errors import ConfigInvalid, ConfigNotFound, RawError

__all__ = ["pkg"]

_config_option = click.option(
    "--config",
    "config_path",
    type=click.Path(path_type=Path),
    default=None,
    help="The config file whose index (raw-packages.json beside it) to use (default: a"
    " trusted ./raw.json, else ~/.config/raw/config.json).",
)
_json_option = click.option("--json", "as_json", is_flag=True, help="Print JSON.")


def _config_file(config_path: Path | None) -> Path:
    """The config file whose index to use. Only its form is checked here (a JSON object,
    ``config_invalid`` otherwise, as in every command): its fields may name models and
    variables of the user's layer, or the packages being installed."""
    import json

    from raw_core import find_config

    path = find_config(config_path)
    if not path.is_file():
        raise ConfigNotFound(f"no config file at {path}", path=str(path))
    try:
        data = json.loads(path.read_bytes())
    except OSError as exc:
        raise ConfigNotFound(f"cannot read {path}: {exc.strerror}", path=str(path)) from None
    except (ValueError, RecursionError) as exc:
        detail = (
            f"{exc.msg} at line {exc.lineno} column {exc.colno}"
            if isinstance(exc, json.JSONDecodeError)
            else "it does not decode"
        )
        raise ConfigInvalid(
            f"{path} is not valid JSON: {detail}", field="$", path=str(path)
        ) from None
    if not isinstance(data, dict):
        found = "an array" if isinstance(data, list) else type(data).__name__
        raise ConfigInvalid(f"expected an object, found {found}", field="$", path=str(path))
    return path


@click.group()
def pkg() -> None:
    """Install and manage packages: pkg/<alias>/tools/<export>."""


@pkg.command("install")
@click.argument("source", type=click.Path(path_type=Path))
@click.option("--alias", default=None, help="The alias (default: the package's name).")
@click.option("--force", is_flag=True, help="Replace what the alias names now.")
@_config_option
@_json_option
def install(
    source: Path, alias: str | None, force: bool, config_path: Path | None, as_json: bool
) -> None:
    """Install a package from a folder or a tar archive (.tar, .tar.gz, .tar.xz).

    Every member is checked before anything is written; the files go to the store,
    read-only, under the hash of their tree, and the alias to the index beside the config
    file. Nothing of the package runs. Reinstalling the same content changes nothing.
    """
    from raw_core import install_package

    try:
        report = install_package(
            source, config_file=_config_file(config_path), alias=alias, force=force
        )
    except RawError as exc:
        fail(exc, as_json=as_json)
    if as_json:
        emit_json(report.to_dict())
        return
    entry = report.entry
    what = "installed" if report.changed else "already installed (unchanged)"
    click.echo(
        f"{what}: {entry.name} {entry.version} as pkg/{report.alias}/tools/..."
        f" (sha256 {entry.hash[:16]}) in {report.index}"
    )


@pkg.command("list")
@_config_option
@_json_option
def list_command(config_path: Path | None, as_json: bool) -> None:
    """List the packages installed for the config file."""
    from raw_core import list_packages

    try:
        packages = list_packages(_config_file(config_path))
    except RawError as exc:
        fail(exc, as_json=as_json)
    if as_json:
        emit_json([{"alias": alias, **entry.to_dict()} for alias, entry in packages.items()])
        return
    if not packages:
        click.echo("no packages installed")
    for alias, entry in sorted(packages.items()):
        click.echo(
            f"{alias}  {entry.name} {entry.version}  sha256 {entry.hash[:16]}  {entry.source}"
        )


@pkg.command("show")
@click.argument("alias")
@_config_option
@_json_option
def show(alias: str, config_path: Path | None, as_json: bool) -> None:
    """Show a package's exports and each exported tool's manifest, and check its files
    against its hash. Exits 1 when the store entry no longer matches."""
    from raw_core import show_package

    try:
        details = show_package(alias, config_file=_config_file(config_path))
    except RawError as exc:
        fail(exc, as_json=as_json)
    if as_json:
        emit_json(details.to_dict())
    else:
        _print_details(details)
    sys.exit(EXIT_OK if details.intact else EXIT_ERROR)


def _print_details(details: Any) -> None:
    entry = details.entry
    click.echo(f"pkg/{details.alias}: {entry.name} {entry.version}")
    click.echo(f"  hash     sha256 {entry.hash}")
    if entry.archive_digest:
        click.echo(f"  archive  sha256 {entry.archive_digest}")
    click.echo(f"  source   {entry.source}")
    click.echo(f"  files    {details.folder}")
    if not details.intact:
        click.echo(f"  DAMAGED  {details.problem}")
        return
    click.echo(f"  {details.manifest.description}")
    for export, tool in details.tools.items():
        manifest = tool.get("manifest") or {}
        click.echo(
            f"  pkg/{details.alias}/tools/{export}  ({tool['folder']}): {manifest.get('name')}"
            f" {manifest.get('version')} — {str(manifest.get('description', '')).strip()}"
        )


@pkg.command("remove")
@click.argument("alias")
@_config_option
@_json_option
def remove(alias: str, config_path: Path | None, as_json: bool) -> None:
    """Remove an alias from the config file's index (its files stay until `raw pkg gc`)."""
    from raw_core import remove_package

    try:
        entry = remove_package(alias, config_file=_config_file(config_path))
    except RawError as exc:
        fail(exc, as_json=as_json)
    if as_json:
        emit_json({"alias": alias, **entry.to_dict()})
        return
    click.echo(f"removed pkg/{alias} ({entry.name} {entry.version}); `raw pkg gc` frees its files")


@pkg.command("gc")
@_json_option
def gc(as_json: bool) -> None:
    """Remove stored packages that no index install wrote to still names."""
    from raw_core import gc_packages

    try:
        report = gc_packages()
    except RawError as exc:
        fail(exc, as_json=as_json)
    if as_json:
        emit_json(report.to_dict())
        return
    click.echo(f"removed {len(report.removed)} stored package(s), kept {len(report.kept)}")
    for index in report.dropped_indexes:
        click.echo(f"forgot the index {index}: it no longer exists")
