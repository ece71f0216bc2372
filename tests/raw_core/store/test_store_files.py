"""The database file: where it is, who may read it, and which versions are used or refused."""

from __future__ import annotations

import hashlib
import os
import sqlite3
import stat
import sys
from collections.abc import Callable
from contextlib import closing
from pathlib import Path

import platformdirs
import pytest

from raw_core.errors import SessionNotFound, StoreCorrupt, StoreTooNew, StoreUnavailable
from raw_core.sessions.sqlite import (
    MESSAGE_FORMAT,
    Message,
    SessionStore,
    TextBlock,
    UserMessage,
    default_store_directory,
    dumps_message,
)
from raw_core.sessions.sqlite._schema import (
    APPLICATION_ID,
    FILE_NAME,
    OLDER_FILE_NAMES,
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


def write_v1_store(path: Path) -> str:
    """A store as the previous layout (``sessions-v1.sqlite3``, schema 2) left it, in WAL
    mode with its WAL still beside it; returns the id of its one session."""
    session_id = "0" * 32
    body = dumps_message(UserMessage.from_text("from an older raw")).replace("'", "''")
    make_db(
        path,
        "PRAGMA journal_mode = WAL",
        "CREATE TABLE sessions (key INTEGER PRIMARY KEY AUTOINCREMENT, id TEXT NOT NULL UNIQUE,"
        " title TEXT NOT NULL, created_at INTEGER NOT NULL, last_activity INTEGER NOT NULL,"
        " state TEXT NOT NULL DEFAULT '{}', context_from INTEGER NOT NULL DEFAULT 0,"
        " summary_format INTEGER, summary_body TEXT)",
        "CREATE TABLE display (seq INTEGER PRIMARY KEY, created_at INTEGER NOT NULL,"
        " format INTEGER NOT NULL, body TEXT NOT NULL)",
        "INSERT INTO sessions (id, title, created_at, last_activity)"
        f" VALUES ('{session_id}', 'old', 1, 2)",
        f"INSERT INTO display VALUES ({(1 << 32) + 1}, 1, {MESSAGE_FORMAT}, '{body}')",
        f"PRAGMA application_id = {APPLICATION_ID}",
        "PRAGMA user_version = 2",
    )
    return session_id


def test_an_older_layouts_file_is_never_opened_and_its_sessions_are_not_listed(
    tmp_path: Path,
) -> None:
    folder = tmp_path / "state"
    folder.mkdir()
    assert OLDER_FILE_NAMES == ("sessions-v1.sqlite3", "sessions-v2.sqlite3")
    old = folder / "sessions-v1.sqlite3"
    old_id = write_v1_store(old)
    before = snapshot(folder)
    mtimes = {path.name: path.stat().st_mtime_ns for path in folder.iterdir()}
    with SessionStore.open(folder) as store:
        new = store.create("new")
        with store.open_writer(new.id) as writer:
            writer.append([UserMessage.from_text("hello")])
            writer.end_turn()
        assert store.path.name == FILE_NAME != old.name
        assert [s.title for s in store.list_sessions()] == ["new"]
        with pytest.raises(SessionNotFound):
            store.info(old_id)
    after = snapshot(folder)
    assert {name: after[name] for name in before} == before  # byte for byte
    assert {
        path.name: path.stat().st_mtime_ns for path in folder.iterdir() if path.name in mtimes
    } == mtimes
    assert FILE_NAME in after
    # an older raw still reads its file as it was
    with closing(sqlite3.connect(old)) as connection:
        assert connection.execute("SELECT title FROM sessions").fetchall() == [("old",)]
        assert connection.execute("PRAGMA user_version").fetchone() == (2,)


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
