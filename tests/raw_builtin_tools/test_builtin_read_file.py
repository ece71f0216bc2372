"""builtin/read_file through the real dispatcher: numbered lines, ranges, per-file errors and
the batch rules."""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

import pytest

from raw_core.agent import load_agent
from raw_core.config import load_config
from raw_core.dispatch import Dispatcher
from raw_core.plugins import PluginHost
from raw_core.tools.calls import ToolCall
from raw_core.tools.results import ToolResult


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


@pytest.fixture
def work(tmp_path: Path) -> Path:
    folder = tmp_path / "work"
    folder.mkdir()
    return folder


@pytest.fixture
def dispatcher(tmp_path: Path, work: Path) -> Dispatcher:
    config = tmp_path / "raw.json"
    config.write_text(
        json.dumps({"agents": {"test": {"tools": {"use": ["builtin/read_file"]}}}}),
        encoding="utf-8",
    )
    host = PluginHost()
    host.load_entry_points()
    agent = load_agent(load_config(config), host=host)
    return Dispatcher(agent.registry, agent.policy, cwd=work)


async def read(dispatcher: Dispatcher, *entries: dict[str, Any] | str) -> ToolResult:
    files = [{"path": e} if isinstance(e, str) else e for e in entries]
    return await dispatcher.dispatch(
        ToolCall(id="call-1", name="read_file", arguments=json.dumps({"files": files}))
    )


@pytest.mark.anyio
async def test_lines_are_numbered_as_an_editor_numbers_them(
    dispatcher: Dispatcher, work: Path
) -> None:
    (work / "f.txt").write_text("first\n\tsecond\x0cstill second\u2028too\nthird", encoding="utf-8")
    result = await read(dispatcher, "f.txt")
    assert result.status == "ok"
    assert result.text() == (
        "[1/1] ok: f.txt\n"
        "lines 1-3 of 3 (whole file)\n"
        "     1\tfirst\n"
        "     2\t\tsecond\x0cstill second\u2028too\n"
        "     3\tthird\n"
    )


@pytest.mark.anyio
async def test_a_range_says_where_it_was_cut(dispatcher: Dispatcher, work: Path) -> None:
    (work / "long.txt").write_text("".join(f"line {i}\n" for i in range(1, 121)), "utf-8")
    result = await read(dispatcher, {"path": "long.txt", "start_line": 40, "max_lines": 20})
    lines = result.text().splitlines()
    assert lines[1] == "lines 40-59 of 120; more follows: read on with start_line=60"
    assert lines[2] == "    40\tline 40"
    assert lines[-1] == "    59\tline 59"
    tail = await read(dispatcher, {"path": "long.txt", "start_line": 100})
    assert tail.text().splitlines()[1] == "lines 100-120 of 120"


@pytest.mark.anyio
async def test_each_unreadable_file_is_its_own_error(dispatcher: Dispatcher, work: Path) -> None:
    (work / "ok.txt").write_text("fine\n", encoding="utf-8")
    (work / "binary.bin").write_bytes(b"PK\x03\x04\x00\x00")
    (work / "latin1.txt").write_bytes(b"caf\xe9\n")
    (work / "cut.txt").write_bytes("é".encode()[:1])
    (work / "folder").mkdir()
    (work / "short.txt").write_text("one\n", encoding="utf-8")
    (work / "empty.txt").write_text("", encoding="utf-8")
    os.mkfifo(work / "pipe")
    result = await read(
        dispatcher,
        "missing.txt",
        "binary.bin",
        "latin1.txt",
        "cut.txt",
        "folder",
        "pipe",
        {"path": "short.txt", "start_line": 5},
        "empty.txt",
        "ok.txt/child",
        str(work / "ok.txt"),
    )
    text = result.text()
    assert result.status == "ok"
    assert "[1/10] error (file_not_found): missing.txt" in text
    assert "[2/10] error (binary_file): binary.bin" in text
    assert "[3/10] error (not_utf8): latin1.txt\n" in text
    assert "bad byte at offset 3" in text
    assert "[4/10] error (not_utf8): cut.txt" in text
    assert "[5/10] error (is_a_directory): folder" in text
    assert "[6/10] error (not_a_file): pipe" in text
    assert "[7/10] error (line_out_of_range): short.txt\nstart_line 5 is past the end" in text
    assert "[8/10] ok: empty.txt\n(empty file: 0 lines)" in text
    assert "[9/10] error (file_not_found): ok.txt/child" in text
    assert f"[10/10] ok: {work}/ok.txt\nlines 1-1 of 1 (whole file)\n     1\tfine\n" in text


@pytest.mark.anyio
async def test_paths_are_normalized_lexically(dispatcher: Dispatcher, work: Path) -> None:
    (work / "a.txt").write_text("a\n", encoding="utf-8")
    result = await read(dispatcher, "nowhere/../a.txt", ".//a.txt")
    assert result.text().count("     1\ta") == 2


@pytest.mark.anyio
async def test_crlf_files_say_so(dispatcher: Dispatcher, work: Path) -> None:
    (work / "dos.txt").write_bytes(b"one\r\ntwo\r\n")
    result = await read(dispatcher, "dos.txt")
    assert "CRLF line endings" in result.text()
    assert "     1\tone\n     2\ttwo\n" in result.text()


@pytest.mark.anyio
async def test_sixteen_large_files_share_one_cap(dispatcher: Dispatcher, work: Path) -> None:
    for index in range(16):
        (work / f"f{index}.txt").write_text("".join(f"{index}:{i}\n" for i in range(2000)), "utf-8")
    result = await read(dispatcher, *(f"f{i}.txt" for i in range(16)))
    text = result.text()
    assert result.truncated
    assert len(text.encode()) <= 8192
    for index in range(16):
        assert f"[{index + 1}/16] ok: f{index}.txt\nlines 1-2000 of 2000" in text
    full = result.full_text()
    assert full.count("\n") > 16 * 2000


@pytest.mark.anyio
@pytest.mark.parametrize(
    "arguments",
    [
        {"files": [{"path": f"f{i}"} for i in range(17)]},
        {"files": []},
        {"path": "a.txt"},
        {"files": [{"path": "a.txt", "encoding": "latin-1"}]},
        {"files": [{"path": "a.txt", "start_line": 0}]},
        {"files": [{"path": "a.txt"}, {"path": "dir/"}]},
        {"files": [{"path": "\ud800"}]},
    ],
    ids=[
        "17-files",
        "no-files",
        "old-single-shape",
        "unknown-field",
        "line-0",
        "folder-path",
        "surrogate-path",
    ],
)
async def test_a_malformed_batch_is_rejected_as_a_whole(
    dispatcher: Dispatcher, arguments: dict[str, Any]
) -> None:
    result = await dispatcher.dispatch(
        ToolCall(id="call-1", name="read_file", arguments=json.dumps(arguments))
    )
    assert result.code == "invalid_arguments", result.text()


@pytest.mark.anyio
async def test_a_file_without_line_breaks_is_cut_not_loaded_whole(
    dispatcher: Dispatcher, work: Path
) -> None:
    (work / "min.js").write_text("x" * 3_000_000, encoding="utf-8")
    (work / "two.txt").write_text("short\n" + "y" * 2_000_000 + "\nend\n", encoding="utf-8")
    result = await read(dispatcher, "min.js", "two.txt")
    full = result.full_text()
    assert "[1/2] ok: min.js\nlines 1-1 of 1; stopped at 1048576 characters\n" in full
    assert full.split("\n")[2] == "     1\t" + "x" * 1048576
    assert "lines 1-1 of 3; more follows: read on with start_line=2; stopped at" in full
    assert "y" not in full


@pytest.mark.skipif(not Path("/proc/self/mem").exists(), reason="needs Linux /proc")
@pytest.mark.anyio
async def test_a_file_that_fails_to_read_is_only_its_rows_error(
    dispatcher: Dispatcher, work: Path
) -> None:
    (work / "good.txt").write_text("hello\n", encoding="utf-8")
    result = await read(dispatcher, "good.txt", "/proc/self/mem")
    assert result.status == "ok"
    assert "[1/2] ok: good.txt" in result.text()
    assert "[2/2] error (read_failed): /proc/self/mem" in result.text()
