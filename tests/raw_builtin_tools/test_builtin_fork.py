"""``raw tools fork``: a shipped tool copied out loads as local/<folder> and behaves the same."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner

import raw_core.cli.fork as fork_module
from raw_builtin_tools import TOOLS_DIR
from raw_core.agent import load_agent
from raw_core.cli import cli
from raw_core.cli.fork import fork
from raw_core.config import load_config
from raw_core.dispatch import Dispatcher
from raw_core.plugins import PluginHost
from raw_core.tools.calls import ToolCall
from raw_core.tools.results import ToolResult


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


@pytest.fixture
def local_dir(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path / "xdg"))
    return tmp_path / "xdg" / "raw" / "tools"


def tree(root: Path) -> dict[str, bytes]:
    return {p.relative_to(root).as_posix(): p.read_bytes() for p in root.rglob("*") if p.is_file()}


async def read_with(tmp_path: Path, identity: str, work: Path) -> ToolResult:
    config = tmp_path / f"{identity.replace('/', '_')}.json"
    config.write_text(json.dumps({"agents": {"a": {"tools": {"use": [identity]}}}}), "utf-8")
    host = PluginHost()
    host.load_entry_points()
    agent = load_agent(load_config(config), host=host)
    (tool,) = agent.registry
    assert tool.identity == identity
    dispatcher = Dispatcher(agent.registry, agent.policy, cwd=work)
    arguments = {"files": [{"path": "notes.txt", "start_line": 2}, {"path": "missing"}]}
    return await dispatcher.dispatch(
        ToolCall(id="call-1", name=tool.name, arguments=json.dumps(arguments))
    )


@pytest.mark.anyio
async def test_a_fork_loads_as_local_and_behaves_like_the_original(
    tmp_path: Path, local_dir: Path
) -> None:
    result = CliRunner().invoke(fork, ["builtin/read_file", str(local_dir / "my_read")])
    assert result.exit_code == 0, result.output
    assert "select it as local/my_read" in result.output
    copy = local_dir / "my_read"
    manifest = json.loads((copy / "tool.json").read_text(encoding="utf-8"))
    original = json.loads((TOOLS_DIR / "read_file" / "tool.json").read_text(encoding="utf-8"))
    assert manifest == {**original, "id": "my_read"}
    assert (copy / "tool.py").read_bytes() == (TOOLS_DIR / "read_file" / "tool.py").read_bytes()
    work = tmp_path / "work"
    work.mkdir()
    (work / "notes.txt").write_text("one\ntwo\nthree\n", encoding="utf-8")
    forked = await read_with(tmp_path, "local/my_read", work)
    shipped = await read_with(tmp_path, "builtin/read_file", work)
    assert forked.text() == shipped.text()
    assert "lines 2-3 of 3" in forked.text()


def test_without_dest_the_copy_goes_to_the_local_tools_folder(local_dir: Path) -> None:
    result = CliRunner().invoke(fork, ["bash"])
    assert result.exit_code == 0, result.output
    assert (
        json.loads((local_dir / "bash" / "tool.json").read_text(encoding="utf-8"))["id"] == "bash"
    )
    assert "forked builtin/bash to" in result.output


def test_an_existing_folder_dest_receives_the_tool_inside(tmp_path: Path, local_dir: Path) -> None:
    shelf = tmp_path / "shelf"
    shelf.mkdir()
    result = CliRunner().invoke(fork, ["write_file", str(shelf)])
    assert result.exit_code == 0, result.output
    assert tree(shelf / "write_file") == tree(TOOLS_DIR / "write_file")
    assert "it loads as local/write_file from" in result.output


def test_an_existing_destination_is_never_overwritten(tmp_path: Path, local_dir: Path) -> None:
    first = CliRunner().invoke(fork, ["bash"])
    assert first.exit_code == 0, first.output
    (local_dir / "bash" / "tool.py").write_text("# my edits\n", encoding="utf-8")
    again = CliRunner().invoke(fork, ["bash"])
    assert again.exit_code == 2
    assert "already exists" in again.output
    assert (local_dir / "bash" / "tool.py").read_text(encoding="utf-8") == "# my edits\n"
    shelf = tmp_path / "shelf"
    (shelf / "bash").mkdir(parents=True)
    inside = CliRunner().invoke(fork, ["bash", str(shelf)])
    assert inside.exit_code == 2
    assert list((shelf / "bash").iterdir()) == []
    (tmp_path / "file").write_text("x", encoding="utf-8")
    onto_file = CliRunner().invoke(fork, ["bash", str(tmp_path / "file")])
    assert onto_file.exit_code == 2
    assert (tmp_path / "file").read_text(encoding="utf-8") == "x"
    assert sorted(p.name for p in local_dir.iterdir()) == ["bash"]


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["nothing_here"], "tool_not_found"),
        (["builtin/nothing_here"], "tool_not_found"),
        (["local/bash"], "not a plug-in's tool"),
        (["Bad Name"], "expected a tool identity"),
        (["bash", "Not.A.Valid.Id"], "not a valid tool id"),
    ],
)
def test_usage_errors_exit_2_and_copy_nothing(
    tmp_path: Path, local_dir: Path, args: list[str], message: str
) -> None:
    result = CliRunner().invoke(fork, args)
    assert result.exit_code == 2
    assert message in result.output
    assert not local_dir.exists()


def test_caches_are_not_copied(
    tmp_path: Path, local_dir: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    source = tmp_path / "plugin_tools" / "cached"
    (source / "__pycache__").mkdir(parents=True)
    (source / "__pycache__" / "tool.cpython-311.pyc").write_bytes(b"\x00")
    (source / "data").mkdir()
    (source / "data" / "words.txt").write_text("kept", encoding="utf-8")
    (source / "stale.pyc").write_bytes(b"\x00")
    (source / "tool.json").write_text(
        json.dumps(
            {
                "api_version": 2,
                "id": "cached",
                "version": "1.0.0",
                "name": "cached",
                "description": "A test tool.",
                "entry": "./tool.py",
                "input_schema": {"type": "object"},
            }
        ),
        encoding="utf-8",
    )
    (source / "tool.py").write_text("def handler(args, context):\n    return {'content': []}\n")
    monkeypatch.setattr(fork_module, "_source", lambda name: ("test/cached", source))
    result = CliRunner().invoke(fork, ["test/cached", str(tmp_path / "copy")])
    assert result.exit_code == 0, result.output
    assert sorted(tree(tmp_path / "copy")) == ["data/words.txt", "tool.json", "tool.py"]
    assert [p.name for p in tmp_path.iterdir() if p.name.startswith(".")] == []


def test_fork_is_a_subcommand_of_raw_tools(tmp_path: Path, local_dir: Path) -> None:
    result = CliRunner().invoke(cli, ["tools", "fork", "bash", str(tmp_path / "my_bash")])
    assert result.exit_code == 0, result.output
    assert (tmp_path / "my_bash" / "tool.json").is_file()
