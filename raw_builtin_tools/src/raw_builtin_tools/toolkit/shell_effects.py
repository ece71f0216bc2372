"""The intended effects of several Bash command lines run by one call, under one budget.

builtin/bash (one entry per command) and builtin/process (one per ``start``) declare the
same effects shape, so that one rule covers both: ``{"commands": [{"programs", "flags"}],
"files": [{"path", "operation": "write"}]}``. The lines of one call share one budget
(:data:`CALL_BYTES`, :data:`CALL_NODES`, :data:`CALL_PARSE_SECONDS`) on top of each
line's own limits, so a call's effects are bounded however many lines it has.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any, Final

from raw_builtin_tools.toolkit.shell import parse_command
from raw_builtin_tools.toolkit.shell_records import (
    MAX_COMMAND_BYTES,
    MAX_COMMAND_NODES,
    MAX_PARSE_SECONDS,
)

__all__ = ["CALL_BYTES", "CALL_NODES", "CALL_PARSE_SECONDS", "commands_effects"]

CALL_BYTES: Final = 2 * MAX_COMMAND_BYTES
"""Bytes of Bash text the lines of one call may have parsed together."""
CALL_NODES: Final = 2 * MAX_COMMAND_NODES
"""Syntax-tree nodes the lines of one call may have walked together."""
CALL_PARSE_SECONDS: Final = 3 * MAX_PARSE_SECONDS
"""Time tree-sitter may spend parsing the lines of one call together."""


def commands_effects(lines: Iterable[tuple[str, str]], *, home: str | None) -> dict[str, Any]:
    """The effects of ``(command line, cwd)`` pairs, in order: one ``commands`` entry per
    line, and every file a redirection writes, absolute, each once, in the order first
    written. ``home`` expands a leading ``~`` (see :func:`parse_command`). Reads nothing
    and runs nothing."""
    spent_bytes = spent_nodes = 0
    spent_seconds = 0.0
    commands: list[dict[str, Any]] = []
    files: dict[str, None] = {}
    for line, cwd in lines:
        parsed = parse_command(
            line,
            cwd,
            home=home,
            max_bytes=CALL_BYTES - spent_bytes,
            max_nodes=CALL_NODES - spent_nodes,
            max_seconds=CALL_PARSE_SECONDS - spent_seconds,
        )
        spent_bytes += parsed.parsed_bytes
        spent_nodes += parsed.nodes
        spent_seconds += parsed.parse_seconds
        commands.append(parsed.to_effect())
        files.update(dict.fromkeys(parsed.writes))
    return {
        "commands": commands,
        "files": [{"path": path, "operation": "write"} for path in files],
    }
