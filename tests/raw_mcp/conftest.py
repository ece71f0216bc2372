"""Fixtures of the MCP tests: the plug-in host with raw-mcp, configs that name real
servers, and the servers nobody on this project wrote.

* ``tests/raw_mcp/mcp_test_server.py``: a small server on the SDK's MCPServer, with tools
  that sleep, crash, spawn a child, page their list and change their description;
* ``mcp-server-time`` (PyPI, a dev dependency of the workspace), run with this
  interpreter;
* ``@modelcontextprotocol/server-everything`` (npm, pinned below), installed once into
  the user's cache folder (``~/.cache/raw/server-everything/<version>``; set
  ``MCP_EVERYTHING_PATH`` to another build's ``dist/index.js``), run over stdio or as a
  streamable-HTTP server on 127.0.0.1 started once per test session. Node.js 20 or newer
  is a prerequisite (a skip, except under CI).
"""

from __future__ import annotations

import fcntl
import json
import os
import re
import shutil
import socket
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import attrs
import platformdirs
import pytest

import raw_mcp.plugin
from raw_core import Config, PluginHost
from raw_core.config import parse_config
from tests.conftest import missing_prerequisite

SERVER = Path(__file__).with_name("mcp_test_server.py")
EVERYTHING_VERSION = "2026.8.31"
MIN_NODE = 20


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


@pytest.fixture
def mcp_host() -> PluginHost:
    """A plug-in host with raw-mcp (and nothing else) registered."""
    host = PluginHost()
    host.register(raw_mcp.plugin, name="mcp-client")
    return host


def server_entry(marks: Path, **env: str) -> dict[str, Any]:
    """The config entry of the test server, leaving its markers in ``marks``."""
    return {
        "command": [sys.executable, str(SERVER)],
        "env": {"MCP_TEST_DIR": {"env": "RAW_MCP_TEST_DIR"}, **env},
    }


@pytest.fixture
def marks(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """The folder the test server leaves its markers in (``RAW_MCP_TEST_DIR``)."""
    folder = tmp_path / "marks"
    folder.mkdir()
    monkeypatch.setenv("RAW_MCP_TEST_DIR", str(folder))
    return folder


def make_config(
    host: PluginHost,
    servers: dict[str, Any],
    use: list[str],
    *,
    rules: list[Any] | None = None,
    directory: Path | None = None,
    **extra: Any,
) -> Config:
    """A config with ``servers`` under mcp.servers and one agent selecting ``use``."""
    document = {
        "mcp": {"servers": servers},
        "agents": {"a": {"tools": {"use": use, "rules": rules or []}}},
        **extra,
    }
    path = directory / "raw.json" if directory is not None else None
    if path is not None:
        path.write_text(json.dumps(document), encoding="utf-8")
    return parse_config(json.dumps(document), host=host, path=path)


def wait_for_file(path: Path, seconds: float = 30.0) -> str:
    """The text of ``path`` once a server wrote it (polled: it is another process)."""
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        if path.is_file() and path.stat().st_size:
            return path.read_text()
        time.sleep(0.02)
    raise AssertionError(f"{path} did not appear within {seconds} s")


def alive(pid: int) -> bool:
    """Whether process ``pid`` still runs (a zombie counts as gone)."""
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except OSError:
        return False
    return state != "Z"


def wait_until_gone(pid: int, seconds: float = 15.0) -> bool:
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        if not alive(pid):
            return True
        time.sleep(0.02)
    return False


def bytes_read(pid: int) -> int:
    """How many bytes process ``pid`` has read so far (its ``rchar``: pipes and sockets
    included), to wait until a server has read a request."""
    for line in Path(f"/proc/{pid}/io").read_text().splitlines():
        if line.startswith("rchar:"):
            return int(line.split()[1])
    return 0


def wait_for_read(pid: int, before: int, seconds: float = 30.0) -> None:
    """Return once process ``pid`` has read more than ``before`` bytes."""
    deadline = time.monotonic() + seconds
    while bytes_read(pid) <= before:
        if time.monotonic() > deadline:
            raise AssertionError(f"process {pid} read nothing within {seconds} s")
        time.sleep(0.005)


# --- @modelcontextprotocol/server-everything ---------------------------------------------


def _node_major(node: str) -> int:
    found = subprocess.run([node, "--version"], capture_output=True, text=True, timeout=30)
    match = re.match(r"v(\d+)\.", found.stdout.strip())
    return int(match.group(1)) if match else 0


@pytest.fixture(scope="session")
def everything() -> list[str]:
    """The argv that runs server-everything (add ``stdio`` or ``streamableHttp``)."""
    node = shutil.which("node")
    explicit = os.environ.get("MCP_EVERYTHING_PATH")
    npm = shutil.which("npm")
    if node is None or (not explicit and npm is None) or _node_major(node) < MIN_NODE:
        missing_prerequisite(
            f"the server-everything tests need Node.js {MIN_NODE} or newer and npm on PATH"
        )
    assert node is not None
    if explicit:
        return [node, explicit]
    root = Path(platformdirs.user_cache_dir("raw")) / "server-everything"
    target = root / EVERYTHING_VERSION
    index = target / "node_modules" / "@modelcontextprotocol" / "server-everything" / "dist"
    index = index / "index.js"
    if not index.is_file():
        root.mkdir(parents=True, exist_ok=True)
        with open(root / ".lock", "w") as lock:
            fcntl.flock(lock, fcntl.LOCK_EX)
            if not index.is_file():
                staging = Path(tempfile.mkdtemp(prefix="install-", dir=root))
                (staging / "package.json").write_text('{"name": "raw-mcp-peers", "private": true}')
                assert npm is not None
                subprocess.run(
                    [
                        npm,
                        "install",
                        "--no-save",
                        "--no-package-lock",
                        "--no-audit",
                        "--no-fund",
                        "--loglevel=error",
                        f"@modelcontextprotocol/server-everything@{EVERYTHING_VERSION}",
                    ],
                    cwd=staging,
                    check=True,
                    timeout=300,
                    stdout=subprocess.DEVNULL,
                )
                shutil.rmtree(target, ignore_errors=True)
                staging.rename(target)
    return [node, str(index)]


def _free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port: int = probe.getsockname()[1]
        return port


@attrs.frozen
class HttpPeer:
    """A server running over streamable HTTP: its URL and process id."""

    url: str
    pid: int


@pytest.fixture(scope="session")
def everything_http(
    everything: list[str], tmp_path_factory: pytest.TempPathFactory
) -> Iterator[HttpPeer]:
    """server-everything over streamable HTTP, once per test session."""
    log = tmp_path_factory.mktemp("everything") / "server.log"
    port = _free_port()
    with open(log, "w") as out:
        process = subprocess.Popen(
            [*everything, "streamableHttp"],
            env={**os.environ, "PORT": str(port)},
            stdin=subprocess.DEVNULL,
            stdout=out,
            stderr=subprocess.STDOUT,
            start_new_session=True,
        )
    try:
        deadline = time.monotonic() + 60
        while "listening on port" not in log.read_text():
            if process.poll() is not None or time.monotonic() > deadline:
                raise RuntimeError(f"server-everything did not start: {log.read_text()[-2000:]}")
            time.sleep(0.05)
        yield HttpPeer(url=f"http://127.0.0.1:{port}/mcp", pid=process.pid)
    finally:
        try:
            os.killpg(process.pid, 9)
        except ProcessLookupError:
            pass
        process.wait()
