"""builtin/process: background processes across the turns of a session, with real processes.

A server started in one turn is read and stopped in a later one; a process that forks is
stopped with its child; 50 MB of output keeps memory and disk bounded; the end of the
session leaves no process behind; the actions of a call are checked together first.
"""

from __future__ import annotations

import json
import os
import re
import select
import sys
import tracemalloc
import urllib.request
from pathlib import Path
from typing import Any

import anyio
import pytest

from raw_builtin_tools.toolkit import MAX_PROCESSES, OUTPUT_BYTES
from raw_core import App, Reply, ScriptedProvider
from raw_core.plugins import PluginHost
from raw_core.sessions.sqlite import ToolResultMessage
from tests.conftest import Children

BOUND = 30.0  # seconds; generous: what is checked is what happens, not how fast

pytestmark = [pytest.mark.anyio, pytest.mark.parametrize("anyio_backend", ["asyncio"])]

SERVER = """
import http.server, sys

class Handler(http.server.BaseHTTPRequestHandler):
    def do_GET(self):
        body = b"hello\\n"
        self.send_response(200)
        self.send_header("content-length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, format, *args):
        print("served", self.path, flush=True)

server = http.server.HTTPServer(("127.0.0.1", 0), Handler)
print("listening", flush=True)
with open(sys.argv[1], "w") as ready:
    ready.write(f"{server.server_port}\\n")
server.serve_forever()
"""


@pytest.fixture(autouse=True)
def state(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """raw's state directory, inside the test's folder."""
    monkeypatch.setenv("XDG_STATE_HOME", str(tmp_path / "state"))
    return tmp_path / "state" / "raw" / "processes"


def host() -> PluginHost:
    loaded = PluginHost()
    loaded.load_entry_points()
    return loaded


def config(root: Path, **agent: Any) -> Path:
    path = root / "raw.json"
    body = {"tools": {"use": ["builtin/process"]}, **agent}
    path.write_text(json.dumps({"agents": {"a": body}}))
    return path


def call(*actions: dict[str, Any]) -> Reply:
    return Reply(tool_calls=(("process", {"actions": list(actions)}),))


def results(model: ScriptedProvider) -> list[ToolResultMessage]:
    """The tool results the model was sent, in order, each once."""
    seen: dict[str, ToolResultMessage] = {}
    for request in model.requests:
        for message in request.messages:
            if isinstance(message, ToolResultMessage):
                seen.setdefault(message.tool_call_id, message)
    return list(seen.values())


def text(result: ToolResultMessage) -> str:
    return "".join(getattr(block, "text", "") for block in result.content)


def fifo(path: Path) -> int:
    """A named pipe at ``path``, open for reading (and writing, so that reading it waits
    for data rather than seeing the end)."""
    os.mkfifo(path)
    return os.open(path, os.O_RDWR)


def line_from(fd: int) -> str:
    """One line written to the pipe ``fd``, waiting for it at most :data:`BOUND`."""
    data = b""
    while not data.endswith(b"\n"):
        ready, _, _ = select.select([fd], [], [], BOUND)
        assert ready, "the process did not write to the pipe"
        data += os.read(fd, 4096)
    return data.decode().strip()


def gone(pid: int) -> bool:
    """Whether ``pid`` has ended (no such process, or a zombie nobody has reaped yet)."""
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return True
    return stat.rsplit(")", 1)[1].split()[0] == "Z"


def entries(folder: Path) -> list[Path]:
    return list(folder.iterdir())


def disk_bytes(folder: Path) -> int:
    return sum(f.stat().st_size for f in folder.rglob("*") if f.is_file())


def fetch(url: str) -> bytes:
    with urllib.request.urlopen(url, timeout=BOUND) as reply:
        body: bytes = reply.read()
        return body


def pid_of(row_text: str, name: str) -> int:
    match = re.search(rf"started {name}: pid (\d+)", row_text)
    assert match, row_text
    return int(match.group(1))


@pytest.fixture
def linux() -> None:
    """These tests read /proc to see which processes are left."""
    if not Path("/proc/self/stat").exists():
        pytest.skip("reads /proc")


async def test_a_server_started_in_one_turn_is_read_and_stopped_in_a_later_turn(
    tmp_path: Path, anyio_backend: str, children: Children, linux: None
) -> None:
    script = tmp_path / "server.py"
    script.write_text(SERVER)
    ready = fifo(tmp_path / "ready")
    start = {
        "action": "start",
        "name": "web",
        "argv": [sys.executable, str(script), str(tmp_path / "ready")],
    }
    model = ScriptedProvider(
        [
            call(start),
            Reply(text="started"),
            call(
                {"action": "list"},
                {"action": "read", "name": "web"},
                {"action": "stop", "name": "web"},
                {"action": "read", "name": "web"},
            ),
            Reply(text="stopped"),
        ]
    )
    async with (
        App.open(config(tmp_path), host=host(), store_dir=tmp_path / "s", provider=model) as app,
        app.open_session() as session,
    ):
        await session.run_turn("start the server")
        (started,) = results(model)
        pid = pid_of(text(started), "web")
        children.adopt(pid)
        port = int(line_from(ready))
        assert await anyio.to_thread.run_sync(fetch, f"http://127.0.0.1:{port}/ping") == b"hello\n"
        assert not gone(pid)  # the turn ended; the server runs on
        await session.run_turn("read it and stop it")
        later = text(results(model)[1])
        assert gone(pid)
    os.close(ready)
    assert "[1/4] ok: list\nweb: running" in later
    assert "[3/4] ok: stop web\nstopped web: terminated by SIGTERM" in later
    assert "listening\n" in later
    assert "served /ping\n" in later
    assert "[4/4] ok: read web\n" in later


async def test_a_process_that_forks_is_stopped_with_its_child(
    tmp_path: Path, anyio_backend: str, children: Children, linux: None
) -> None:
    ready = fifo(tmp_path / "ready")
    command = f"sleep 300 & echo $! > {tmp_path / 'ready'}; wait"
    model = ScriptedProvider(
        [
            call({"action": "start", "name": "parent", "command": command}),
            Reply(text="started"),
            call({"action": "stop", "name": "parent"}),
            Reply(text="stopped"),
        ]
    )
    async with (
        App.open(config(tmp_path), host=host(), store_dir=tmp_path / "s", provider=model) as app,
        app.open_session() as session,
    ):
        await session.run_turn("start")
        parent = pid_of(text(results(model)[0]), "parent")
        children.adopt(parent)
        child = int(line_from(ready))
        assert not gone(parent)
        assert not gone(child)
        await session.run_turn("stop")
        assert "stopped parent: terminated by SIGTERM" in text(results(model)[1])
        assert gone(parent)
        assert gone(child)
    os.close(ready)


async def test_fifty_megabytes_of_output_keep_memory_and_disk_bounded(
    tmp_path: Path, anyio_backend: str, state: Path, children: Children
) -> None:
    size = 50 * 1000 * 1000
    model = ScriptedProvider(
        [
            call(
                {"action": "start", "name": "flood", "command": f"yes 0123456789 | head -c {size}"},
                {"action": "wait", "name": "flood", "timeout_ms": 120000},
            ),
            Reply(text="done"),
            call({"action": "read", "name": "flood", "offset": 0, "max_bytes": 100}),
            Reply(text="read"),
        ]
    )
    tracemalloc.start()
    try:
        async with (
            App.open(
                config(tmp_path), host=host(), store_dir=tmp_path / "s", provider=model
            ) as app,
            app.open_session() as session,
        ):
            await session.run_turn("flood")
            children.adopt(pid_of(text(results(model)[0]), "flood"))
            on_disk = disk_bytes(state)
            await session.run_turn("read the start")
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    waited, read = (text(r) for r in results(model))
    assert "flood exited with code 0" in waited
    assert 0 < on_disk <= OUTPUT_BYTES
    assert peak < 8 * 1024 * 1024  # 50 MB went through; what Python held stayed small
    dropped = re.search(r"\[(\d+) bytes of older output were dropped", read)
    assert dropped
    assert int(dropped.group(1)) >= size - OUTPUT_BYTES
    assert f"of {size}; exited with code 0;" in read
    assert not entries(state), "the session's output folder is left behind"


async def test_the_end_of_the_session_leaves_no_process_and_no_output_behind(
    tmp_path: Path, anyio_backend: str, state: Path, children: Children, linux: None
) -> None:
    ready = fifo(tmp_path / "ready")
    model = ScriptedProvider(
        [
            call(
                {"action": "start", "name": "sleeper", "argv": ["sleep", "300"]},
                {
                    "action": "start",
                    "name": "stubborn",
                    "command": f"trap '' TERM; sleep 300 & echo $! > {tmp_path / 'ready'}; wait",
                },
                {"action": "start", "name": "cat", "argv": ["cat"]},
            ),
            Reply(text="left them running"),
        ]
    )
    async with (
        App.open(config(tmp_path), host=host(), store_dir=tmp_path / "s", provider=model) as app,
        app.open_session() as session,
    ):
        await session.run_turn("start three")
        rows = text(results(model)[0])
        pids = [pid_of(rows, name) for name in ("sleeper", "stubborn", "cat")]
        for pid in pids:
            children.adopt(pid)
        pids.append(int(line_from(ready)))
        assert not any(gone(pid) for pid in pids)
        assert entries(state)
    os.close(ready)
    assert all(gone(pid) for pid in pids)
    assert not entries(state)


async def test_input_signals_and_waits(
    tmp_path: Path, anyio_backend: str, children: Children
) -> None:
    model = ScriptedProvider(
        [
            call(
                {"action": "start", "name": "cat", "argv": ["cat"], "cwd": "."},
                {"action": "write", "name": "cat", "input": "héllo\n", "close": True},
                {"action": "wait", "name": "cat"},
                {"action": "read", "name": "cat"},
                {"action": "read", "name": "cat"},
                {"action": "write", "name": "cat", "input": "more"},
                {"action": "start", "name": "nap", "argv": ["sleep", "300"]},
                {"action": "wait", "name": "nap", "timeout_ms": 0},
                {"action": "signal", "name": "nap", "signal": "TERM"},
                {"action": "wait", "name": "nap"},
                {"action": "signal", "name": "nap", "signal": "KILL"},
                {"action": "start", "name": "bad", "argv": [str(tmp_path / "missing")]},
                {"action": "start", "name": "nowhere", "argv": ["true"], "cwd": "gone"},
            ),
            call({"action": "start", "name": "nap", "argv": ["true"]}),
            Reply(text="done"),
        ]
    )
    async with (
        App.open(config(tmp_path), host=host(), store_dir=tmp_path / "s", provider=model) as app,
        app.open_session(cwd=tmp_path) as session,
    ):
        await session.run_turn("go")
    rows, again = (text(r) for r in results(model))
    assert "started cat: pid" in rows
    assert f"in {tmp_path}" in rows
    assert "wrote 7 bytes to cat; stdin closed" in rows
    assert "cat exited with code 0" in rows
    assert "bytes 0-7 of 7; exited with code 0\nhéllo\n" in rows
    assert "bytes 7-7 of 7; exited with code 0; no new output" in rows
    assert "[6/13] error (input_closed): write cat" in rows
    assert "nap is still running after 0 s of waiting" in rows
    assert "sent SIGTERM to the process group of nap" in rows
    assert "nap terminated by SIGTERM" in rows
    assert "[11/13] error (process_exited): signal nap SIGKILL" in rows
    assert "[12/13] error (spawn_failed): start bad" in rows
    gone = f"the folder to run in, {tmp_path}/gone, does not exist"
    assert f"[13/13] error (spawn_failed): start nowhere: true\n{gone}" in rows
    assert "[1/1] ok: start nap: true" in again  # an exited process's name is reused


@pytest.mark.parametrize(
    ("actions", "message"),
    [
        ([{"action": "start", "name": "x"}], "exactly one of command and argv"),
        ([{"action": "start", "name": "x", "command": "a", "argv": ["a"]}], "exactly one"),
        ([{"action": "read"}], "read needs name"),
        ([{"action": "list", "name": "x"}], "list does not take name"),
        ([{"action": "read", "name": "x", "input": "a"}], "read does not take input"),
        ([{"action": "start", "name": "x", "command": "  "}], "blank"),
        ([{"action": "start", "name": "x", "argv": ["a\x00b"]}], "NUL"),
        (
            [
                {"action": "start", "name": "x", "argv": ["true"]},
                {"action": "start", "name": "x", "argv": ["true"]},
            ],
            "two starts name 'x'",
        ),
        ([{"action": "start", "name": "../x", "argv": ["true"]}], "pattern"),
        ([{"action": "signal", "name": "x", "signal": "SEGV"}], ""),
        ([], ""),
    ],
)
async def test_a_batch_that_breaks_a_rule_is_refused_whole(
    tmp_path: Path, anyio_backend: str, actions: list[dict[str, Any]], message: str
) -> None:
    async with App.open(config(tmp_path), host=host(), store_dir=tmp_path / "s") as app:
        result = await app.call_tool("builtin/process", {"actions": actions})
    assert result.code == "invalid_arguments"
    assert message in (result.message or "")


async def test_the_actions_are_checked_against_the_session_before_any_runs(
    tmp_path: Path, anyio_backend: str, children: Children
) -> None:
    sleepers = [
        {"action": "start", "name": f"s{i}", "argv": ["sleep", "300"]} for i in range(MAX_PROCESSES)
    ]
    model = ScriptedProvider(
        [
            call(
                {"action": "start", "name": "early", "argv": ["true"]},
                {"action": "read", "name": "nobody"},
            ),
            call(*sleepers[:8]),
            call(*sleepers[8:]),
            call({"action": "start", "name": "s0", "argv": ["true"]}),
            call({"action": "start", "name": "one-more", "argv": ["true"]}),
            call(
                {"action": "stop", "name": "s3"}, {"action": "start", "name": "x", "argv": ["true"]}
            ),
            call({"action": "list"}),
            Reply(text="done"),
        ]
    )
    async with (
        App.open(config(tmp_path), host=host(), store_dir=tmp_path / "s", provider=model) as app,
        app.open_session() as session,
    ):
        await session.run_turn("go")
        for result in results(model)[1:3]:
            for line in text(result).splitlines():
                if "started s" in line:
                    children.adopt(int(line.rsplit("pid ", 1)[1].split()[0]))
    first, _, _, taken, full, replaced, listing = (text(r) for r in results(model))
    assert "[1/2] skipped: start early" in first
    assert "[2/2] error (process_unknown): read nobody" in first
    assert "early" not in listing  # nothing of the refused batch ran
    assert "error (process_name_taken): start s0" in taken
    assert "error (process_limit): start one-more" in full
    assert "stopped s3: terminated by SIGTERM" in replaced
    assert "started x" in replaced
    assert len(re.findall(r"^[\w.-]+: (running|exited)", listing, flags=re.M)) == MAX_PROCESSES
    assert "s3:" not in listing


async def test_without_a_session_a_start_lives_for_its_call_only(
    tmp_path: Path, anyio_backend: str
) -> None:
    actions = [
        {"action": "start", "name": "echo", "argv": ["echo", "once"]},
        {"action": "wait", "name": "echo"},
        {"action": "read", "name": "echo"},
    ]
    async with App.open(config(tmp_path), host=host(), store_dir=tmp_path / "s") as app:
        first = await app.call_tool("builtin/process", {"actions": actions})
        second = await app.call_tool("builtin/process", {"actions": [{"action": "list"}]})
    assert "once\n" in first.content[0].text  # type: ignore[union-attr]
    assert "no processes" in second.content[0].text  # type: ignore[union-attr]


async def test_a_state_folder_raw_cannot_use_makes_the_row_process_unavailable(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, anyio_backend: str
) -> None:
    blocker = tmp_path / "not-a-folder"
    blocker.write_text("")
    monkeypatch.setenv("XDG_STATE_HOME", str(blocker))
    start = {"action": "start", "name": "echo", "argv": ["echo", "once"]}
    async with App.open(config(tmp_path), host=host(), store_dir=tmp_path / "s") as app:
        result = await app.call_tool("builtin/process", {"actions": [start]})
    body = result.content[0].text  # type: ignore[union-attr]
    assert "process_unavailable" in body
    assert str(blocker / "raw" / "processes") in body
    assert "NotADirectoryError" not in body
    assert "handler_error" not in body
