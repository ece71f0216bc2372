"""Spec 004, "The turn" and "What the model receives", clause by clause, with the scripted
provider and a real session store."""

from __future__ import annotations

import functools
import json
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import anyio
import anyio.lowlevel
import attrs
import pytest

from raw_core.agent import Agent, load_agent
from raw_core.config import load_config
from raw_core.plugins import PluginHost
from raw_core.providers.contract import ModelRequest, StopEvent, TextDelta, ToolCallStart
from raw_core.providers.scripted import Reply, ScriptedProvider
from raw_core.runtime import Runtime, Session
from raw_core.runtime.events import LoopEvent, ToolCallFinished, TurnEnded
from raw_core.runtime.frontend import CallbackFrontEnd
from raw_core.sessions.sqlite import (
    AssistantMessage,
    SqliteBackend,
    TextBlock,
    ToolResultMessage,
    UserMessage,
)
from raw_core.tools.calls import ApprovalRequest

pytestmark = pytest.mark.anyio

TOOLS = {
    "echo": "async def handler(args, context):\n"
    "    return {'content': [{'type': 'text', 'text': args['text']}]}\n",
    "slow": "import anyio\n"
    "async def handler(args, context):\n"
    "    await anyio.sleep(30)\n"
    "    return {'content': []}\n",
}
SCHEMA = {
    "type": "object",
    "properties": {"text": {"type": "string"}},
    "additionalProperties": False,
}
SECRET_BASE_URL = "http://127.0.0.1:9/config-only-value"
RULE_REGEX = "config-only-regex-[0-9]+"


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


@pytest.fixture
def agent(tmp_path: Path, make_tool: Any) -> Agent:
    for name, code in TOOLS.items():
        make_tool(
            name,
            root=tmp_path / "tools",
            code=code,
            input_schema=SCHEMA,
            condition_sources=["arguments"],
        )
    (tmp_path / "raw.json").write_text(
        json.dumps(
            {
                "models": {
                    "m": {"provider": "scripted", "model": "x", "base_url": SECRET_BASE_URL}
                },
                "agents": {
                    "a": {
                        "model": "m",
                        "system": "You are terse.",
                        "max_steps": 4,
                        "tools": {
                            "use": ["agent/echo", "agent/slow"],
                            "rules": [
                                {
                                    "match": "agent/echo",
                                    "effect": "ask",
                                    "when": {
                                        "source": "arguments",
                                        "any": "text",
                                        "regex": RULE_REGEX,
                                    },
                                }
                            ],
                        },
                    }
                },
            }
        )
    )
    return load_agent(load_config(tmp_path / "raw.json"), host=PluginHost())


@pytest.fixture
async def backend(tmp_path: Path) -> AsyncIterator[SqliteBackend]:
    async with await SqliteBackend.open(tmp_path / "state") as opened:
        yield opened


async def run(
    backend: SqliteBackend,
    agent: Agent,
    provider: ScriptedProvider,
    prompt: str = "go",
    **options: Any,
) -> tuple[TurnEnded, list[LoopEvent], str]:
    events: list[LoopEvent] = []
    async with Runtime(backend).open_session(agent, provider, **options) as session:
        end = await session.run_turn(prompt, on_event=events.append)
        return end, events, session.id


async def context(backend: SqliteBackend, session_id: str) -> tuple[Any, ...]:
    return await backend.read_context(session_id)


# --- What the model receives -------------------------------------------------------------


async def test_a_request_holds_only_system_prompt_tools_and_conversation(
    backend: SqliteBackend, agent: Agent
) -> None:
    provider = ScriptedProvider([Reply(tool_calls=(("echo", {"text": "hi"}),)), Reply(text="done")])
    await run(backend, agent, provider)
    assert {f.name for f in attrs.fields(ModelRequest)} == {
        "system",
        "tools",
        "messages",
        "cache_key",
    }
    for request in provider.requests:
        assert request.system == "You are terse."
        assert [t.name for t in request.tools] == ["echo", "slow"]
        assert all(
            isinstance(m, UserMessage | AssistantMessage | ToolResultMessage)
            for m in request.messages
        )
        dumped = json.dumps(attrs.asdict(request), default=str)
        for host_only in (SECRET_BASE_URL, RULE_REGEX, "max_steps", "agent/echo", "usage"):
            assert host_only not in dumped


async def test_tool_schemas_are_the_selected_tools_in_order(
    backend: SqliteBackend, agent: Agent
) -> None:
    provider = ScriptedProvider([Reply(text="hi")])
    await run(backend, agent, provider)
    (tool_echo, tool_slow) = provider.requests[0].tools
    assert (tool_echo.name, dict(tool_echo.input_schema)) == ("echo", SCHEMA)
    assert tool_slow.description == "The slow test tool."


async def test_committed_history_is_a_stable_prefix_across_turns(
    backend: SqliteBackend, agent: Agent
) -> None:
    provider = ScriptedProvider(
        [Reply(tool_calls=(("echo", {"text": "a"}),)), Reply(text="1"), Reply(text="2")]
    )
    async with Runtime(backend).open_session(agent, provider) as session:
        await session.run_turn("first")
        await session.run_turn("second")
    first, second, third = (r.messages for r in provider.requests)
    assert second[: len(first)] == first
    assert third[: len(second)] == second
    assert len({r.cache_key for r in provider.requests}) == 1


# --- The turn ---------------------------------------------------------------------------


async def test_a_turn_starts_with_one_user_message(backend: SqliteBackend, agent: Agent) -> None:
    _, _, sid = await run(backend, agent, ScriptedProvider([Reply(text="ok")]), "hello there")
    first = (await context(backend, sid))[0]
    assert first == UserMessage(content=(TextBlock(text="hello there"),))


async def test_text_streams_as_it_arrives(backend: SqliteBackend, agent: Agent) -> None:
    _, events, _ = await run(backend, agent, ScriptedProvider([Reply(text="a" * 40, chunk=10)]))
    deltas = [e for e in events if e.to_dict()["type"] == "text_delta"]
    assert [d.to_dict()["text"] for d in deltas] == ["a" * 10] * 4
    kinds = [e.to_dict()["type"] for e in events]
    assert kinds.index("text_delta") < kinds.index("assistant_committed")


async def test_an_assistant_message_is_committed_only_after_its_stream_finishes(
    backend: SqliteBackend, agent: Agent
) -> None:
    seen_during_stream: list[int] = []
    sid_holder: list[str] = []

    class Watching(ScriptedProvider):
        async def stream(self, request: ModelRequest) -> AsyncIterator[Any]:
            async for event in super().stream(request):
                if sid_holder:
                    seen_during_stream.append(len(await context(backend, sid_holder[0])))
                yield event

    provider = Watching([Reply(text="x" * 64, chunk=8)])
    async with Runtime(backend).open_session(agent, provider) as session:
        sid_holder.append(session.id)
        await session.run_turn("go")
    assert set(seen_during_stream) == {1}  # only the user message while streaming
    assert len(await context(backend, sid_holder[0])) == 2


async def test_a_failed_stream_commits_no_partial_message(
    backend: SqliteBackend, agent: Agent
) -> None:
    from raw_core.errors import RateLimited

    provider = ScriptedProvider(
        [Reply(text="half an ans", error=RateLimited("slow down", status=429, retry_after=2.0))]
    )
    end, _, sid = await run(backend, agent, provider)
    assert end.reason == "error"
    assert end.error is not None
    assert end.error["code"] == "rate_limited"
    assert end.error["retry_after"] == 2.0
    assert [type(m) for m in await context(backend, sid)] == [UserMessage]


async def test_tool_calls_are_committed_whole_before_any_call_runs(
    backend: SqliteBackend, agent: Agent, tmp_path: Path
) -> None:
    snapshots: list[int] = []
    sid_holder: list[str] = []

    async def observe(request: ApprovalRequest) -> bool:
        snapshots.append(len(await context(backend, sid_holder[0])))
        return True

    provider = ScriptedProvider(
        [
            Reply(
                tool_calls=(("echo", {"text": "config-only-regex-1"}), ("echo", {"text": "plain"}))
            ),
            Reply(text="done"),
        ]
    )
    async with Runtime(backend).open_session(
        agent, provider, front_end=CallbackFrontEnd(approve=observe)
    ) as session:
        sid_holder.append(session.id)
        await session.run_turn("go")
    assert snapshots == [2]  # user + the whole assistant message, no result yet


async def test_calls_run_in_the_order_the_model_listed_them(
    backend: SqliteBackend, agent: Agent
) -> None:
    provider = ScriptedProvider(
        [Reply(tool_calls=tuple(("echo", {"text": str(i)}) for i in range(5))), Reply(text="done")]
    )
    _, events, sid = await run(backend, agent, provider)
    finished = [e.to_dict() for e in events if e.to_dict()["type"] == "tool_call_finished"]
    assert [f["content"][0]["text"] for f in finished] == ["0", "1", "2", "3", "4"]
    results = [m for m in await context(backend, sid) if isinstance(m, ToolResultMessage)]
    assert [r.tool_call_id for r in results] == [f"call_{i}" for i in range(1, 6)]


@pytest.mark.parametrize(
    ("call", "code"),
    [
        pytest.param(("nope", {}), "tool_unknown", id="unknown-tool"),
        pytest.param(("echo", '{"text": 5}'), "invalid_arguments", id="invalid-arguments"),
        pytest.param(
            ("echo", '{"text": "a", "text": "b"}'), "invalid_arguments", id="duplicate-keys"
        ),
        pytest.param(
            ("echo", {"text": "config-only-regex-7"}),
            "approval_unavailable",
            id="ask-without-approver",
        ),
    ],
)
async def test_every_call_gets_a_result_before_the_next_request(
    backend: SqliteBackend, agent: Agent, call: tuple[str, Any], code: str
) -> None:
    provider = ScriptedProvider([Reply(tool_calls=(call,)), Reply(text="understood")])
    end, _, sid = await run(backend, agent, provider)
    assert end.reason == "completed"
    last = provider.requests[1].messages[-1]
    assert isinstance(last, ToolResultMessage)
    assert (last.status, last.error_code) == ("error", code)
    assert [type(m) for m in await context(backend, sid)] == [
        UserMessage,
        AssistantMessage,
        ToolResultMessage,
        AssistantMessage,
    ]


async def test_the_turn_stops_when_the_model_answers_without_a_tool_call(
    backend: SqliteBackend, agent: Agent
) -> None:
    provider = ScriptedProvider([Reply(text="just text"), Reply(text="never used")])
    end, _, _ = await run(backend, agent, provider)
    assert (end.reason, end.steps, provider.remaining) == ("completed", 1, 1)


async def test_at_most_max_steps_requests_and_the_last_tool_call_never_runs(
    backend: SqliteBackend, agent: Agent
) -> None:
    provider = ScriptedProvider(
        [Reply(tool_calls=(("echo", {"text": str(i)}),)) for i in range(10)]
    )
    end, events, sid = await run(backend, agent, provider)
    assert (end.reason, end.steps) == ("max_steps", 4)
    assert len(provider.requests) == 4
    started = [e for e in events if e.to_dict()["type"] == "tool_call_started"]
    assert len(started) == 3  # the 4th request's call never ran
    last = (await context(backend, sid))[-1]
    assert isinstance(last, ToolResultMessage)
    assert last.error_code == "max_steps"


async def test_a_cancelled_turn_keeps_finished_results_and_cancels_the_rest(
    backend: SqliteBackend, agent: Agent
) -> None:
    provider = ScriptedProvider(
        [Reply(tool_calls=(("echo", {"text": "kept"}), ("slow", {}), ("echo", {"text": "never"})))]
    )
    holder: list[Session] = []

    def on_event(event: LoopEvent) -> None:
        data = event.to_dict()
        if data["type"] == "tool_call_started" and data["name"] == "slow":
            holder[0].cancel()

    async with Runtime(backend).open_session(agent, provider) as session:
        holder.append(session)
        end = await session.run_turn("go", on_event=on_event)
    assert end.reason == "cancelled"
    results = [m for m in await context(backend, session.id) if isinstance(m, ToolResultMessage)]
    assert [(r.status, r.error_code) for r in results] == [
        ("ok", None),
        ("error", "cancelled"),
        ("error", "cancelled"),
    ]


async def test_cancelling_while_the_model_streams_commits_nothing_of_it(
    backend: SqliteBackend, agent: Agent
) -> None:
    provider = ScriptedProvider([Reply(text="x" * 100, chunk=1, delay=0.01)])
    holder: list[Session] = []

    def on_event(event: LoopEvent) -> None:
        if event.to_dict()["type"] == "text_delta":
            holder[0].cancel()

    async with Runtime(backend).open_session(agent, provider) as session:
        holder.append(session)
        end = await session.run_turn("go", on_event=on_event)
    assert end.reason == "cancelled"
    assert [type(m) for m in await context(backend, session.id)] == [UserMessage]


async def test_a_provider_that_fails_before_streaming_is_a_provider_error(
    backend: SqliteBackend, agent: Agent
) -> None:
    class Broken:
        name = "broken"

        def stream(self, request: ModelRequest) -> Any:
            raise ConnectionError("no route to host")

    end, events, _ = await run(backend, agent, Broken())  # type: ignore[arg-type]
    assert end.reason == "error"
    assert end.error is not None
    assert end.error["code"] == "provider_error"
    assert "ConnectionError: no route to host" in end.error["message"]
    assert [e for e in events if isinstance(e, TurnEnded)] == [end]


@pytest.mark.parametrize("by", ["signal", "outer-scope"])
async def test_a_turn_cancelled_while_a_call_runs_gives_that_call_a_true_result(
    backend: SqliteBackend, agent: Agent, by: str
) -> None:
    provider = ScriptedProvider([Reply(tool_calls=(("slow", {}), ("echo", {"text": "never"})))])
    events: list[LoopEvent] = []
    started = anyio.Event()

    def on_event(event: LoopEvent) -> None:
        events.append(event)
        if event.to_dict()["type"] == "tool_call_started":
            started.set()

    async with Runtime(backend).open_session(agent, provider) as session:
        with anyio.CancelScope() as outer:

            async def stop_once_the_handler_waits() -> None:
                await started.wait()
                await anyio.wait_all_tasks_blocked()  # the handler waits inside its sleep
                if by == "signal":
                    session.cancel("stopped by the user")
                else:
                    outer.cancel()

            async with anyio.create_task_group() as group:
                group.start_soon(stop_once_the_handler_waits)
                end = await session.run_turn("go", on_event=on_event)
        await anyio.lowlevel.checkpoint()  # a cancellation leaked to the caller: raised here
    results = [m for m in await context(backend, session.id) if isinstance(m, ToolResultMessage)]
    texts = [r.content[0].text for r in results]  # type: ignore[union-attr]
    assert [r.error_code for r in results] == ["cancelled", "cancelled"]
    assert "before this call ran" in texts[1]
    if by == "signal":  # the dispatcher ended the call: its own result, and its event
        assert end.reason == "cancelled"
        assert texts[0] == "error [cancelled]: the call was cancelled (stopped by the user)"
        finished = [e.to_dict() for e in events if e.to_dict()["type"] == "tool_call_finished"]
        assert [(f["tool_call_id"], f["code"]) for f in finished] == [("call_1", "cancelled")]
    else:  # stopped from outside: the loop records it, and says it was running
        assert outer.cancelled_caught
        assert "while this call was under way" in texts[0]
    assert [e.to_dict()["type"] for e in events].count("turn_ended") == 1


@pytest.mark.parametrize("moment", ["text_delta", "tool_call_started"])
async def test_a_cancelled_turn_closes_its_stream_and_leaks_no_cancellation(
    backend: SqliteBackend, agent: Agent, moment: str
) -> None:
    closed: list[bool] = []

    class Stream:
        """An event stream that is not a generator, so only aclose can release it."""

        def __init__(self, events: list[Any]) -> None:
            self._events = iter(events)

        def __aiter__(self) -> Stream:
            return self

        async def __anext__(self) -> Any:
            await anyio.sleep(0.01)
            try:
                return next(self._events)
            except StopIteration:
                raise StopAsyncIteration from None

        async def aclose(self) -> None:
            closed.append(True)

    first = (
        Reply(text="x" * 5, chunk=1)
        if moment == "text_delta"
        else Reply(tool_calls=(("slow", {}),))
    )

    class Provider:
        name = "streams"

        def __init__(self) -> None:
            self.replies = [first, Reply(text="again")]

        def stream(self, request: ModelRequest) -> Stream:
            reply = self.replies.pop(0)
            assert isinstance(reply, Reply)
            return Stream(reply.events([f"call_{len(self.replies)}"]))

    holder: list[Session] = []

    def on_event(event: LoopEvent) -> None:
        if event.to_dict()["type"] == moment:
            holder[0].cancel()

    async with Runtime(backend).open_session(agent, Provider()) as session:
        holder.append(session)
        end = await session.run_turn("go", on_event=on_event)
        assert end.reason == "cancelled"
        await anyio.lowlevel.checkpoint()  # a cancellation leaked to the caller: raised here
        again = await session.run_turn("next")
    assert again.reason == "completed"
    assert closed == [True, True]  # each stream once: the one left midway, the one finished
    if moment == "tool_call_started":
        results = [
            m for m in await context(backend, session.id) if isinstance(m, ToolResultMessage)
        ]
        assert [r.error_code for r in results] == ["cancelled"]


@pytest.mark.parametrize(
    "script",
    [
        pytest.param([Reply(text="fine")], id="completed"),
        pytest.param([Reply(tool_calls=(("echo", {"text": "x"}),))] * 9, id="max_steps"),
        pytest.param(
            [
                [
                    TextDelta(text="x"),
                    ToolCallStart(index=0, id="c", name="echo"),
                    StopEvent(reason="tool_use"),
                ]
            ],
            id="broken-stream",
        ),
        pytest.param([], id="provider-has-nothing"),
    ],
)
async def test_each_run_emits_exactly_one_terminal_event(
    backend: SqliteBackend, agent: Agent, script: list[Any]
) -> None:
    end, events, _ = await run(backend, agent, ScriptedProvider(script))
    terminal = [e for e in events if isinstance(e, TurnEnded)]
    assert terminal == [end]
    assert events[-1] is end


async def test_renderers_receive_detached_copies(backend: SqliteBackend, agent: Agent) -> None:
    def vandal(event: LoopEvent) -> None:
        data = event.to_dict()
        if data["type"] == "tool_call_finished":
            data["content"][0]["text"] = "vandalised"
            assert isinstance(event, ToolCallFinished)
            with pytest.raises(attrs.exceptions.FrozenInstanceError):  # records are frozen
                event.content[0].text = "vandalised"  # type: ignore[misc,union-attr]

    provider = ScriptedProvider([Reply(tool_calls=(("echo", {"text": "real"}),)), Reply(text="ok")])
    async with Runtime(backend).open_session(agent, provider) as session:
        await session.run_turn("go", on_event=vandal)
    result = provider.requests[1].messages[-1]
    assert isinstance(result, ToolResultMessage)
    assert result.content == (TextBlock(text="real"),)


async def test_a_failing_renderer_does_not_stop_the_turn(
    backend: SqliteBackend, agent: Agent
) -> None:
    def broken(event: LoopEvent) -> None:
        raise RuntimeError("renderer bug")

    async with Runtime(backend).open_session(agent, ScriptedProvider([Reply(text="ok")])) as s:
        end = await s.run_turn("go", on_event=broken)
    assert end.reason == "completed"


async def test_one_session_runs_one_turn_at_a_time(backend: SqliteBackend, agent: Agent) -> None:
    from raw_core.errors import TurnInProgress

    provider = ScriptedProvider([Reply(text="x" * 20, chunk=1, delay=0.01), Reply(text="y")])
    streaming = anyio.Event()

    def on_event(event: LoopEvent) -> None:
        if event.to_dict()["type"] == "text_delta":
            streaming.set()

    async with (
        Runtime(backend).open_session(agent, provider) as session,
        anyio.create_task_group() as group,
    ):
        group.start_soon(functools.partial(session.run_turn, "first", on_event=on_event))
        await streaming.wait()  # the first turn holds the session, 19 deltas to go
        with pytest.raises(TurnInProgress):
            await session.run_turn("second")
    assert len(provider.requests) == 1


async def test_many_sessions_run_concurrently_in_one_process(
    backend: SqliteBackend, agent: Agent
) -> None:
    ends: list[TurnEnded] = []

    async def one(index: int) -> None:
        provider = ScriptedProvider(
            [
                Reply(tool_calls=(("echo", {"text": str(index)}),)),
                Reply(text=f"done {index}", chunk=2, delay=0.001),
            ]
        )
        end, _, _ = await run(backend, agent, provider)
        ends.append(end)

    async with anyio.create_task_group() as group:
        for index in range(8):
            group.start_soon(one, index)
    assert [e.reason for e in ends] == ["completed"] * 8
    assert len(await backend.list_sessions()) == 8
