"""How the terminal shows a call that needs approval: a block set apart from the
transcript, the intended effects first (what the call would change, read from the tool's
effects: the commands it would run, the files it would touch), then the raw arguments."""

from __future__ import annotations

import json
import sys
from collections.abc import Mapping
from typing import Any

from raw_core.cli._style import Painter

__all__ = ["effect_lines", "show_request"]


def effect_lines(effects: Any) -> list[str]:
    """The intended effects as lines: each command line to run and each file touched; an
    effects value of another shape (a plug-in tool's) as indented JSON."""
    lines: list[str] = []
    known = isinstance(effects, Mapping) and set(effects) <= {"commands", "files", "flags"}
    if known:
        for command in effects.get("commands") or ():
            for program in (command.get("programs") if isinstance(command, Mapping) else ()) or ():
                if isinstance(program, Mapping) and program.get("line"):
                    lines.append(f"run    {program['line']}")
        for entry in effects.get("files") or ():
            if isinstance(entry, Mapping):
                lines.append(f"{entry.get('operation', '?'):<6} {entry.get('path')}")
        if lines:
            return lines
    return json.dumps(effects, indent=2, ensure_ascii=False).split("\n")


def show_request(request: Any) -> None:
    """Print an approval request on stderr: a titled block, the effects before the
    arguments."""
    paint = Painter(sys.stderr)
    paint.stream.write("\n")
    paint.line(f"╭─ {request.identity} needs approval ({request.reason})", "approval")
    if request.effects is not None:
        paint.line("│ Intended effects:", "approval")
        for line in effect_lines(request.effects):
            paint.line(f"│   {line}", "effects")
    paint.line("│ Arguments:", "approval")
    for line in json.dumps(request.arguments, indent=2, ensure_ascii=False).split("\n"):
        paint.line(f"│   {line}", "output")
    paint.line("╰─", "approval")
    paint.stream.flush()
