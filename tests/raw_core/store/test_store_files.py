"""The database file: where it is, who may read it, and which versions are used or refused."""

from __future__ import annotations

import hashlib
import os
import sqlite3
import stat
import sys
from collections.abc import Callable, Iterable
from contextlib import closing
from pathlib import Path

import platformdirs
import pytest

from raw_core.errors import StoreCorrupt, StoreTooNew, StoreUnavailable
from raw_core.store import (
    MESSAGE_FORMAT,
    Message,
    SessionStore,
    TextBlock,
    UserMessage,
    default_store_directory,
    dumps_message,
)
from raw_core.store._schema import (
    _STEP_1,
    APPLICATION_ID,
    FILE_NAME,
    SCHEMA_VERSION,
    SQLITE_PAGE_SIZE,
)


def message_text(message: Message) -> str:
    assert isinstance(message, UserMessage)
    block = message.content[0]
    assert isinstance(block, TextBlock)
    return block.text


def mode(path: Path) -> int:
    return stat.S_IMODE(path.stat().st_mode)


def snapshot(folder: Path) -> dict[str, str]:
    """Every file under ``folder`` with a hash of its bytes."""
    return {
        str(path.relative_to(folder)): hashlib.sha256(path.read_bytes()).hexdigest()
        for path in sorted(folder.rglob("*"))
        if path.is_file()
    }


def make_db(path: Path, *statements: str) -> None:
    with closing(sqlite3.connect(path, isolation_level=None)) as connection:
        for statement in statements:
            connection.execute(statement)


def test_a_new_store_is_a_private_wal_database_marked_as_raws(tmp_path: Path) -> None:
    folder = tmp_path / "state" / "raw"
    with SessionStore.open(folder) as store:
        session = store.create()
        with store.open_writer(session.id) as writer:
            writer.append([UserMessage.from_text("hello")])
            assert store.path == folder / FILE_NAME
            assert mode(folder) == 0o700
            assert mode(store.path) == 0o600
            for suffix in ("-wal", "-shm"):
                assert mode(store.path.with_name(FILE_NAME + suffix)) == 0o600
            assert mode(folder / "locks") == 0o700
            assert mode(folder / "locks" / f"{session.id}.lock") == 0o600
    with closing(sqlite3.connect(folder / FILE_NAME)) as connection:
        assert connection.execute("PRAGMA journal_mode").fetchone() == ("wal",)
        assert connection.execute("PRAGMA application_id").fetchone() == (APPLICATION_ID,)
        assert connection.execute("PRAGMA user_version").fetchone() == (SCHEMA_VERSION,)
        assert connection.execute("PRAGMA page_size").fetchone() == (SQLITE_PAGE_SIZE,)


def test_an_existing_database_with_loose_permissions_is_made_private(tmp_path: Path) -> None:
    with SessionStore.open(tmp_path / "state"):
        pass
    path = tmp_path / "state" / FILE_NAME
    os.chmod(path, 0o644)
    with SessionStore.open(tmp_path / "state"):
        assert mode(path) == 0o600


def test_a_folder_the_user_chose_keeps_its_mode(tmp_path: Path) -> None:
    folder = tmp_path / "project"
    folder.mkdir(mode=0o755)
    os.chmod(folder, 0o755)
    with SessionStore.open(folder) as store:
        assert mode(folder) == 0o755
        assert mode(store.path) == 0o600


def test_a_file_where_the_folder_should_be_is_refused(tmp_path: Path) -> None:
    (tmp_path / "state").write_text("a file")
    with pytest.raises(StoreUnavailable, match="found a file"):
        SessionStore.open(tmp_path / "state")


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="XDG_STATE_HOME is Linux's")
def test_the_default_location_is_the_user_state_dir(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("XDG_STATE_HOME", str(tmp_path / "xdg"))
    assert default_store_directory() == Path(platformdirs.user_state_dir("raw"))
    with SessionStore.open() as store:
        assert store.path == tmp_path / "xdg" / "raw" / FILE_NAME


def test_an_older_database_is_left_untouched_and_new_sessions_go_to_a_new_file(
    tmp_path: Path,
) -> None:
    folder = tmp_path / "state"
    folder.mkdir()
    old = folder / "sessions-v0.sqlite3"
    make_db(old, "CREATE TABLE conversations (id TEXT)", "INSERT INTO conversations VALUES ('x')")
    before = snapshot(folder)
    mtime = old.stat().st_mtime_ns
    with SessionStore.open(folder) as store:
        store.create("new")
        assert store.path.name == FILE_NAME
        assert [s.title for s in store.list_sessions()] == ["new"]
    after = snapshot(folder)
    assert after["sessions-v0.sqlite3"] == before["sessions-v0.sqlite3"]
    assert old.stat().st_mtime_ns == mtime
    assert FILE_NAME in after


@pytest.mark.parametrize("journal", ["DELETE", "WAL"])
def test_a_database_from_a_newer_raw_is_refused_and_not_modified(
    tmp_path: Path, journal: str
) -> None:
    folder = tmp_path / "state"
    folder.mkdir()
    make_db(
        folder / FILE_NAME,
        f"PRAGMA journal_mode = {journal}",
        "CREATE TABLE future (x)",
        "INSERT INTO future VALUES (1)",
        f"PRAGMA application_id = {APPLICATION_ID}",
        f"PRAGMA user_version = {SCHEMA_VERSION + 1}",
    )
    before = snapshot(folder)
    with pytest.raises(StoreTooNew) as caught:
        SessionStore.open(folder)
    assert caught.value.code == "store_too_new"
    assert caught.value.to_dict()["path"] == str(folder / FILE_NAME)
    assert snapshot(folder) == before


def write_text(path: Path) -> None:
    path.write_text("this is a text file, not a database\n" * 200)


def write_foreign_db(path: Path) -> None:
    make_db(path, "CREATE TABLE other_app (x)")


def write_other_application(path: Path) -> None:
    make_db(path, "PRAGMA application_id = 42", "PRAGMA user_version = 1")


def write_unversioned(path: Path) -> None:
    make_db(path, f"PRAGMA application_id = {APPLICATION_ID}")


@pytest.mark.parametrize(
    "write",
    [write_text, write_foreign_db, write_other_application, write_unversioned],
    ids=["text-file", "foreign-tables", "other-application-id", "no-version"],
)
def test_a_file_that_is_not_a_raw_database_is_store_corrupt_and_not_modified(
    tmp_path: Path, write: Callable[[Path], None]
) -> None:
    folder = tmp_path / "state"
    folder.mkdir()
    write(folder / FILE_NAME)
    before = snapshot(folder)
    with pytest.raises(StoreCorrupt) as caught:
        SessionStore.open(folder)
    assert caught.value.code == "store_corrupt"
    assert snapshot(folder) == before


def test_reopening_keeps_every_session(tmp_path: Path) -> None:
    with SessionStore.open(tmp_path / "state") as store:
        session = store.create("kept")
        with store.open_writer(session.id) as writer:
            writer.append([UserMessage.from_text("hello")])
    with SessionStore.open(tmp_path / "state") as store:
        assert store.info(session.id).title == "kept"
        assert store.open_reader(session.id).read_context() == (UserMessage.from_text("hello"),)


def write_first_layout(path: Path) -> None:
    """A file as the first schema (step 1) left it: display rows numbered across the file,
    three sessions' rows interleaved, two of them compacted."""

    def row(seq: int, session: str, text: str) -> str:
        body = dumps_message(UserMessage.from_text(text)).replace("'", "''")
        return (
            "INSERT INTO display (seq, session_id, created_at, format, body)"
            f" VALUES ({seq}, '{session}', {seq}, {MESSAGE_FORMAT}, '{body}')"
        )

    summary = dumps_message(UserMessage.from_text("summary of b")).replace("'", "''")
    make_db(
        path,
        *_STEP_1,
        "INSERT INTO sessions (id, title, created_at, last_activity, state, context_from)"
        " VALUES ('a' || printf('%031d', 0), 'first', 1, 50, '{\"k\":1}', 4)",
        "INSERT INTO sessions (id, title, created_at, last_activity, context_from,"
        f" summary_format, summary_body) VALUES ('b' || printf('%031d', 0), 'second', 2, 60,"
        f" 7, {MESSAGE_FORMAT}, '{summary}')",
        "INSERT INTO sessions (id, title, created_at, last_activity)"
        " VALUES ('c' || printf('%031d', 0), 'empty', 3, 3)",
        row(1, "a" + "0" * 31, "a1"),
        row(2, "b" + "0" * 31, "b1"),
        row(3, "a" + "0" * 31, "a2"),
        row(4, "a" + "0" * 31, "a3"),
        row(5, "b" + "0" * 31, "b2"),
        row(6, "a" + "0" * 31, "a4"),
        f"PRAGMA application_id = {APPLICATION_ID}",
        "PRAGMA user_version = 1",
        "PRAGMA journal_mode = WAL",
    )


def test_a_file_of_the_first_layout_is_brought_forward_with_every_message(
    tmp_path: Path,
) -> None:
    folder = tmp_path / "state"
    folder.mkdir()
    write_first_layout(folder / FILE_NAME)
    a, b, c = ("a" + "0" * 31, "b" + "0" * 31, "c" + "0" * 31)

    def texts(messages: Iterable[Message]) -> list[str]:
        return [message_text(m) for m in messages]

    with SessionStore.open(folder) as store:
        assert [(s.id, s.title) for s in store.list_sessions()] == [
            (b, "second"),
            (a, "first"),
            (c, "empty"),
        ]
        page = store.open_reader(a).page_display()
        assert [(i.seq, message_text(i.message)) for i in page.items] == [
            (1, "a1"),
            (2, "a2"),
            (3, "a3"),
            (4, "a4"),
        ]
        # a was compacted from its row 4 ("a3") on; b had every row replaced by a summary.
        assert texts(store.open_reader(a).read_context()) == ["a3", "a4"]
        assert texts(store.open_reader(b).read_context()) == ["summary of b"]
        assert texts(store.open_reader(c).read_context()) == []
        assert store.open_reader(a).state() == {"k": 1}
        with store.open_writer(b) as writer:
            writer.append([UserMessage.from_text("b3")])
        assert texts(store.open_reader(b).read_context()) == ["summary of b", "b3"]
        assert [i.seq for i in store.open_reader(b).page_display().items] == [1, 2, 3]
        store.delete(a)
        assert texts(store.open_reader(b).read_context()) == ["summary of b", "b3"]
    with closing(sqlite3.connect(folder / FILE_NAME)) as connection:
        assert connection.execute("PRAGMA user_version").fetchone() == (SCHEMA_VERSION,)
        assert connection.execute("SELECT count(*) FROM display").fetchone() == (3,)
        names = {row[0] for row in connection.execute("SELECT name FROM sqlite_master")}
        assert "display_by_session" not in names
        assert {"sessions_by_activity", "sessions_delete_display"} <= names
        # keys continue after the migrated ones, never reusing one
        assert connection.execute("SELECT name, seq FROM sqlite_sequence").fetchall() == [
            ("sessions", 3)
        ]
        assert connection.execute("PRAGMA page_size").fetchone() == (4096,)  # as it was made
