"""``raw acp`` driven by the protocol SDK's client side, and by hand on its pipes, for what
acpx cannot drive: ``session/load`` of a session first run with ``raw run``, listing,
plans, a client that cannot answer a permission request, and the error paths (bad
JSON-RPC, unknown methods, a prompt during a turn, a huge message, a client that goes
away mid-turn). Every test also checks that stdout carried protocol messages only.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import IO, Any, cast

import anyio
import anyio.abc
import pytest
from acp import Client, RequestError, spawn_agent_process, text_block
from acp.schema import ClientCapabilities, RequestPermissionResponse
from anyio.streams.buffered import BufferedByteReceiveStream

from tests.acp.conftest import Project, raw_run, shown_items

pytestmark = pytest.mark.anyio

READ_NOTE: list[dict[str, Any]] = [
    {
        "text": "I'll read the note.",
        "tool_calls": [{"name": "read_file", "arguments": {"files": [{"path": "notes.txt"}]}}],
    },
    {"text": "The note says to buy milk."},
]
SLEEP: list[dict[str, Any]] = [
    {
        "text": "Waiting.",
        "tool_calls": [{"name": "bash", "arguments": {"commands": [{"command": "sleep 60"}]}}],
    },
    {"text": "never reached"},
]


class Recorder:
    """An ACP client that records every update and answers permission requests with
    ``permission`` (an exception raised, or the option to select)."""

    def __init__(self, permission: str | Exception = "allow_once") -> None:
        self.updates: list[dict[str, Any]] = []
        self.asked: list[dict[str, Any]] = []
        self.permission = permission
        self.got_update = anyio.Event()

    async def session_update(self, session_id: str, update: Any, **kwargs: Any) -> None:
        self.updates.append(update.model_dump(mode="json", by_alias=True, exclude_none=True))
        self.got_update.set()

    async def request_permission(
        self, session_id: str, tool_call: Any, options: Any, **kwargs: Any
    ) -> RequestPermissionResponse:
        self.asked.append(tool_call.model_dump(mode="json", by_alias=True, exclude_none=True))
        if isinstance(self.permission, Exception):
            raise self.permission
        return RequestPermissionResponse.model_validate(
            {"outcome": {"outcome": "selected", "optionId": self.permission}}
        )

    def on_connect(self, conn: Any) -> None:
        pass

    def kinds(self) -> list[str]:
        return [update["sessionUpdate"] for update in self.updates]


def _log(project: Project) -> IO[bytes]:
    """Where ``raw acp`` writes its stderr (checked for tracebacks at the end)."""
    return open(project.root / "raw-acp.log", "ab")


@asynccontextmanager
async def connected(
    project: Project, client: Recorder, capabilities: ClientCapabilities | None = None
) -> AsyncIterator[Any]:
    """A ``raw acp`` process and the SDK's connection to it, initialized (the client
    advertising ``capabilities``)."""
    log = project.root / "raw-acp.log"
    with _log(project) as stderr:
        async with spawn_agent_process(
            cast(Client, client),
            *project.acp_argv(),
            env=project.env,
            cwd=project.work,
            transport_kwargs={"stderr": stderr.fileno()},
            use_unstable_protocol=capabilities is not None,  # elicitation is unstable
        ) as (conn, _process):
            await conn.initialize(protocol_version=1, client_capabilities=capabilities)
            yield conn
    assert "Traceback" not in log.read_text()


async def test_load_replays_a_session_run_in_the_terminal(project: Project) -> None:
    project.write(READ_NOTE)
    session_id = raw_run(project, "what does my note say?")
    client = Recorder()
    async with connected(project, client) as conn:
        listed = await conn.list_sessions()
        assert [info.session_id for info in listed.sessions] == [session_id]
        assert listed.sessions[0].cwd == str(project.work)
        await conn.load_session(cwd=str(project.work), session_id=session_id, mcp_servers=[])
    assert client.kinds() == [
        "user_message_chunk",
        "agent_message_chunk",
        "tool_call",
        "tool_call_update",
        "agent_message_chunk",
    ]
    user, first, call, result, last = client.updates
    assert user["content"]["text"] == "what does my note say?"
    assert first["content"]["text"] == "I'll read the note."
    assert call["title"] == "builtin/read_file"
    assert call["kind"] == "read"
    assert result["toolCallId"] == call["toolCallId"]
    assert result["status"] == "completed"
    assert "remember the milk" in result["content"][0]["content"]["text"]
    assert last["content"]["text"] == "The note says to buy milk."


async def test_a_new_session_is_titled_by_its_first_prompt(project: Project) -> None:
    project.write([{"text": "One."}, {"text": "Two."}])
    long = "word " * 30
    async with connected(project, Recorder()) as conn:
        session = await conn.new_session(cwd=str(project.work), mcp_servers=[])
        first = [text_block("what does\n  my note say?"), text_block(long)]
        await conn.prompt(session_id=session.session_id, prompt=first)
        await conn.prompt(session_id=session.session_id, prompt=[text_block("and then?")])
        listed = await conn.list_sessions()
    title = " ".join(("what does my note say? " + long).split())
    assert [info.title for info in listed.sessions] == [title[:79] + "…"]
    # A loaded session keeps the title it has.
    project.write([{"text": "Three."}])
    async with connected(project, Recorder()) as conn:
        await conn.load_session(
            cwd=str(project.work), session_id=session.session_id, mcp_servers=[]
        )
        await conn.prompt(session_id=session.session_id, prompt=[text_block("once more")])
        listed = await conn.list_sessions()
    assert [info.title for info in listed.sessions] == [title[:79] + "…"]


async def test_a_first_prompt_with_a_lone_surrogate_still_titles_the_session(
    project: Project,
) -> None:
    # JSON allows "\ud800"; the title keeps U+FFFD in its place (the store cannot encode it).
    project.write([{"text": "One."}])
    async with connected(project, Recorder()) as conn:
        session = await conn.new_session(cwd=str(project.work), mcp_servers=[])
        prompt = [text_block("fix \ud800 now")]
        answer = await conn.prompt(session_id=session.session_id, prompt=prompt)
        listed = await conn.list_sessions()
    assert answer.stop_reason == "end_turn"
    assert [info.title for info in listed.sessions] == ["fix \ufffd now"]


async def test_an_empty_prompt_is_refused_and_runs_no_turn(project: Project) -> None:
    project.write([{"text": "Answered."}])
    async with connected(project, Recorder()) as conn:
        session = await conn.new_session(cwd=str(project.work), mcp_servers=[])
        for empty in ([], [text_block("")], [text_block("  \n\t "), text_block("")]):
            with pytest.raises(RequestError) as caught:
                await conn.prompt(session_id=session.session_id, prompt=empty)
            assert caught.value.code == -32602
            data = caught.value.data
            assert isinstance(data, dict)
            assert (data["code"], data["message"]) == ("usage_invalid", "the prompt is empty")
            assert str(caught.value).startswith("usage_invalid: the prompt is empty")
        # No turn ran: the model's one reply answers the first real prompt.
        answer = await conn.prompt(session_id=session.session_id, prompt=[text_block("hi")])
        assert answer.stop_reason == "end_turn"
        listed = await conn.list_sessions()
    assert [info.title for info in listed.sessions] == ["hi"]
    shown = shown_items(project, session.session_id)
    assert [(item["kind"], item["message"]["role"]) for item in shown] == [
        ("message", "user"),
        ("message", "assistant"),
    ], shown


async def test_an_unknown_session_cannot_be_loaded(project: Project) -> None:
    async with connected(project, Recorder()) as conn:
        with pytest.raises(RequestError) as caught:
            await conn.load_session(cwd=str(project.work), session_id="0" * 32, mcp_servers=[])
    data = caught.value.data
    assert isinstance(data, dict)
    assert data["code"] == "session_not_found"


TODO = {
    "items": [
        {"text": "read the code", "status": "done"},
        {"text": "fix the bug", "status": "in_progress"},
    ]
}


async def test_an_acp_plan_panel_is_sent_as_a_plan(project: Project) -> None:
    project.write(
        [
            {"text": "Planning.", "tool_calls": [{"name": "todo", "arguments": TODO}]},
            {"text": "Planned."},
        ],
        use=["builtin/todo"],
    )
    client = Recorder()
    async with connected(project, client) as conn:
        session = await conn.new_session(cwd=str(project.work), mcp_servers=[])
        answer = await conn.prompt(session_id=session.session_id, prompt=[text_block("plan")])
        assert answer.stop_reason == "end_turn"
        plans = [u for u in client.updates if u["sessionUpdate"] == "plan"]
        assert plans == [
            {
                "sessionUpdate": "plan",
                "entries": [
                    {"content": "read the code", "priority": "medium", "status": "completed"},
                    {"content": "fix the bug", "priority": "medium", "status": "in_progress"},
                ],
            }
        ]
        call = next(u for u in client.updates if u["sessionUpdate"] == "tool_call")
        assert call["kind"] == "think"
    # Loading the session again replays the plan with its history.
    replayed = Recorder()
    async with connected(project, replayed) as conn:
        await conn.load_session(
            cwd=str(project.work), session_id=session.session_id, mcp_servers=[]
        )
    assert [u for u in replayed.updates if u["sessionUpdate"] == "plan"] == plans


async def test_a_client_that_cannot_answer_gets_approval_unavailable(project: Project) -> None:
    project.write(
        [
            {
                "text": "Writing.",
                "tool_calls": [
                    {
                        "name": "write_file",
                        "arguments": {
                            "operations": [{"op": "overwrite", "path": "x.txt", "content": "x"}]
                        },
                    }
                ],
            },
            {"text": "Done."},
        ],
        use=["builtin/write_file"],
        rules=[{"match": "builtin/write_file", "effect": "ask"}],
    )
    client = Recorder(permission=RequestError.method_not_found("session/request_permission"))
    async with connected(project, client) as conn:
        session = await conn.new_session(cwd=str(project.work), mcp_servers=[])
        answer = await conn.prompt(session_id=session.session_id, prompt=[text_block("write")])
    assert answer.stop_reason == "end_turn"
    assert len(client.asked) == 1
    finished = [u for u in client.updates if u["sessionUpdate"] == "tool_call_update"]
    assert finished[-1]["rawOutput"] == {"status": "error", "code": "approval_unavailable"}
    assert not (project.work / "x.txt").exists()


# --- by hand on the pipes ------------------------------------------------------------------


class Pipes:
    """``raw acp`` as a child process, spoken to line by line."""

    def __init__(self, process: anyio.abc.Process) -> None:
        self.process = process
        assert process.stdin is not None
        assert process.stdout is not None
        self.stdin = process.stdin
        self.stdout = BufferedByteReceiveStream(process.stdout)
        self.lines: list[bytes] = []

    async def send(self, message: Any) -> None:
        data = message if isinstance(message, bytes) else json.dumps(message).encode()
        await self.stdin.send(data + b"\n")

    async def receive(self) -> dict[str, Any]:
        with anyio.fail_after(60):
            line = await self.stdout.receive_until(b"\n", 64 * 1024 * 1024)
        self.lines.append(line)
        message: dict[str, Any] = json.loads(line)  # stdout holds JSON-RPC only
        assert message["jsonrpc"] == "2.0"
        return message

    async def answer(self, request_id: int) -> dict[str, Any]:
        """Messages until the answer to ``request_id`` (updates in between are kept)."""
        while True:
            message = await self.receive()
            if message.get("id") == request_id and "method" not in message:
                return message

    async def request(self, request_id: int, method: str, params: Any) -> dict[str, Any]:
        await self.send({"jsonrpc": "2.0", "id": request_id, "method": method, "params": params})
        return await self.answer(request_id)


@asynccontextmanager
async def pipes(project: Project, *extra: str) -> AsyncIterator[Pipes]:
    log = _log(project)
    try:
        async with await anyio.open_process(
            project.acp_argv(*extra), env=project.env, cwd=project.work, stderr=log
        ) as process:
            try:
                yield Pipes(process)
            finally:
                if process.returncode is None:
                    process.kill()
    finally:
        log.close()
    assert "Traceback" not in (project.root / "raw-acp.log").read_text()


INITIALIZE = {"protocolVersion": 1, "clientCapabilities": {}}


async def test_bad_json_rpc_gets_the_protocols_errors(project: Project) -> None:
    async with pipes(project) as wire:
        await wire.send(b"{this is not json")
        error = await wire.receive()
        assert error["id"] is None
        assert error["error"]["code"] == -32700
        await wire.send([1, 2, 3])
        assert (await wire.receive())["error"]["code"] == -32600
        await wire.send({"jsonrpc": "2.0", "id": 7})
        invalid = await wire.receive()
        assert (invalid["id"], invalid["error"]["code"]) == (7, -32600)
        await wire.send({"jsonrpc": "1.0", "id": 8, "method": "initialize"})
        assert (await wire.receive())["error"]["code"] == -32600
        await wire.send(b'{"jsonrpc": "2.0", "id": 9, "method": "x", "params": NaN}')
        assert (await wire.receive())["error"]["code"] == -32700
        await wire.send(b'{"jsonrpc": "2.0", "id": 10, "params": ' + b"1" * 5000 + b"}")
        assert (await wire.receive())["error"]["code"] == -32700
        unknown = await wire.request(11, "session/teleport", {})
        assert unknown["error"]["code"] == -32601
        bad_params = await wire.request(12, "session/new", {"cwd": 5})
        assert bad_params["error"]["code"] == -32602
        relative = await wire.request(13, "session/new", {"cwd": "work", "mcpServers": []})
        assert relative["error"]["code"] == -32602
        nobody = await wire.request(
            14, "session/prompt", {"sessionId": "nope", "prompt": [{"type": "text", "text": "hi"}]}
        )
        assert nobody["error"]["code"] == -32602
        # After all that the connection still works.
        initialized = await wire.request(15, "initialize", INITIALIZE)
        assert initialized["result"]["protocolVersion"] == 1


async def test_a_huge_message_is_refused_and_the_connection_goes_on(project: Project) -> None:
    async with pipes(project, "--max-message-bytes", "65536") as wire:
        huge = {"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {"x": "y" * 300_000}}
        await wire.send(huge)
        refused = await wire.receive()
        assert refused["error"]["code"] == -32600
        assert "65536" in refused["error"]["data"]["details"]
        assert (await wire.request(2, "initialize", INITIALIZE))["result"]["protocolVersion"] == 1


async def _start_sleeping_turn(wire: Pipes, project: Project) -> str:
    await wire.request(1, "initialize", INITIALIZE)
    created = await wire.request(2, "session/new", {"cwd": str(project.work), "mcpServers": []})
    session_id: str = created["result"]["sessionId"]
    prompt = {"sessionId": session_id, "prompt": [{"type": "text", "text": "wait"}]}
    await wire.send({"jsonrpc": "2.0", "id": 3, "method": "session/prompt", "params": prompt})
    while True:  # until the call started
        message = await wire.receive()
        if message.get("params", {}).get("update", {}).get("sessionUpdate") == "tool_call":
            return session_id


async def test_a_prompt_during_a_turn_is_refused_and_cancel_ends_the_turn(
    project: Project,
) -> None:
    project.write(SLEEP, use=["builtin/bash"])
    async with pipes(project) as wire:
        session_id = await _start_sleeping_turn(wire, project)
        again = await wire.request(
            4,
            "session/prompt",
            {"sessionId": session_id, "prompt": [{"type": "text", "text": "x"}]},
        )
        assert again["error"]["data"]["code"] == "turn_in_progress"
        await wire.send(
            {"jsonrpc": "2.0", "method": "session/cancel", "params": {"sessionId": session_id}}
        )
        ended = await wire.answer(3)
        assert ended["result"] == {"stopReason": "cancelled"}


async def test_a_client_that_disconnects_mid_turn_leaves_a_valid_session(
    project: Project,
) -> None:
    project.write(SLEEP, use=["builtin/bash"])
    async with pipes(project) as wire:
        session_id = await _start_sleeping_turn(wire, project)
        # A prompt refused during the turn does not make the turn look finished.
        again = await wire.request(
            4,
            "session/prompt",
            {"sessionId": session_id, "prompt": [{"type": "text", "text": "x"}]},
        )
        assert again["error"]["data"]["code"] == "turn_in_progress"
        await wire.stdin.aclose()  # the client is gone
        with anyio.fail_after(30):
            code = await wire.process.wait()
        assert code == 0
    # The turn was cancelled and recorded; the session is not locked and opens again.
    with anyio.fail_after(60):
        shown = await anyio.run_process(
            project.raw("sessions", "show", session_id, "--json"), env=project.env
        )
    assert '"error_code": "cancelled"' in shown.stdout.decode()
    project.write([{"text": "Back again."}], use=["builtin/bash"])
    client = Recorder()
    async with connected(project, client) as conn:
        await conn.load_session(cwd=str(project.work), session_id=session_id, mcp_servers=[])
        answer = await conn.prompt(session_id=session_id, prompt=[text_block("again")])
    assert answer.stop_reason == "end_turn"
    assert client.updates[-1]["content"]["text"] == "Back again."


async def test_a_turn_cancelled_by_the_end_of_input_still_sends_its_updates(
    project: Project,
) -> None:
    project.write(SLEEP, use=["builtin/bash"])
    async with pipes(project) as wire:
        await _start_sleeping_turn(wire, project)
        await wire.stdin.aclose()  # the input ends: the turn is cancelled, still answered
        ended = await wire.answer(3)
        assert ended["result"] == {"stopReason": "cancelled"}
        with anyio.fail_after(30):
            assert await wire.process.wait() == 0
    shown = [json.loads(line) for line in wire.lines]
    started = next(
        i
        for i, m in enumerate(shown)
        if m.get("params", {}).get("update", {}).get("sessionUpdate") == "tool_call"
    )
    call_id = shown[started]["params"]["update"]["toolCallId"]
    finished = [
        m["params"]["update"]
        for m in shown[started + 1 :]
        if m.get("method") == "session/update"
        and m["params"]["update"].get("toolCallId") == call_id
    ]
    assert [update["status"] for update in finished] == ["failed"], shown


def test_stdout_is_protocol_only_when_the_config_is_bad(project: Project) -> None:
    project.config.write_text("{not json")
    done = subprocess.run(
        project.acp_argv(),
        env=project.env,
        input="",
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert done.returncode == 2
    assert done.stdout == ""
    assert "config_invalid" in done.stderr
    assert "Traceback" not in done.stderr


def test_the_plugin_adds_the_command(tmp_path: Path) -> None:
    done = subprocess.run(
        [sys.executable, "-m", "raw_core", "--help"],
        capture_output=True,
        text=True,
        timeout=60,
        env={**os.environ, "XDG_CONFIG_HOME": str(tmp_path)},
    )
    assert done.returncode == 0
    assert "acp" in done.stdout.split()


NOISY = """
import os
import sys


def handler(args, context):
    print("a tool that prints")
    os.write(1, b"and one that writes to fd 1\\n")
    read = sys.stdin.read()
    return {"content": [{"type": "text", "text": f"read {len(read)} bytes of stdin"}]}
"""


async def test_a_tools_output_never_reaches_the_protocol(project: Project) -> None:
    folder = project.root / "tools" / "noisy"
    folder.mkdir(parents=True)
    manifest = {
        "api_version": 2,
        "id": "noisy",
        "version": "1.0.0",
        "name": "noisy",
        "description": "Print, write to fd 1 and read stdin.",
        "input_schema": {"type": "object"},
        "entry": "./tool.py",
    }
    (folder / "tool.json").write_text(json.dumps(manifest))
    (folder / "tool.py").write_text(NOISY)
    project.write(
        [{"text": "", "tool_calls": [{"name": "noisy", "arguments": {}}]}, {"text": "ok"}],
        use=["agent/noisy"],
    )
    async with pipes(project) as wire:
        await wire.request(1, "initialize", INITIALIZE)
        created = await wire.request(2, "session/new", {"cwd": str(project.work), "mcpServers": []})
        prompt = {
            "sessionId": created["result"]["sessionId"],
            "prompt": [{"type": "text", "text": "make noise"}],
        }
        ended = await wire.request(3, "session/prompt", prompt)  # every line parsed as JSON
        assert ended["result"] == {"stopReason": "end_turn"}
    shown = b"".join(wire.lines).decode()
    assert "read 0 bytes of stdin" in shown
    assert "a tool that prints" not in shown
    log = (project.root / "raw-acp.log").read_text()
    assert "a tool that prints" in log
    assert "and one that writes to fd 1" in log
