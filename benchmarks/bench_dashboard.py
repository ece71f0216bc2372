"""The dashboard's live path: from a text delta in the loop to its arrival at SSE clients.

One dashboard server (in this process, on a temporary store) runs turns of a scripted model
that streams 200 text deltas, 5 ms apart. The clients are in another process (so they do
not share the server's event loop): N server-sent-event connections to the session. Each
delta is stamped (CLOCK_MONOTONIC, shared by both processes) when the loop hands it to the
dashboard's front end; each client notes when it arrives. Printed: the delay's median, 95th
percentile and maximum over every delta and client, for N = 1 ... 800, and the largest N
whose 95th percentile stays under 50 ms.

    uv run python benchmarks/bench_dashboard.py
"""

from __future__ import annotations

import json
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import anyio

DELTAS = 200
GAP = 0.005
COUNTS = (1, 10, 50, 100, 200, 400, 800)
LIMIT_MS = 50.0


def now_ns() -> int:
    return time.clock_gettime_ns(time.CLOCK_MONOTONIC)


# --- the clients (a process of their own) ---------------------------------------------


async def client(port: int, token: str, session: str, delays: list[float], ready: Any) -> None:
    stream = await anyio.connect_tcp("127.0.0.1", port)
    async with stream:
        request = (
            f"GET /api/sessions/{session}/events HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\n"
            f"Cookie: raw_dashboard={token}\r\nAccept: text/event-stream\r\n\r\n"
        )
        await stream.send(request.encode())
        buffer = b""
        connected = False
        while True:
            buffer += await stream.receive()
            *lines, buffer = buffer.split(b"\n")
            for line in lines:
                if not line.startswith(b"data: "):
                    continue
                event = json.loads(line[6:])
                if event["type"] == "status" and not connected:
                    connected = True
                    ready()
                if event["type"] != "live":
                    continue
                if event["event"]["type"] == "text_delta" and "t" in event:
                    delays.append((now_ns() - event["t"]) / 1e6)
                elif event["event"]["type"] == "turn_ended":
                    return


async def clients(count: int, port: int, token: str, session: str) -> None:
    delays: list[float] = []
    connected = [0]

    def ready() -> None:
        connected[0] += 1
        if connected[0] == count:
            print("ready", flush=True)

    async with anyio.create_task_group() as group:
        for _ in range(count):
            group.start_soon(client, port, token, session, delays, ready)
    print(json.dumps(delays), flush=True)


# --- the server -------------------------------------------------------------------------


def percentile(values: list[float], share: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(share * len(ordered)))]


async def measure() -> None:
    from raw_core import App, Reply, ScriptedProvider
    from raw_dashboard import Dashboard

    root = Path(tempfile.mkdtemp(prefix="raw-bench-dashboard-"))
    (root / "raw.json").write_text(json.dumps({"agents": {"a": {"tools": {"use": []}}}}))
    replies = [Reply(text="hi")] + [
        Reply(text="x" * 16 * DELTAS, chunk=16, delay=GAP) for _ in COUNTS
    ]
    provider = ScriptedProvider(replies)
    async with App.open(root / "raw.json", store_dir=root / "store", provider=provider) as app:
        server = Dashboard(app, preferences=root / "prefs.json")
        publish = server.hub.publish

        def stamped(session_id: str, event: dict[str, Any]) -> None:
            if event.get("type") == "live" and event["event"].get("type") == "text_delta":
                event = {**event, "t": now_ns()}
            publish(session_id, event)

        server.hub.publish = stamped  # type: ignore[method-assign]
        async with anyio.create_task_group() as group:
            group.start_soon(server.serve)
            await server.started()
            assert server.runner is not None
            session = await server.runner.start(None, "warm up")
            await server.runner.wait(session)
            print(f"{DELTAS} deltas {GAP * 1000:g} ms apart per turn; delay in ms")
            print(f"{'clients':>8} {'median':>8} {'p95':>8} {'max':>8}")
            best = 0
            for count in COUNTS:
                process = await anyio.open_process(
                    [sys.executable, __file__, "--clients", str(count), str(server.port),
                     server.token, session],
                    stderr=None,
                )  # fmt: skip
                assert process.stdout is not None
                lines = process.stdout
                text = b""
                while b"ready\n" not in text:
                    text += await lines.receive()
                await server.runner.start(session, "go")
                async for chunk in lines:
                    text += chunk
                await process.wait()
                delays = json.loads(text.split(b"ready\n", 1)[1])
                p95 = percentile(delays, 0.95)
                print(f"{count:>8} {percentile(delays, 0.5):>8.2f} {p95:>8.2f} {max(delays):>8.2f}")
                if p95 < LIMIT_MS:
                    best = count
                await server.runner.wait(session)
            print(f"most clients with a 95th percentile under {LIMIT_MS:g} ms: {best}")
            server.stop()


if __name__ == "__main__":
    if sys.argv[1:2] == ["--clients"]:
        count, port, token, session = sys.argv[2:6]
        anyio.run(clients, int(count), int(port), token, session)
    else:
        anyio.run(measure)
