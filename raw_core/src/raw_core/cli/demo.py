"""``raw demo``: a real turn against a copy of a small project, with a recorded model.

Everything but the model is real: the built-in tools read files, apply a patch and run
commands in a temporary copy of the project, the rules decide, an ask rule asks you (on a
terminal), and every message is committed to a session store in that folder. Only the
model's replies come from a recording, so the demo needs no network and no API key.
"""

from __future__ import annotations

import json
import os
import shutil
import sys
import tempfile
from pathlib import Path

import click

from raw_core.cli._output import fail, usage_failed
from raw_core.errors import RawError

__all__ = ["demo"]


@click.command("demo")
@click.option(
    "--dir",
    "directory",
    type=click.Path(file_okay=False, path_type=Path),
    default=None,
    help="Where to put the demo project (default: a new temporary"
    " folder, kept so you can look at it).",
)
@click.option("--json", "as_json", is_flag=True, help="Print every event as a JSON line.")
def demo(directory: Path | None, as_json: bool) -> None:
    """Watch an agent fix a small project: read, patch, test, and ask before rm.

    Exits 0 when the turn completed.
    """
    from raw_core import ReplayProvider
    from raw_core.cli.run import one_turn
    from raw_core.demo import DEMO_DIR

    root = directory if directory is not None else Path(tempfile.mkdtemp(prefix="raw-demo-"))
    project = root / "project"
    if project.exists():
        usage_failed(f"{project} exists; choose another --dir", as_json=as_json, field="--dir")
    try:
        shutil.copytree(
            DEMO_DIR / "project", project, ignore=shutil.ignore_patterns("__pycache__", "*.pyc")
        )
        _write_config(root)
    except OSError as exc:
        usage_failed(f"cannot create the demo project in {root}: {exc.strerror}", as_json=as_json)
    if not as_json:
        click.echo(
            f"raw demo: a real turn in {project}\n"
            "The model's replies are a recording; every tool call, rule and store"
            " write is real.\n",
            err=True,
        )
    try:
        provider = ReplayProvider.from_file(DEMO_DIR / "recording.jsonl", delay=0.02)
    except RawError as exc:
        fail(exc, as_json=as_json)
    opened: list[str] = []
    config = root / "raw.json"
    code = one_turn(
        "greet() should greet people by name; test_greet.py shows how. Fix it.",
        config_path=config,
        agent_name=None,
        cwd=project,
        as_json=as_json,
        provider=provider,
        opened=opened,
    )
    if not as_json:
        shown = (
            f"The whole session: raw sessions show {opened[0]} --config {config}\n"
            if opened
            else ""
        )
        click.echo(
            f"\nThe project, its config and the session store are in {root}.\n{shown}"
            "Next: point raw at a real model (see the README) and run `raw chat`.",
            err=True,
        )
    sys.exit(code)


def _write_config(root: Path) -> None:
    """The demo's config in ``root``, with its sessions stored in ``root/sessions``, so
    that ``raw sessions show ID --config root/raw.json`` finds the demo's session (a
    user's config that names the sessions' store takes its place, there as in the turn)."""
    from raw_core.demo import DEMO_DIR

    data = json.loads((DEMO_DIR / "raw.json").read_text(encoding="utf-8"))
    store = os.path.abspath(root / "sessions")
    data["sessions"] = {"backend": {"type": "sqlite", "directory": store}}
    (root / "raw.json").write_text(json.dumps(data, indent=2) + "\n", encoding="utf-8")
