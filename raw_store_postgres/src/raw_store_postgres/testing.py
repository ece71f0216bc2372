"""A throwaway PostgreSQL server for tests and benchmarks: ``initdb`` into a temporary
folder, ``pg_ctl`` to start it on a free loopback port with its socket in that folder, and
everything removed when it stops.

``initdb`` refuses to run as root, so when the caller is root the server's programs run
as an unprivileged account (``postgres`` where Debian's package made it, else
``nobody``) that owns the folder; the caller connects over the socket as it is.

The binaries are found on ``PATH``, else in Debian's ``/usr/lib/postgresql/<version>/bin``
(the newest); :func:`find_binaries` says where, or None when there are none.
"""

from __future__ import annotations

import contextlib
import os
import pwd
import shutil
import signal
import socket
import subprocess
import tempfile
from collections.abc import Iterator, Mapping
from pathlib import Path
from types import TracebackType
from typing import Final, Literal

__all__ = ["ThrowawayServer", "find_binaries"]

_DEBIAN: Final = Path("/usr/lib/postgresql")
_SUPERUSER: Final = "raw"


def find_binaries() -> Path | None:
    """The folder holding ``initdb`` and ``pg_ctl``, or None."""
    found = shutil.which("initdb")
    if found is not None and shutil.which("pg_ctl") is not None:
        return Path(os.path.realpath(found)).parent
    if _DEBIAN.is_dir():
        versions = sorted(
            (entry for entry in _DEBIAN.iterdir() if entry.name.isdigit()),
            key=lambda entry: int(entry.name),
            reverse=True,
        )
        for version in versions:
            if (version / "bin" / "initdb").is_file() and (version / "bin" / "pg_ctl").is_file():
                return version / "bin"
    return None


def _free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


def _account() -> pwd.struct_passwd | None:
    """Whom to run the server's programs as: None for the caller, unless that is root."""
    if os.geteuid() != 0:
        return None
    for name in ("postgres", "nobody"):
        with contextlib.suppress(KeyError):
            return pwd.getpwnam(name)
    raise RuntimeError("running as root, and there is no postgres or nobody account")


class ThrowawayServer:
    """A PostgreSQL server of its own, for one test session or benchmark.

    ``ThrowawayServer.start()`` makes and starts it; :meth:`dsn` names a database on it;
    :meth:`stop` (or leaving a ``with`` block) stops it and deletes its folder.
    ``settings`` are server settings (``{"fsync": "off"}`` for tests that need no
    durability across a power loss).
    """

    def __init__(self, binaries: Path, folder: Path, port: int, settings: Mapping[str, str]):
        self.binaries = binaries
        self.folder = folder
        self.port = port
        self._settings = dict(settings)
        self._account = _account()
        self._running = False

    @classmethod
    def start(
        cls, *, binaries: Path | None = None, settings: Mapping[str, str] | None = None
    ) -> ThrowawayServer:
        """Make a cluster in a new temporary folder and start it; RuntimeError when there
        are no binaries or it fails (with the server's log)."""
        found = binaries if binaries is not None else find_binaries()
        if found is None:
            raise RuntimeError("PostgreSQL's initdb and pg_ctl were not found")
        folder = Path(tempfile.mkdtemp(prefix="raw-pg-"))
        server = cls(found, folder, _free_port(), settings or {})
        try:
            server._make()
            server._start()
        except BaseException:
            server._remove()
            raise
        return server

    # --- running the server's programs ---

    def _run(self, program: str, *args: str) -> subprocess.CompletedProcess[str]:
        account = self._account
        return subprocess.run(
            [str(self.binaries / program), *args],
            cwd=self.folder,
            capture_output=True,
            text=True,
            check=False,
            timeout=120,
            stdin=subprocess.DEVNULL,
            user=None if account is None else account.pw_uid,
            group=None if account is None else account.pw_gid,
            extra_groups=None if account is None else [],
            env={**os.environ, "LC_ALL": "C", "LANG": "C"},
        )

    def _checked(self, program: str, *args: str) -> subprocess.CompletedProcess[str]:
        done = self._run(program, *args)
        if done.returncode != 0:
            log = self.log()
            raise RuntimeError(
                f"{program} failed ({done.returncode}): {done.stderr.strip()}\n{log[-4000:]}"
            )
        return done

    @property
    def data(self) -> Path:
        return self.folder / "data"

    def log(self) -> str:
        """The server's log so far."""
        try:
            return (self.folder / "server.log").read_text(encoding="utf-8", errors="replace")
        except OSError:
            return ""

    def _make(self) -> None:
        if self._account is not None:
            os.chown(self.folder, self._account.pw_uid, self._account.pw_gid)
        self._checked(
            "initdb",
            "-D",
            str(self.data),
            "-U",
            _SUPERUSER,
            "--auth=trust",
            "--encoding=UTF8",
            "--locale=C",
            "--no-sync",
        )

    def _options(self) -> str:
        settings = {
            "listen_addresses": "127.0.0.1",
            "port": str(self.port),
            "unix_socket_directories": str(self.folder),
            "max_connections": "200",
            **self._settings,
        }
        return " ".join(f"-c {key}={value}" for key, value in settings.items())

    def _start(self) -> None:
        self._checked(
            "pg_ctl",
            "-D",
            str(self.data),
            "-l",
            str(self.folder / "server.log"),
            "-o",
            self._options(),
            "-w",
            "-t",
            "60",
            "start",
        )
        self._running = True

    def _stop(self, mode: Literal["smart", "fast", "immediate"]) -> None:
        self._checked("pg_ctl", "-D", str(self.data), "-m", mode, "-w", "-t", "60", "stop")
        self._running = False

    # --- what tests use ---

    def dsn(self, dbname: str = "postgres") -> str:
        """A connection string for ``dbname`` over the server's socket."""
        return f"host={self.folder} port={self.port} user={_SUPERUSER} dbname={dbname}"

    def tcp_dsn(self, dbname: str = "postgres") -> str:
        """The same over TCP on the loopback address."""
        return f"host=127.0.0.1 port={self.port} user={_SUPERUSER} dbname={dbname}"

    def psql(self, sql: str, dbname: str = "postgres") -> str:
        """Run ``sql`` with a synchronous connection (autocommit); the rows as text."""
        import psycopg

        with psycopg.connect(self.dsn(dbname), autocommit=True) as connection:
            cursor = connection.execute(sql.encode())
            if cursor.description is None:
                return ""
            return "\n".join("|".join(str(v) for v in row) for row in cursor.fetchall())

    @contextlib.contextmanager
    def database(self, name: str) -> Iterator[str]:
        """A new, empty database for the block (dropped after it, its connections ended);
        yields its connection string."""
        self.psql(f'CREATE DATABASE "{name}"')
        try:
            yield self.dsn(name)
        finally:
            self.psql(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')

    def restart(self, mode: Literal["fast", "immediate"] = "fast") -> None:
        """Stop the server (``immediate``: as a crash would, with no shutdown checkpoint)
        and start it again on the same port; every connection is cut."""
        self._stop(mode)
        self._start()

    def stop(self) -> None:
        """Stop the server and delete its folder (idempotent)."""
        try:
            if self._running:
                try:
                    self._stop("fast")
                except (RuntimeError, subprocess.TimeoutExpired):
                    self._kill()
        finally:
            self._remove()

    def _kill(self) -> None:
        """The last resort: an immediate shutdown by signal to the postmaster."""
        with contextlib.suppress(OSError, ValueError, IndexError):
            pid = int((self.data / "postmaster.pid").read_text().split()[0])
            os.kill(pid, signal.SIGQUIT)
        self._running = False

    def _remove(self) -> None:
        shutil.rmtree(self.folder, ignore_errors=True)

    def __enter__(self) -> ThrowawayServer:
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        traceback: TracebackType | None,
    ) -> None:
        self.stop()
