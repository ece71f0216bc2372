"""The event stream's state comes first: a live event a turn publishes while a stream
opens never reaches the browser before that stream's ``status`` and ``requests``."""

from __future__ import annotations

import json
from collections.abc import MutableMapping
from pathlib import Path
from typing import Any

import anyio
import pytest

from raw_core.app import App
from raw_dashboard import Hub
from raw_dashboard.live import TurnRunner
from raw_dashboard.stream import EventStream
from tests.dashboard.project import make_project

WAIT = 30.0


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


@pytest.mark.anyio
async def test_a_live_event_published_as_the_stream_opens_comes_after_its_state(
    tmp_path: Path,
) -> None:
    config = make_project(tmp_path / "project")
    async with App.open(config, store_dir=tmp_path / "state") as app:
        async with app.open_session(None) as session:
            session_id = session.id
        hub = Hub()
        received: list[dict[str, Any]] = []
        three = anyio.Event()

        async def send(message: MutableMapping[str, Any]) -> None:
            if message["type"] == "http.response.start":
                # a running turn's event, published while the stream is still opening
                hub.publish(session_id, {"type": "live", "event": {"type": "text_delta"}})
            body = message.get("body", b"")
            if body.startswith(b"data: "):
                received.append(json.loads(body.removeprefix(b"data: ")))
                if len(received) == 3:
                    three.set()

        async def receive() -> dict[str, Any]:
            await three.wait()
            return {"type": "http.disconnect"}

        async with anyio.create_task_group() as group:
            runner = TurnRunner(app, hub, group, agent=None)
            stream = EventStream(app, hub, runner, session_id, "")
            with anyio.fail_after(WAIT):
                await stream({"type": "http"}, receive, send)
    assert [event["type"] for event in received[:2]] == ["status", "requests"]
