"""Who may import whom: the front ends compose nothing themselves.

The reference CLI is one client of the session service (``raw_core.app``): it parses
arguments and renders, and builds no dispatcher, store, provider or runtime itself. These
tests read every module of ``raw_core.cli`` (imports inside functions included) and fail
when one imports a module that composes the runtime.
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

import raw_core

CLI = Path(raw_core.__file__).parent / "cli"

# The conversation's record types, which the CLI renders (not a part that composes).
RECORDS = ("raw_core.sessions.messages",)

# What composes the runtime: only raw_core.app may put these together.
COMPOSITION = (
    "raw_core.agent",
    "raw_core.runtime.approvals",
    "raw_core.sessions.backend",
    "raw_core.dispatch",
    "raw_core.plugins.hooks",
    "raw_core.tools.loader",
    "raw_core.runtime.loop",
    "raw_core.runtime.models",
    "raw_core.plugins",
    "raw_core.policy",
    "raw_core.runtime.provider",
    "raw_core.tools.registry",
    "raw_core.runtime.scripted",
    "raw_core.tools.sources",
    "raw_core.sessions.sqlite",
    "raw_providers",
    "raw_builtin_tools",
)


def imported_modules(path: Path) -> list[tuple[int, str]]:
    """``(line, module)`` for every import in the file, at any depth."""
    found = []
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            found += [(node.lineno, alias.name) for alias in node.names]
        elif isinstance(node, ast.ImportFrom) and node.module is not None and not node.level:
            found.append((node.lineno, node.module))
    return found


@pytest.mark.parametrize("path", sorted(CLI.glob("*.py")), ids=lambda p: p.name)
def test_the_cli_composes_nothing_itself(path: Path) -> None:
    offending = [
        f"line {line}: {module}"
        for line, module in imported_modules(path)
        if module not in RECORDS
        and any(module == banned or module.startswith(banned + ".") for banned in COMPOSITION)
    ]
    assert offending == [], f"{path.name} imports what only raw_core.app composes"


def test_the_cli_reaches_the_runtime_through_the_app() -> None:
    users = [
        path.name
        for path in CLI.glob("*.py")
        if any(module == "raw_core.app" for _, module in imported_modules(path))
    ]
    assert sorted(users) == ["_app.py", "config.py"]
