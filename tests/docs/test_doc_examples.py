"""The examples in docs/ run as written."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path
from types import SimpleNamespace

import pytest

from raw_core.tools.loader import ToolLoader

DOCS = Path(__file__).parents[2] / "docs"
FILE_BLOCK = re.compile(r"<!-- file: (?P<path>[^ ]+) -->\n```[a-z]*\n(?P<body>.*?)```", re.S)
TEST_BLOCK = re.compile(
    r"<!-- test: (?P<name>[a-z_-]+) -->\n```python\n(?P<body>.*?)```"
    r"\n\nOutput:\n\n```\n(?P<output>.*?)```",
    re.S,
)


def test_write_a_local_tool_example_loads_and_runs(tmp_path: Path) -> None:
    text = (DOCS / "how-to" / "write-a-local-tool.md").read_text(encoding="utf-8")
    blocks = list(FILE_BLOCK.finditer(text))
    assert {b["path"] for b in blocks} == {"line_count/tool.json", "line_count/tool.py"}
    root = tmp_path / "tools"
    for block in blocks:
        target = root / block["path"]
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text(block["body"], encoding="utf-8")
    tool = ToolLoader().load(root / "line_count", identity="local/line_count")
    assert tool.name == "line_count"
    (tmp_path / "notes.txt").write_text("one\ntwo\nthree", encoding="utf-8")
    args = {"path": "notes.txt"}
    tool.input_validator.validate(args)
    assert tool.validate_args is not None
    assert tool.validate_args(args) is None
    assert tool.validate_args({"path": "dir/"}) == "path must name a file, not a directory"
    result = tool.handler(args, SimpleNamespace(cwd=str(tmp_path)))
    assert result == {"content": [{"type": "text", "text": "3 lines in notes.txt"}]}
    check = subprocess.run(
        [sys.executable, "-m", "raw_core", "tools", "check", "--json", str(root / "line_count")],
        capture_output=True,
        text=True,
    )
    assert check.returncode == 0, check.stderr
    assert json.loads(check.stdout)[0]["ok"] is True


def test_the_interactions_example_tool_asks_and_the_model_reads_the_answer(
    tmp_path: Path,
) -> None:
    text = (DOCS / "interactions.md").read_text(encoding="utf-8")
    blocks = list(FILE_BLOCK.finditer(text))
    assert {b["path"] for b in blocks} == {"pick_branch/tool.json", "pick_branch/tool.py"}
    for block in blocks:
        target = tmp_path / "tools" / block["path"]
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text(block["body"], encoding="utf-8")
    ToolLoader().load(tmp_path / "tools" / "pick_branch", identity="agent/pick_branch")
    (example,) = TEST_BLOCK.finditer(text)
    script = tmp_path / "example.py"
    script.write_text(example["body"], encoding="utf-8")
    result = subprocess.run(
        [sys.executable, str(script)], capture_output=True, text=True, cwd=tmp_path
    )
    assert result.returncode == 0, result.stderr
    assert result.stdout == example["output"]


@pytest.mark.parametrize("page", ["how-to/embed.md", "agent-loop.md", "session-service.md"])
def test_python_examples_print_what_the_page_says(page: str, tmp_path: Path) -> None:
    text = (DOCS / page).read_text(encoding="utf-8")
    examples = list(TEST_BLOCK.finditer(text))
    assert examples, f"{page} has no tested example"
    for example in examples:
        script = tmp_path / f"{example['name']}.py"
        script.write_text(example["body"], encoding="utf-8")
        result = subprocess.run(
            [sys.executable, str(script)], capture_output=True, text=True, cwd=tmp_path
        )
        assert result.returncode == 0, result.stderr
        assert result.stdout == example["output"]


HARNESS = """
import json, pathlib
from raw_core import PluginHost, load_agent, load_config

root = pathlib.Path.cwd()
echo = root / "tools" / "echo"
echo.mkdir(parents=True)
(echo / "tool.json").write_text(json.dumps({
    "api_version": 2, "id": "echo", "version": "1.0.0", "name": "echo",
    "description": "Echo the text back.", "entry": "./tool.py",
    "input_schema": {"type": "object", "properties": {"text": {"type": "string"}},
                     "required": ["text"]}}))
(echo / "tool.py").write_text(
    "def handler(args, context):\\n"
    "    return {'content': [{'type': 'text', 'text': args['text']}]}\\n")
(root / "raw.json").write_text(json.dumps({"agents": {"a": {"tools": {"use": ["agent/echo"]}}}}))
anyio.run(main, load_agent(load_config(root / "raw.json"), host=PluginHost()))
"""


def test_hook_plugin_example_behaves_as_the_page_says(tmp_path: Path) -> None:
    text = (DOCS / "how-to" / "write-a-hook-plugin.md").read_text(encoding="utf-8")
    (block,) = FILE_BLOCK.finditer(text)
    (tmp_path / "plugin.py").write_text(block["body"], encoding="utf-8")
    after = text.split("<!-- test: hook-plugin -->", 1)[1]
    code, rest = re.match(r"\n```python\n(.*?)```(.*)", after, re.S).groups()  # type: ignore[union-attr]
    expected = re.search(r"```\n(.*?)```", rest, re.S).group(1)  # type: ignore[union-attr]
    (tmp_path / "example.py").write_text(code + HARNESS, encoding="utf-8")
    result = subprocess.run(
        [sys.executable, "example.py"], capture_output=True, text=True, cwd=tmp_path
    )
    assert result.returncode == 0, result.stderr
    assert result.stdout == expected


def test_the_packages_page_example_installs_and_runs(tmp_path: Path) -> None:
    text = (DOCS / "reference" / "packages.md").read_text(encoding="utf-8")
    blocks = list(FILE_BLOCK.finditer(text))
    assert {b["path"] for b in blocks} == {
        "acme/raw-package.json",
        "acme/tools/shout/tool.json",
        "acme/tools/shout/tool.py",
        "project/raw.json",
    }
    for block in blocks:
        target = tmp_path / block["path"]
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text(block["body"], encoding="utf-8")
    env = {**os.environ, "XDG_DATA_HOME": str(tmp_path / "data")}

    def raw(*args: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            [sys.executable, "-m", "raw_core", *args],
            capture_output=True,
            text=True,
            cwd=tmp_path,
            env=env,
            timeout=60,
        )

    installed = raw("pkg", "install", "./acme", "--config", "project/raw.json")
    assert installed.returncode == 0, installed.stderr
    assert installed.stdout.startswith("installed: acme 1.2.0 as pkg/acme/tools/... (sha256 ")
    index = json.loads((tmp_path / "project" / "raw-packages.json").read_text())
    assert sorted(index["packages"]["acme"]) == [
        "archive_digest",
        "hash",
        "name",
        "source",
        "version",
    ]
    called = raw(
        "tools", "call", "pkg/acme/tools/shout", '{"text": "hi"}', "--config", "project/raw.json"
    )
    assert called.returncode == 0, called.stderr
    assert called.stdout.strip() == "HI"
    for folder in (tmp_path / "data" / "raw" / "packages").iterdir():  # let tmp_path go
        for path in [folder, *folder.rglob("*")]:
            if path.is_dir() and not path.is_symlink():
                path.chmod(0o755)


def test_the_cli_page_tools_call_example_prints_what_it_shows(tmp_path: Path) -> None:
    """docs/reference/cli.md's ``raw tools call ... --json`` example, run as written (from
    the repository's root) against the quickstart example."""
    import shlex

    from tests.conftest import run_raw

    root = Path(__file__).parents[2]
    page = (root / "docs" / "reference" / "cli.md").read_text(encoding="utf-8")
    found = re.search(r"```\n\$ (raw tools call agent/word_count [^\n]*)\n(.*?)```", page, re.S)
    assert found is not None
    command, shown = found.groups()
    args = [str(root / arg) if arg.startswith("examples/") else arg for arg in shlex.split(command)]
    result = run_raw(tmp_path, *args[1:])
    assert result.returncode == 0, result.stderr
    assert json.loads(result.stdout) == json.loads(shown)
