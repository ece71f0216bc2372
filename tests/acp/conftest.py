"""Fixtures of the ACP tests: a project played by the replay provider, ``raw acp`` as a
subprocess, and acpx, the ACP client nobody on this project wrote.

* ``raw acp`` runs as ``python -m raw_core acp`` with this interpreter (never the ``raw``
  on PATH), its config given with ``--config``, its store in the test's own state folder
  (``XDG_STATE_HOME``);
* ``acpx`` (npm, pinned below) is installed once into the user's cache folder
  (``~/.cache/raw/acpx/<version>``; set ``ACPX_CLI_PATH`` to another build's
  ``dist/cli.js``) and run on Node.js 22 or newer: the ``node`` on PATH when it is new
  enough, else the one ``.ci/run`` installs into ``.ci/.node``. Missing Node.js 22 is a
  skip, except under CI. Each acpx run gets a temporary HOME (its state in ``~/.acpx``)
  and ``--ttl 1``, so its background process ends a second after its last prompt.
"""

from __future__ import annotations

import fcntl
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import attrs
import platformdirs
import pytest

from tests.conftest import missing_prerequisite

ACPX_VERSION = "0.19.1"
MIN_NODE = 22
REPOSITORY = Path(__file__).resolve().parents[2]


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


@attrs.define
class Project:
    """A folder to work in, a config whose model is a recording, and raw's store."""

    root: Path
    work: Path
    config: Path
    recording: Path
    state: Path

    def write(self, replies: Sequence[dict[str, Any]], **config: Any) -> None:
        """The model's replies (one per request) and the config's ``agents.coder``
        tools (``use``, ``rules``) and any top-level keys."""
        self.recording.write_text("".join(json.dumps(reply) + "\n" for reply in replies))
        tools = {"use": config.pop("use", ["builtin/read_file"])}
        if "rules" in config:
            tools["rules"] = config.pop("rules")
        document = {
            "models": {"rec": {"provider": "replay", "model": str(self.recording)}},
            "agents": {"coder": {"model": "rec", "tools": tools}},
            **config,
        }
        self.config.write_text(json.dumps(document))

    @property
    def env(self) -> dict[str, str]:
        """The environment ``raw acp`` and ``raw run`` get: raw's store in ``state``."""
        return {
            **os.environ,
            "XDG_STATE_HOME": str(self.state),
            "XDG_CONFIG_HOME": str(self.root / "config"),
        }

    def raw(self, *args: str) -> list[str]:
        """The argv of ``raw ARGS`` with this interpreter."""
        return [sys.executable, "-m", "raw_core", *args]

    def acp_argv(self, *extra: str) -> list[str]:
        return self.raw("acp", "--config", str(self.config), *extra)


@pytest.fixture
def project(tmp_path: Path) -> Project:
    work = tmp_path / "work"
    work.mkdir()
    (work / "notes.txt").write_text("remember the milk\n")
    found = Project(
        root=tmp_path,
        work=work,
        config=tmp_path / "raw.json",
        recording=tmp_path / "recording.jsonl",
        state=tmp_path / "state",
    )
    found.write([{"text": "Hello from raw."}])
    return found


def raw_run(project: Project, prompt: str) -> str:
    """Run one turn with ``raw run``; the session's id."""
    done = subprocess.run(
        project.raw("run", "--config", str(project.config), "--cwd", str(project.work), prompt),
        env=project.env,
        capture_output=True,
        text=True,
        timeout=120,
        stdin=subprocess.DEVNULL,
    )
    assert done.returncode == 0, done.stderr
    return done.stderr.strip().splitlines()[-1].removeprefix("session ")


def shown_items(project: Project, session_id: str) -> list[dict[str, Any]]:
    """The session's display items, as ``raw sessions show --json`` lists them."""
    shown = subprocess.run(
        project.raw("sessions", "show", session_id, "--json"),
        env=project.env,
        capture_output=True,
        text=True,
        timeout=120,
        stdin=subprocess.DEVNULL,
    )
    assert shown.returncode == 0, shown.stderr
    items: list[dict[str, Any]] = json.loads(shown.stdout)["items"]
    return items


# --- acpx --------------------------------------------------------------------------------


def _node_major(node: str) -> int:
    found = subprocess.run([node, "--version"], capture_output=True, text=True, timeout=30)
    match = re.match(r"v(\d+)\.", found.stdout.strip())
    return int(match.group(1)) if match else 0


def _node_bin() -> Path | None:
    """A folder with ``node`` 22 or newer and ``npm``."""
    on_path = shutil.which("node")
    if on_path is not None and shutil.which("npm") and _node_major(on_path) >= MIN_NODE:
        return Path(on_path).parent
    installed = REPOSITORY / ".ci" / ".node" / "node-bin"
    if (installed / "node").exists() and _node_major(str(installed / "node")) >= MIN_NODE:
        return installed
    return None


@attrs.frozen
class Acpx:
    """acpx's ``cli.js`` and the Node.js that runs it."""

    cli: Path
    node_bin: Path

    def run(
        self,
        project: Project,
        *args: str,
        agent_args: Sequence[str] = (),
        home: Path | None = None,
        timeout: float = 90,
        check: bool = False,
    ) -> subprocess.CompletedProcess[str]:
        """``acpx --agent 'raw acp ...' --cwd WORK --format json --ttl 1 ARGS``, its
        state under ``home`` (default: a folder of the project)."""
        return subprocess.run(
            self.argv(project, *args, agent_args=agent_args),
            env=self.env(project, home),
            capture_output=True,
            text=True,
            timeout=timeout,
            check=check,
            stdin=subprocess.DEVNULL,
        )

    def argv(self, project: Project, *args: str, agent_args: Sequence[str] = ()) -> list[str]:
        agent = " ".join(_quote(part) for part in project.acp_argv(*agent_args))
        return [
            str(self.node_bin / "node"),
            str(self.cli),
            "--agent",
            agent,
            "--cwd",
            str(project.work),
            "--format",
            "json",
            "--ttl",
            "1",
            *args,
        ]

    def env(self, project: Project, home: Path | None = None) -> dict[str, str]:
        home = home if home is not None else project.root / "home"
        home.mkdir(exist_ok=True)
        env = project.env
        env["HOME"] = str(home)
        env["PATH"] = f"{self.node_bin}{os.pathsep}{env.get('PATH', '')}"
        return env


def _quote(part: str) -> str:
    if re.fullmatch(r"[\w./=:@+-]+", part):
        return part
    return "'" + part.replace("'", "'\"'\"'") + "'"


def messages(output: str) -> list[dict[str, Any]]:
    """The JSON-RPC messages of acpx's ``--format json`` transcript."""
    found = []
    for line in output.splitlines():
        line = line.strip()
        if line.startswith("{"):
            found.append(json.loads(line))
    return found


def updates(transcript: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """The ``session/update`` payloads of a transcript, in order."""
    return [
        message["params"]["update"]
        for message in transcript
        if message.get("method") == "session/update"
    ]


@pytest.fixture(scope="session")
def acpx() -> Acpx:
    """acpx: ``ACPX_CLI_PATH``, else installed once into the cache."""
    node_bin = _node_bin()
    if node_bin is None:
        missing_prerequisite(
            f"the acpx interop tests need Node.js {MIN_NODE} or newer and npm (on PATH, or"
            " installed by .ci/run into .ci/.node)"
        )
    explicit = os.environ.get("ACPX_CLI_PATH")
    if explicit:
        return Acpx(cli=Path(explicit), node_bin=node_bin)
    root = Path(platformdirs.user_cache_dir("raw")) / "acpx"
    target = root / ACPX_VERSION
    cli = target / "node_modules" / "acpx" / "dist" / "cli.js"
    if cli.is_file():
        return Acpx(cli=cli, node_bin=node_bin)
    root.mkdir(parents=True, exist_ok=True)
    with open(root / ".lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        if not cli.is_file():  # another run may have installed it while this one waited
            staging = Path(tempfile.mkdtemp(prefix="install-", dir=root))
            # A package.json of its own keeps npm from looking for one in a parent folder.
            (staging / "package.json").write_text('{"name": "raw-acpx-cache", "private": true}\n')
            subprocess.run(
                [
                    str(node_bin / "npm"),
                    "install",
                    "--no-save",
                    "--no-package-lock",
                    "--no-audit",
                    "--no-fund",
                    "--loglevel=error",
                    f"acpx@{ACPX_VERSION}",
                ],
                cwd=staging,
                check=True,
                timeout=300,
                stdout=subprocess.DEVNULL,
                env={**os.environ, "PATH": f"{node_bin}{os.pathsep}{os.environ.get('PATH', '')}"},
            )
            shutil.rmtree(target, ignore_errors=True)
            staging.rename(target)
    return Acpx(cli=cli, node_bin=node_bin)
