"""The dashboard server: one app, one token, one uvicorn server on 127.0.0.1.

:meth:`Dashboard.serve` is what ``raw dashboard`` runs, and what tests and embedding apps
run in a task group of their own::

    async with App.open("raw.json", approval_wait=APPROVAL_WAIT) as app:
        server = Dashboard(app)
        async with anyio.create_task_group() as group:
            group.start_soon(server.serve)
            print(await server.started())
"""

from __future__ import annotations

import contextlib
import socket
from collections.abc import Iterator
from pathlib import Path
from typing import TYPE_CHECKING, Any

import anyio
import uvicorn

from raw_core.errors import UsageInvalid
from raw_dashboard.api import application
from raw_dashboard.live import Hub, TurnRunner
from raw_dashboard.prefs import Preferences, default_path
from raw_dashboard.security import Guard, new_token

if TYPE_CHECKING:
    from raw_core.app import App

__all__ = ["HOST", "Dashboard"]

HOST = "127.0.0.1"
"""The only address the dashboard listens on."""


class Dashboard:
    """The dashboard of ``app`` on ``127.0.0.1:port`` (0: a free port). ``agent`` is the
    agent new turns use; ``preferences`` the preferences file (default: ``dashboard.json``
    in raw's state directory); ``signals``: whether Ctrl-C stops it (the command's
    server does; an embedded one leaves the process's signals alone)."""

    def __init__(
        self,
        app: App,
        *,
        port: int = 0,
        agent: str | None = None,
        token: str | None = None,
        preferences: Path | None = None,
        signals: bool = False,
    ) -> None:
        self.app = app
        self.token = token if token is not None else new_token()
        self.hub = Hub()
        self._port = port
        self._agent = agent
        self._signals = signals
        self._prefs = Preferences(preferences if preferences is not None else default_path())
        self._ready = anyio.Event()
        self._server: Any = None
        self._listener: socket.socket | None = None
        self.runner: TurnRunner | None = None

    @property
    def port(self) -> int:
        """The port it listens on, once :meth:`listen` bound it."""
        assert self._listener is not None, "the dashboard does not listen yet"
        port: int = self._listener.getsockname()[1]
        return port

    @property
    def url(self) -> str:
        """The URL that opens the dashboard: it carries the token."""
        return f"http://{HOST}:{self.port}/?token={self.token}"

    async def started(self) -> str:
        """Wait until the server serves; its URL."""
        await self._ready.wait()
        return self.url

    def stop(self) -> None:
        """Ask the server to stop; :meth:`serve` returns once its connections ended."""
        if self._server is not None:
            self._server.should_exit = True

    def listen(self) -> socket.socket:
        """Bind ``127.0.0.1:port`` now (a port in use is :class:`UsageInvalid` naming
        ``--port``); :meth:`serve` binds it itself when this was not called."""
        if self._listener is None:
            listener = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
            listener.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
            try:
                listener.bind((HOST, self._port))
            except OSError as error:
                listener.close()
                raise UsageInvalid(
                    f"cannot listen on {HOST}:{self._port}: {error.strerror};"
                    " choose another --port (0: a free one)",
                    field="--port",
                ) from None
            listener.listen(128)
            listener.setblocking(False)
            self._listener = listener
        return self._listener

    async def serve(self) -> None:
        """Serve until :meth:`stop` (or Ctrl-C with ``signals``); the turns it still runs
        are cancelled, each ending cleanly."""
        listener = self.listen()
        async with anyio.create_task_group() as group:
            self.runner = TurnRunner(self.app, self.hub, group, agent=self._agent)
            guard = Guard(
                application(self.app, self.hub, self.runner, self._prefs),
                token=self.token,
                port=self.port,
            )
            config = uvicorn.Config(
                guard,
                log_level="warning",
                access_log=False,
                lifespan="off",
                timeout_graceful_shutdown=2,
            )
            server = uvicorn.Server(config) if self._signals else _Quiet(config)
            self._server = server
            self._ready.set()
            try:
                await server.serve(sockets=[listener])
            finally:
                group.cancel_scope.cancel()
                listener.close()


class _Quiet(uvicorn.Server):
    """A uvicorn server that leaves the process's signal handlers alone."""

    @contextlib.contextmanager
    def capture_signals(self) -> Iterator[None]:
        yield
