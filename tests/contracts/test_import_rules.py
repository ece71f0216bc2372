"""Who may import whom: the front ends compose nothing themselves, and no distribution
reaches into another's private modules.

The reference CLI is one client of the session service (``raw_core.app``): it parses
arguments and renders, and builds no dispatcher, store, provider or runtime itself. These
tests read every module (imports inside functions and under ``TYPE_CHECKING`` included)
and fail on an import the rules do not allow.
"""

from __future__ import annotations

import ast
from collections.abc import Iterator
from pathlib import Path

import pytest

import raw_acp
import raw_builtin_tools
import raw_core
import raw_dashboard
import raw_mcp
import raw_providers
import raw_store_postgres

CLI = Path(raw_core.__file__).parent / "cli"

# What the CLI may import of raw: the facade, the session service (which also re-exports
# the records a front end renders), its own modules, the errors and the demo's files.
CLI_ALLOWED = ("raw_core", "raw_core.app", "raw_core.errors", "raw_core.demo")
CLI_OWN = "raw_core.cli"

DISTRIBUTIONS = {
    "raw_core": Path(raw_core.__file__).parent,
    "raw_builtin_tools": Path(raw_builtin_tools.__file__).parent,
    "raw_providers": Path(raw_providers.__file__).parent,
    "raw_store_postgres": Path(raw_store_postgres.__file__).parent,
    "raw_mcp": Path(raw_mcp.__file__).parent,
    "raw_acp": Path(raw_acp.__file__).parent,
    "raw_dashboard": Path(raw_dashboard.__file__).parent,
}


def module_name(path: Path, root: Path, package: str) -> str:
    parts = [package, *path.relative_to(root).with_suffix("").parts]
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def imported_modules(path: Path, module: str | None = None) -> Iterator[tuple[int, str]]:
    """``(line, module)`` for every import in the file, at any depth; with ``module`` (the
    file's dotted name), relative imports are resolved against it."""
    is_package = path.name == "__init__.py"
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            for alias in node.names:
                yield node.lineno, alias.name
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                assert module is not None, f"{path}: a relative import"
                base = module.split(".")
                if not is_package:
                    base = base[:-1]
                base = base[: len(base) - (node.level - 1)]
                target = ".".join([*base, *([node.module] if node.module else [])])
            else:
                assert node.module is not None
                target = node.module
            yield node.lineno, target
            # ``from package import _private`` names a private module too.
            for alias in node.names:
                if alias.name.startswith("_") and not alias.name.startswith("__"):
                    yield node.lineno, f"{target}.{alias.name}"


def _cli_may_import(module: str) -> bool:
    if module.split(".")[0] not in DISTRIBUTIONS:
        return True  # the standard library and third-party packages (click...)
    return module in CLI_ALLOWED or module == CLI_OWN or module.startswith(CLI_OWN + ".")


@pytest.mark.parametrize("path", sorted(CLI.glob("*.py")), ids=lambda p: p.name)
def test_the_cli_imports_only_the_app_its_own_modules_and_the_facade(path: Path) -> None:
    module = module_name(path, CLI, "raw_core.cli")
    offending = [
        f"line {line}: {target}"
        for line, target in imported_modules(path, module)
        if not _cli_may_import(target)
    ]
    assert offending == [], f"{path.name} imports what only raw_core.app composes"


def test_the_cli_reaches_the_runtime_through_the_app() -> None:
    """One module builds the App; the others take it from it (``with_app``), and
    ``raw config validate`` asks the app's ``validate_config``."""
    users = []
    for path in CLI.glob("*.py"):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if (
                isinstance(node, ast.ImportFrom)
                and node.module == "raw_core.app"
                and any(alias.name == "App" for alias in node.names)
            ):
                users.append(path.name)
    assert sorted(set(users)) == ["_app.py"]


def _private(module: str) -> bool:
    return any(part.startswith("_") and not part.startswith("__") for part in module.split("."))


@pytest.mark.parametrize("distribution", sorted(DISTRIBUTIONS))
def test_no_distribution_imports_another_ones_private_modules(distribution: str) -> None:
    root = DISTRIBUTIONS[distribution]
    offending = []
    for path in sorted(root.rglob("*.py")):
        module = module_name(path, root, distribution)
        for line, target in imported_modules(path, module):
            top = target.split(".")[0]
            if top in DISTRIBUTIONS and top != distribution and _private(target):
                offending.append(f"{path.relative_to(root)}:{line} {target}")
    assert offending == [], f"{distribution} imports private modules of another distribution"


DASHBOARD = Path(raw_dashboard.__file__).parent


@pytest.mark.parametrize("path", sorted(DASHBOARD.glob("*.py")), ids=lambda p: p.name)
def test_the_dashboard_imports_of_raw_only_what_the_cli_may(path: Path) -> None:
    """The dashboard is a front end like the terminal: the facade, the app and the errors."""
    module = module_name(path, DASHBOARD, "raw_dashboard")
    offending = [
        f"line {line}: {target}"
        for line, target in imported_modules(path, module)
        if target.split(".")[0] in DISTRIBUTIONS
        and target not in CLI_ALLOWED
        and not target.startswith("raw_dashboard")
    ]
    assert offending == [], f"{path.name} imports what only raw_core.app composes"
