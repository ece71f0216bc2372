"""mypy checks plug-in code against raw's plug-in surface.

One ``mypy --strict`` run (per test session) checks small plug-in modules written to a
temporary folder: the plug-in of docs/how-to/write-a-hook-plugin.md, one that uses every
typed part of the surface correctly, and one module per mistake, each of which must fail
with the one error it is about. Errors inside raw's own modules are not reported there
(``--follow-imports=silent``): the repository's own mypy run checks those.
"""

from __future__ import annotations

import importlib.util
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).parents[2]
SRC_DIRS = [
    ROOT / name / "src"
    for name in ("raw_core", "raw_builtin_tools", "raw_providers", "raw_store_postgres")
]
HOW_TO = ROOT / "docs" / "how-to" / "write-a-hook-plugin.md"
FILE_BLOCK = re.compile(r"<!-- file: raw_audit/plugin\.py -->\n```python\n(?P<body>.*?)```", re.S)
ERROR = re.compile(
    r"^(?P<file>[\w.]+\.py):(?P<line>\d+): error: (?P<message>.*?)  \[(?P<code>[\w-]+)\]$"
)

HEADER = """\
from __future__ import annotations

from pathlib import Path
from typing import Any

import click

from raw_core.plugins import hookspecs
from raw_core.tools.calls import CallInfo, CallNext, Middleware, ToolContext, Verdict
from raw_core.config import ModelConfig
from raw_core.plugins.hookspecs import implements
from raw_core.plugins import PluginHost, ToolFolder
from raw_core.providers.contract import Provider, ProviderRecord
from raw_core.tools.registry import ToolDefinition
from raw_core.providers.scripted import Reply, ScriptedProvider

"""

CORRECT = """\
@implements(hookspecs.raw_register_tools)
def raw_register_tools() -> list[ToolFolder]:
    return [ToolFolder(path=Path(__file__).parent / "tools" / "grep")]


def make_echo(model: ModelConfig, api_key: str | None = None, **options: Any) -> Provider:
    return ScriptedProvider([Reply(text=model.model)])


@implements(hookspecs.raw_register_providers)
def raw_register_providers() -> list[ProviderRecord]:
    return [ProviderRecord(name="echo", factory=make_echo)]


@implements(hookspecs.raw_register_commands)
def raw_register_commands(cli: click.Group) -> None:
    cli.add_command(click.Command("hello"))


@implements(hookspecs.raw_tool_describe)
def raw_tool_describe(tool: ToolDefinition, description: str) -> str | None:
    return f"{description} ({tool.identity})"


@implements(hookspecs.raw_tool_check)
async def ask_about_env_files(call: CallInfo, verdict: Verdict) -> Verdict | None:
    if ".env" in str(call.payload()["tool"]["arguments"]):
        return Verdict(decision="ask", reason="the call mentions a .env file")
    return None


@implements(hookspecs.raw_tool_call)
def raw_tool_call(call: CallInfo) -> Middleware | None:
    async def middleware(call: CallInfo, call_next: CallNext) -> Any:
        return await call_next()

    return middleware


@implements(hookspecs.raw_session_event)
def raw_session_event(event: dict[str, Any]) -> None:
    print(event["type"])


def handler(args: Any, context: ToolContext) -> dict[str, Any]:
    names = [name for name, _ in context.vars.listing()] if context.vars else []
    skills = [skill.name for skill in context.skills.listing()] if context.skills else []
    return {"content": [{"type": "text", "text": " ".join([*names, *skills])}]}


def check_hooks(host: PluginHost) -> int:
    return len(host.hook.raw_tool_check.get_hookimpls())
"""

# id -> (module body, error code, a fragment of mypy's message): each must be the module's
# only error.
WRONG = {
    "check_returns_a_str": (
        """\
@implements(hookspecs.raw_tool_check)
def raw_tool_check(call: CallInfo, verdict: Verdict) -> str:
    return "deny"
""",
        "arg-type",
        '"Callable[[CallInfo, Verdict], str]"; expected'
        ' "Callable[[CallInfo, Verdict], Verdict | Awaitable[Verdict | None] | None]"',
    ),
    "describe_takes_a_str_for_the_tool": (
        """\
@implements(hookspecs.raw_tool_describe)
def raw_tool_describe(tool: str, description: str) -> str | None:
    return tool
""",
        "arg-type",
        'expected "Callable[[ToolDefinition, str], str | None]"',
    ),
    "check_misnames_an_argument": (
        """\
@implements(hookspecs.raw_tool_check)
def raw_tool_check(call: CallInfo, decision: Verdict) -> Verdict | None:
    return decision
""",
        "arg-type",
        'expected "def (call: CallInfo, verdict: Verdict)',
    ),
    "check_leaves_out_an_argument": (
        """\
@implements(hookspecs.raw_tool_check)
def raw_tool_check(call: CallInfo) -> None:
    return None
""",
        "arg-type",
        '"Callable[[CallInfo], None]"; expected',
    ),
    "middleware_is_not_async": (
        """\
@implements(hookspecs.raw_tool_call)
def raw_tool_call(call: CallInfo) -> Middleware | None:
    def middleware(call: CallInfo, call_next: CallNext) -> str:
        return "done"

    return middleware
""",
        "return-value",
        "Callable[[CallInfo, Callable[[], Awaitable[ToolResult]]], Awaitable[Any]] | None",
    ),
    "registration_returns_paths": (
        """\
@implements(hookspecs.raw_register_tools)
def raw_register_tools() -> list[Path]:
    return [Path("tools/grep")]
""",
        "arg-type",
        'expected "Callable[[], list[ToolFolder]]"',
    ),
    "event_observer_expects_a_str": (
        """\
@implements(hookspecs.raw_session_event)
def raw_session_event(event: str) -> None:
    print(event)
""",
        "arg-type",
        'expected "Callable[[dict[str, Any]], None]"',
    ),
    "provider_factory_without_api_key": (
        """\
def make_echo(model: ModelConfig) -> Provider:
    return ScriptedProvider([Reply(text=model.model)])


RECORD = ProviderRecord(name="echo", factory=make_echo)
""",
        "arg-type",
        'expected "ProviderFactory"',
    ),
    "tool_reads_a_var_raw_does_not_promise": (
        """\
def handler(args: Any, context: ToolContext) -> str:
    return context.vars.read_defined("TOKEN") if context.vars else ""
""",
        "attr-defined",
        '"VarReader" has no attribute "read_defined"',
    ),
    "misspelt_hook_on_the_relay": (
        """\
def check_hooks(host: PluginHost) -> int:
    return len(host.hook.raw_tool_chek.get_hookimpls())
""",
        "attr-defined",
        '"HookRelay" has no attribute "raw_tool_chek"',
    ),
}


def how_to_plugin() -> str:
    match = FILE_BLOCK.search(HOW_TO.read_text(encoding="utf-8"))
    assert match is not None, "the how-to has no raw_audit/plugin.py block"
    return match["body"]


@pytest.fixture(scope="session")
def mypy_errors(tmp_path_factory: pytest.TempPathFactory) -> dict[str, list[tuple[str, str]]]:
    """Module name -> ``(code, message)`` of each error mypy reports in it, from one run."""
    folder = tmp_path_factory.mktemp("plugin_typing")
    modules = {"how_to_plugin": how_to_plugin(), "typed_plugin": HEADER + CORRECT}
    modules |= {f"wrong_{case}": HEADER + body for case, (body, _, _) in WRONG.items()}
    for name, text in modules.items():
        (folder / f"{name}.py").write_text(text, encoding="utf-8")
    (folder / "mypy.ini").write_text("[mypy]\n", encoding="utf-8")
    env = {**os.environ, "MYPYPATH": os.pathsep.join(str(path) for path in SRC_DIRS)}
    result = subprocess.run(
        [
            sys.executable,
            "-m",
            "mypy",
            "--config-file=mypy.ini",
            "--strict",
            "--follow-imports=silent",
            "--cache-dir=.mypy_cache",
            "--no-error-summary",
            "--show-error-codes",
            "--hide-error-context",
            "--no-pretty",
            "--no-color-output",
            *(f"{name}.py" for name in modules),
        ],
        capture_output=True,
        text=True,
        cwd=folder,
        env=env,
        timeout=120,
    )
    errors: dict[str, list[tuple[str, str]]] = {name: [] for name in modules}
    for line in result.stdout.splitlines():
        if ": note: " in line:
            continue
        match = ERROR.match(line)
        assert match is not None, f"unexpected mypy output: {line}\n{result.stderr}"
        errors[match["file"].removesuffix(".py")].append((match["code"], match["message"]))
    assert result.returncode in (0, 1), result.stderr
    return errors


def test_the_how_to_plugin_passes_mypy_strict(
    mypy_errors: dict[str, list[tuple[str, str]]],
) -> None:
    assert mypy_errors["how_to_plugin"] == []


def test_a_plugin_using_the_whole_typed_surface_passes(
    mypy_errors: dict[str, list[tuple[str, str]]],
) -> None:
    assert mypy_errors["typed_plugin"] == []


@pytest.mark.parametrize("case", list(WRONG))
def test_a_wrong_plugin_fails_with_the_error_it_is_about(
    mypy_errors: dict[str, list[tuple[str, str]]], case: str
) -> None:
    _, code, fragment = WRONG[case]
    errors = mypy_errors[f"wrong_{case}"]
    assert len(errors) == 1, errors
    assert errors[0][0] == code, errors
    assert fragment in errors[0][1], errors


def test_the_typed_plugin_registers_its_hooks_under_their_specs(tmp_path: Path) -> None:
    """What mypy checked is also what pluggy registers: ``implements`` marks a function
    under its hookspec's name, whatever the function is called."""
    from raw_core.plugins import PluginHost

    path = tmp_path / "typed_plugin.py"
    path.write_text(HEADER + CORRECT, encoding="utf-8")
    spec = importlib.util.spec_from_file_location("typed_plugin", path)
    assert spec is not None
    assert spec.loader is not None
    plugin = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(plugin)

    host = PluginHost()
    host.register(plugin, name="typed")
    (check,) = host.hook.raw_tool_check.get_hookimpls()
    assert check.function is plugin.ask_about_env_files
    assert list(host.providers()) == ["replay", "echo"]
    assert list(host.tool_folders()["typed"]) == ["grep"]
    for name in ("raw_tool_describe", "raw_tool_call", "raw_session_event"):
        assert [impl.plugin_name for impl in getattr(host.hook, name).get_hookimpls()] == ["typed"]
