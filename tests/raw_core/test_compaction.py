"""Context measurement and compaction with the scripted provider and a real SQLite store.

The provider counts a request's tokens by its own rule — the UTF-8 bytes of the request's
JSON, halved — and reports them in usage; raw's estimate uses its own measure, so the
tests check that raw follows the reported figures, never sending a request over the window
as the provider counts it."""

from __future__ import annotations

import itertools
import json
import math
from collections.abc import AsyncIterator, Callable
from pathlib import Path
from typing import Any

import attrs
import pytest

from raw_core.agent import Agent, load_agent
from raw_core.config import load_config
from raw_core.errors import ContextTooLong, ProviderFailed
from raw_core.plugins import PluginHost
from raw_core.providers.contract import ModelRequest, UsageEvent
from raw_core.providers.scripted import Reply, ScriptedProvider
from raw_core.runtime import Runtime
from raw_core.runtime.compaction import (
    MAX_REMINDER_BYTES,
    MAX_SUMMARY_BYTES,
    SUMMARY_HEADER,
    SUMMARY_PROMPT,
)
from raw_core.runtime.context import ContextLimits
from raw_core.runtime.events import LoopEvent
from raw_core.sessions.messages import TextBlock, UserMessage, dumps_message
from raw_core.sessions.sqlite import SqliteBackend
from raw_core.tools.calls import CancellationSignal

pytestmark = pytest.mark.anyio

ECHO = (
    "def handler(args, context):\n"
    "    return {'content': [{'type': 'text', 'text': args['text']}]}\n"
)
SCHEMA = {
    "type": "object",
    "properties": {"text": {"type": "string"}},
    "required": ["text"],
    "additionalProperties": False,
}


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


@pytest.fixture
def agent(tmp_path: Path, make_tool: Any) -> Agent:
    from raw_builtin_tools import plugin

    make_tool("echo", root=tmp_path / "tools", code=ECHO, input_schema=SCHEMA)
    config = {
        "agents": {
            "a": {
                "system": "You are a test agent.",
                "max_steps": 500,
                "tools": {"use": ["agent/echo", "builtin/todo"]},
            }
        }
    }
    (tmp_path / "raw.json").write_text(json.dumps(config))
    host = PluginHost()
    host.register(plugin, name="builtin")
    return load_agent(load_config(tmp_path / "raw.json"), host=host)


@pytest.fixture
async def backend(tmp_path: Path) -> AsyncIterator[SqliteBackend]:
    async with await SqliteBackend.open(tmp_path / "state") as opened:
        yield opened


def provider_tokens(request: ModelRequest) -> int:
    """The provider's own rule: the bytes of the request's JSON, two to a token."""
    body = {
        "system": request.system,
        "tools": [[t.name, t.description, dict(t.input_schema)] for t in request.tools],
        "messages": [json.loads(dumps_message(m)) for m in request.messages],
    }
    return math.ceil(len(json.dumps(body).encode("utf-8")) / 2)


def is_summary_request(request: ModelRequest) -> bool:
    last = request.messages[-1]
    return isinstance(last, UserMessage) and any(
        isinstance(b, TextBlock) and b.text == SUMMARY_PROMPT for b in last.content
    )


class Model:
    """A scripted model: each request is counted and reported; a summary request is
    answered with a summary, any other by ``answer(request, n)`` (n: its number)."""

    def __init__(self, answer: Callable[[ModelRequest, int], Reply], summary: str = "") -> None:
        self.answer = answer
        self.summary = summary
        self.counted: list[tuple[int, bool]] = []  # (tokens, a summary request)
        self.normal = 0
        self.provider = ScriptedProvider([self._step] * 5000)

    def _step(self, request: ModelRequest) -> Reply:
        tokens = provider_tokens(request)
        summary = is_summary_request(request)
        self.counted.append((tokens, summary))
        usage = UsageEvent(input_tokens=tokens, output_tokens=5)
        if summary:
            text = self.summary or f"Summary {len(self.counted)}: the user asked for echoes."
            return Reply(text=text, usage=usage)
        self.normal += 1
        return attrs.evolve(self.answer(request, self.normal), usage=usage)


def echo(n: int, size: int = 300) -> Reply:
    return Reply(tool_calls=(("echo", {"text": f"{n:05d} " + "x" * size}),), chunk=4096)


async def display_messages(backend: SqliteBackend, session_id: str) -> list[str]:
    kinds: list[str] = []
    cursor = None
    while True:
        page = await backend.page(session_id, cursor, limit=1000)
        kinds += [type(i.message).__name__ for i in page.items if i.message is not None]
        cursor = page.next_cursor
        if not page.has_more:
            return kinds


async def test_a_300_step_session_compacts_and_never_passes_the_window(
    backend: SqliteBackend, agent: Agent
) -> None:
    window = 6000
    model = Model(lambda request, n: Reply(text="done") if n % 100 == 0 else echo(n))
    events: list[dict[str, Any]] = []
    runtime = Runtime(backend)
    limits = ContextLimits(window=window, threshold=0.8)
    async with runtime.open_session(agent, model.provider, limits=limits) as session:
        for turn in range(3):
            ended = await session.run_turn(
                f"turn {turn}: echo a lot", on_event=lambda e: events.append(e.to_dict())
            )
            assert ended.reason == "completed", ended
        session_id = session.id
    assert model.normal == 300
    completed = [e for e in events if e["type"] == "compaction_ended"]
    assert len(completed) >= 5
    assert all(e["outcome"] == "completed" for e in completed)
    assert [e["type"] for e in events].count("compaction_started") == len(completed)
    # As the provider counts them, no request passed the window, summary requests included.
    assert max(tokens for tokens, _ in model.counted) <= window
    # Usage events carry the reported figure beside raw's estimate and the window.
    usage = [e for e in events if e["type"] == "usage"]
    assert len(usage) == 300
    assert all(u["context_window"] == window and u["estimated_input_tokens"] for u in usage)
    assert all(abs(u["estimated_input_tokens"] - u["input_tokens"]) < 0.2 * window for u in usage)
    # The display history keeps every message.
    kinds = await display_messages(backend, session_id)
    assert kinds.count("UserMessage") == 3
    assert kinds.count("AssistantMessage") == 300
    assert kinds.count("ToolResultMessage") == 297
    # Committed history is not rewritten between ordinary requests: each one extends the
    # previous one's messages, except once at each compaction; the cache key never changes.
    requests = [r for r in model.provider.requests if not is_summary_request(r)]
    assert len({r.cache_key for r in model.provider.requests}) == 1
    breaks = sum(
        1
        for before, after in itertools.pairwise(requests)
        if after.messages[: len(before.messages)] != before.messages
    )
    assert breaks == len(completed)
    # The context holds one summary, first, and none of the compacted messages.
    context = await backend.read_context(session_id)
    assert isinstance(context[0], UserMessage)
    first = context[0].content[0]
    assert isinstance(first, TextBlock)
    assert first.text.startswith(SUMMARY_HEADER)
    assert len(context) < 40


async def test_a_resumed_session_sends_the_summary_not_the_compacted_messages(
    backend: SqliteBackend, agent: Agent
) -> None:
    model = Model(lambda request, n: echo(n) if n < 12 else Reply(text="done"), summary="S-42")
    runtime = Runtime(backend)
    limits = ContextLimits(window=3000, threshold=0.8)
    async with runtime.open_session(agent, model.provider, limits=limits) as session:
        await session.run_turn("the first prompt")
    assert any(summary for _, summary in model.counted)
    again = ScriptedProvider([Reply(text="resumed")])
    async with runtime.open_session(agent, again, session_id=session.id, limits=limits) as resumed:
        await resumed.run_turn("after resume")
    sent = again.requests[0].messages
    text = json.dumps([json.loads(dumps_message(m)) for m in sent])
    assert "S-42" in text
    assert SUMMARY_HEADER in text
    assert "the first prompt" not in text
    assert "00001 x" not in text


async def test_a_compaction_cancelled_midway_leaves_the_session_as_it_was(
    backend: SqliteBackend, agent: Agent
) -> None:
    runtime = Runtime(backend)
    setup = ScriptedProvider([echo(1), echo(2), echo(3), Reply(text="done")])
    async with runtime.open_session(agent, setup) as session:
        await session.run_turn("fill")
    before_context = await backend.read_context(session.id)
    before_display = await display_messages(backend, session.id)
    signal = CancellationSignal()

    def summary_midway(request: ModelRequest) -> Reply:
        signal.cancel("the user pressed Ctrl-C")  # the request was sent; its reply streams
        return Reply(text="a long summary " * 20, chunk=1, delay=0.01)

    events: list[dict[str, Any]] = []
    async with runtime.open_session(
        agent, ScriptedProvider([summary_midway]), session_id=session.id
    ) as again:
        ended = await again.compact(signal=signal, on_event=lambda e: events.append(e.to_dict()))
    assert ended.outcome == "cancelled"
    assert [e["type"] for e in events] == ["compaction_started", "compaction_ended"]
    assert events[-1]["outcome"] == "cancelled"
    assert await backend.read_context(session.id) == before_context
    assert await display_messages(backend, session.id) == before_display


async def test_a_compaction_cancelled_in_a_turn_ends_the_turn_and_changes_nothing(
    backend: SqliteBackend, agent: Agent
) -> None:
    runtime = Runtime(backend)
    signal = CancellationSignal()
    seen: list[int] = []

    def step(request: ModelRequest) -> Reply:
        if is_summary_request(request):
            seen.append(len(request.messages) - 1)
            signal.cancel("stop")
            return Reply(text="summary", chunk=1, delay=0.01)
        return echo(len(seen), size=600)

    limits = ContextLimits(window=2500, threshold=0.8)
    provider = ScriptedProvider([step] * 50)
    async with runtime.open_session(agent, provider, limits=limits) as session:
        ended = await session.run_turn("go", signal=signal)
        assert ended.reason == "cancelled"
        context = await backend.read_context(session.id)
    assert seen, "the turn should have started a compaction"
    assert not any(
        isinstance(m, UserMessage) and SUMMARY_HEADER in json.dumps(dumps_message(m))
        for m in context
    )
    assert len(context) == len(await display_messages(backend, session.id))


async def test_a_failed_compaction_changes_nothing(backend: SqliteBackend, agent: Agent) -> None:
    runtime = Runtime(backend)
    setup = ScriptedProvider([echo(1), echo(2), Reply(text="done")])
    async with runtime.open_session(agent, setup) as session:
        await session.run_turn("fill")
    before = await backend.read_context(session.id)
    failing = ScriptedProvider([Reply(text="half a summ", error=ProviderFailed("boom"))])
    events: list[dict[str, Any]] = []
    async with runtime.open_session(agent, failing, session_id=session.id) as again:
        with pytest.raises(ProviderFailed):
            await again.compact(on_event=lambda e: events.append(e.to_dict()))
    assert events[-1]["outcome"] == "failed"
    assert events[-1]["error"]["code"] == "provider_error"
    assert await backend.read_context(session.id) == before


async def test_a_turn_that_outgrows_the_window_ends_as_context_too_long(
    backend: SqliteBackend, agent: Agent
) -> None:
    model = Model(lambda request, n: echo(n, size=8000))
    runtime = Runtime(backend)
    limits = ContextLimits(window=3000, threshold=0.8)
    async with runtime.open_session(agent, model.provider, limits=limits) as session:
        ended = await session.run_turn("one huge result")
    assert ended.reason == "error"
    assert ended.error is not None
    assert ended.error["code"] == ContextTooLong.code
    assert max(tokens for tokens, _ in model.counted) <= 3000


async def test_a_first_request_that_cannot_fit_is_never_sent_nor_counted(
    backend: SqliteBackend, agent: Agent
) -> None:
    provider = ScriptedProvider([Reply(text="never")])
    limits = ContextLimits(window=3000, threshold=0.8)
    async with Runtime(backend).open_session(agent, provider, limits=limits) as session:
        ended = await session.run_turn("word " * 20_000)
    assert ended.reason == "error"
    assert ended.error is not None
    assert ended.error["code"] == ContextTooLong.code
    assert provider.requests == []
    assert ended.steps == 0  # "turn ended: error after 0 request(s)"


async def test_a_request_refused_as_too_long_is_sent_again_after_a_compaction(
    backend: SqliteBackend, agent: Agent
) -> None:
    runtime = Runtime(backend)
    setup = ScriptedProvider([echo(1), echo(2), echo(3), Reply(text="done")])
    async with runtime.open_session(agent, setup) as session:
        await session.run_turn("fill")
    provider = ScriptedProvider(
        [
            Reply(error=ContextTooLong("too long", provider="scripted")),
            Reply(text="the summary"),
            Reply(text="answered"),
        ]
    )
    events: list[dict[str, Any]] = []
    async with runtime.open_session(agent, provider, session_id=session.id) as again:
        ended = await again.run_turn("more", on_event=lambda e: events.append(e.to_dict()))
    assert ended.reason == "completed"
    started = [e for e in events if e["type"] == "compaction_started"]
    assert [e["reason"] for e in started] == ["overflow"]
    assert len(provider.requests[2].messages) < len(provider.requests[0].messages)


async def test_the_todo_panel_sends_a_bounded_reminder_after_a_compaction(
    backend: SqliteBackend, agent: Agent
) -> None:
    items = [{"text": "write the parser", "status": "done"}]
    items += [{"text": "ship it", "status": "in_progress"}]
    items += [{"text": f"open task {i} " + "y" * 150, "status": "pending"} for i in range(30)]

    def answer(request: ModelRequest, n: int) -> Reply:
        if n == 1:
            return Reply(tool_calls=(("todo", {"items": items}),), chunk=4096)
        return echo(n) if n < 30 else Reply(text="done")

    model = Model(answer)
    runtime = Runtime(backend)
    limits = ContextLimits(window=9000, threshold=0.8)
    async with runtime.open_session(agent, model.provider, limits=limits) as session:
        ended = await session.run_turn("plan and work")
    assert ended.reason == "completed", ended
    summaries = [n for n, (_, summary) in enumerate(model.counted) if summary]
    assert summaries, "the session should have compacted"
    after = model.provider.requests[summaries[0] + 1]
    head = after.messages[0]
    assert isinstance(head, UserMessage)
    reminders = [b.text for b in head.content[1:] if isinstance(b, TextBlock)]
    assert len(reminders) == 1
    reminder = reminders[0]
    assert reminder.startswith('[raw] The panel "Tasks" (builtin/todo:todo)')
    assert "[in_progress] ship it" in reminder
    assert "[pending] open task 0" in reminder
    assert "write the parser" not in reminder  # a done item is not an open item
    assert len(reminder.encode("utf-8")) <= MAX_REMINDER_BYTES
    # The document itself never goes to the model.
    for request in model.provider.requests[summaries[0] + 1 :]:
        text = json.dumps([json.loads(dumps_message(m)) for m in request.messages])
        assert "open task 29" not in text


async def test_usage_events_show_the_estimate_without_a_window(
    backend: SqliteBackend, agent: Agent
) -> None:
    model = Model(lambda request, n: Reply(text="hi"))
    events: list[LoopEvent] = []
    async with Runtime(backend).open_session(agent, model.provider) as session:
        await session.run_turn("hello", on_event=events.append)
    usage = [e.to_dict() for e in events if e.to_dict()["type"] == "usage"]
    assert usage[0]["context_window"] is None
    assert usage[0]["estimated_input_tokens"] > 0
    assert usage[0]["input_tokens"] == model.counted[0][0]


def test_the_summary_prompt_is_the_one_the_sessions_page_documents() -> None:
    page = Path(__file__).parents[2] / "docs" / "sessions.md"
    text = page.read_text(encoding="utf-8")
    assert f"> {SUMMARY_PROMPT}\n" in text
    assert f"`{SUMMARY_HEADER}`" in text


def test_the_measure_counts_utf8_bytes_and_takes_any_text() -> None:
    from raw_core.runtime.context import MESSAGE_OVERHEAD_BYTES, message_bytes

    assert message_bytes(UserMessage.from_text("héllo")) == MESSAGE_OVERHEAD_BYTES + 6
    # A model's text may hold a lone surrogate (hostile output): it is measured, not refused.
    assert message_bytes(UserMessage.from_text("a\ud800")) == MESSAGE_OVERHEAD_BYTES + 4


async def test_a_hostile_summary_is_cut_and_stored(backend: SqliteBackend, agent: Agent) -> None:
    runtime = Runtime(backend)
    setup = ScriptedProvider([echo(1), echo(2), Reply(text="done")])
    async with runtime.open_session(agent, setup) as session:
        await session.run_turn("fill")
    hostile = "sum\ud800 " * 10_000  # past the cap, with lone surrogates
    async with runtime.open_session(
        agent, ScriptedProvider([Reply(text=hostile, chunk=4096)]), session_id=session.id
    ) as again:
        ended = await again.compact()
    assert ended.outcome == "completed"
    head = (await backend.read_context(session.id))[0]
    assert isinstance(head, UserMessage)
    assert isinstance(head.content[0], TextBlock)
    assert head.content[0].text.endswith("[raw: cut here]")
    assert len(head.content[0].text) < MAX_SUMMARY_BYTES + len(SUMMARY_HEADER) + 10
