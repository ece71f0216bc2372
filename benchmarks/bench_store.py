"""Session store: committed messages per second, and the cost of a page at depth.

Writes go through the public sync API (``SessionWriter.append``), WAL with
``synchronous=NORMAL``, on a real file:

* one commit per message;
* one commit per 10-message turn (user, assistant + tool call, ~1 KiB tool result, ...);
* the same, plus ``end_turn()`` (the WAL synced: the turn is safe from power loss).

The same through the async ``SqliteBackend`` (appends inline on the event loop, ``end_turn``
in a worker thread), and what one passive checkpoint of a WAL at the 4 MiB limit costs
(``end_turn`` runs it off the loop once the WAL passes it).

Then one session of 1,000,100 short display items, and the time to read one page of 100
items at depth 1,000 and at depth 1,000,000 (keyset paging: the two should match).

Last, why new files use 2 KiB pages: the cost of a 50-step turn as the agent loop writes it
(an assistant message with a tool call, then its result: two commits per step, then
``end_turn``) in new stores made with each page size, for results of 150 B to 30 KB.

Run: ``uv run python benchmarks/bench_store.py [DIR]`` (default: a temporary folder; the
deep session needs about 100 MB there).
"""

from __future__ import annotations

import sqlite3
import statistics
import sys
import tempfile
import time
from pathlib import Path

import anyio

from raw_core.sessions.sqlite import (
    AssistantMessage,
    Message,
    SessionStore,
    SqliteBackend,
    TextBlock,
    ToolCall,
    ToolResultMessage,
    UserMessage,
    _schema,
)
from raw_core.sessions.sqlite.entries import encode_entry

SINGLE_COMMITS = 5_000
TURNS = 1_000
CHECKPOINTED_TURNS = 300
DEPTH = 1_000_000
PAGE = 100
READS = 200


def turn(index: int) -> list[Message]:
    """Ten messages shaped like a coding turn: a question, four tool round trips, an answer."""
    messages: list[Message] = [UserMessage.from_text(f"turn {index}: " + "please look " * 16)]
    for step in range(4):
        call_id = f"call_{index}_{step}"
        arguments = f'{{"path": "src/module_{step}.py"}}'
        messages.append(
            AssistantMessage(
                text="Reading the file.",
                tool_calls=(ToolCall(id=call_id, name="read_file", arguments=arguments),),
            )
        )
        messages.append(
            ToolResultMessage(
                tool_call_id=call_id,
                status="ok",
                content=(TextBlock(text="line of code\n" * 80),),
            )
        )
    messages.append(AssistantMessage(text="Done: " + "explanation " * 20))
    return messages


def rate(count: int, seconds: float) -> str:
    return f"{count / seconds:,.0f} messages/s"


def bench_commits(store: SessionStore) -> list[tuple[str, str]]:
    template = turn(0)
    rows: list[tuple[str, str]] = []

    session = store.create("one commit per message")
    with store.open_writer(session.id) as writer:
        started = time.perf_counter()
        for index in range(SINGLE_COMMITS):
            writer.append([template[index % len(template)]])
        elapsed = time.perf_counter() - started
    rows.append(("one commit per message", rate(SINGLE_COMMITS, elapsed)))

    session = store.create("one commit per turn")
    turns = [turn(index) for index in range(TURNS)]
    with store.open_writer(session.id) as writer:
        started = time.perf_counter()
        for messages in turns:
            writer.append(messages)
        elapsed = time.perf_counter() - started
    rows.append(("one commit per 10-message turn", rate(TURNS * 10, elapsed)))

    session = store.create("one commit and a checkpoint per turn")
    with store.open_writer(session.id) as writer:
        writer.end_turn()  # checkpoints what the runs above left in the WAL, untimed
        started = time.perf_counter()
        for messages in turns[:CHECKPOINTED_TURNS]:
            writer.append(messages)
            writer.end_turn()
        elapsed = time.perf_counter() - started
    rows.append(
        ("one commit + end_turn (WAL synced) per turn", rate(CHECKPOINTED_TURNS * 10, elapsed))
    )
    return rows


async def _backend_commits(folder: Path) -> list[tuple[str, str]]:
    template = turn(0)
    turns = [turn(index) for index in range(CHECKPOINTED_TURNS)]
    rows: list[tuple[str, str]] = []
    async with await SqliteBackend.open(folder) as backend:
        session = await backend.create(title="backend: one commit per message")
        async with backend.open_writer(session.id) as writer:
            started = time.perf_counter()
            for index in range(SINGLE_COMMITS):
                await writer.append([template[index % len(template)]])
            elapsed = time.perf_counter() - started
        rows.append(("SqliteBackend: one commit per message", rate(SINGLE_COMMITS, elapsed)))
        session = await backend.create(title="backend: a turn and end_turn")
        async with backend.open_writer(session.id) as writer:
            await writer.end_turn()  # the WAL left by the run above, untimed
            started = time.perf_counter()
            for messages in turns:
                await writer.append(messages)
                await writer.end_turn()
            elapsed = time.perf_counter() - started
        rows.append(
            (
                "SqliteBackend: one commit + end_turn per turn",
                rate(CHECKPOINTED_TURNS * 10, elapsed),
            )
        )
    return rows


def bench_backend(folder: Path) -> list[tuple[str, str]]:
    return anyio.run(_backend_commits, folder)


def bench_checkpoint(folder: Path) -> list[tuple[str, str]]:
    """ms for one passive checkpoint of a WAL just past the 4 MiB limit."""
    from raw_core.sessions.sqlite._sqlite import WAL_LIMIT

    timings: list[float] = []
    for run in range(5):
        with SessionStore.open(folder / f"ckpt{run}") as store:
            session = store.create()
            with store.open_writer(session.id) as writer:
                wal = Path(f"{store.path}-wal")
                while not wal.exists() or wal.stat().st_size <= WAL_LIMIT:
                    writer.append(turn(0))
                connection = sqlite3.connect(store.path, isolation_level=None)
                started = time.perf_counter()
                connection.execute("PRAGMA wal_checkpoint(PASSIVE)").fetchall()
                timings.append(time.perf_counter() - started)
                connection.close()
    return [
        (
            f"one passive checkpoint of a {WAL_LIMIT // 2**20} MiB WAL (off the loop)",
            f"{statistics.median(timings) * 1000:.1f} ms",
        )
    ]


def median_read_ms(store: SessionStore, session_id: str, cursor: str) -> float:
    reader = store.open_reader(session_id)
    timings: list[float] = []
    for _ in range(READS):
        started = time.perf_counter()
        page = reader.page_display(cursor, limit=PAGE)
        timings.append(time.perf_counter() - started)
        assert len(page.items) == PAGE
    return statistics.median(timings) * 1000


def bench_depth(store: SessionStore) -> list[tuple[str, str]]:
    session = store.create("deep")
    batch = 10_000
    started = time.perf_counter()
    with store.open_writer(session.id) as writer:
        writer.append(UserMessage.from_text(f"message {i}") for i in range(1_000))
        at_thousand = writer.tail_cursor()
        for start in range(1_000, DEPTH, batch):
            writer.append(
                UserMessage.from_text(f"message {i}") for i in range(start, start + batch)
            )
        at_million = writer.tail_cursor()
        writer.append(UserMessage.from_text(f"message {i}") for i in range(DEPTH, DEPTH + PAGE))
        writer.end_turn()
    built = time.perf_counter() - started
    return [
        (
            f"build the deep session ({DEPTH + PAGE:,} items, batches of {batch:,})",
            f"{built:.1f} s",
        ),
        (
            f"read one page of {PAGE} at depth 1,000",
            f"{median_read_ms(store, session.id, at_thousand):.3f} ms",
        ),
        (
            f"read one page of {PAGE} at depth 1,000,000",
            f"{median_read_ms(store, session.id, at_million):.3f} ms",
        ),
    ]


PAGE_SIZES = (1024, 2048, 4096, 8192)
RESULT_SIZES = (150, 2_000, 8_000, 30_000)
STEPS = 50


def turn_us_per_step(folder: Path, result_bytes: int) -> float:
    """µs per step of one 50-step turn in a new store in ``folder``."""
    call = AssistantMessage(
        tool_calls=(ToolCall(id="call_1", name="read_file", arguments='{"path": "a.py"}'),)
    )
    result = ToolResultMessage(
        tool_call_id="call_1", status="ok", content=(TextBlock(text="x" * result_bytes),)
    )
    with SessionStore.open(folder) as store, store.open_writer(store.create().id) as writer:
        started = time.perf_counter()
        for _ in range(STEPS):
            writer.append([call])
            writer.append([result])
        writer.end_turn()
        return (time.perf_counter() - started) / STEPS * 1e6


def bench_page_sizes(parent: Path) -> list[tuple[str, ...]]:
    chosen = _schema.SQLITE_PAGE_SIZE
    rows: list[tuple[str, ...]] = []
    try:
        for result_bytes in RESULT_SIZES:
            cells = [f"{result_bytes:,} B"]
            for page_size in PAGE_SIZES:
                _schema.SQLITE_PAGE_SIZE = page_size  # what the next new file is made with
                runs = [
                    turn_us_per_step(parent / f"p{page_size}-{result_bytes}-{run}", result_bytes)
                    for run in range(7)
                ]
                cells.append(f"{statistics.median(runs):.1f}")
            rows.append(tuple(cells))
    finally:
        _schema.SQLITE_PAGE_SIZE = chosen
    return rows


def main() -> None:
    parent = sys.argv[1] if len(sys.argv) > 1 else None
    with (
        tempfile.TemporaryDirectory(dir=parent) as folder,
        SessionStore.open(Path(folder) / "state") as store,
    ):
        rows = bench_commits(store)
        rows += bench_backend(Path(folder) / "backend")
        rows += bench_checkpoint(Path(folder))
        rows += bench_depth(store)
        size = store.path.stat().st_size / 1e6
        pages = bench_page_sizes(Path(folder))
    print(f"Session store on {folder} ({size:.0f} MB at the end)")
    sizes = [len(encode_entry(message)[2].encode()) for message in turn(0)]
    deep = len(encode_entry(UserMessage.from_text(f"message {DEPTH}"))[2].encode())
    print(
        f"messages committed: the 10 of a turn, {min(sizes):,}-{max(sizes):,} bytes each as"
        f" stored (JSON), {sum(sizes) / len(sizes):,.0f} on average; the deep session's"
        f" pages: user messages of about {deep} bytes\n"
    )
    print("| measure | result |")
    print("| --- | --- |")
    for label, value in rows:
        print(f"| {label} | {value} |")
    print(
        f"\nµs per step of a {STEPS}-step turn (two commits a step, then end_turn), new stores:\n"
    )
    print("| result size | " + " | ".join(f"{size} B pages" for size in PAGE_SIZES) + " |")
    print("| --- |" + " --- |" * len(PAGE_SIZES))
    for cells in pages:
        print("| " + " | ".join(cells) + " |")


if __name__ == "__main__":
    main()
