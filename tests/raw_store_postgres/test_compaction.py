"""Compaction on PostgreSQL: a session whose context outgrows the threshold compacts in its
turn, the summary and the boundary are stored through the backend's ``compact``, the
display history keeps every message, and a resumed session sends the summary."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from raw_core.agent import Agent, load_agent
from raw_core.config import load_config
from raw_core.plugins import PluginHost
from raw_core.providers.scripted import Reply, ScriptedProvider
from raw_core.runtime import Runtime
from raw_core.runtime.compaction import SUMMARY_HEADER
from raw_core.runtime.context import ContextLimits
from raw_core.sessions.messages import TextBlock, UserMessage, dumps_message
from raw_store_postgres import PostgresBackend
from tests.raw_core.test_compaction import ECHO, SCHEMA, Model, echo

pytestmark = pytest.mark.anyio


@pytest.fixture
def agent(tmp_path: Path, make_tool: Any) -> Agent:
    make_tool("echo", root=tmp_path / "tools", code=ECHO, input_schema=SCHEMA)
    config = {"agents": {"a": {"max_steps": 100, "tools": {"use": ["agent/echo"]}}}}
    (tmp_path / "raw.json").write_text(json.dumps(config))
    return load_agent(load_config(tmp_path / "raw.json"), host=PluginHost())


async def test_a_postgres_session_compacts_and_resumes_from_its_summary(
    postgres_dsn: str, agent: Agent
) -> None:
    window = 3000
    model = Model(lambda request, n: Reply(text="done") if n == 40 else echo(n), summary="S-pg")
    backend = await PostgresBackend.open(postgres_dsn, pool_size=2)
    try:
        runtime = Runtime(backend)
        limits = ContextLimits(window=window)
        async with runtime.open_session(agent, model.provider, limits=limits) as session:
            ended = await session.run_turn("echo on postgres")
        assert ended.reason == "completed"
        assert sum(1 for _, summary in model.counted if summary) >= 2
        assert max(tokens for tokens, _ in model.counted) <= window
        context = await backend.read_context(session.id)
        head = context[0]
        assert isinstance(head, UserMessage)
        assert isinstance(head.content[0], TextBlock)
        assert head.content[0].text.startswith(SUMMARY_HEADER)
        page = await backend.page(session.id, limit=1000)
        assert len([i for i in page.items if i.message is not None]) == 1 + 40 + 39
        again = ScriptedProvider([Reply(text="resumed")])
        async with runtime.open_session(agent, again, session_id=session.id) as resumed:
            await resumed.run_turn("after resume")
        sent = json.dumps([json.loads(dumps_message(m)) for m in again.requests[0].messages])
        assert "S-pg" in sent
        assert "echo on postgres" not in sent
    finally:
        await backend.aclose()
