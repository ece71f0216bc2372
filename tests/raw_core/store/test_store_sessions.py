"""Sessions in one process: the two streams, cursors, compaction, expiry, deletion, errors."""

from __future__ import annotations

import base64
import errno
import os
import sqlite3
import subprocess
import sys
import time
from collections.abc import Iterator
from contextlib import closing
from datetime import UTC, datetime, timedelta
from pathlib import Path

import attrs
import pytest

from raw_core.errors import (
    InvalidCursor,
    SessionExpired,
    SessionLocked,
    SessionNotFound,
    StorageFull,
    StoreCorrupt,
    StoreTooNew,
    StoreUnavailable,
)
from raw_core.sessions.backend import SessionState
from raw_core.sessions.sqlite import (
    AssistantMessage,
    JsonBlock,
    Message,
    ProviderPart,
    SessionStore,
    TextBlock,
    ToolCall,
    ToolResultMessage,
    UserMessage,
    VarPlaceholder,
    _rows,
)
from raw_core.sessions.sqlite._schema import MAX_KEY


@pytest.fixture
def store(tmp_path: Path) -> Iterator[SessionStore]:
    with SessionStore.open(tmp_path / "state") as opened:
        yield opened


def raw_connection(store: SessionStore) -> closing[sqlite3.Connection]:
    return closing(sqlite3.connect(store.path, isolation_level=None))


def text(message: Message | None) -> str:
    if isinstance(message, AssistantMessage):
        return message.text
    assert isinstance(message, UserMessage)
    block = message.content[0]
    assert isinstance(block, TextBlock)
    return block.text


def users(*texts: str) -> list[Message]:
    return [UserMessage.from_text(t) for t in texts]


def display_texts(store: SessionStore, session_id: str) -> list[str]:
    page = store.open_reader(session_id).page_display(limit=10_000)
    return [text(item.message) for item in page.items]


def context_texts(store: SessionStore, session_id: str) -> list[str]:
    return [text(m) for m in store.open_reader(session_id).read_context()]


# --- sessions ----------------------------------------------------------------------------


def test_created_sessions_have_stable_ids_and_list_newest_activity_first(
    store: SessionStore,
) -> None:
    first = store.create("first")
    second = store.create("second")
    assert first.id != second.id
    assert len(first.id) == 32
    time.sleep(0.005)
    with store.open_writer(first.id) as writer:
        writer.append(users("hello"))
    listed = store.list_sessions()
    assert [s.id for s in listed] == [first.id, second.id]
    assert [s.title for s in listed] == ["first", "second"]
    assert store.list_sessions(limit=1) == listed[:1]
    assert store.info(second.id) == second


def test_a_new_title_in_the_state_changes_the_title_but_not_the_activity(
    store: SessionStore,
) -> None:
    session = store.create()
    with store.open_writer(session.id) as writer:
        writer.set_session_state(attrs.evolve(writer.session_state(), title="renamed"))
    info = store.info(session.id)
    assert info.title == "renamed"
    assert info.last_activity == session.last_activity


@pytest.mark.parametrize("bad_id", ["0" * 32, "../../etc/passwd", "", "A" * 32, "x" * 1000])
def test_an_unknown_or_malformed_id_is_session_not_found(store: SessionStore, bad_id: str) -> None:
    for call in (store.info, store.open_reader, store.open_writer, store.delete):
        with pytest.raises(SessionNotFound) as caught:
            call(bad_id)
        assert caught.value.code == "session_not_found"
    assert list((store.path.parent / "locks").iterdir()) == []


# --- the two streams ---------------------------------------------------------------------


def test_append_writes_both_streams_and_round_trips_every_message_kind(
    store: SessionStore,
) -> None:
    turn: list[Message] = [
        UserMessage.from_text("what is my key?"),
        AssistantMessage(
            text="Let me look.",
            tool_calls=(ToolCall(id="call_1", name="read_var", arguments='{"name": "KEY"}'),),
            provider_parts=(
                ProviderPart(provider="openai", data='{"type":"reasoning","encrypted":"e30="}'),
            ),
        ),
        ToolResultMessage(
            tool_call_id="call_1",
            status="ok",
            content=(VarPlaceholder(name="KEY"), JsonBlock(json_text='{"n": 1}')),
        ),
        ToolResultMessage(tool_call_id="call_2", status="error", error_code="denied", content=()),
        UserMessage.from_text("lone surrogate \ud800 and ünïcödé"),
    ]
    session = store.create()
    with store.open_writer(session.id) as writer:
        writer.append(turn)
    reader = store.open_reader(session.id)
    assert [item.message for item in reader.page_display().items] == turn
    assert list(reader.read_context()) == turn
    with raw_connection(store) as raw:
        rows = raw.execute("SELECT format, body FROM display ORDER BY seq").fetchall()
    assert {fmt for fmt, _ in rows} == {1}
    assert '{"type":"var_placeholder","name":"KEY"}' in rows[2][1]


def test_appending_nothing_is_a_no_op(store: SessionStore) -> None:
    session = store.create()
    with store.open_writer(session.id) as writer:
        writer.append([])
    assert store.info(session.id).last_activity == session.last_activity
    assert display_texts(store, session.id) == []


def test_appending_a_non_message_is_refused_before_anything_is_written(
    store: SessionStore,
) -> None:
    session = store.create()
    with store.open_writer(session.id) as writer, pytest.raises(TypeError):
        writer.append([UserMessage.from_text("a"), "b"])  # type: ignore[list-item]
    assert display_texts(store, session.id) == []


def test_a_row_of_a_newer_format_is_store_too_new_and_a_broken_row_store_corrupt(
    store: SessionStore,
) -> None:
    session = store.create()
    with store.open_writer(session.id) as writer:
        writer.append(users("a", "b"))
    reader = store.open_reader(session.id)
    with raw_connection(store) as raw:
        raw.execute("UPDATE display SET format = 2 WHERE seq = (SELECT min(seq) FROM display)")
        raw.execute(
            """UPDATE display SET body = '{"role":"user"}'"""
            " WHERE seq = (SELECT max(seq) FROM display)"
        )
    with pytest.raises(StoreTooNew) as newer:
        reader.read_context()
    assert newer.value.code == "store_too_new"
    with pytest.raises(StoreCorrupt) as broken:
        reader.page_display(limit=1, newest_first=True)
    assert broken.value.code == "store_corrupt"
    assert "$.content" in broken.value.message


# --- cursors -----------------------------------------------------------------------------


def test_pages_oldest_first_continue_after_the_session_grows(store: SessionStore) -> None:
    session = store.create()
    with store.open_writer(session.id) as writer:
        writer.append(users(*(f"m{i}" for i in range(5))))
        reader = store.open_reader(session.id)
        first = reader.page_display(limit=3)
        assert [text(i.message) for i in first.items] == ["m0", "m1", "m2"]
        assert first.has_more
        second = reader.page_display(first.next_cursor, limit=3)
        assert [text(i.message) for i in second.items] == ["m3", "m4"]
        assert not second.has_more
        end = reader.page_display(second.next_cursor, limit=3)
        assert end.items == ()
        assert end.next_cursor == second.next_cursor
        writer.append(users("m5", "m6"))
        later = reader.page_display(end.next_cursor, limit=3)
        assert [text(i.message) for i in later.items] == ["m5", "m6"]
        assert [i.seq for i in later.items] == sorted(i.seq for i in later.items)


def test_pages_newest_first_end_at_the_first_item(store: SessionStore) -> None:
    session = store.create()
    with store.open_writer(session.id) as writer:
        writer.append(users(*(f"m{i}" for i in range(5))))
    reader = store.open_reader(session.id)
    seen: list[str] = []
    cursor: str | None = None
    while True:
        page = reader.page_display(cursor, limit=2, newest_first=True)
        seen.extend(text(i.message) for i in page.items)
        if page.next_cursor is None:
            break
        cursor = page.next_cursor
    assert seen == ["m4", "m3", "m2", "m1", "m0"]


def test_a_tail_cursor_pages_only_what_is_appended_later(store: SessionStore) -> None:
    session = store.create()
    with store.open_writer(session.id) as writer:
        writer.append(users("old"))
        tail = writer.tail_cursor()
        writer.append(users("new"))
    page = store.open_reader(session.id).page_display(tail)
    assert [text(i.message) for i in page.items] == ["new"]


def test_sessions_do_not_share_display_history(store: SessionStore) -> None:
    one, two = store.create(), store.create()
    with store.open_writer(one.id) as a, store.open_writer(two.id) as b:
        a.append(users("a1"))
        b.append(users("b1"))
        a.append(users("a2"))
    assert display_texts(store, one.id) == ["a1", "a2"]
    assert display_texts(store, two.id) == ["b1"]


@pytest.mark.parametrize(
    "cursor",
    [
        "",
        "not a cursor",
        "!!!",
        "2:f:-1:{id}",
        f"2:f:{2**32 + 1}:{{id}}",
        "3:f:1:{id}",
        "1:f:5:{id}",
        "2:f",
    ],
    ids=[
        "empty",
        "words",
        "not-base64",
        "negative",
        "past-the-end",
        "unknown-version",
        "first-layout",
        "too-short",
    ],
)
def test_a_string_that_is_not_a_cursor_is_refused(store: SessionStore, cursor: str) -> None:
    reader = store.open_reader(store.create().id)
    if ":" in cursor:  # the form of a cursor, with this session's id
        text = cursor.format(id=reader.session_id).encode()
        cursor = base64.urlsafe_b64encode(text).decode().rstrip("=")
    with pytest.raises(InvalidCursor) as caught:
        reader.page_display(cursor)
    assert caught.value.code == "invalid_cursor"
    assert caught.value.field == "cursor"


def test_a_cursor_of_another_session_or_direction_is_refused(store: SessionStore) -> None:
    one, two = store.create(), store.create()
    cursor = store.open_reader(one.id).page_display().next_cursor
    with pytest.raises(InvalidCursor, match="cursor of session") as other:
        store.open_reader(two.id).page_display(cursor)
    assert other.value.field == "cursor"
    with pytest.raises(InvalidCursor, match="pages newest first, found one that pages oldest"):
        store.open_reader(one.id).page_display(cursor, newest_first=True)


@pytest.mark.parametrize("limit", [0, -1, 10_001])
def test_page_size_is_bounded(store: SessionStore, limit: int) -> None:
    reader = store.open_reader(store.create().id)
    with pytest.raises(ValueError, match="page size"):
        reader.page_display(limit=limit)


@pytest.mark.parametrize(
    ("query", "parameters"),
    [
        (_rows.PAGE_OLDEST_FIRST, (1 << 32, 2 << 32, 10)),
        (_rows.PAGE_NEWEST_FIRST, (2 << 32, 1 << 32, 10)),
        (_rows._CONTEXT_TAIL, (1 << 32, 2 << 32)),
        (_rows._LAST_SEQ_IN, (1 << 32, 1 << 32, 2 << 32)),
        ("DELETE FROM display WHERE seq > ? AND seq < ?", (1 << 32, 2 << 32)),
    ],
)
def test_every_display_query_is_a_range_of_the_primary_key(
    store: SessionStore, query: str, parameters: tuple[int, ...]
) -> None:
    with raw_connection(store) as raw:
        plan = raw.execute(f"EXPLAIN QUERY PLAN {query}", parameters).fetchall()
    details = " ".join(str(row[-1]) for row in plan)
    assert "USING INTEGER PRIMARY KEY (rowid>? AND rowid<?)" in details
    assert "SCAN" not in details
    assert "TEMP B-TREE" not in details


# --- compaction --------------------------------------------------------------------------


def test_compaction_replaces_a_context_prefix_and_keeps_the_display_whole(
    store: SessionStore,
) -> None:
    session = store.create()
    with store.open_writer(session.id) as writer:
        writer.append(users("m0", "m1", "m2", "m3"))
        writer.compact(UserMessage.from_text("summary 1"), replace_first=2)
        assert context_texts(store, session.id) == ["summary 1", "m2", "m3"]
        writer.append(users("m4"))
        writer.compact(AssistantMessage(text="summary 2"), replace_first=3)
    assert context_texts(store, session.id) == ["summary 2", "m4"]
    assert display_texts(store, session.id) == ["m0", "m1", "m2", "m3", "m4"]


def test_compaction_renews_the_session(store: SessionStore) -> None:
    session = store.create()
    with store.open_writer(session.id) as writer:
        writer.append(users("m0", "m1"))
        before = store.info(session.id).last_activity
        time.sleep(0.005)
        writer.compact(UserMessage.from_text("s"), replace_first=1)
    assert store.info(session.id).last_activity > before


@pytest.mark.parametrize(
    ("summary", "replace_first", "message"),
    [
        (UserMessage.from_text("s"), 4, "the model context holds 3"),
        (UserMessage.from_text("s"), 0, "at least one"),
        (UserMessage.from_text("s"), 1, "tool result without the call"),
        (ToolResultMessage(tool_call_id="c", status="ok"), 2, "summary"),
        (
            AssistantMessage(tool_calls=(ToolCall(id="c", name="n", arguments="{}"),)),
            2,
            "summary",
        ),
    ],
    ids=["too-many", "none", "orphan-result", "result-summary", "summary-with-calls"],
)
def test_a_compaction_that_would_break_the_context_changes_nothing(
    store: SessionStore, summary: Message, replace_first: int, message: str
) -> None:
    session = store.create()
    turn: list[Message] = [
        AssistantMessage(tool_calls=(ToolCall(id="c", name="n", arguments="{}"),)),
        ToolResultMessage(tool_call_id="c", status="ok", content=(TextBlock(text="r"),)),
        AssistantMessage(text="done"),
    ]
    with store.open_writer(session.id) as writer:
        writer.append(turn)
        activity = store.info(session.id).last_activity
        with pytest.raises(ValueError, match=message):
            writer.compact(summary, replace_first=replace_first)
        assert list(writer.read_context()) == turn
    assert store.info(session.id).last_activity == activity


# --- session keys ------------------------------------------------------------------------


def keys(store: SessionStore) -> dict[str, int]:
    with raw_connection(store) as raw:
        return dict(raw.execute("SELECT id, key FROM sessions").fetchall())


def test_a_session_key_is_never_given_again_and_a_new_session_starts_empty(
    store: SessionStore,
) -> None:
    first, last = store.create(), store.create()
    with store.open_writer(last.id) as writer:
        writer.append(users("secret"))
    taken = keys(store)[last.id]
    store.delete(last.id)
    fresh = store.create()
    assert keys(store)[fresh.id] > taken
    assert display_texts(store, fresh.id) == []
    assert context_texts(store, fresh.id) == []
    assert keys(store)[first.id] < taken


def test_whoever_deletes_a_session_row_deletes_its_messages(store: SessionStore) -> None:
    gone, kept = store.create(), store.create()
    for session in (gone, kept):
        with store.open_writer(session.id) as writer:
            writer.append(users("a", "b"))
    with raw_connection(store) as raw:  # as an older raw, or a person at the sqlite3 prompt
        raw.execute("DELETE FROM sessions WHERE id = ?", (gone.id,))
        assert raw.execute("SELECT count(*) FROM display").fetchone() == (2,)
    assert display_texts(store, kept.id) == ["a", "b"]


def test_the_last_session_key_works_and_then_the_store_is_full(store: SessionStore) -> None:
    with raw_connection(store) as raw:
        raw.execute("DELETE FROM sqlite_sequence WHERE name = 'sessions'")
        raw.execute(f"INSERT INTO sqlite_sequence (name, seq) VALUES ('sessions', {MAX_KEY - 1})")
    last = store.create()
    assert keys(store)[last.id] == MAX_KEY
    with store.open_writer(last.id) as writer:
        writer.append(users("a", "b"))
    assert display_texts(store, last.id) == ["a", "b"]
    page = store.open_reader(last.id).page_display(newest_first=True, limit=1)
    assert [item.seq for item in page.items] == [2]
    store.delete(last.id)
    before = store.list_sessions()
    with pytest.raises(StorageFull, match="most sessions one file can") as caught:
        store.create()
    assert caught.value.code == "storage_full"
    assert store.list_sessions() == before


# --- durability and full disks -----------------------------------------------------------


def test_a_full_disk_raises_storage_full_and_loses_nothing_committed(
    store: SessionStore,
) -> None:
    session = store.create()
    with store.open_writer(session.id) as writer:
        writer.append(users(*(f"m{i}" for i in range(10))))
        connection = writer._connection  # inject the fault: cap the size of the database
        (pages,) = connection.execute("PRAGMA page_count").fetchone()
        connection.execute(f"PRAGMA max_page_count = {pages + 1}")
        big = [UserMessage.from_text("y" * 50_000), UserMessage.from_text("z")]
        with pytest.raises(StorageFull) as caught:
            writer.append(big)
        assert caught.value.code == "storage_full"
        assert not connection.in_transaction
        with pytest.raises(StorageFull):  # one message: its own transaction
            writer.append(big[:1])
        assert not connection.in_transaction
        assert display_texts(store, session.id) == [f"m{i}" for i in range(10)]
        assert context_texts(store, session.id) == [f"m{i}" for i in range(10)]
        connection.execute("PRAGMA max_page_count = 1073741823")
        writer.append(users("after"))
    with SessionStore.open(store.path.parent) as again:
        items = again.open_reader(session.id).page_display().items
        assert [(i.seq, text(i.message)) for i in items[-2:]] == [(10, "m9"), (11, "after")]


def test_a_session_at_its_last_position_refuses_more_and_keeps_what_it_has(
    store: SessionStore,
) -> None:
    session = store.create()
    with store.open_writer(session.id) as writer:
        writer.append(users("first"))
    with raw_connection(store) as raw:  # as if 2**32 - 3 more messages had been appended
        raw.execute(
            "INSERT INTO display (seq, created_at, kind, format, body)"
            " SELECT seq + (1 << 32) - 3, created_at, kind, format, body FROM display"
        )
    with store.open_writer(session.id) as writer:
        with pytest.raises(StorageFull, match="most entries one session can") as caught:
            writer.append(users("a", "b"))
        assert caught.value.code == "storage_full"
        writer.append(users("last"))
        with pytest.raises(StorageFull):
            writer.append(users("c"))
    items = store.open_reader(session.id).page_display(newest_first=True, limit=2).items
    assert [(i.seq, text(i.message)) for i in items] == [(2**32 - 1, "last"), (2**32 - 2, "first")]


def test_end_turn_syncs_the_wal_and_the_store_its_folder_once(
    store: SessionStore, monkeypatch: pytest.MonkeyPatch
) -> None:
    session, other = store.create(), store.create()
    synced: list[str] = []
    real_fsync = os.fsync

    def recording_fsync(fd: int) -> None:
        synced.append(os.readlink(f"/proc/self/fd/{fd}"))
        real_fsync(fd)

    monkeypatch.setattr("raw_core.sessions.sqlite._durability.os.fsync", recording_fsync)
    wal, folder = f"{store.path}-wal", str(store.path.parent)
    with store.open_writer(session.id) as writer:
        assert synced == [folder]  # the WAL's name, before any turn
        writer.append(users("a", "b"))
        writer.end_turn()
        writer.append(users("c"))
        writer.end_turn()
    with store.open_writer(other.id) as writer:
        writer.append(users("d"))
        writer.end_turn()
    assert synced == [folder, wal, wal, wal]


def test_a_failed_sync_is_store_unavailable_and_keeps_what_was_committed(
    store: SessionStore, monkeypatch: pytest.MonkeyPatch
) -> None:
    session = store.create()

    def failing_fsync(fd: int) -> None:  # the disk reports an I/O error
        raise OSError(errno.EIO, os.strerror(errno.EIO))

    monkeypatch.setattr("raw_core.sessions.sqlite._durability.os.fsync", failing_fsync)
    with pytest.raises(StoreUnavailable, match="syncing the session database") as opening:
        store.open_writer(session.id)  # the WAL's folder entry, once per store
    assert opening.value.code == "store_unavailable"
    monkeypatch.undo()
    with store.open_writer(session.id) as writer:  # the lock was released
        writer.append(users("kept"))
        monkeypatch.setattr("raw_core.sessions.sqlite._durability.os.fsync", failing_fsync)
        with pytest.raises(StoreUnavailable, match="may not survive a power loss"):
            writer.end_turn()
    assert display_texts(store, session.id) == ["kept"]


@pytest.mark.parametrize("code", [errno.EINVAL, errno.EBADF])
def test_a_folder_that_cannot_be_synced_does_not_stop_sessions(
    store: SessionStore, monkeypatch: pytest.MonkeyPatch, code: int
) -> None:
    real_fsync = os.fsync
    synced: list[str] = []

    def fsync(fd: int) -> None:  # a file system that cannot sync a folder
        target = os.readlink(f"/proc/self/fd/{fd}")
        if os.path.isdir(target):
            raise OSError(code, os.strerror(code))
        synced.append(target)
        real_fsync(fd)

    monkeypatch.setattr("raw_core.sessions.sqlite._durability.os.fsync", fsync)
    session = store.create()
    with store.open_writer(session.id) as writer:
        writer.append(users("a"))
        writer.end_turn()
    assert synced == [f"{store.path}-wal"]
    assert display_texts(store, session.id) == ["a"]


def test_a_turn_ended_is_readable_after_the_writer_is_killed(tmp_path: Path) -> None:
    """What end_turn synced is what a new process reads (a kill, not a power loss: the
    closest a test can get)."""
    script = (
        "import os, signal, sys\n"
        "from raw_core.sessions.sqlite import SessionStore, UserMessage\n"
        "store = SessionStore.open(sys.argv[1])\n"
        "info = store.create()\n"
        "writer = store.open_writer(info.id)\n"
        "writer.append([UserMessage.from_text('kept')])\n"
        "writer.end_turn()\n"
        "print(info.id, flush=True)\n"
        "os.kill(os.getpid(), signal.SIGKILL)\n"
    )
    result = subprocess.run(
        [sys.executable, "-c", script, str(tmp_path / "s")], capture_output=True, text=True
    )
    session_id = result.stdout.strip()
    with SessionStore.open(tmp_path / "s") as store:
        assert store.open_reader(session_id).read_context() == (UserMessage.from_text("kept"),)


# --- expiry ------------------------------------------------------------------------------


def test_prune_removes_sessions_idle_longer_than_the_expiry(store: SessionStore) -> None:
    session = store.create()
    with store.open_writer(session.id) as writer:
        writer.append(users("hello"))
    activity = store.info(session.id).last_activity
    assert store.prune(activity + timedelta(days=29, hours=23)) == ()
    assert store.prune(activity + timedelta(days=30, seconds=1)) == (session.id,)
    with pytest.raises(SessionNotFound):
        store.info(session.id)
    assert list((store.path.parent / "locks").iterdir()) == []
    with raw_connection(store) as raw:
        assert raw.execute("SELECT count(*) FROM display").fetchone() == (0,)
        assert raw.execute("SELECT count(*) FROM sessions").fetchone() == (0,)


def test_reading_and_listing_do_not_renew_a_session(store: SessionStore) -> None:
    session = store.create()
    with store.open_writer(session.id) as writer:
        writer.append(users("hello"))
        writer.set_session_state(attrs.evolve(writer.session_state(), title="a title"))
        activity = store.info(session.id).last_activity
        time.sleep(0.005)
        writer.read_context()
        writer.page_display()
    reader = store.open_reader(session.id)
    reader.read_context()
    reader.page_display(newest_first=True)
    reader.tail_cursor()
    store.list_sessions()
    assert store.info(session.id).last_activity == activity
    assert store.prune(activity + timedelta(days=30, seconds=1)) == (session.id,)


def test_appending_renews_a_session(store: SessionStore) -> None:
    session = store.create()
    time.sleep(0.005)
    with store.open_writer(session.id) as writer:
        writer.append(users("hello"))
    assert store.info(session.id).last_activity > session.last_activity


def test_prune_skips_a_session_being_written_and_keeps_renewed_ones(
    store: SessionStore,
) -> None:
    busy, idle = store.create(), store.create()
    later = store.info(idle.id).last_activity + timedelta(days=31)
    with store.open_writer(busy.id):
        assert store.prune(later) == (idle.id,)
    assert store.prune(later) == (busy.id,)


def test_an_expired_session_is_refused_then_deleted_by_the_next_writing_store(
    tmp_path: Path,
) -> None:
    long_ago = datetime.now(UTC) - timedelta(days=40)
    with SessionStore.open(tmp_path / "state", clock=lambda: long_ago) as then:
        old, unwanted = then.create(title="old"), then.create()
        with then.open_writer(old.id) as writer:
            writer.append(users("long ago"))
        said = then.info(old.id).last_activity
    with SessionStore.open(tmp_path / "state") as store:
        assert store.list_sessions() == ()
        with pytest.raises(SessionExpired) as caught:
            store.open_reader(old.id)
        assert caught.value.context["expired_at"] == (said + timedelta(days=30)).isoformat()
        store.delete(unwanted.id)  # an expired session can still be deleted
        with pytest.raises(SessionExpired):
            store.open_writer(old.id)  # the store's first write: the expired data goes
        with pytest.raises(SessionNotFound):
            store.info(old.id)
        with raw_connection(store) as raw:
            assert raw.execute("SELECT count(*) FROM display").fetchone() == (0,)
            assert raw.execute("SELECT count(*) FROM sessions").fetchone() == (0,)


def test_the_expiry_is_configurable(tmp_path: Path) -> None:
    with SessionStore.open(tmp_path / "state", expire_after_days=1) as store:
        session = store.create()
        assert store.expire_after == timedelta(days=1)
        assert store.prune(session.last_activity + timedelta(hours=23)) == ()
        assert store.prune(session.last_activity + timedelta(hours=25)) == (session.id,)


@pytest.mark.parametrize(
    "options",
    [{"expire_after_days": 0}, {"lock_wait": -1}, {"busy_timeout": -1}],
    ids=["expiry", "lock-wait", "busy-timeout"],
)
def test_nonsense_options_are_refused(tmp_path: Path, options: dict[str, float]) -> None:
    with pytest.raises(ValueError, match="expected"):
        SessionStore.open(
            tmp_path / "state",
            expire_after_days=options.get("expire_after_days", 30),
            lock_wait=options.get("lock_wait", 0),
            busy_timeout=options.get("busy_timeout", 5),
        )


# --- deleting ----------------------------------------------------------------------------


def test_delete_removes_the_session_and_its_messages(store: SessionStore) -> None:
    kept, gone = store.create(), store.create()
    for session in (kept, gone):
        with store.open_writer(session.id) as writer:
            writer.append(users("a", "b"))
    reader = store.open_reader(gone.id)
    store.delete(gone.id)
    with pytest.raises(SessionNotFound):
        reader.page_display()
    with pytest.raises(SessionNotFound):
        store.open_writer(gone.id)
    assert [s.id for s in store.list_sessions()] == [kept.id]
    assert display_texts(store, kept.id) == ["a", "b"]
    assert [p.name for p in (store.path.parent / "locks").iterdir()] == [f"{kept.id}.lock"]


def test_delete_waits_for_the_writer(store: SessionStore) -> None:
    session = store.create()
    with store.open_writer(session.id):
        with pytest.raises(SessionLocked) as caught:
            store.delete(session.id)
        assert caught.value.code == "session_locked"
    store.delete(session.id)


# --- one writer --------------------------------------------------------------------------


def test_a_second_writer_is_locked_out_until_the_first_closes(store: SessionStore) -> None:
    session = store.create()
    writer = store.open_writer(session.id)
    with pytest.raises(SessionLocked) as caught:
        store.open_writer(session.id)
    assert "waited" not in caught.value.message  # the store's default: no wait at all
    assert caught.value.to_dict()["session_id"] == session.id
    with pytest.raises(SessionLocked, match=r"waited 0\.1 s"):
        store.open_writer(session.id, wait=0.1)
    store.open_reader(session.id).page_display()  # readers are not blocked
    writer.close()
    writer.close()
    assert writer.closed
    with store.open_writer(session.id) as second:
        second.append(users("second"))
    assert display_texts(store, session.id) == ["second"]


def test_a_closed_writer_cannot_write(store: SessionStore) -> None:
    session = store.create()
    with store.open_writer(session.id) as writer:
        pass
    with pytest.raises(sqlite3.ProgrammingError):
        writer.append(users("late"))


def test_a_writer_opened_for_a_session_deleted_meanwhile_is_not_found(
    store: SessionStore, monkeypatch: pytest.MonkeyPatch
) -> None:
    session = store.create()
    real_info = store.info
    with SessionStore.open(store.path.parent) as other:

        def delete_then_check(session_id: str) -> object:
            found = real_info(session_id)
            other.delete(session_id)  # another process deletes it before we lock
            return found

        monkeypatch.setattr(store, "info", delete_then_check)
        with pytest.raises(SessionNotFound):
            store.open_writer(session.id)
    assert list((store.path.parent / "locks").iterdir()) == []


def test_a_writer_dropped_without_closing_warns_and_lets_go(store: SessionStore) -> None:
    session = store.create()
    writer = store.open_writer(session.id)
    writer._connection.close()
    with pytest.warns(ResourceWarning, match="never released"):
        del writer  # CPython frees it here, releasing the lock
    store.open_writer(session.id).close()


def test_a_negative_list_limit_is_refused(store: SessionStore) -> None:
    with pytest.raises(ValueError, match="limit"):
        store.list_sessions(limit=-1)


def test_runtime_state_round_trips_and_is_not_activity(store: SessionStore) -> None:
    info = store.create()
    state = SessionState(
        title="t", cwd="/w", tool_digests={"echo": "abc"}, cache_key="k", skills_seen={"a": "1"}
    )
    with store.open_writer(info.id) as writer:
        assert writer.session_state() == SessionState()
        writer.set_session_state(state)
    assert store.open_reader(info.id).session_state() == state
    assert store.info(info.id).last_activity == info.last_activity
