"""Real command-hook folders for tests: a project with an ``agent/echo`` tool, and hooks
written as Python or shell scripts that record every run (payload, working directory,
environment) in ``runs.jsonl`` beside them."""

from __future__ import annotations

import json
import stat
import sys
import time
from pathlib import Path
from typing import Any

# The recording prelude of every Python hook: what it received, where, with what environment.
PY_PRELUDE = """#!{python}
import json, os, pathlib, sys
raw_input = sys.stdin.read()
payload = json.loads(raw_input)
here = pathlib.Path(os.environ["RAW_HOOK_DIR"])
with open(here / "runs.jsonl", "a", encoding="utf-8") as log:
    record = {{"payload": payload, "cwd": os.getcwd(), "env": dict(os.environ)}}
    log.write(json.dumps(record) + "\\n")
"""

SH_PRELUDE = """#!/bin/sh
payload=$(cat)
printf '%s\\n' "{\\"sh\\": true}" >> "$RAW_HOOK_DIR/runs.jsonl"
"""

ECHO = """
from pathlib import Path

def handler(args, context):
    Path(context.cwd, "handler-ran").write_text("ran")
    return {"content": [{"type": "text", "text": "echo: " + args["text"]}]}
"""

TEXT = {
    "type": "object",
    "properties": {"text": {"type": "string"}},
    "required": ["text"],
    "additionalProperties": False,
}


def write_tool(root: Path, name: str = "echo", code: str = ECHO) -> Path:
    """An ``agent/<name>`` tool taking ``{"text": ...}`` whose handler writes
    ``handler-ran`` in the session's working directory."""
    folder = root / "tools" / name
    folder.mkdir(parents=True, exist_ok=True)
    manifest = {
        "api_version": 2,
        "id": name,
        "version": "1.0.0",
        "name": name,
        "description": f"The {name} test tool.",
        "input_schema": TEXT,
        "condition_sources": ["arguments"],
        "entry": "./tool.py",
    }
    (folder / "tool.json").write_text(json.dumps(manifest), encoding="utf-8")
    (folder / "tool.py").write_text(code, encoding="utf-8")
    return folder


def _executable(path: Path, text: str) -> None:
    path.write_text(text, encoding="utf-8")
    path.chmod(path.stat().st_mode | stat.S_IXUSR | stat.S_IXGRP | stat.S_IXOTH)


def write_hook(
    root: Path,
    name: str,
    *,
    python: str | None = None,
    sh: str | None = None,
    events: list[str] | None = None,
    directory: Path | None = None,
    **fields: Any,
) -> Path:
    """A hook folder ``<root>/hooks/<name>`` (or ``<directory>/<name>``) running
    ``./hook.py`` (``python``: its body after the recording prelude) or ``./hook.sh``
    (``sh``: its body after reading stdin). ``fields`` go into ``hook.json`` (None drops
    one)."""
    folder = (directory if directory is not None else root / "hooks") / name
    folder.mkdir(parents=True, exist_ok=True)
    if sh is not None:
        _executable(folder / "hook.sh", SH_PRELUDE + sh)
        program = "./hook.sh"
    else:
        _executable(folder / "hook.py", PY_PRELUDE.format(python=sys.executable) + (python or ""))
        program = "./hook.py"
    manifest: dict[str, Any] = {
        "protocol_version": 2,
        "id": name,
        "version": "1.0.0",
        "description": f"The {name} test hook.",
        "events": events or ["PreToolUse"],
        "command": [program],
    }
    for key, value in fields.items():
        if value is None:
            manifest.pop(key, None)
        else:
            manifest[key] = value
    (folder / "hook.json").write_text(json.dumps(manifest), encoding="utf-8")
    return folder


def runs(folder: Path) -> list[dict[str, Any]]:
    """What each run of the hook in ``folder`` recorded, in order (none: it never ran)."""
    log = folder / "runs.jsonl"
    if not log.exists():
        return []
    return [json.loads(line) for line in log.read_text(encoding="utf-8").splitlines()]


def write_config(root: Path, use: list[str], **agent: Any) -> Path:
    """``raw.json`` with agent ``a``: ``agent/echo``, ``use`` as its ``hooks.use``, and
    ``agent`` merged into the agent (``rules=[...]`` goes to ``tools.rules``, ``hooks``
    into ``hooks``, ``top`` to the top level)."""
    rules = agent.pop("rules", [])
    top = agent.pop("top", {})
    config = {
        **top,
        "agents": {
            "a": {
                "tools": {"use": agent.pop("tools", ["agent/echo"]), "rules": rules},
                "hooks": {"use": use, **agent.pop("hooks", {})},
                **agent,
            }
        },
    }
    path = root / "raw.json"
    path.write_text(json.dumps(config), encoding="utf-8")
    return path


def process_gone(pid: int) -> bool:
    """Whether ``pid`` no longer runs: gone, or a zombie nobody has reaped yet (Linux)."""
    try:
        stat_line = Path(f"/proc/{pid}/stat").read_text(encoding="utf-8")
    except OSError:
        return True
    return stat_line.rsplit(")", 1)[1].split()[0] == "Z"


def gone_within(pid: int, seconds: float = 10.0) -> bool:
    """Whether ``pid`` is gone within ``seconds`` (a kill is delivered at once, but the
    kernel may take a moment to finish the process)."""
    deadline = time.monotonic() + seconds
    while not process_gone(pid):
        if time.monotonic() > deadline:
            return False
        time.sleep(0.02)
    return True
