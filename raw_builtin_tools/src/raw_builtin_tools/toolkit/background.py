"""Processes that run across calls: a :class:`ProcessTable` of :class:`BackgroundProcess`.

Each process starts in a session of its own (``start_new_session=True``), so it leads a
process group, and every process it starts without leaving that group is signalled and
stopped with it (:func:`~raw_builtin_tools.toolkit.kill_group` also reaches, on Linux, the
processes a job-control shell put in other groups of the session). Its stdin is a pipe
(:meth:`BackgroundProcess.write`); stdout and stderr go to one pipe, which a daemon thread
copies to an :class:`~raw_builtin_tools.toolkit.OutputLog` on disk, bounded
(:data:`~raw_builtin_tools.toolkit.OUTPUT_BYTES`), under the table's folder in raw's state
directory.

A table holds at most :data:`MAX_PROCESSES`; starting one more drops the process that
exited longest ago, and is ``process_limit`` when all of them still run. Closing the table
(:meth:`ProcessTable.aclose`: the session ends) kills every group, reaps the processes and
deletes the folder. Should the interpreter exit without closing a table, an ``atexit``
handler still kills its groups; a raw killed with ``SIGKILL`` cannot, and its processes and
folder stay (the folder is deleted by the next table made once that raw is gone).
"""

from __future__ import annotations

import atexit
import os
import shutil
import signal as signals
import subprocess
import tempfile
import threading
import time
import weakref
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Final

import anyio

from raw_builtin_tools.toolkit.output_log import OutputChunk, OutputLog
from raw_builtin_tools.toolkit.processes import Signal, kill_group

__all__ = [
    "MAX_PROCESSES",
    "STOP_GRACE_SECONDS",
    "BackgroundProcess",
    "ProcessProblem",
    "ProcessTable",
    "process_state_dir",
]

MAX_PROCESSES: Final = 16
"""Processes one table (one session) keeps at most, running or exited."""
STOP_GRACE_SECONDS: Final = 5.0
"""How long :meth:`BackgroundProcess.stop` waits after ``SIGTERM`` before ``SIGKILL``."""
WRITE_SECONDS: Final = 5.0
"""How long :meth:`BackgroundProcess.write` waits for a process to read its input."""
REAP_SECONDS: Final = 5.0
DRAIN_SECONDS: Final = 2.0
"""How long the output may take to reach its end once a group is killed."""
_CHUNK: Final = 64 * 1024

_LIVE: weakref.WeakSet[ProcessTable] = weakref.WeakSet()


class ProcessProblem(Exception):
    """Why an action on a process failed, with a stable ``code`` (docs/tools/process.md)."""

    def __init__(self, code: str, message: str) -> None:
        super().__init__(message)
        self.code = code
        self.message = message


def process_state_dir() -> Path:
    """Where tables keep their output: ``processes`` in raw's state directory (the
    session store's default folder: ``platformdirs.user_state_dir("raw")``)."""
    import platformdirs  # imported when needed: it costs startup time

    return Path(platformdirs.user_state_dir("raw", appauthor=False)) / "processes"


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


def _ending(code: int) -> str:
    if code >= 0:
        return f"exited with code {code}"
    try:
        name = signals.Signals(-code).name
    except ValueError:
        name = f"signal {-code}"
    return f"terminated by {name}"


class BackgroundProcess:
    """One process of a table: its ``name``, what it runs (``argv``, ``label``: the
    command as given) in ``cwd``, and its output so far."""

    def __init__(self, name: str, argv: Sequence[str], label: str, cwd: str, folder: Path) -> None:
        self.name = name
        self.argv = tuple(argv)
        self.label = label
        self.cwd = cwd
        self.folder = folder
        self.log = OutputLog(folder)
        self.cursor = 0
        self.started = time.monotonic()
        self.ended: float | None = None
        try:
            self.popen = subprocess.Popen(
                list(self.argv),
                stdin=subprocess.PIPE,
                stdout=subprocess.PIPE,
                stderr=subprocess.STDOUT,
                cwd=cwd,
                start_new_session=True,
                bufsize=0,
            )
        except BaseException:
            self.log.close()
            raise
        assert self.popen.stdout is not None
        self._reader = threading.Thread(
            target=self._pump, args=(self.popen.stdout.fileno(),), daemon=True,
            name=f"raw-process-{name}",
        )  # fmt: skip
        self._reader.start()

    def _pump(self, fd: int) -> None:
        """Copy the output pipe to the log until every writer has closed it."""
        while True:
            try:
                data = os.read(fd, _CHUNK)
            except OSError:
                return
            if not data:
                return
            self.log.append(data)

    @property
    def pid(self) -> int:
        return self.popen.pid

    def poll(self) -> int | None:
        """The exit status (negative: the signal that ended it), None while it runs."""
        code = self.popen.poll()
        if code is not None and self.ended is None:
            self.ended = time.monotonic()
        return code

    @property
    def running(self) -> bool:
        return self.poll() is None

    def state(self) -> str:
        """``running`` or how it ended: ``exited with code 0``, ``terminated by SIGTERM``."""
        code = self.poll()
        return "running" if code is None else _ending(code)

    def seconds(self) -> float:
        """How long it ran (so far)."""
        return (self.ended if self.ended is not None else time.monotonic()) - self.started

    def read(self, offset: int | None, max_bytes: int) -> OutputChunk:
        """Output from ``offset`` (default: where the last read ended), at most
        ``max_bytes``, never ending inside a UTF-8 character while more may follow; the
        next read starts where this one ended."""
        start = self.cursor if offset is None else offset
        chunk = self.log.read(start, max_bytes)
        data = chunk.data
        if data and (chunk.end < chunk.total or self.running):
            data = data[: _utf8_boundary(data)]
        if len(data) != len(chunk.data):
            chunk = OutputChunk(
                data=data,
                start=chunk.start,
                end=chunk.start + len(data),
                dropped=chunk.dropped,
                total=chunk.total,
            )
        self.cursor = chunk.end
        return chunk

    def send(self, signal: signals.Signals) -> None:
        """Send ``signal`` to the whole group; ``process_exited`` when it has ended."""
        if not self.running:
            raise ProcessProblem("process_exited", f"{self.name} has {self.state()}")
        try:
            os.killpg(self.pid, signal)
        except ProcessLookupError:
            raise ProcessProblem("process_exited", f"{self.name} has ended") from None

    async def write(self, data: bytes, *, close: bool = False) -> None:
        """Write ``data`` to its stdin (then close it when ``close``), waiting at most
        :data:`WRITE_SECONDS` for it to read: ``input_blocked`` past that,
        ``process_exited`` or ``input_closed`` when it can take no input."""
        stdin = self.popen.stdin
        if stdin is None or stdin.closed:
            raise ProcessProblem("input_closed", f"the input of {self.name} was closed")
        if not self.running:
            raise ProcessProblem("process_exited", f"{self.name} has {self.state()}")
        fd = stdin.fileno()
        os.set_blocking(fd, False)
        view, written = memoryview(data), 0
        deadline = anyio.current_time() + WRITE_SECONDS
        while written < len(data):
            try:
                written += os.write(fd, view[written:])
            except BlockingIOError:
                if anyio.current_time() >= deadline:
                    raise ProcessProblem(
                        "input_blocked",
                        f"{self.name} did not read its input within {WRITE_SECONDS:g} s;"
                        f" {written} of {len(data)} bytes were written",
                    ) from None
                await anyio.sleep(0.01)
            except BrokenPipeError:
                raise ProcessProblem(
                    "process_exited", f"{self.name} closed its input or ended"
                ) from None
        if close:
            try:
                stdin.close()
            except BrokenPipeError:
                pass

    async def wait(self, seconds: float, signal: Signal | None = None) -> bool:
        """Wait at most ``seconds`` for it to end (or ``signal`` to be cancelled); whether
        it has ended. Once it has, its output is read to the end first (for at most
        :data:`DRAIN_SECONDS`: a process that left its group may hold the pipe), so a read
        after a wait that saw the exit gets all of it."""
        deadline = anyio.current_time() + seconds
        delay = 0.005
        while self.poll() is None:
            left = deadline - anyio.current_time()
            if left <= 0 or (signal is not None and signal.cancelled):
                return False
            await anyio.sleep(min(delay, left))
            delay = min(delay * 2, 0.1)
        await self.drained(DRAIN_SECONDS)
        return True

    async def stop(self, grace: float = STOP_GRACE_SECONDS) -> str:
        """``SIGTERM`` to the group, ``SIGKILL`` to what is left of it after ``grace``
        seconds (or at once when the leader has ended), then reap; how it ended."""
        if self.running:
            try:
                os.killpg(self.pid, signals.SIGTERM)
            except ProcessLookupError:
                pass
            await self.wait(grace)
        kill_group(self.pid)
        await self.wait(REAP_SECONDS)
        return self.state()

    def kill(self) -> None:
        """``SIGKILL`` the whole group at once."""
        kill_group(self.pid)

    async def drained(self, seconds: float) -> bool:
        """Wait at most ``seconds`` for its output to reach its end (every process holding
        the pipe has ended); whether it has."""
        if self._reader.is_alive():  # a worker thread waits, bounded by ``seconds``
            await anyio.to_thread.run_sync(self._reader.join, seconds)
        return not self._reader.is_alive()

    def discard(self) -> None:
        """Close its pipes and delete its output (after it has ended). The output pipe
        stays open while a process that left the group still holds it: the reader thread
        is still reading it, and a closed descriptor's number could be reused under it."""
        streams = [self.popen.stdin]
        if not self._reader.is_alive():
            streams.append(self.popen.stdout)
        for stream in streams:
            if stream is not None:
                try:
                    stream.close()
                except OSError:
                    pass
        self.log.close()
        shutil.rmtree(self.folder, ignore_errors=True)


def _utf8_boundary(data: bytes) -> int:
    """The length of ``data`` without a UTF-8 character cut at its end."""
    for back in range(1, min(4, len(data)) + 1):
        byte = data[-back]
        if byte < 0x80:
            return len(data)
        if byte >= 0xC0:  # a lead byte: is its character complete?
            need = 2 if byte < 0xE0 else 3 if byte < 0xF0 else 4
            return len(data) if back >= need else len(data) - back
    return len(data)


class ProcessTable:
    """The processes of one session, by name, at most ``limit``; their output lives in a
    private folder under ``base`` (default :func:`process_state_dir`), made on first
    start."""

    def __init__(self, base: Path | None = None, *, limit: int = MAX_PROCESSES) -> None:
        self._base = base
        self.limit = limit
        self._folder: Path | None = None
        self._processes: dict[str, BackgroundProcess] = {}
        self._count = 0
        self._closed = False
        _LIVE.add(self)

    def __iter__(self) -> Iterator[BackgroundProcess]:
        return iter(list(self._processes.values()))

    def __len__(self) -> int:
        return len(self._processes)

    def __contains__(self, name: object) -> bool:
        return name in self._processes

    def get(self, name: str) -> BackgroundProcess:
        """Process ``name``; ``process_unknown`` when there is none."""
        process = self._processes.get(name)
        if process is None:
            known = ", ".join(self._processes) or "none"
            raise ProcessProblem(
                "process_unknown", f"no process is named {name!r} (processes: {known})"
            )
        return process

    def _table_folder(self) -> Path:
        """The table's folder, made on first use; ``process_unavailable`` naming the
        state folder when it cannot be made there (a file in its place, no permission)."""
        if self._folder is None:
            base = self._base if self._base is not None else process_state_dir()
            try:
                base.mkdir(parents=True, exist_ok=True, mode=0o700)
                _remove_orphans(base)
                self._folder = Path(tempfile.mkdtemp(prefix=f"{os.getpid()}-", dir=base))
            except OSError as exc:
                raise ProcessProblem(
                    "process_unavailable",
                    f"cannot keep process output in the folder {base}:"
                    f" {exc.strerror or exc}{_where(exc, base)}",
                ) from None
        return self._folder

    def start(self, name: str, argv: Sequence[str], *, cwd: str, label: str) -> BackgroundProcess:
        """Start ``argv`` in ``cwd`` as ``name``. An exited process of that name is
        replaced (its output goes); a running one is ``process_name_taken``. A table that
        is full drops its process that exited longest ago, or is ``process_limit``. A
        process that cannot be started is ``spawn_failed``."""
        if self._closed:
            raise ProcessProblem("process_unavailable", "the session has ended")
        old = self._processes.get(name)
        if old is not None and old.running:
            raise ProcessProblem(
                "process_name_taken", f"{name!r} names a process that is still running"
            )
        if old is None and len(self._processes) >= self.limit:
            exited = [p for p in self._processes.values() if not p.running]
            if not exited:
                raise ProcessProblem(
                    "process_limit",
                    f"{self.limit} processes run already, the most a session keeps: stop one first",
                )
            old = min(exited, key=lambda p: p.ended or 0.0)
        if not os.path.isdir(cwd):
            raise ProcessProblem("spawn_failed", f"the folder to run in, {cwd}, does not exist")
        table = self._table_folder()
        self._count += 1
        folder = table / f"p{self._count}"
        try:
            folder.mkdir(mode=0o700)
        except OSError as exc:
            raise ProcessProblem(
                "process_unavailable",
                f"cannot keep process output in the folder {table}: {exc.strerror or exc}",
            ) from None
        try:
            process = BackgroundProcess(name, argv, label, cwd, folder)
        except OSError as exc:
            shutil.rmtree(folder, ignore_errors=True)
            raise ProcessProblem(
                "spawn_failed", f"could not start {argv[0]}: {exc.strerror or exc}"
            ) from None
        if old is not None:
            del self._processes[old.name]
            old.discard()
        self._processes[name] = process
        return process

    def kill_all(self) -> None:
        """``SIGKILL`` every group at once (no waiting)."""
        for process in self._processes.values():
            process.kill()

    async def aclose(self) -> None:
        """Kill every group, reap every process, delete the folder. Idempotent."""
        if self._closed:
            return
        self._closed = True
        _LIVE.discard(self)
        self.kill_all()
        with anyio.CancelScope(shield=True):
            for process in self._processes.values():
                await process.wait(REAP_SECONDS)
        for process in self._processes.values():
            process.discard()
        self._processes.clear()
        if self._folder is not None:
            shutil.rmtree(self._folder, ignore_errors=True)


def _where(exc: OSError, base: Path) -> str:
    """`` (at PATH)`` when the failing path is not ``base`` itself (a parent, say)."""
    failed = exc.filename
    return f" (at {failed})" if failed is not None and str(failed) != str(base) else ""


def _remove_orphans(base: Path) -> None:
    """Delete the folders of tables whose raw process is gone (killed before it closed
    them): each is named ``<pid>-...``."""
    for entry in base.iterdir():
        pid, _, _ = entry.name.partition("-")
        if pid.isdigit() and int(pid) != os.getpid() and not _alive(int(pid)):
            shutil.rmtree(entry, ignore_errors=True)


@atexit.register
def _kill_leftovers() -> None:
    """At interpreter exit, kill the groups of every table nobody closed."""
    for table in list(_LIVE):
        table.kill_all()
