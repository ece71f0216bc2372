"""``raw tools``: check tool folders and list what an agent's model would receive."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

import click

from raw_core.cli._app import agent_option, config_option, with_app
from raw_core.cli._lazy_group import LazyGroup
from raw_core.cli._output import EXIT_ERROR, EXIT_OK, emit_json
from raw_core.errors import RawError

__all__ = ["tools"]


@click.group(
    cls=LazyGroup,
    lazy={"call": "raw_core.cli.call:call", "fork": "raw_core.cli.fork:fork"},
)
def tools() -> None:
    """Check, list and inspect tools."""


@tools.command("check")
@click.argument("paths", nargs=-1, required=True, type=click.Path(path_type=Path))
@click.option("--json", "as_json", is_flag=True, help="Print a JSON list, one entry per folder.")
def check(paths: tuple[Path, ...], as_json: bool) -> None:
    """Check tool folders: manifest, schemas and entry module.

    Exits 0 when every folder is a valid tool, 1 otherwise.
    """
    from raw_core import ToolLoader

    loader = ToolLoader()
    results: list[dict[str, Any]] = []
    for path in paths:
        try:
            tool = loader.load(path)
        except RawError as exc:
            error: dict[str, Any] = {"code": exc.code, "message": exc.message, "field": exc.field}
            results.append({"path": str(path), "ok": False, "error": error})
            continue
        entry: dict[str, Any] = {
            "path": str(path),
            "ok": True,
            "id": tool.manifest.id,
            "name": tool.name,
            "version": tool.manifest.version,
        }
        if tool.warnings:
            entry["warnings"] = list(tool.warnings)
        results.append(entry)
    if as_json:
        emit_json(results)
    else:
        for result in results:
            if result["ok"]:
                click.echo(
                    f"ok    {result['path']}: {result['id']} {result['version']}"
                    f" (model-facing name {result['name']!r})"
                )
                for warning in result.get("warnings", []):
                    click.echo(f"      warning: {warning}")
            else:
                err = result["error"]
                where = f" (at {err['field']})" if err["field"] else ""
                click.echo(f"FAIL  {result['path']}: {err['code']}: {err['message']}{where}")
    sys.exit(EXIT_OK if all(r["ok"] for r in results) else EXIT_ERROR)


@tools.command("list")
@config_option
@agent_option
@click.option("--json", "as_json", is_flag=True, help="Print a JSON list.")
def list_tools(config_path: Path | None, agent_name: str | None, as_json: bool) -> None:
    """List what the agent's model receives, in tools.use order.

    A tool hidden by an unconditional deny (its last matching rule) is left out: the model
    never receives its schema. An MCP tool (mcp/...) also shows its definition hash: the
    SHA-256 of its name, description and input schema, which its server may change.
    """
    seen: list[Any] = []

    async def work(app: Any) -> int:
        seen.append(await app.list_tools(agent_name))
        return EXIT_OK

    with_app(work, config_path=config_path, as_json=as_json)
    listing = seen[0]
    for identity, found in listing.warnings.items():  # stderr: --json keeps stdout JSON
        for warning in found:
            click.echo(f"warning: {identity}: {warning}", err=True)
    if as_json:
        emit_json([_entry(d) for d in listing.definitions])
        return
    if not listing.selected:
        click.echo(f"agent {listing.agent!r} selects no tools")
    for definition in listing.definitions:
        summary = definition.description.strip().splitlines()[0]
        click.echo(f"{definition.name}  ({definition.identity})\n    {summary}")
        if definition.identity.startswith("mcp/"):
            click.echo(f"    definition sha256:{definition.definition_hash()[:16]}")
    for identity, rule in listing.hidden.items():
        layer = listing.hidden_by.get(identity, "agent")
        rules = "tools.rules" if layer == "agent" else f"the {layer} floor's rules"
        click.echo(f"not exposed: {identity} ({rules}[{rule}] denies every call)")


def _entry(definition: Any) -> dict[str, Any]:
    """One tool of ``raw tools list --json``; an MCP tool's has its ``definition_hash``."""
    entry: dict[str, Any] = definition.to_dict()
    if definition.identity.startswith("mcp/"):
        entry["definition_hash"] = definition.definition_hash()
    return entry
