"""Panels on PostgreSQL: a panel update is a display-only row of its own kind, stored in the
same JSON form as in raw's SQLite store, and the session's list of panels is a key of its
state; a session with builtin/todo updates, reopened by another app, shows the panel's
last revision and goes on from it. Neither is a layout change: the schema stays
``raw_sessions_v2``, layout 2 (docs/scale-out.md, "Schema versions")."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from raw_core import Reply, ScriptedProvider
from raw_core.app import App
from raw_core.errors import StoreCorrupt, StoreTooNew
from raw_core.plugins import PluginHost
from raw_core.sessions.backend import PanelUpdate
from raw_core.sessions.messages import ToolResultMessage, UserMessage
from raw_core.sessions.sqlite.entries import ENTRY_FORMAT, dumps_panel
from raw_store_postgres import PostgresBackend
from raw_store_postgres.testing import ThrowawayServer

pytestmark = pytest.mark.anyio


def items(*pairs: tuple[str, str]) -> dict[str, Any]:
    return {"items": [{"text": text, "status": status} for text, status in pairs]}


def project(root: Path) -> Path:
    config = {
        "agents": {"a": {"tools": {"use": ["builtin/todo"]}}},
        "sessions": {"backend": {"type": "postgres", "dsn": {"env": "RAW_TEST_PG_DSN"}}},
    }
    path = root / "raw.json"
    path.write_text(json.dumps(config))
    return path


def host() -> PluginHost:
    loaded = PluginHost()
    loaded.load_entry_points()  # builtin/todo's tools and the postgres backend
    return loaded


def dbname(dsn: str) -> str:
    return dsn.rsplit("dbname=", 1)[1]


async def test_a_todo_session_reopened_elsewhere_shows_and_continues_its_last_revision(
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    postgres_server: ThrowawayServer,
    postgres_dsn: str,
) -> None:
    monkeypatch.setenv("RAW_TEST_PG_DSN", postgres_dsn)
    path = project(tmp_path)
    first = ScriptedProvider(
        [
            Reply(tool_calls=(("todo", items(("read", "in_progress"))),)),
            Reply(tool_calls=(("todo", items(("read", "done"), ("fix", "pending"))),)),
            Reply(text="planned"),
        ]
    )
    async with (
        App.open(path, host=host(), provider=first) as app,
        app.open_session() as session,
    ):
        assert (await session.run_turn("plan it")).reason == "completed"
    second = ScriptedProvider(
        [Reply(tool_calls=(("todo", items(("fix", "done"))),)), Reply(text="done")]
    )
    async with App.open(path, host=host(), provider=second) as app:
        (stored,) = await app.panels(session.id)  # read from the server, no session open
        assert (stored.identity, stored.panel, stored.revision) == ("builtin/todo", "todo", 2)
        assert stored.document["blocks"][0]["items"][1] == {"text": "fix", "status": "pending"}
        async with app.open_session(session.id) as resumed:
            assert [p.revision for p in resumed.panels] == [2]
            assert (await resumed.run_turn("go on")).reason == "completed"
            assert [p.revision for p in resumed.panels] == [3]
        page = await app.page(session.id)
    updates = [item.entry for item in page.items if item.kind == "panel"]
    assert [u.revision for u in updates] == [1, 2, 3]
    assert all(isinstance(u, PanelUpdate) for u in updates)

    db = dbname(postgres_dsn)
    rows = postgres_server.psql(
        "SELECT kind, format, body FROM raw_sessions_v2.entries WHERE kind = 4 ORDER BY seq", db
    ).splitlines()
    # the body is the SQLite store's JSON form of the same update, with its format number
    assert rows == [f"4|{ENTRY_FORMAT}|{dumps_panel(u)}" for u in updates]
    state = json.loads(postgres_server.psql("SELECT state FROM raw_sessions_v2.sessions", db))
    assert state["panels"] == [["builtin/todo", "todo"]]
    # no new layout: the same schema, still marked layout 2, and no other schema made
    assert (
        postgres_server.psql("SELECT value FROM raw_sessions_v2.meta WHERE key = 'layout'", db)
        == "2"
    )
    schemas = postgres_server.psql(
        "SELECT nspname FROM pg_namespace WHERE nspname LIKE 'raw_sessions%'", db
    )
    assert schemas == "raw_sessions_v2"
    for request in [*first.requests, *second.requests]:  # the model read one line a call
        results = [m for m in request.messages if isinstance(m, ToolResultMessage)]
        assert all(
            [getattr(b, "text", "") for b in m.content] == [f"panel todo updated (revision {n})"]
            for n, m in enumerate(results, start=1)
        )


async def test_a_kind_past_the_panel_is_store_too_new_and_bad_panels_state_store_corrupt(
    postgres_server: ThrowawayServer, postgres_dsn: str
) -> None:
    async with await PostgresBackend.open(postgres_dsn) as backend:
        session = await backend.create()
        update = PanelUpdate(
            tool_call_id="c1",
            identity="agent/board",
            panel="plan",
            op="close",
            source="context",
            revision=4,
        )
        async with backend.open_writer(session.id) as writer:
            await writer.append([UserMessage.from_text("a"), update])
        (item,) = (await backend.page(session.id, newest_first=True, limit=1)).items
        assert item.entry == update
        db = dbname(postgres_dsn)
        postgres_server.psql("UPDATE raw_sessions_v2.entries SET kind = 5 WHERE kind = 4", db)
        with pytest.raises(StoreTooNew) as newer:
            await backend.page(session.id)
        assert "kind 5" in newer.value.message
        postgres_server.psql(
            """UPDATE raw_sessions_v2.sessions SET state = '{"panels": [["agent/board"]]}'""", db
        )
        with pytest.raises(StoreCorrupt) as broken:
            await backend.state(session.id)
        assert "panels" in broken.value.message
