"""One real ``raw dashboard`` process for the dashboard's tests, and plain HTTP to it.

The server is started once per test session (``--port 0 --no-open``) on the project of
:mod:`tests.dashboard.project`, with raw's state folder (its session store and the
preferences file) in a temporary folder; the tests talk to it over real HTTP on
127.0.0.1 with the standard library's client.
"""

from __future__ import annotations

import http.client
import json
import os
import select
import signal
import subprocess
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import attrs
import pytest

from tests.conftest import raw_script
from tests.dashboard.project import make_project


@attrs.frozen(kw_only=True)
class Reply:
    status: int
    headers: dict[str, str]
    body: Any


@attrs.define(kw_only=True)
class Server:
    """The running dashboard: its URL (with the token), port, token and folders."""

    url: str
    port: int
    token: str
    root: Path
    state: Path
    env: dict[str, str]

    @property
    def origin(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def request(
        self,
        method: str,
        path: str,
        body: Any = None,
        *,
        auth: bool = True,
        headers: dict[str, str] | None = None,
        data: bytes | None = None,
    ) -> Reply:
        """One request; ``auth`` sends the cookie, and a write its own Origin; ``data``:
        these bytes as the body instead of ``body`` as JSON."""
        sent = {"Host": f"127.0.0.1:{self.port}"}
        if auth:
            sent["Cookie"] = f"raw_dashboard={self.token}"
            if method not in ("GET", "HEAD"):
                sent["Origin"] = self.origin
        sent.update(headers or {})
        if data is None and body is not None:
            data = json.dumps(body).encode()
        if data is not None:
            sent["Content-Type"] = "application/json"
        connection = http.client.HTTPConnection("127.0.0.1", self.port, timeout=30)
        try:
            connection.request(method, path, body=data, headers=sent)
            response = connection.getresponse()
            raw = response.read()
            found = {k.lower(): v for k, v in response.getheaders()}
        finally:
            connection.close()
        parsed: Any = raw
        if found.get("content-type", "").startswith("application/json"):
            parsed = json.loads(raw)
        return Reply(status=response.status, headers=found, body=parsed)

    def events(self, session_id: str, cursor: str = "") -> Events:
        """The session's event stream, from ``cursor`` (default: what comes next)."""
        return Events(self, f"/api/sessions/{session_id}/events?cursor={cursor}")

    def raw(self, *args: str, timeout: float = 60) -> subprocess.CompletedProcess[str]:
        """``raw ARGS`` beside the project folder (whose config it names with ``--config``)
        with the same store: the terminal."""
        return subprocess.run(
            [raw_script(), *args],
            cwd=self.root.parent,
            env=self.env,
            capture_output=True,
            text=True,
            timeout=timeout,
            stdin=subprocess.DEVNULL,
        )


class Events:
    """A server-sent event stream read line by line, each wait bounded."""

    def __init__(self, server: Server, path: str) -> None:
        self._connection = http.client.HTTPConnection("127.0.0.1", server.port, timeout=30)
        self._connection.request(
            "GET",
            path,
            headers={
                "Host": f"127.0.0.1:{server.port}",
                "Cookie": f"raw_dashboard={server.token}",
                "Accept": "text/event-stream",
            },
        )
        self.response = self._connection.getresponse()
        self.seen: list[dict[str, Any]] = []

    def next(self) -> dict[str, Any]:
        """The next event (30 s at most)."""
        while True:
            line = self.response.readline()
            if not line:
                raise AssertionError("the event stream ended")
            if line.startswith(b"data: "):
                event: dict[str, Any] = json.loads(line[6:])
                self.seen.append(event)
                return event

    def until(self, wanted: Callable[[dict[str, Any]], bool]) -> dict[str, Any]:
        """Read events until one is ``wanted``; that one."""
        for _ in range(10_000):
            event = self.next()
            if wanted(event):
                return event
        raise AssertionError("the wanted event never came")

    def close(self) -> None:
        self._connection.close()


def live(kind: str) -> Callable[[dict[str, Any]], bool]:
    """Whether an event is the live loop event ``kind``."""
    return lambda event: event["type"] == "live" and event["event"]["type"] == kind


@pytest.fixture(scope="session")
def dashboard(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Server]:
    """``raw dashboard --port 0 --no-open`` on the test project, for the whole session."""
    root = tmp_path_factory.mktemp("dashboard")
    project = root / "project"
    project.mkdir()
    config = make_project(project)
    state = root / "state"
    log = (root / "server.log").open("wb")
    env = {**os.environ, "XDG_STATE_HOME": str(state), "NO_COLOR": "1"}
    process = subprocess.Popen(
        [raw_script(), "dashboard", "--port", "0", "--no-open", "--config", str(config)],
        cwd=project,
        env=env,
        stdout=subprocess.PIPE,
        stderr=log,
        stdin=subprocess.DEVNULL,
        start_new_session=True,
    )
    try:
        assert process.stdout is not None
        ready, _, _ = select.select([process.stdout], [], [], 60)
        assert ready, "raw dashboard printed no URL within 60 s"
        url = process.stdout.readline().decode().strip()
        assert url.startswith("http://127.0.0.1:"), (url, (root / "server.log").read_text())
        port = int(url.split(":")[2].split("/")[0])
        token = url.split("token=", 1)[1]
        yield Server(url=url, port=port, token=token, root=project, state=state, env=env)
    finally:
        process.send_signal(signal.SIGINT)
        try:
            process.wait(timeout=20)
        except subprocess.TimeoutExpired:
            os.killpg(process.pid, signal.SIGKILL)
            process.wait()
        assert process.stdout is not None
        process.stdout.close()
        log.close()


@pytest.hookimpl(wrapper=True, tryfirst=True)
def pytest_runtest_makereport(item: pytest.Item, call: pytest.CallInfo[None]) -> Any:
    """Keep each phase's report on the test, so a browser test knows it failed."""
    report = yield
    setattr(item, "report_" + report.when, report)
    return report
