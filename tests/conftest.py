"""Shared fixtures: real tool folders in temporary directories, empty plug-in hosts, the
``raw`` console script (never looked up on PATH), the processes a test starts (none left
behind), an empty config home per test, and prerequisites such as Node.js (a skip, except
under CI, where it fails)."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import sysconfig
from collections.abc import Callable, Iterator, Sequence
from pathlib import Path
from typing import Any, NoReturn

import pytest

from raw_core.plugins import PluginHost

HANDLER = """
from pathlib import Path
Path(__file__).with_name("imported.marker").write_text("imported")

def handler(args, context):
    return {"content": [{"type": "text", "text": "ok"}]}
"""


def manifest_for(folder_name: str, **overrides: Any) -> dict[str, Any]:
    """A valid manifest for a folder, with ``overrides`` applied (None deletes a key)."""
    manifest: dict[str, Any] = {
        "api_version": 2,
        "id": folder_name,
        "version": "1.0.0",
        "name": folder_name,
        "description": f"The {folder_name} test tool.",
        "input_schema": {"type": "object", "properties": {}, "additionalProperties": False},
        "entry": "./tool.py",
    }
    for key, value in overrides.items():
        if value is None:
            manifest.pop(key, None)
        else:
            manifest[key] = value
    return manifest


MakeTool = Callable[..., Path]


@pytest.fixture
def make_tool(tmp_path: Path) -> MakeTool:
    """Write a tool folder: ``make_tool("folder", root=..., code=..., manifest=..., **fields)``.

    The default entry module writes ``imported.marker`` beside itself when imported, so a
    test can prove that a rejected tool's code never ran.
    """

    def make(
        folder_name: str = "sample",
        /,
        *,
        root: Path | None = None,
        code: str = HANDLER,
        manifest: dict[str, Any] | str | None = None,
        **fields: Any,
    ) -> Path:
        folder = (root if root is not None else tmp_path / "tools") / folder_name
        folder.mkdir(parents=True, exist_ok=True)
        document = manifest if manifest is not None else manifest_for(folder_name, **fields)
        text = document if isinstance(document, str) else json.dumps(document, indent=2)
        (folder / "tool.json").write_text(text, encoding="utf-8")
        (folder / "tool.py").write_text(code, encoding="utf-8")
        return folder

    return make


def was_imported(folder: Path) -> bool:
    """Whether the default entry module of ``folder`` has run."""
    return (folder / "imported.marker").exists()


@pytest.fixture
def imported() -> Callable[[Path], bool]:
    """``imported(folder)``: whether the default entry module of ``folder`` has run."""
    return was_imported


@pytest.fixture
def manifest() -> Callable[..., dict[str, Any]]:
    """``manifest(folder_name, **overrides)``: a valid manifest with changes applied."""
    return manifest_for


@pytest.fixture
def host() -> PluginHost:
    """A plug-in host with no plug-ins: each test registers what it needs."""
    return PluginHost()


@pytest.fixture
def builtin_host() -> PluginHost:
    """A plug-in host with the built-in tools alone (no entry points scanned)."""
    from raw_builtin_tools import plugin

    only_builtin = PluginHost()
    only_builtin.register(plugin, name="builtin")
    return only_builtin


@pytest.fixture(autouse=True)
def _own_config_home(
    tmp_path_factory: pytest.TempPathFactory, monkeypatch: pytest.MonkeyPatch
) -> None:
    """No test reads the config of the account that runs the suite: the user's config is
    layered under every ``--config FILE``, so each test starts with an empty
    ``XDG_CONFIG_HOME`` of its own (a test sets its own to write one) and no
    ``RAW_MANAGED_CONFIG``."""
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path_factory.mktemp("config-home")))
    monkeypatch.delenv("RAW_MANAGED_CONFIG", raising=False)


# --- the raw console script -------------------------------------------------------------

RAW = Path(sysconfig.get_path("scripts")) / ("raw.exe" if sys.platform == "win32" else "raw")
"""The ``raw`` console script of the environment that runs the tests: beside its
interpreter, never looked up on PATH, so the suite passes whatever PATH is."""


def raw_script() -> str:
    """:data:`RAW` as a string, checked to exist."""
    assert RAW.is_file(), f"the raw console script is not installed: {RAW} does not exist"
    return str(RAW)


def run_raw(
    tmp_path: Path, *args: str, input: str | None = None
) -> subprocess.CompletedProcess[str]:
    """``raw ARGS`` in ``tmp_path``, its state, config, data and home folders inside it,
    stdin ``input`` (else empty), its output captured."""
    env = dict(os.environ)
    env.update(
        XDG_STATE_HOME=str(tmp_path / "state"),
        XDG_CONFIG_HOME=str(tmp_path / "config"),
        XDG_DATA_HOME=str(tmp_path / "data"),
        HOME=str(tmp_path / "home"),
    )
    return subprocess.run(
        [raw_script(), *args],
        env=env,
        cwd=tmp_path,
        capture_output=True,
        text=True,
        input=input,
        stdin=subprocess.DEVNULL if input is None else None,
        timeout=120,
    )


# --- processes a test starts ------------------------------------------------------------


def _descendants(pid: int) -> list[int]:
    """The processes below ``pid``, read from /proc (none where there is no /proc)."""
    children: dict[int, list[int]] = {}
    for entry in Path("/proc").glob("[0-9]*"):
        try:
            stat = (entry / "stat").read_text(encoding="utf-8")
        except OSError:
            continue
        parent = int(stat.rsplit(")", 1)[1].split()[1])
        children.setdefault(parent, []).append(int(entry.name))
    found: list[int] = []
    pending = [pid]
    while pending:
        below = children.get(pending.pop(), [])
        found += below
        pending += below
    return found


class Children:
    """The processes a test starts, each in a process group of its own: when the test
    ends — passed or failed — each is killed with its group and every process below it
    (a tool's command runs in a session of its own), so no test leaves a process behind."""

    def __init__(self) -> None:
        self._pids: list[int] = []
        self._popens: list[subprocess.Popen[Any]] = []

    def popen(
        self, args: Sequence[str | os.PathLike[str]], **options: Any
    ) -> subprocess.Popen[Any]:
        """``subprocess.Popen(args, start_new_session=True, **options)``, killed at the end."""
        process = subprocess.Popen(args, start_new_session=True, **options)
        self._popens.append(process)
        self._pids.append(process.pid)
        return process

    def spawn(self, command: str, args: list[str], **options: Any) -> Any:
        """``pexpect.spawn(command, args, **options)`` (a terminal of its own), killed at
        the end."""
        import pexpect

        child = pexpect.spawn(command, args, **options)
        self._pids.append(child.pid)
        return child

    def adopt(self, pid: int) -> None:
        """A process something under test started (a tool's process group): killed with
        its group at the end too, should the test fail before it is stopped."""
        self._pids.append(pid)

    def kill_all(self) -> None:
        doomed: list[int] = []
        for pid in self._pids:
            doomed += [pid, *_descendants(pid)]
        for pid in doomed:
            for kill, target in ((os.killpg, pid), (os.kill, pid)):
                try:
                    kill(target, signal.SIGKILL)
                except (ProcessLookupError, PermissionError):
                    pass
        for process in self._popens:
            process.wait()


@pytest.fixture
def children() -> Iterator[Children]:
    """Start a test's processes through this, so that none outlives the test."""
    started = Children()
    try:
        yield started
    finally:
        started.kill_all()


# --- prerequisites ----------------------------------------------------------------------


def under_ci() -> bool:
    """Whether the suite runs under CI (``CI`` set, as ``.ci/run`` and CI services do)."""
    return os.environ.get("CI", "").strip().lower() not in ("", "0", "false", "no")


def missing_prerequisite(reason: str) -> NoReturn:
    """A prerequisite of the test (Node.js...) is missing: skip with ``reason`` — or, under
    CI, fail, so that CI always runs every test."""
    if under_ci():
        pytest.fail(f"{reason} (a prerequisite: under CI a missing one fails the test)")
    pytest.skip(reason)


# --- nothing a test does lands in the repository -------------------------------------------

_REPOSITORY = Path(__file__).resolve().parents[1]


def _untracked_files() -> set[str] | None:
    """The files of the repository's working tree that git neither tracks nor ignores
    (None outside a git checkout)."""
    try:
        listed = subprocess.run(
            ["git", "-C", str(_REPOSITORY), "ls-files", "--others", "--exclude-standard"],
            capture_output=True,
            text=True,
            check=True,
        )
    except (OSError, subprocess.CalledProcessError):
        return None
    return set(listed.stdout.splitlines())


_UNTRACKED_AT_START: set[str] | None = None


def pytest_sessionstart(session: pytest.Session) -> None:
    global _UNTRACKED_AT_START
    _UNTRACKED_AT_START = _untracked_files()


def pytest_sessionfinish(session: pytest.Session, exitstatus: int) -> None:
    """Fail the run when a test wrote a file into the repository (a tool or hook run with
    the working directory pytest started in, instead of its temporary folder)."""
    before, after = _UNTRACKED_AT_START, _untracked_files()
    if before is None or after is None:
        return
    left = sorted(after - before)
    if left:
        print(f"\nthe tests left files in the repository: {', '.join(left)}", file=sys.stderr)
        session.exitstatus = pytest.ExitCode.TESTS_FAILED
