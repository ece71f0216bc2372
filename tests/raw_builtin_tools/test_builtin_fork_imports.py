"""A forked built-in keeps working across upgrades: it imports only public names.

Two checks. The import rule reads every built-in tool's entry module and allows only the
``raw_core`` facade (names in its ``__all__``) and ``raw_builtin_tools.toolkit`` (names in
its ``__all__``). The fork test copies every built-in tool out with ``raw tools fork`` and
calls each copy with ``raw tools call`` in a process whose import system refuses every
private module of ``raw_builtin_tools``, as an upgrade that renamed them would.
"""

from __future__ import annotations

import ast
import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

import raw_builtin_tools.toolkit as toolkit
import raw_core
from raw_builtin_tools import TOOLS_DIR
from tests.images import png

TOOLKIT = "raw_builtin_tools.toolkit"
BUILTIN_TOOLS = sorted(p.name for p in TOOLS_DIR.iterdir() if (p / "tool.json").is_file())

# --- the import rule -------------------------------------------------------------------------


def import_problems(source: str) -> list[str]:
    """What in ``source`` a fork could not rely on: an import of raw_core other than the
    facade, of raw_builtin_tools other than the toolkit, a relative import, or a name the
    facade or the toolkit does not export."""
    problems: list[str] = []
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Import):
            for alias in node.names:
                top = alias.name.split(".")[0]
                if top in ("raw_core", "raw_builtin_tools") and alias.name not in (
                    "raw_core",
                    TOOLKIT,
                ):
                    problems.append(f"line {node.lineno}: import {alias.name}")
        elif isinstance(node, ast.ImportFrom):
            module = node.module or ""
            if node.level:
                problems.append(f"line {node.lineno}: relative import from {module or '.'}")
                continue
            exported: list[str] | None = None
            if module == "raw_core":
                exported = raw_core.__all__
            elif module == TOOLKIT:
                exported = toolkit.__all__
            elif module.split(".")[0] in ("raw_core", "raw_builtin_tools"):
                problems.append(f"line {node.lineno}: from {module} import ...")
                continue
            if exported is not None:
                problems += [
                    f"line {node.lineno}: {module}.{alias.name} is not in its __all__"
                    for alias in node.names
                    if alias.name not in exported
                ]
    return problems


def entry_module(tool: str) -> Path:
    manifest = json.loads((TOOLS_DIR / tool / "tool.json").read_text(encoding="utf-8"))
    return TOOLS_DIR / tool / str(manifest["entry"])


@pytest.mark.parametrize("tool", BUILTIN_TOOLS)
def test_a_builtin_tool_imports_only_the_facade_and_the_toolkit(tool: str) -> None:
    path = entry_module(tool)
    assert import_problems(path.read_text(encoding="utf-8")) == [], path


@pytest.mark.parametrize(
    "source",
    [
        "from raw_builtin_tools._process import run_command",
        "from raw_builtin_tools.toolkit.processes import run_command",
        "import raw_builtin_tools._patch",
        "from raw_builtin_tools import toolkit",
        "from raw_core.tools.calls import ToolContext",
        "from raw_core._private import x",
        "import raw_core.errors",
        "from raw_core import SkillNotSelected",
        "from raw_builtin_tools.toolkit import _Slot",
        "from . import helpers",
        "def f():\n    from raw_core.tools.results import BatchResult\n",
    ],
)
def test_the_import_rule_catches_what_a_fork_cannot_rely_on(source: str) -> None:
    assert import_problems(source) != []


def test_the_import_rule_allows_the_facade_the_toolkit_and_anything_else() -> None:
    source = (
        "import os\nimport anyio\nimport raw_core\nimport raw_builtin_tools.toolkit\n"
        "from raw_core import BatchResult, ToolContext\n"
        "from raw_builtin_tools.toolkit import Workspace, run_command\n"
    )
    assert import_problems(source) == []


def test_every_toolkit_name_resolves_once_and_none_is_private() -> None:
    assert len(toolkit.__all__) == len(set(toolkit.__all__))
    for name in toolkit.__all__:
        assert not name.startswith("_")
        assert getattr(toolkit, name) is not None


# --- a fork runs without the private modules -------------------------------------------------

# Run `raw` with an import hook that refuses every module of raw_builtin_tools with a name
# segment starting with "_"; then report which raw_builtin_tools modules were loaded.
REFUSING_RAW = """
import importlib.abc, json, runpy, sys

def private(name):
    parts = name.split(".")
    return parts[0] == "raw_builtin_tools" and any(p.startswith("_") for p in parts[1:])

class RefusePrivate(importlib.abc.MetaPathFinder):
    def find_spec(self, name, path=None, target=None):
        if private(name):
            raise ModuleNotFoundError(f"refused private module {name}", name=name)
        return None

sys.meta_path.insert(0, RefusePrivate())
try:
    import raw_builtin_tools._patch
except ModuleNotFoundError as refused:
    if "refused private module" not in str(refused):
        sys.exit("the hook did not refuse raw_builtin_tools._patch")
else:
    sys.exit("the hook did not refuse raw_builtin_tools._patch")
sys.argv[0] = "raw"
try:
    runpy.run_module("raw_core", run_name="__main__")
finally:
    loaded = sorted(m for m in sys.modules if m.split(".")[0] == "raw_builtin_tools")
    print("modules: " + json.dumps(loaded), file=sys.stderr)
"""

SKILL = "---\nname: review\ndescription: How to review a change.\n---\nRead the diff first.\n"

# tool -> (arguments, text the result must contain)
CALLS: dict[str, tuple[dict[str, Any], str]] = {
    "bash": ({"commands": [{"command": "echo forked-bash"}]}, "forked-bash"),
    "read_file": ({"files": [{"path": "notes.txt", "start_line": 2}]}, "lines 2-3 of 3"),
    "write_file": (
        {
            "patch": "*** Begin Patch\n*** Add File: new.txt\n+made by a fork\n"
            "*** Update File: notes.txt\n@@\n one\n-two\n+TWO\n*** End Patch\n"
        },
        "applied 1 hunk",
    ),
    "list_skills": ({}, "review: How to review a change."),
    "load_skill": ({"name": "review"}, "Read the diff first."),
    "list_vars": ({}, "TOKEN: A test token"),
    "read_var": ({"name": "TOKEN"}, ""),
    "todo": ({"items": [{"text": "fork it", "status": "done"}]}, "panel todo updated (revision 1)"),
    "process": (
        {
            "actions": [
                {"action": "start", "name": "echo", "argv": ["echo", "forked-process"]},
                {"action": "wait", "name": "echo"},
                {"action": "read", "name": "echo"},
            ]
        },
        "forked-process",
    ),
    "view_image": ({"path": "pixel.png"}, "pixel.png: PNG image, 1×1 pixels"),
    "ask_user": ({"questions": [{"question": "Name?", "type": "text"}]}, "cannot be asked"),
}
ENDS_IN: dict[str, str] = {"ask_user": "interaction_unavailable"}
"""Tools whose call here ends in an error: ask_user has nobody to ask without a terminal."""


def test_every_builtin_tool_has_a_fork_call() -> None:
    assert sorted(CALLS) == BUILTIN_TOOLS


@pytest.fixture(scope="module")
def forks(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, dict[str, str]]:
    """Every built-in tool forked into a fresh local tools folder, and a config selecting
    all the forks; returns the project folder and the environment to run raw in."""
    root = tmp_path_factory.mktemp("forks")
    env = {
        **os.environ,
        "XDG_CONFIG_HOME": str(root / "xdg"),
        "XDG_STATE_HOME": str(root / "state"),
        "RAW_FORK_TOKEN": "t0ken",
    }
    for tool in BUILTIN_TOOLS:
        fork = subprocess.run(
            [sys.executable, "-m", "raw_core", "tools", "fork", f"builtin/{tool}"],
            capture_output=True,
            text=True,
            env=env,
            cwd=root,
        )
        assert fork.returncode == 0, fork.stderr
        assert f"select it as local/{tool}" in fork.stdout
    project = root / "project"
    (project / "skills" / "review").mkdir(parents=True)
    (project / "skills" / "review" / "SKILL.md").write_text(SKILL, encoding="utf-8")
    config = {
        "vars": {"TOKEN": {"description": "A test token", "from": {"env": "RAW_FORK_TOKEN"}}},
        "skills": {"paths": ["skills"]},
        "agents": {
            "a": {
                "tools": {"use": [f"local/{tool}" for tool in BUILTIN_TOOLS]},
                "skills": {"use": ["review"]},
                "vars": {"use": ["TOKEN"]},
            }
        },
    }
    (project / "raw.json").write_text(json.dumps(config), encoding="utf-8")
    return project, env


@pytest.mark.parametrize("tool", sorted(CALLS))
def test_a_fork_runs_when_the_private_modules_cannot_be_imported(
    tool: str, forks: tuple[Path, dict[str, str]], tmp_path: Path
) -> None:
    project, env = forks
    assert (Path(env["XDG_CONFIG_HOME"]) / "raw" / "tools" / tool / "tool.py").read_bytes() == (
        TOOLS_DIR / tool / "tool.py"
    ).read_bytes()
    work = tmp_path / "work"
    work.mkdir()
    (work / "notes.txt").write_text("one\ntwo\nthree\n", encoding="utf-8")
    (work / "pixel.png").write_bytes(png(1, 1))
    arguments, expected = CALLS[tool]
    command = ["tools", "call", f"local/{tool}", json.dumps(arguments)]
    options = ["--config", str(project / "raw.json"), "--cwd", str(work), "--approve", "--json"]
    result = subprocess.run(
        [sys.executable, "-c", REFUSING_RAW, *command, *options],
        capture_output=True,
        text=True,
        env=env,
        cwd=work,
        stdin=subprocess.DEVNULL,
    )
    code = ENDS_IN.get(tool)
    assert result.returncode == (0 if code is None else 1), result.stdout + result.stderr
    outcome = json.loads(result.stdout)
    assert (outcome["status"], outcome["code"]) == ("ok" if code is None else "error", code)
    assert expected in json.dumps(outcome["content"], ensure_ascii=False).replace("\\n", "\n")
    modules = json.loads(result.stderr.rsplit("modules: ", 1)[1])
    assert [m for m in modules if any(p.startswith("_") for p in m.split(".")[1:])] == []
    if tool in ("bash", "read_file", "write_file"):
        assert TOOLKIT in modules
    if tool == "write_file":
        assert (work / "new.txt").read_text(encoding="utf-8") == "made by a fork\n"
        assert (work / "notes.txt").read_text(encoding="utf-8") == "one\nTWO\nthree\n"
