"""``raw hooks``: check command-hook folders and list the hooks an agent selects."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

import click

from raw_core.cli._app import agent_option, config_option, with_app
from raw_core.cli._output import EXIT_ERROR, EXIT_OK, emit_json
from raw_core.errors import RawError

__all__ = ["hooks"]


@click.group()
def hooks() -> None:
    """Check and list command hooks."""


@hooks.command("check")
@click.argument("paths", nargs=-1, required=True, type=click.Path(path_type=Path))
@click.option("--json", "as_json", is_flag=True, help="Print a JSON list, one entry per folder.")
def check(paths: tuple[Path, ...], as_json: bool) -> None:
    """Check hook folders: hook.json, its when predicate and its ./ program. Runs nothing.

    Exits 0 when every folder is a valid hook, 1 otherwise.
    """
    from raw_core import load_hook

    results: list[dict[str, Any]] = []
    for path in paths:
        try:
            hook = load_hook(path)
        except RawError as exc:
            error: dict[str, Any] = {"code": exc.code, "message": exc.message, "field": exc.field}
            results.append({"path": str(path), "ok": False, "error": error})
            continue
        results.append(
            {
                "path": str(path),
                "ok": True,
                "id": hook.manifest.id,
                "version": hook.manifest.version,
                "events": list(hook.events),
            }
        )
    if as_json:
        emit_json(results)
    else:
        for result in results:
            if result["ok"]:
                events = ", ".join(result["events"])
                click.echo(f"ok    {result['path']}: {result['id']} {result['version']} ({events})")
            else:
                err = result["error"]
                where = f" (at {err['field']})" if err["field"] else ""
                click.echo(f"FAIL  {result['path']}: {err['code']}: {err['message']}{where}")
    sys.exit(EXIT_OK if all(r["ok"] for r in results) else EXIT_ERROR)


@hooks.command("list")
@config_option
@agent_option
@click.option("--json", "as_json", is_flag=True, help="Print a JSON list.")
def list_hooks(config_path: Path | None, agent_name: str | None, as_json: bool) -> None:
    """List the command hooks the agent selects, in the order they run.

    Each folder is loaded and checked, and each when is bound to the tools its match
    selects, as when a session starts.
    """
    seen: list[Any] = []

    async def work(app: Any) -> int:
        seen.append(await app.list_hooks(agent_name))
        return EXIT_OK

    with_app(work, config_path=config_path, as_json=as_json)
    selected = seen[0]
    if as_json:
        emit_json([hook.to_dict() for hook in selected])
        return
    if not selected:
        click.echo("the agent selects no command hooks")
    for hook in selected:
        manifest = hook.manifest
        click.echo(f"{hook.identity}  {manifest.version}  ({', '.join(hook.events)})")
        click.echo(f"    {manifest.description.strip().splitlines()[0]}")
        if manifest.tool_events:
            when = manifest.when
            condition = f"; when {when.source} {when.any} ~ /{when.regex}/" if when else ""
            click.echo(f"    match {hook.match.pattern}{condition}")
        click.echo(f"    command: {' '.join(manifest.command)}")
