"""The PostgreSQL session backend beside the SQLite one, in the same run on the same disk.

Starts a throwaway PostgreSQL server (``raw_store_postgres.testing``: initdb into a
temporary folder, a free loopback port, the socket in that folder) with the server's
default durability (``fsync`` and ``synchronous_commit`` on: every commit is flushed before
it returns), and a SQLite store in another temporary folder (WAL, ``synchronous=NORMAL``:
a commit survives a crash of raw, a turn's ``end_turn`` survives a power loss). Then, for
each backend:

* **one writer**: commits per second, one ``append`` of one message per commit;
* **16 writers**: 16 processes, each the writer of a session of its own, appending one
  message per commit at once; commits per second over all of them;
* **page at depth**: one page of 100 display items read at depth 100,000 of a session
  (and at depth 100, to compare); median of 200 reads;
* **wake-up**: a reader tailing a session with ``wait_for_items`` on another backend object
  (other connections, as another process has), and the time from the writer's ``append``
  call to the reader's return; median and 90th percentile of 100 commits.

Run: ``uv run python benchmarks/bench_postgres.py`` (about two minutes; needs PostgreSQL's
``initdb`` and ``pg_ctl``).
"""

from __future__ import annotations

import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

import anyio
import anyio.to_thread

from raw_core.sessions.backend import SessionBackend
from raw_core.sessions.messages import UserMessage
from raw_core.sessions.sqlite import SqliteBackend
from raw_core.sessions.sqlite.entries import encode_entry
from raw_store_postgres import PostgresBackend
from raw_store_postgres.testing import ThrowawayServer

ONE_WRITER_COMMITS = 2_000
WRITERS = 16
COMMITS_PER_WRITER = 250
DEPTH = 100_000
PAGE = 100
READS = 200
WAKEUPS = 100
ONLY = {"one", "many", "page", "wake"}  # ``--only one,many`` runs fewer

Opener = Callable[[], Awaitable[SessionBackend]]


def message(index: int) -> UserMessage:
    return UserMessage.from_text(f"message {index}: " + "some words of a turn " * 4)


async def one_writer(open_backend: Opener) -> float:
    backend = await open_backend()
    try:
        session = await backend.create()
        async with backend.open_writer(session.id) as writer:
            await writer.append([message(-1)])  # warm: statements prepared, pages cached
            start = time.perf_counter()
            for index in range(ONE_WRITER_COMMITS):
                await writer.append([message(index)])
            elapsed = time.perf_counter() - start
    finally:
        await backend.aclose()
    return ONE_WRITER_COMMITS / elapsed


# --- 16 writer processes ------------------------------------------------------------------


async def child(kind: str, where: str, session_id: str, count: int) -> None:
    """One writer process: ready, wait for the word, append ``count`` messages."""
    backend: SessionBackend
    if kind == "postgres":
        backend = await PostgresBackend.open(where, pool_size=1)
    else:
        backend = await SqliteBackend.open(where, busy_timeout=30.0)
    try:
        async with backend.open_writer(session_id) as writer:
            await writer.append([message(-1)])
            print("ready", flush=True)
            await anyio.to_thread.run_sync(sys.stdin.readline)
            start = time.perf_counter()
            for index in range(count):
                await writer.append([message(index)])
            print(json.dumps({"seconds": time.perf_counter() - start}), flush=True)
    finally:
        await backend.aclose()


def spawn(kind: str, where: str, session_id: str) -> subprocess.Popen[str]:
    return subprocess.Popen(
        [sys.executable, __file__, "--child", kind, where, session_id, str(COMMITS_PER_WRITER)],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        text=True,
    )


async def many_writers(kind: str, where: str, open_backend: Opener) -> float:
    backend = await open_backend()
    try:
        sessions = [(await backend.create()).id for _ in range(WRITERS)]
    finally:
        await backend.aclose()
    processes = [spawn(kind, where, sid) for sid in sessions]
    try:
        for process in processes:
            assert process.stdout is not None
            line = await anyio.to_thread.run_sync(process.stdout.readline)
            assert line.strip() == "ready", line
        start = time.perf_counter()
        for process in processes:
            assert process.stdin is not None
            process.stdin.write("\n")
            process.stdin.flush()
        for process in processes:
            assert process.stdout is not None
            await anyio.to_thread.run_sync(process.stdout.readline)
        elapsed = time.perf_counter() - start
    finally:
        for process in processes:
            for stream in (process.stdin, process.stdout):
                if stream is not None:
                    stream.close()
            process.wait(60)
    return WRITERS * COMMITS_PER_WRITER / elapsed


# --- a page at depth ------------------------------------------------------------------------


async def page_at_depth(open_backend: Opener) -> tuple[float, float]:
    backend = await open_backend()
    try:
        session = await backend.create()
        async with backend.open_writer(session.id) as writer:
            batch = 1_000
            for start in range(0, DEPTH + PAGE, batch):
                await writer.append([message(i) for i in range(start, start + batch)])
        shallow = (await backend.page(session.id, limit=PAGE)).next_cursor
        deep_page = await backend.page(session.id, limit=PAGE, newest_first=True)
        assert deep_page.items[0].seq > DEPTH
        # An oldest-first cursor at depth DEPTH: walk there with big pages once.
        cursor: str | None = None
        walked = 0
        while walked < DEPTH:
            page = await backend.page(session.id, cursor, limit=10_000)
            cursor = page.next_cursor
            walked += len(page.items)
        timings = []
        for at in (shallow, cursor):
            times = []
            for _ in range(READS):
                began = time.perf_counter()
                page = await backend.page(session.id, at, limit=PAGE)
                times.append(time.perf_counter() - began)
                assert len(page.items) == PAGE
            timings.append(statistics.median(times) * 1000)
    finally:
        await backend.aclose()
    return timings[0], timings[1]


# --- wake-up delay ------------------------------------------------------------------------


async def follow(
    backend: SessionBackend, session_id: str, tail: str, waiting: anyio.Event, woke: list[float]
) -> None:
    waiting.set()
    await backend.wait_for_items(session_id, tail)
    woke.append(time.perf_counter())


async def wakeup(open_backend: Opener) -> tuple[float, float]:
    writer_side = await open_backend()
    reader_side = await open_backend()
    delays: list[float] = []
    try:
        session = await writer_side.create()
        async with writer_side.open_writer(session.id) as writer:
            for index in range(WAKEUPS + 5):
                tail = await reader_side.tail_cursor(session.id)
                woke: list[float] = []
                async with anyio.create_task_group() as group:
                    waiting = anyio.Event()
                    group.start_soon(follow, reader_side, session.id, tail, waiting, woke)
                    await waiting.wait()
                    await anyio.sleep(0.005)  # let it look once and start to wait
                    began = time.perf_counter()
                    await writer.append([message(index)])
                if index >= 5:  # the first few warm the connections
                    delays.append(woke[0] - began)
    finally:
        await reader_side.aclose()
        await writer_side.aclose()
    delays.sort()
    return statistics.median(delays) * 1000, delays[int(len(delays) * 0.9)] * 1000


def fsyncs_per_second(folder: Path, seconds: float = 1.0) -> float:
    """How many 8 KiB write + fdatasync rounds the disk under ``folder`` does per second:
    what bounds a commit that must reach the disk before it returns."""
    path = folder / "fsync-probe"
    block = b"\0" * 8192
    fd = os.open(path, os.O_WRONLY | os.O_CREAT, 0o600)
    try:
        done = 0
        start = time.perf_counter()
        while time.perf_counter() - start < seconds:
            os.pwrite(fd, block, 0)
            os.fdatasync(fd)
            done += 1
        return done / (time.perf_counter() - start)
    finally:
        os.close(fd)
        path.unlink()


async def measure(name: str, kind: str, where: str, open_backend: Opener) -> dict[str, Any]:
    nothing = float("nan")
    one = many = shallow = deep = median = p90 = nothing
    if "one" in ONLY:
        print(f"{name}: one writer...", file=sys.stderr, flush=True)
        one = await one_writer(open_backend)
    if "many" in ONLY:
        print(f"{name}: {WRITERS} writer processes...", file=sys.stderr, flush=True)
        many = await many_writers(kind, where, open_backend)
    if "page" in ONLY:
        print(f"{name}: a page at depth {DEPTH:,}...", file=sys.stderr, flush=True)
        shallow, deep = await page_at_depth(open_backend)
    if "wake" in ONLY:
        print(f"{name}: wake-ups...", file=sys.stderr, flush=True)
        median, p90 = await wakeup(open_backend)
    return {
        "one": one,
        "many": many,
        "shallow": shallow,
        "deep": deep,
        "wake_median": median,
        "wake_p90": p90,
    }


async def main() -> None:
    with (
        ThrowawayServer.start() as server,
        tempfile.TemporaryDirectory(prefix="raw-bench-sqlite-") as folder,
    ):
        server.psql("CREATE DATABASE bench")
        dsn = server.dsn("bench")
        version = server.psql("SHOW server_version")
        fsyncs = [fsyncs_per_second(Path(folder))]
        results = {
            "PostgreSQL": await measure(
                "PostgreSQL", "postgres", dsn, lambda: PostgresBackend.open(dsn)
            ),
            "SQLite": await measure(
                "SQLite", "sqlite", folder, lambda: SqliteBackend.open(folder, busy_timeout=30.0)
            ),
        }
        fsyncs.append(fsyncs_per_second(Path(folder)))
    print(f"PostgreSQL {version} on a local socket; SQLite in a folder on the same disk")
    stored = len(encode_entry(message(0))[2].encode())
    print(f"every message: one user message of {stored:,} bytes as stored (JSON)")
    print(f"the disk: {fsyncs[0]:,.0f} 8 KiB fdatasync/s before the run, {fsyncs[1]:,.0f} after\n")
    print("| measure | PostgreSQL | SQLite |")
    print("| --- | --- | --- |")
    rows = [
        ("one writer: commits/s", "one", "{:,.0f}"),
        (f"{WRITERS} writer processes, a session each: commits/s", "many", "{:,.0f}"),
        (f"one page of {PAGE} at depth 100", "shallow", "{:.2f} ms"),
        (f"one page of {PAGE} at depth {DEPTH:,}", "deep", "{:.2f} ms"),
        ("wake-up of a tailing reader: median", "wake_median", "{:.2f} ms"),
        ("wake-up of a tailing reader: p90", "wake_p90", "{:.2f} ms"),
    ]
    for label, key, shape in rows:
        cells = [shape.format(results[name][key]) for name in ("PostgreSQL", "SQLite")]
        print(f"| {label} | {cells[0]} | {cells[1]} |")


if __name__ == "__main__":
    if len(sys.argv) > 1 and sys.argv[1] == "--child":
        kind, where, session_id, count = sys.argv[2:6]
        anyio.run(child, kind, where, session_id, int(count))
    else:
        if len(sys.argv) > 2 and sys.argv[1] == "--only":
            ONLY = set(sys.argv[2].split(","))
        anyio.run(main)
