"""What ACP over stdio adds to a turn: per streamed chunk, and per tool call.

The same recorded turns run twice: in process, through the session service with a front
end that only counts events (what any front end costs), and through ``raw acp`` as a
child process, driven by the protocol SDK's client, which counts the updates it
receives. The difference is what the protocol adds: building each update, JSON on the
pipe both ways, the client's parsing, and the answer after the last update.

* chunks: one reply of 64 KiB of text, which the replay provider streams in 16-character
  chunks (4096 ``agent_message_chunk`` updates), against a reply of one chunk;
* tool calls: one reply with 64 ``builtin/read_file`` calls of a small file (a
  ``tool_call`` and a ``tool_call_update`` each), against a reply with none.

Rounds alternate between the two paths; medians of 7 rounds. The client also counts
the updates the long text arrived as: text that comes faster than the pipe takes it is
joined into fewer, longer chunks. Run:
``uv run python benchmarks/bench_acp.py``.
"""

from __future__ import annotations

import json
import os
import statistics
import sys
import tempfile
import time
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any, cast

import anyio
from acp import Client, spawn_agent_process, text_block

from raw_core import App, CallbackFrontEnd

ROUNDS = 7
TEXT = "x" * (64 * 1024)
CHUNKS = len(TEXT) // 16
CALLS = 64
TURNS = ("small", "text", "none", "calls")
READ = {"name": "read_file", "arguments": {"files": [{"path": "notes.txt"}]}}


class Counter:
    """An ACP client that counts the updates it receives."""

    def __init__(self) -> None:
        self.updates = 0

    async def session_update(self, session_id: str, update: Any, **kwargs: Any) -> None:
        self.updates += 1

    def on_connect(self, conn: Any) -> None:
        pass


def _recording(folder: Path) -> Path:
    """The replies of four turns of one session: a short text, a long text, a text, and
    16 calls followed by a text."""
    replies: list[dict[str, Any]] = [
        {"text": "ok"},
        {"text": TEXT},
        {"text": "none", "tool_calls": []},
        {"text": "calls", "tool_calls": [READ] * CALLS},
        {"text": "done"},
    ]
    path = folder / "recording.jsonl"
    path.write_text("".join(json.dumps(reply) + "\n" for reply in replies))
    return path


def _config(folder: Path, recording: Path) -> Path:
    config = folder / "raw.json"
    config.write_text(
        json.dumps(
            {
                "models": {"rec": {"provider": "replay", "model": str(recording)}},
                "agents": {"coder": {"model": "rec", "tools": {"use": ["builtin/read_file"]}}},
            }
        )
    )
    return config


async def _timed(run: Callable[[], Awaitable[Any]]) -> float:
    start = time.perf_counter()
    await run()
    return time.perf_counter() - start


async def in_process(config: Path, work: Path, store: Path) -> dict[str, float]:
    """The four turns through the session service; seconds each."""
    events = 0

    def count(event: Any) -> None:
        nonlocal events
        events += 1

    times: dict[str, float] = {}
    front_end = CallbackFrontEnd(on_event=count)
    async with (
        App.open(config, store_dir=store) as app,
        app.open_session(front_end=front_end, cwd=work) as session,
    ):
        for name in TURNS:
            times[name] = await _timed(lambda: session.run_turn("go"))
    return times


async def over_acp(config: Path, work: Path, env: dict[str, str]) -> dict[str, float]:
    """The four turns through ``raw acp`` and the SDK's client; seconds each."""
    client = Counter()
    times: dict[str, float] = {}
    argv = [sys.executable, "-m", "raw_core", "acp", "--config", str(config)]
    async with spawn_agent_process(cast(Client, client), *argv, env=env, cwd=work) as (conn, _):
        await conn.initialize(protocol_version=1)
        session = await conn.new_session(cwd=str(work), mcp_servers=[])
        for name in TURNS:
            before = client.updates
            times[name] = await _timed(
                lambda: conn.prompt(session_id=session.session_id, prompt=[text_block("go")])
            )
            times[f"{name} updates"] = client.updates - before
    return times


async def main() -> None:
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp)
        work = folder / "work"
        work.mkdir()
        (work / "notes.txt").write_text("remember the milk\n")
        recording = _recording(folder)
        config = _config(folder, recording)
        env = {**os.environ, "XDG_STATE_HOME": str(folder / "state")}
        # A session's replay provider plays the recording from its start: the four turns
        # of each round are one session.
        local: list[dict[str, float]] = []
        remote: list[dict[str, float]] = []
        for _ in range(ROUNDS):
            local.append(await in_process(config, work, folder / "store"))
            remote.append(await over_acp(config, work, env))

    def median(rounds: list[dict[str, float]], name: str) -> float:
        return statistics.median(r[name] for r in rounds)

    chunk_local = (median(local, "text") - median(local, "small")) / CHUNKS * 1e6
    chunk_acp = (median(remote, "text") - median(remote, "small")) / CHUNKS * 1e6
    call_local = (median(local, "calls") - median(local, "none")) / CALLS * 1e6
    call_acp = (median(remote, "calls") - median(remote, "none")) / CALLS * 1e6
    print(f"medians of {ROUNDS} rounds, µs")
    sent = median(remote, "text updates")
    print(f"the {CHUNKS} chunks of the long text reached the client as {sent:.0f} updates")
    print("| per | in process | over ACP (stdio) | ACP's overhead |")
    print("| --- | --- | --- | --- |")
    print(
        f"| streamed chunk ({CHUNKS} in a turn) | {chunk_local:.1f} | {chunk_acp:.1f}"
        f" | {chunk_acp - chunk_local:.1f} |"
    )
    print(
        f"| tool call ({CALLS} in a turn) | {call_local:.0f} | {call_acp:.0f}"
        f" | {call_acp - call_local:.0f} |"
    )
    print(
        f"one update message (a call sends two): {(call_acp - call_local) / 2:.0f} µs of"
        " ACP's overhead"
    )


if __name__ == "__main__":
    anyio.run(main)
