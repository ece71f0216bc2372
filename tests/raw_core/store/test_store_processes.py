"""The store across real processes: killed writers, racing writers, paging while appending."""

from __future__ import annotations

import random
import signal
import sqlite3
import subprocess
import sys
import time
from collections.abc import Iterator
from contextlib import closing
from pathlib import Path

import pytest

from raw_core.sessions.sqlite import SessionStore, TextBlock, UserMessage
from raw_core.sessions.sqlite._schema import FILE_NAME

PROC = Path(__file__).with_name("store_proc.py")
TURN_SIZE = 3


def start(*args: str, stdin: bool = False) -> subprocess.Popen[str]:
    return subprocess.Popen(
        [sys.executable, str(PROC), *args],
        stdin=subprocess.PIPE if stdin else subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )


def line(proc: subprocess.Popen[str]) -> str:
    assert proc.stdout is not None
    text = proc.stdout.readline()
    if not text and proc.stderr is not None:
        pytest.fail(proc.stderr.read())
    return text.strip()


def send(proc: subprocess.Popen[str], text: str | None) -> None:
    """Write ``text`` to the process's stdin, or close it (``None``)."""
    assert proc.stdin is not None
    if text is None:
        proc.stdin.close()
    else:
        proc.stdin.write(text)
        proc.stdin.flush()


def first_text(message: object) -> str:
    assert isinstance(message, UserMessage)
    block = message.content[0]
    assert isinstance(block, TextBlock)
    return block.text


@pytest.fixture
def state(tmp_path: Path) -> Path:
    return tmp_path / "state"


@pytest.fixture
def session_id(state: Path) -> Iterator[str]:
    with SessionStore.open(state) as store:
        yield store.create("shared").id


def read_all(store: SessionStore, session_id: str) -> list[str]:
    reader = store.open_reader(session_id)
    texts: list[str] = []
    cursor: str | None = None
    while True:
        page = reader.page_display(cursor, limit=1000)
        texts.extend(first_text(item.message) for item in page.items)
        cursor = page.next_cursor
        if not page.has_more:
            return texts


def test_a_killed_writer_loses_no_committed_message(state: Path, session_id: str) -> None:
    rng = random.Random(6)
    turns_done = 0
    for _round in range(20):
        with start("writer", str(state), session_id, str(turns_done), str(TURN_SIZE)) as proc:
            reported = [int(line(proc)) for _ in range(rng.randint(1, 25))]
            time.sleep(rng.random() * 0.01)
            proc.send_signal(signal.SIGKILL)
            # Read the rest through the same buffered reader as line() did: it may already
            # hold lines it has not returned, which communicate() (reading the raw pipe)
            # would lose.
            assert proc.stdout is not None
            rest = proc.stdout.read()
            proc.wait()
            assert proc.returncode == -signal.SIGKILL
            reported.extend(int(line) for line in rest.split())

        with closing(sqlite3.connect(state / FILE_NAME)) as raw:
            assert raw.execute("PRAGMA quick_check").fetchone() == ("ok",)
        with SessionStore.open(state) as store:
            texts = read_all(store, session_id)
            context = [first_text(m) for m in store.open_reader(session_id).read_context()]
        assert texts == context
        # whole turns only, in order, and every turn reported committed is there
        assert len(texts) % TURN_SIZE == 0
        turns = len(texts) // TURN_SIZE
        assert texts == [f"t{t}.{i}" for t in range(turns) for i in range(TURN_SIZE)]
        assert reported[-1] < turns <= reported[-1] + 2
        turns_done = turns


def test_of_two_racing_writers_exactly_one_writes(state: Path, session_id: str) -> None:
    for round_ in range(3):
        with (
            start("race", str(state), session_id, f"a{round_}", stdin=True) as first,
            start("race", str(state), session_id, f"b{round_}", stdin=True) as second,
        ):
            procs = (first, second)
            assert [line(proc) for proc in procs] == ["ready", "ready"]
            for proc in procs:
                send(proc, "go\n")
            answers = sorted(line(proc) for proc in procs)
            for proc in procs:
                send(proc, None)
                proc.wait()
        assert answers == ["locked session_locked", "wrote"]
    with SessionStore.open(state) as store:
        texts = read_all(store, session_id)
    assert len(texts) == 3
    assert all(text[0] in "ab" for text in texts)


def test_cursors_page_100k_items_without_gap_or_repeat_while_another_process_appends(
    state: Path, session_id: str
) -> None:
    """The other process appends a batch every 40 pages, and this one waits until it has:
    the session grows while it is paged, every time, whatever the machine's load."""
    fixture = [f"m{i}" for i in range(100_000)]
    batches, batch_size, pages_between = 10, 150, 40
    appended = [f"w{j}" for j in range(batches * batch_size)]
    with SessionStore.open(state) as store:
        with store.open_writer(session_id) as writer:
            writer.append(UserMessage.from_text(text) for text in fixture)  # one transaction
        reader = store.open_reader(session_id)
        with start("appender", str(state), session_id, stdin=True) as proc:
            assert line(proc) == "ready"
            seen: list[str] = []
            cursor: str | None = None
            pages = sent = 0
            while True:
                page = reader.page_display(cursor, limit=250)
                seen.extend(first_text(item.message) for item in page.items)
                assert page.next_cursor is not None
                cursor = page.next_cursor
                pages += 1
                if not page.has_more and sent == batches:
                    break
                if sent < batches and (pages % pages_between == 0 or not page.has_more):
                    send(proc, f"{batch_size}\n")
                    assert line(proc) == "appended"
                    sent += 1
            send(proc, None)
            assert line(proc) == "done"
        # one more page after the writer finished: nothing new, nothing repeated
        last = reader.page_display(cursor, limit=250)
    assert last.items == ()
    assert seen == fixture + appended


def test_another_process_follows_a_live_session_as_it_is_written(
    state: Path, session_id: str
) -> None:
    """The follower (a SqliteBackend in its own process) waits with wait_for_items; each
    append here must wake it before the next one is made."""
    texts = [f"live{i}" for i in range(10)]
    with SessionStore.open(state) as store, start("follow", str(state), session_id, "10") as proc:
        assert line(proc) == "ready"  # its tail cursor is taken: everything after is new
        with store.open_writer(session_id) as writer:
            for text in texts:
                writer.append([UserMessage.from_text(text)])
                assert line(proc) == text
        assert line(proc) == "done"
        assert proc.wait() == 0
