"""The loop's session API: resuming (after a crash too), runtime changes, streaming events,
the replay provider, and plug-ins observing events."""

from __future__ import annotations

import functools
import json
import os
import signal
import subprocess
import sys
import textwrap
import time
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest

from raw_core import hookimpl
from raw_core.agent import Agent, load_agent
from raw_core.config import load_config
from raw_core.errors import ConfigInvalid, SessionLocked
from raw_core.plugins import PluginHost
from raw_core.providers.contract import StopEvent as StopEventType
from raw_core.providers.contract import TextDelta as TextDeltaEvent
from raw_core.providers.contract import ToolCallDelta as ArgsEvent
from raw_core.providers.contract import ToolCallEnd as EndEvent
from raw_core.providers.contract import ToolCallStart as StartEvent
from raw_core.providers.scripted import ReplayProvider, Reply, ScriptedProvider
from raw_core.runtime import Runtime
from raw_core.runtime.events import LoopEvent
from raw_core.sessions.sqlite import AssistantMessage, SqliteBackend, ToolResultMessage, UserMessage

pytestmark = pytest.mark.anyio

ECHO = (
    "async def handler(args, context):\n"
    "    return {'content': [{'type': 'text', 'text': args.get('text', '')}]}\n"
)
SLOW = "import time\ndef handler(args, context):\n    time.sleep(60)\n    return {'content': []}\n"
SCHEMA = {
    "type": "object",
    "properties": {"text": {"type": "string"}},
    "additionalProperties": False,
}


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


def write_config(root: Path, make_tool: Any, use: list[str], description: str = "Echo.") -> Path:
    make_tool("echo", root=root / "tools", code=ECHO, input_schema=SCHEMA, description=description)
    make_tool("slow", root=root / "tools", code=SLOW, input_schema=SCHEMA)
    make_tool("other", root=root / "tools", code=ECHO, input_schema=SCHEMA)
    path = root / "raw.json"
    path.write_text(json.dumps({"agents": {"a": {"tools": {"use": use}}}}))
    return path


@pytest.fixture
def agent(tmp_path: Path, make_tool: Any) -> Agent:
    path = write_config(tmp_path, make_tool, ["agent/echo", "agent/slow"])
    return load_agent(load_config(path), host=PluginHost())


@pytest.fixture
async def backend(tmp_path: Path) -> AsyncIterator[SqliteBackend]:
    async with await SqliteBackend.open(tmp_path / "state") as opened:
        yield opened


async def test_a_resumed_session_continues_its_history(
    backend: SqliteBackend, agent: Agent
) -> None:
    runtime = Runtime(backend)
    async with runtime.open_session(agent, ScriptedProvider([Reply(text="one")])) as first:
        await first.run_turn("hello")
    provider = ScriptedProvider([Reply(text="two")])
    async with runtime.open_session(agent, provider, session_id=first.id) as again:
        assert again.id == first.id
        await again.run_turn("again")
    messages = provider.requests[0].messages
    assert [type(m) for m in messages] == [UserMessage, AssistantMessage, UserMessage]


async def test_a_session_has_one_writer(backend: SqliteBackend, agent: Agent) -> None:
    runtime = Runtime(backend)
    async with runtime.open_session(agent, ScriptedProvider([])) as session:
        with pytest.raises(SessionLocked):
            async with runtime.open_session(agent, ScriptedProvider([]), session_id=session.id):
                pass


async def test_changed_tools_change_the_cache_key_once_and_say_so(
    tmp_path: Path, make_tool: Any, backend: SqliteBackend
) -> None:
    before = load_agent(
        load_config(write_config(tmp_path, make_tool, ["agent/echo"])), host=PluginHost()
    )
    runtime = Runtime(backend)
    provider = ScriptedProvider([Reply(text="a"), Reply(text="b"), Reply(text="c")])
    async with runtime.open_session(before, provider) as session:
        await session.run_turn("first")
    after_path = write_config(
        tmp_path / "v2",
        make_tool,
        ["agent/echo", "agent/other"],
        description="Echo, better described.",
    )
    after = load_agent(load_config(after_path), host=PluginHost())
    events: list[LoopEvent] = []
    async with runtime.open_session(after, provider, session_id=session.id) as resumed:
        await resumed.run_turn("second", on_event=events.append)
        await resumed.run_turn("third", on_event=events.append)
    keys = [r.cache_key for r in provider.requests]
    assert keys[0] != keys[1] == keys[2]
    changes = [e.to_dict() for e in events if e.to_dict()["type"] == "runtime_changed"]
    assert changes == [
        {
            "type": "runtime_changed",
            "session_id": session.id,
            "added": ["other"],
            "removed": [],
            "changed": ["echo"],
            "identities": {"other": "agent/other", "echo": "agent/echo"},
        }
    ]
    # committed history is never rewritten to match the change
    first_turn = (*provider.requests[0].messages, AssistantMessage(text="a"))
    assert provider.requests[1].messages[:2] == first_turn


async def test_stream_turn_yields_every_event_then_ends(
    backend: SqliteBackend, agent: Agent
) -> None:
    provider = ScriptedProvider([Reply(tool_calls=(("echo", {"text": "x"}),)), Reply(text="done")])
    async with (
        Runtime(backend).open_session(agent, provider) as session,
        session.stream_turn("go") as events,
    ):
        kinds = [event.to_dict()["type"] async for event in events]
    assert kinds[0] == "turn_started"
    assert kinds[-1] == "turn_ended"
    assert kinds.count("tool_call_finished") == 1


async def test_plugins_observe_turn_events(backend: SqliteBackend, agent: Agent) -> None:
    seen: list[dict[str, Any]] = []

    class Observer:
        @hookimpl
        def raw_session_event(self, event: dict[str, Any]) -> None:
            seen.append(event)

    host = PluginHost()
    host.register(Observer(), name="observer")
    provider = ScriptedProvider([Reply(tool_calls=(("echo", {"text": "x"}),)), Reply(text="hi")])
    async with Runtime(backend, host=host).open_session(agent, provider) as session:
        await session.run_turn("go")
    kinds = [e["type"] for e in seen]
    assert kinds == [
        "turn_started",
        "assistant_committed",
        "tool_call_started",
        "tool_call_finished",
        "text_delta",
        "assistant_committed",
        "turn_ended",
    ]


async def test_what_a_front_end_does_to_an_event_reaches_no_plug_in(
    backend: SqliteBackend, agent: Agent
) -> None:
    seen: list[dict[str, Any]] = []

    class Observer:
        @hookimpl
        def raw_session_event(self, event: dict[str, Any]) -> None:
            seen.append(event)

    def tamper(event: LoopEvent) -> None:  # a front end that edits the values it was given
        arguments = getattr(event, "arguments", None)
        if isinstance(arguments, dict):
            arguments["text"] = "TAMPERED"

    host = PluginHost()
    host.register(Observer(), name="observer")
    provider = ScriptedProvider([Reply(tool_calls=(("echo", {"text": "x"}),)), Reply(text="hi")])
    async with Runtime(backend, host=host).open_session(agent, provider) as session:
        await session.run_turn("go", on_event=tamper)
    (finished,) = [e for e in seen if e["type"] == "tool_call_finished"]
    assert finished["arguments"] == {"text": "x"}


async def test_replay_provider_plays_a_recording(
    tmp_path: Path, backend: SqliteBackend, agent: Agent
) -> None:
    recording = tmp_path / "demo.jsonl"
    recording.write_text(
        json.dumps(
            {
                "text": "Echoing.",
                "tool_calls": [{"name": "echo", "arguments": {"text": "from the recording"}}],
            }
        )
        + "\n"
        + json.dumps({"text": "All done."})
        + "\n"
    )
    provider = ReplayProvider.from_file(recording)
    events: list[LoopEvent] = []
    async with Runtime(backend).open_session(agent, provider) as session:
        end = await session.run_turn("go", on_event=events.append)
    assert end.reason == "completed"
    finished = [e.to_dict() for e in events if e.to_dict()["type"] == "tool_call_finished"]
    assert finished[0]["content"] == [{"type": "text", "text": "from the recording"}]


@pytest.mark.parametrize(
    ("line", "field"),
    [
        pytest.param("{not json", "$", id="not-json"),
        pytest.param('{"text": 1}', "$.text", id="text-number"),
        pytest.param('{"txt": "a"}', "$.txt", id="unknown-field"),
        pytest.param('{"tool_calls": [{"name": "x"}]}', "$.tool_calls[0]", id="call-shape"),
    ],
)
def test_a_malformed_recording_names_its_line(tmp_path: Path, line: str, field: str) -> None:
    recording = tmp_path / "bad.jsonl"
    recording.write_text('{"text": "fine"}\n' + line + "\n")
    with pytest.raises(ConfigInvalid) as caught:
        ReplayProvider.from_file(recording)
    assert caught.value.context["line"] == 2
    assert caught.value.field == field


KILLED_TURN = """
import anyio, json, sys
from raw_core.agent import load_agent
from raw_core.config import load_config
from raw_core.runtime import Runtime
from raw_core.plugins import PluginHost
from raw_core.providers.scripted import Reply, ScriptedProvider
from raw_core.sessions.sqlite import SqliteBackend

root = sys.argv[1]
agent = load_agent(load_config(root + "/raw.json"), host=PluginHost())
provider = ScriptedProvider([Reply(tool_calls=(("echo", {"text": "first"}),
                                               ("slow", {}), ("echo", {"text": "third"})))])

def on_event(event):
    data = event.to_dict()
    if data["type"] == "tool_call_started" and data["name"] == "slow":
        print(session.id, flush=True)  # the first result is committed by now

async def main():
    global session
    async with await SqliteBackend.open(root + "/state") as backend:
        async with Runtime(backend).open_session(agent, provider) as session:
            await session.run_turn("go", on_event=on_event)

anyio.run(main)
"""


def kill_during_second_call(root: Path) -> str:
    """Run KILLED_TURN in a process, SIGKILL it once its second call started; its session."""
    script = root / "turn.py"
    script.write_text(textwrap.dedent(KILLED_TURN))
    child = subprocess.Popen(
        [sys.executable, str(script), str(root)], stdout=subprocess.PIPE, text=True
    )
    assert child.stdout is not None
    session_id = child.stdout.readline().strip()
    os.kill(child.pid, signal.SIGKILL)
    child.wait()
    child.stdout.close()
    return session_id


@pytest.mark.parametrize("attempt", range(3))
async def test_a_turn_killed_between_tool_calls_resumes_with_a_valid_transcript(
    tmp_path: Path, make_tool: Any, attempt: int
) -> None:
    write_config(tmp_path, make_tool, ["agent/echo", "agent/slow"])
    session_id = kill_during_second_call(tmp_path)
    agent = load_agent(load_config(tmp_path / "raw.json"), host=PluginHost())
    provider = ScriptedProvider([Reply(text="picking up")])
    async with await SqliteBackend.open(tmp_path / "state") as backend:
        async with Runtime(backend).open_session(agent, provider, session_id=session_id) as session:
            end = await session.run_turn("continue")
        messages = provider.requests[0].messages
    assert end.reason == "completed"
    assert [type(m) for m in messages] == [
        UserMessage,
        AssistantMessage,
        ToolResultMessage,
        ToolResultMessage,
        ToolResultMessage,
        UserMessage,
    ]
    results = [m for m in messages if isinstance(m, ToolResultMessage)]
    assert [(r.tool_call_id, r.status, r.error_code) for r in results] == [
        ("call_1", "ok", None),
        ("call_2", "error", "cancelled"),
        ("call_3", "error", "cancelled"),
    ]


# --- regressions a review reproduced ---------------------------------------------------------


async def test_resume_repairs_a_call_whose_id_an_earlier_turn_used(
    backend: SqliteBackend, agent: Agent
) -> None:
    from raw_core.sessions.sqlite import ToolCall as StoredCall

    runtime = Runtime(backend)
    first = ScriptedProvider(
        [
            [
                TextDeltaEvent(text="x"),
                StartEvent(index=0, id="c0", name="echo"),
                ArgsEvent(index=0, arguments="{}"),
                EndEvent(index=0),
                StopEventType(reason="tool_use"),
            ],
            Reply(text="ok"),
        ]
    )
    async with runtime.open_session(agent, first) as session:
        await session.run_turn("one")
    async with backend.open_writer(session.id) as writer:  # a second turn that died mid-call
        await writer.append(
            [
                UserMessage.from_text("two"),
                AssistantMessage(tool_calls=(StoredCall(id="c0", name="echo", arguments="{}"),)),
            ]
        )
    provider = ScriptedProvider([Reply(text="resumed")])
    async with runtime.open_session(agent, provider, session_id=session.id) as resumed:
        await resumed.run_turn("three")
    messages = provider.requests[0].messages
    assert [type(m).__name__ for m in messages[-3:]] == [
        "AssistantMessage",
        "ToolResultMessage",
        "UserMessage",
    ]
    last_result = messages[-2]
    assert isinstance(last_result, ToolResultMessage)
    assert last_result.error_code == "cancelled"


async def test_two_calls_of_one_id_in_a_reply_are_paired_with_their_own_results(
    backend: SqliteBackend, agent: Agent
) -> None:
    """A provider that gives two calls one id: each keeps a result of its own, and the next
    request carries no id twice (which providers refuse)."""
    stream: list[Any] = []
    for index, text in enumerate(["a", "b"]):
        stream += [
            StartEvent(index=index, id="dup", name="echo"),
            ArgsEvent(index=index, arguments=json.dumps({"text": text})),
            EndEvent(index=index),
        ]
    provider = ScriptedProvider([[*stream, StopEventType(reason="tool_use")], Reply(text="ok")])
    async with Runtime(backend).open_session(agent, provider) as session:
        await session.run_turn("go")
    messages = provider.requests[1].messages
    assistant = next(m for m in messages if isinstance(m, AssistantMessage) and m.tool_calls)
    ids = [call.id for call in assistant.tool_calls]
    assert ids[0] == "dup"
    assert len(set(ids)) == 2
    results = [m for m in messages if isinstance(m, ToolResultMessage)]
    assert [r.tool_call_id for r in results] == ids


async def test_a_turn_cancelled_from_outside_still_ends_properly(
    backend: SqliteBackend, agent: Agent
) -> None:
    import anyio

    provider = ScriptedProvider([Reply(tool_calls=(("slow", {}),)), Reply(text="next")])
    events: list[LoopEvent] = []
    async with Runtime(backend).open_session(agent, provider) as session:
        with anyio.CancelScope() as outside:

            def on_event(event: LoopEvent) -> None:
                events.append(event)
                if event.to_dict()["type"] == "tool_call_started":  # slow is running
                    outside.cancel()

            await session.run_turn("go", on_event=on_event)
        assert outside.cancelled_caught
        assert events[-1].to_dict()["type"] == "turn_ended"
        assert events[-1].to_dict()["reason"] == "cancelled"
        ended = await session.run_turn("again")
    assert ended.reason == "completed"
    second = provider.requests[1].messages
    assert [type(m).__name__ for m in second] == [
        "UserMessage",
        "AssistantMessage",
        "ToolResultMessage",
        "UserMessage",
    ]


async def test_stream_turn_raises_turn_in_progress_itself(
    backend: SqliteBackend, agent: Agent
) -> None:
    import anyio

    from raw_core.errors import TurnInProgress

    provider = ScriptedProvider([Reply(text="x" * 30, chunk=1, delay=0.01)])
    streaming = anyio.Event()

    def on_event(event: LoopEvent) -> None:
        if event.to_dict()["type"] == "text_delta":
            streaming.set()

    async with (
        Runtime(backend).open_session(agent, provider) as session,
        anyio.create_task_group() as group,
    ):
        group.start_soon(functools.partial(session.run_turn, "first", on_event=on_event))
        await streaming.wait()  # the first turn holds the session, 29 deltas to go
        with pytest.raises(TurnInProgress):
            async with session.stream_turn("second"):
                pass
        group.cancel_scope.cancel()


async def test_a_tool_change_is_announced_even_after_a_session_opened_without_a_turn(
    tmp_path: Path, make_tool: Any, backend: SqliteBackend
) -> None:
    runtime = Runtime(backend)
    before = load_agent(
        load_config(write_config(tmp_path, make_tool, ["agent/echo"])), host=PluginHost()
    )
    async with runtime.open_session(before, ScriptedProvider([Reply(text="a")])) as session:
        await session.run_turn("first")
    after = load_agent(
        load_config(write_config(tmp_path / "v2", make_tool, ["agent/echo", "agent/other"])),
        host=PluginHost(),
    )
    async with runtime.open_session(after, ScriptedProvider([]), session_id=session.id):
        pass  # opened and closed: no turn, so nothing announced yet
    events: list[LoopEvent] = []
    async with runtime.open_session(
        after, ScriptedProvider([Reply(text="b")]), session_id=session.id
    ) as again:
        await again.run_turn("second", on_event=events.append)
    assert [e.to_dict()["added"] for e in events if e.to_dict()["type"] == "runtime_changed"] == [
        ["other"]
    ]


def test_a_recording_that_is_not_utf8_is_a_config_error(tmp_path: Path) -> None:
    recording = tmp_path / "bad.jsonl"
    recording.write_bytes(b'{"text": "caf\xe9"}\n')
    with pytest.raises(ConfigInvalid, match="not UTF-8"):
        ReplayProvider.from_file(recording)


async def test_a_turn_whose_end_cannot_be_synced_ends_in_an_error_it_reports(
    backend: SqliteBackend, agent: Agent, monkeypatch: pytest.MonkeyPatch
) -> None:
    provider = ScriptedProvider([Reply(tool_calls=(("echo", {"text": "a"}),)), Reply(text="ok")])
    events: list[LoopEvent] = []
    async with Runtime(backend).open_session(agent, provider) as session:

        def failing_fsync(fd: int) -> None:  # the disk reports an I/O error
            raise OSError(5, "Input/output error")

        monkeypatch.setattr("raw_core.sessions.sqlite.store.os.fsync", failing_fsync)
        end = await session.run_turn("go", on_event=events.append)
    assert end.reason == "error"
    assert end.error is not None
    assert end.error["code"] == "store_unavailable"
    assert [e.to_dict()["type"] for e in events].count("turn_ended") == 1
    context = await backend.read_context(session.id)
    assert [type(m).__name__ for m in context] == [
        "UserMessage",
        "AssistantMessage",
        "ToolResultMessage",
        "AssistantMessage",
    ]


async def test_the_agents_handler_timeout_ends_a_call_that_runs_longer(
    tmp_path: Path, make_tool: Any, backend: SqliteBackend
) -> None:
    make_tool(
        "nap",
        root=tmp_path / "tools",
        code="import anyio\nasync def handler(args, context):\n"
        "    await anyio.sleep(30)\n    return {'content': []}\n",
        input_schema=SCHEMA,
    )
    path = tmp_path / "raw.json"
    path.write_text(
        json.dumps({"agents": {"a": {"handler_timeout_ms": 200, "tools": {"use": ["agent/nap"]}}}})
    )
    agent = load_agent(load_config(path), host=PluginHost())
    provider = ScriptedProvider([Reply(tool_calls=(("nap", {}),)), Reply(text="ok")])
    async with Runtime(backend).open_session(agent, provider) as session:
        started = time.monotonic()
        end = await session.run_turn("go")
        elapsed = time.monotonic() - started
    assert end.reason == "completed"
    assert elapsed >= 0.2  # not before the timeout; that the nap was cut is the code below
    result = (await backend.read_context(session.id))[2]
    assert isinstance(result, ToolResultMessage)
    assert result.error_code == "timeout"
    assert "within 0.2 s" in result.content[0].text  # type: ignore[union-attr]
