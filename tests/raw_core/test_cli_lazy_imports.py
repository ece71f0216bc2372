"""What a command imports is start-up time: rich is imported only to draw on a terminal
and prompt_toolkit only for a chat's prompt on one, each command imports its own module
of the CLI alone, and a command that needs no session imports no session store."""

from __future__ import annotations

import ast
import json
import subprocess
import sys
from pathlib import Path

PROGRAM = """
import sys
from raw_core.cli import main
sys.argv = ["raw", *sys.argv[1:]]
try:
    main()
except SystemExit as exc:
    code = exc.code
print("LOADED", sorted({m.split(".")[0] for m in sys.modules} & {"rich", "prompt_toolkit"}))
print("RAW", sorted(m for m in sys.modules if m.startswith("raw_core.")))
print("ALL", sorted(sys.modules))
sys.exit(code)
"""


def _run(tmp_path: Path, *args: str) -> tuple[list[str], set[str]]:
    """Run ``raw args`` in a fresh interpreter: its output lines, and the raw_core modules
    it imported."""
    lines, loaded = _run_all(tmp_path, *args)
    return lines, {m for m in loaded if m.startswith("raw_core.")}


def _run_all(tmp_path: Path, *args: str) -> tuple[list[str], set[str]]:
    """Run ``raw args`` in a fresh interpreter: its output lines, and every module it
    imported."""
    result = subprocess.run(
        [sys.executable, "-c", PROGRAM, *args],
        capture_output=True,
        text=True,
        cwd=tmp_path,
        stdin=subprocess.DEVNULL,
        timeout=120,
    )
    assert result.returncode == 0, result.stderr
    lines = result.stdout.splitlines()
    assert lines[-2].startswith("RAW ")
    assert lines[-1].startswith("ALL ")
    return lines[:-2], set(ast.literal_eval(lines[-1].removeprefix("ALL ")))


def _tool_config(tmp_path: Path) -> Path:
    config = tmp_path / "raw.json"
    config.write_text(json.dumps({"agents": {"a": {"tools": {"use": ["builtin/read_file"]}}}}))
    return config


def test_tools_list_imports_neither_rich_nor_prompt_toolkit(tmp_path: Path) -> None:
    config = tmp_path / "raw.json"
    config.write_text(
        json.dumps(
            {
                "models": {"m": {"provider": "replay", "model": str(tmp_path / "none.jsonl")}},
                "agents": {"a": {"model": "m", "tools": {"use": ["builtin/bash"]}}},
            }
        )
    )
    lines, _ = _run(tmp_path, "tools", "list", "--config", str(config))
    assert "bash" in lines[0]
    assert lines[-1] == "LOADED []"


def test_tools_list_imports_only_the_tools_command(tmp_path: Path) -> None:
    lines, loaded = _run(tmp_path, "tools", "list", "--config", str(_tool_config(tmp_path)))
    assert lines[0] == "read_file  (builtin/read_file)"
    assert lines[-1] == "LOADED []"
    cli = {m for m in loaded if m.startswith("raw_core.cli.")}
    assert cli == {
        "raw_core.cli._app",
        "raw_core.cli._lazy_group",
        "raw_core.cli._log",
        "raw_core.cli._output",
        "raw_core.cli.tools",
    }


def test_tools_list_neither_imports_nor_opens_the_session_store(tmp_path: Path) -> None:
    _, loaded = _run(tmp_path, "tools", "list", "--config", str(_tool_config(tmp_path)))
    assert not loaded & {"raw_core.app._backends", "raw_core.sessions.sqlite"}
    assert not [m for m in loaded if m.startswith("raw_core.runtime")]


def test_tools_list_does_not_import_the_dispatch_pipeline(tmp_path: Path) -> None:
    _, loaded = _run(tmp_path, "tools", "list", "--config", str(_tool_config(tmp_path)))
    assert not [m for m in loaded if m.startswith("raw_core.dispatch")]


def test_tools_list_imports_no_provider(tmp_path: Path) -> None:
    """No model is called: the providers plug-in is loaded, its contract is not imported."""
    _, loaded = _run(tmp_path, "tools", "list", "--config", str(_tool_config(tmp_path)))
    assert not [m for m in loaded if m.startswith("raw_core.providers")]


def test_help_imports_every_command_and_lists_them(tmp_path: Path) -> None:
    lines, loaded = _run(tmp_path, "--help")
    for module in ("config", "demo", "hooks", "models", "pkg", "policy", "run", "sessions"):
        assert f"raw_core.cli.{module}" in loaded  # each command's short help
    listed = [line.split()[0] for line in lines[lines.index("Commands:") + 1 :] if line[:2] == "  "]
    assert listed == sorted(listed)
    assert {"chat", "config", "demo", "hooks", "models", "pkg", "policy", "run"} <= set(listed)
    assert {"sessions", "tools"} <= set(listed)
    tools, loaded = _run(tmp_path, "tools", "--help")
    assert {"raw_core.cli.call", "raw_core.cli.fork"} <= loaded
    listed = [line.split()[0] for line in tools[tools.index("Commands:") + 1 :] if line[:2] == "  "]
    assert listed == ["call", "check", "fork", "list"]


def test_help_loads_the_plugins_but_imports_none_of_their_records(tmp_path: Path) -> None:
    """``--help`` loads the plug-ins for their commands and asks for no tool, config
    section or backend: neither the tool loader (with the schema compiler and RE2) nor the
    config records are imported, nor what only a plug-in's command uses when it runs."""
    lines, loaded = _run_all(tmp_path, "--help")
    assert "dashboard" in [line.split()[0] for line in lines if line[:2] == "  "]
    assert "raw_dashboard.plugin" in loaded
    assert not loaded & {
        "raw_core.tools.sources",
        "raw_core.tools.loader",
        "raw_core.config._model",
    }
    assert not loaded & {"fastjsonschema", "re2", "cattrs", "anyio", "webbrowser"}


def test_help_checks_the_plugins_names_without_the_identity_record(tmp_path: Path) -> None:
    """The host checks a plug-in's name against the name grammar alone: ``--help``
    imports no tool-identity record, and no record library."""
    _, loaded = _run_all(tmp_path, "--help")
    assert "raw_core._names" in loaded
    assert not loaded & {"raw_core._identity", "attrs", "attr"}


def _imported_by(code: str) -> set[str]:
    """The modules a fresh interpreter has imported after running ``code``."""
    result = subprocess.run(
        [sys.executable, "-c", f"import sys\n{code}\nprint(sorted(sys.modules))"],
        capture_output=True,
        text=True,
        check=True,
        timeout=60,
    )
    return set(ast.literal_eval(result.stdout))


def test_a_calls_records_import_no_session_record_and_no_call_service() -> None:
    """``raw_core.tools.calls`` (what hooks, plug-ins and the agent import for a call's
    types) imports the session records, the interaction and panel services and the
    resources a call may be given only for their types: not at all."""
    loaded = _imported_by("import raw_core.tools.calls")
    assert not loaded & {
        "raw_core.sessions.records",
        "raw_core.sessions.backend",
        "raw_core.tools.interactions",
        "raw_core.tools.panels",
        "raw_core.tools.resources",
        "jsonpatch",
    }


def test_tools_list_imports_no_session_record_and_no_call_service(tmp_path: Path) -> None:
    _, loaded = _run_all(tmp_path, "tools", "list", "--config", str(_tool_config(tmp_path)))
    assert not loaded & {
        "raw_core.sessions.records",
        "raw_core.sessions.backend",
        "raw_core.tools.interactions",
        "raw_core.tools.panels",
        "raw_core.tools.resources",
        "jsonpatch",
    }
