"""Interop: acpx, a real ACP client nobody on this project wrote, drives ``raw acp``.

Each test plays a recording through raw's replay provider and checks acpx's JSON
transcript (``--format json``: every JSON-RPC message both ways): streamed text and a
tool call with its kind and result, an ask rule approved (``--approve-all``) and denied
(``--deny-all``), a cancel from a second acpx process, and MCP servers handed over from
acpx's own config when the raw config opts in (the refusal without the opt-in is checked
without a process, in test_acp_units.py).
"""

from __future__ import annotations

import json
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest

from tests.acp.conftest import Acpx, Project, messages, updates

WRITE = {"operations": [{"op": "overwrite", "path": "out.txt", "content": "written\n"}]}
ASK_WRITE = {
    "use": ["builtin/read_file", "builtin/write_file"],
    "rules": [{"match": "builtin/write_file", "effect": "ask"}],
}


def _text(found: list[dict[str, Any]]) -> str:
    return "".join(
        update["content"]["text"]
        for update in found
        if update["sessionUpdate"] == "agent_message_chunk"
    )


def _result(transcript: list[dict[str, Any]], method: str = "session/prompt") -> Any:
    ids = {message["id"] for message in transcript if message.get("method") == method}
    for message in transcript:
        if "method" not in message and message.get("id") in ids:
            return message.get("result", message.get("error"))
    raise AssertionError(f"no answer to {method} in the transcript")


def test_a_turn_streams_text_and_a_tool_call(acpx: Acpx, project: Project) -> None:
    project.write(
        [
            {
                "text": "I'll read the note.",
                "tool_calls": [
                    {"name": "read_file", "arguments": {"files": [{"path": "notes.txt"}]}}
                ],
            },
            {"text": "The note says to buy milk."},
        ]
    )
    done = acpx.run(project, "--approve-all", "exec", "what does my note say?")
    assert done.returncode == 0, done.stderr
    transcript = messages(done.stdout)
    initialized = _result(transcript, "initialize")
    assert initialized["agentCapabilities"]["loadSession"] is True
    assert initialized["agentInfo"]["name"] == "raw"
    found = updates(transcript)
    assert _text(found) == "I'll read the note.The note says to buy milk."
    started = [u for u in found if u["sessionUpdate"] == "tool_call"]
    assert len(started) == 1
    assert started[0]["title"] == "builtin/read_file"
    assert started[0]["kind"] == "read"
    assert started[0]["rawInput"] == {"files": [{"path": "notes.txt"}]}
    finished = [u for u in found if u["sessionUpdate"] == "tool_call_update"]
    assert finished[-1]["toolCallId"] == started[0]["toolCallId"]
    assert finished[-1]["status"] == "completed"
    assert "remember the milk" in finished[-1]["content"][0]["content"]["text"]
    assert _result(transcript) == {"stopReason": "end_turn"}
    # The order on the wire: the call's start, its end, then the text after it.
    kinds = [u["sessionUpdate"] for u in found]
    assert kinds.index("tool_call") < kinds.index("tool_call_update")


def _write_turn(project: Project) -> None:
    project.write(
        [
            {"text": "Writing it.", "tool_calls": [{"name": "write_file", "arguments": WRITE}]},
            {"text": "Done."},
        ],
        **ASK_WRITE,
    )


def test_an_ask_rule_approved_runs_the_call(acpx: Acpx, project: Project) -> None:
    _write_turn(project)
    done = acpx.run(project, "--approve-all", "exec", "write the file")
    assert done.returncode == 0, done.stderr
    transcript = messages(done.stdout)
    asked = [m for m in transcript if m.get("method") == "session/request_permission"]
    assert len(asked) == 1
    params = asked[0]["params"]
    assert [o["kind"] for o in params["options"]] == ["allow_once", "reject_once"]
    call = params["toolCall"]
    assert call["title"] == "builtin/write_file"
    assert call["kind"] == "edit"
    assert call["rawInput"] == WRITE  # the arguments, as given
    # The intended effects are shown apart from the arguments, and name the file.
    assert call["locations"] == [{"path": str(project.work / "out.txt")}]
    shown = call["content"][-1]["content"]["text"]
    assert shown.startswith("Intended effects:")
    assert json.loads(shown.split("\n", 1)[1]) == {
        "files": [{"operation": "write", "path": str(project.work / "out.txt")}]
    }
    # Ids are per direction: raw's request is answered by a message that has its id.
    answer = next(
        m
        for m in transcript
        if m.get("id") == asked[0]["id"] and "outcome" in (m.get("result") or {})
    )
    assert answer["result"]["outcome"] == {"outcome": "selected", "optionId": "allow_once"}
    assert (project.work / "out.txt").read_text() == "written\n"
    finished = [u for u in updates(transcript) if u["sessionUpdate"] == "tool_call_update"]
    assert finished[-1]["status"] == "completed"
    assert finished[-1]["locations"] == [{"path": str(project.work / "out.txt")}]


def test_an_ask_rule_denied_does_not_run_the_call(acpx: Acpx, project: Project) -> None:
    _write_turn(project)
    done = acpx.run(project, "--deny-all", "exec", "write the file")
    transcript = messages(done.stdout)
    assert any(m.get("method") == "session/request_permission" for m in transcript)
    assert not (project.work / "out.txt").exists()
    finished = [u for u in updates(transcript) if u["sessionUpdate"] == "tool_call_update"]
    assert finished[-1]["status"] == "failed"
    assert finished[-1]["rawOutput"] == {"status": "error", "code": "approval_denied"}
    assert _result(transcript) == {"stopReason": "end_turn"}


def _wait_for_line(process: subprocess.Popen[str], wanted: str, seconds: float) -> list[str]:
    """Lines of ``process``'s stdout until one contains ``wanted`` (bounded)."""
    seen: list[str] = []
    deadline = time.monotonic() + seconds
    assert process.stdout is not None
    while time.monotonic() < deadline:
        line = process.stdout.readline()
        if not line:
            break
        seen.append(line)
        if wanted in line:
            return seen
    raise AssertionError(f"{wanted!r} never came; got {''.join(seen)[-2000:]}")


def test_a_cancel_ends_the_turn_as_cancelled(acpx: Acpx, project: Project) -> None:
    project.write(
        [
            {
                "text": "Waiting.",
                "tool_calls": [
                    {"name": "bash", "arguments": {"commands": [{"command": "sleep 60"}]}}
                ],
            },
            {"text": "never reached"},
        ],
        use=["builtin/bash"],
    )
    created = acpx.run(project, "sessions", "new")
    assert created.returncode == 0, created.stderr
    argv = acpx.argv(project, "prompt", "wait a minute")
    env = acpx.env(project)
    with subprocess.Popen(
        argv, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True
    ) as prompting:
        try:
            seen = _wait_for_line(prompting, '"sessionUpdate":"tool_call"', 60)
            cancelled = acpx.run(project, "cancel")
            assert cancelled.returncode == 0, cancelled.stderr
            rest, _ = prompting.communicate(timeout=60)
        finally:
            if prompting.poll() is None:
                prompting.kill()
    transcript = messages("".join(seen) + rest)
    assert _result(transcript) == {"stopReason": "cancelled"}
    finished = [u for u in updates(transcript) if u["sessionUpdate"] == "tool_call_update"]
    assert finished[-1]["status"] == "failed"
    assert finished[-1]["rawOutput"]["code"] == "cancelled"
    # The session is still raw's and still valid: its history holds the cancelled call.
    session_id = next(
        m["params"]["sessionId"] for m in transcript if m.get("method") == "session/prompt"
    )
    shown = subprocess.run(
        project.raw("sessions", "show", session_id, "--json"),
        env=project.env,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert shown.returncode == 0, shown.stderr
    assert '"cancelled"' in shown.stdout
    _wait_for_queue_owner(project.root / "home")


def _wait_for_queue_owner(home: Path) -> None:
    """acpx's background process (``--ttl 1``) ends a second after its last prompt; wait
    for every process that runs from this HOME to be gone (bounded)."""
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline:
        found = subprocess.run(
            ["pgrep", "-f", str(home)], capture_output=True, text=True, timeout=10
        )
        if not found.stdout.strip():
            return
        time.sleep(0.2)
    raise AssertionError("acpx's background process outlived its --ttl")


MCP_REPLIES: list[dict[str, Any]] = [
    {
        "text": "Asking the clock.",
        "tool_calls": [{"name": "get_current_time", "arguments": {"timezone": "UTC"}}],
    },
    {"text": "That is the time."},
]


def _mcp_home(project: Project) -> Path:
    home = project.root / "home"
    (home / ".acpx").mkdir(parents=True, exist_ok=True)
    server = {"name": "time", "command": sys.executable, "args": ["-m", "mcp_server_time"]}
    (home / ".acpx" / "config.json").write_text(json.dumps({"mcpServers": [server]}))
    return home


def test_mcp_servers_from_acpx_are_used_when_the_config_opts_in(
    acpx: Acpx, project: Project
) -> None:
    pytest.importorskip("raw_mcp")
    project.write(MCP_REPLIES, use=[], acp={"client_mcp_servers": True})
    done = acpx.run(project, "--approve-all", "exec", "what time is it?", home=_mcp_home(project))
    assert done.returncode == 0, done.stderr
    transcript = messages(done.stdout)
    new = next(m for m in transcript if m.get("method") == "session/new")
    assert new["params"]["mcpServers"][0]["name"] == "time"
    found = updates(transcript)
    started = [u for u in found if u["sessionUpdate"] == "tool_call"]
    assert started[0]["title"] == "mcp/time/get_current_time"
    finished = [u for u in found if u["sessionUpdate"] == "tool_call_update"]
    assert finished[-1]["status"] == "completed"
    assert "UTC" in finished[-1]["content"][0]["content"]["text"]
