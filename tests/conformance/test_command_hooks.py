"""Command hooks (``raw.hook/2``) at the tool events, with real scripts in real hook folders:
every decision path of PreToolUse and PostToolUse, through the app as ``raw tools call``
and a turn run them. Each failure fails closed; ``allow`` never loosens a rule."""

from __future__ import annotations

import json
import logging
import os
from pathlib import Path
from typing import Any

import anyio
import anyio.to_thread
import pytest

from raw_core import hookimpl, load_agent, load_config
from raw_core.app import App
from raw_core.plugins import PluginHost
from raw_core.runtime.frontend import CallbackFrontEnd
from raw_core.tools.calls import ApprovalRequest, CallInfo, CancellationSignal, ToolCall, Verdict
from raw_core.tools.results import model_bytes
from tests.command_hooks import gone_within, runs, write_config, write_hook, write_tool

pytestmark = pytest.mark.anyio


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


@pytest.fixture
def root(tmp_path: Path) -> Path:
    write_tool(tmp_path)
    (tmp_path / "work").mkdir()
    return tmp_path


async def call(
    root: Path,
    text: str = "hello",
    *,
    host: PluginHost | None = None,
    front_end: Any = None,
) -> Any:
    async with App.open(root / "raw.json", host=host or PluginHost()) as app:
        return await app.call_tool(
            "agent/echo", {"text": text}, front_end=front_end, cwd=root / "work"
        )


def handler_ran(root: Path) -> bool:
    return (root / "work" / "handler-ran").exists()


# --- PreToolUse: decisions ------------------------------------------------------------


async def test_exit_2_denies_with_stderr_as_the_reason_the_model_reads(root: Path) -> None:
    write_hook(root, "guard", sh='echo "no rm -rf here" >&2\nexit 2\n')
    write_config(root, ["agent/guard"])
    result = await call(root)
    assert result.code == "hook_denied"
    assert result.text() == "error [hook_denied]: no rm -rf here"
    assert result.details["hook"] == "agent/guard"
    assert not handler_ran(root)


async def test_a_json_deny_denies_with_its_reason(root: Path) -> None:
    hook = write_hook(
        root, "guard", python='print(json.dumps({"decision": "deny", "reason": "not today"}))\n'
    )
    write_config(root, ["agent/guard"])
    result = await call(root)
    assert (result.code, result.message) == ("hook_denied", "not today")
    assert not handler_ran(root)
    assert len(runs(hook)) == 1


async def test_a_claude_style_permission_decision_is_read_as_the_same_answer(root: Path) -> None:
    answer = {
        "hookSpecificOutput": {
            "hookEventName": "PreToolUse",
            "permissionDecision": "deny",
            "permissionDecisionReason": "blocked by policy script",
        }
    }
    write_hook(root, "guard", python=f"print(json.dumps({answer!r}))\n")
    write_config(root, ["agent/guard"])
    result = await call(root)
    assert (result.code, result.message) == ("hook_denied", "blocked by policy script")


async def test_a_json_ask_asks_for_approval_with_the_hooks_reason(root: Path) -> None:
    write_hook(
        root, "careful", python='print(json.dumps({"decision": "ask", "reason": "looks risky"}))\n'
    )
    write_config(root, ["agent/careful"])
    asked: list[ApprovalRequest] = []

    async def approve(request: ApprovalRequest) -> bool:
        asked.append(request)
        return True

    result = await call(root, front_end=CallbackFrontEnd(approve=approve))
    assert result.status == "ok"
    assert [r.reason for r in asked] == ["looks risky"]
    assert handler_ran(root)
    unapproved = await call(root)  # nobody can be asked
    assert unapproved.code == "approval_unavailable"


async def test_allow_never_loosens_an_ask_rule(root: Path) -> None:
    write_hook(root, "yes", python='print(json.dumps({"decision": "allow"}))\n')
    write_config(root, ["agent/yes"], rules=[{"match": "agent/echo", "effect": "ask"}])
    asked: list[ApprovalRequest] = []

    async def refuse(request: ApprovalRequest) -> bool:
        asked.append(request)
        return False

    result = await call(root, front_end=CallbackFrontEnd(approve=refuse))
    assert result.code == "approval_denied"
    assert [r.reason for r in asked] == ["rule 0 of tools.rules asks"]
    assert not handler_ran(root)


async def test_a_json_ask_with_a_reason_rewords_an_ask_rule(root: Path) -> None:
    write_hook(
        root, "careful", python='print(json.dumps({"decision": "ask", "reason": "looks risky"}))\n'
    )
    write_config(root, ["agent/careful"], rules=[{"match": "agent/echo", "effect": "ask"}])
    asked: list[ApprovalRequest] = []

    async def approve(request: ApprovalRequest) -> bool:
        asked.append(request)
        return True

    result = await call(root, front_end=CallbackFrontEnd(approve=approve))
    assert result.status == "ok"
    assert [r.reason for r in asked] == ["looks risky"]


async def test_exit_0_without_output_leaves_the_verdict_as_it_was(root: Path) -> None:
    hook = write_hook(root, "quiet", python="")
    write_config(root, ["agent/quiet"])
    result = await call(root)
    assert (result.status, result.text()) == ("ok", "echo: hello")
    assert len(runs(hook)) == 1


async def test_a_deny_rule_stops_the_call_before_any_hook_runs(root: Path) -> None:
    hook = write_hook(root, "quiet", python="")
    write_config(
        root,
        ["agent/quiet"],
        rules=[
            {
                "match": "agent/echo",
                "effect": "ask",
                "when": {"source": "arguments", "any": "text", "regex": "x"},
            },
            {"match": "agent/echo", "effect": "deny"},
        ],
    )
    assert (await call(root)).code == "tool_not_exposed"
    assert runs(hook) == []


# --- PreToolUse: failures fail closed --------------------------------------------------


@pytest.mark.parametrize(
    ("body", "said"),
    [
        ("import os, signal\nos.kill(os.getpid(), signal.SIGKILL)\n", "was killed by signal 9"),
        ("raise SystemExit(1)\n", "exited with status 1"),
        ("print('sure, go ahead')\n", "printed output that is not strict JSON"),
        ('print(\'{"decision": "allow", "decision": "deny"}\')\n', "duplicate key 'decision'"),
        ("print('[1, 2]')\n", "printed an array, not a JSON object"),
        ('print(json.dumps({"decision": "maybe"}))\n', 'answered decision = "maybe"'),
        ('print(json.dumps({"verdict": "allow"}))\n', 'unknown field "verdict"'),
        ('print(json.dumps({"reason": 5}))\n', "answered reason = 5; expected a string"),
        ('print(json.dumps({"context": "a line"}))\n', "which PreToolUse does not take"),
        # null is a value of the wrong type, as it is for continue: never "no opinion"
        ('print(json.dumps({"decision": None}))\n', "answered decision = null; expected one"),
        ('print(json.dumps({"reason": None}))\n', "answered reason = null; expected a string"),
        ('print(json.dumps({"hookSpecificOutput": None}))\n', "hookSpecificOutput as null"),
        (
            'print(json.dumps({"hookSpecificOutput": {"permissionDecision": None}}))\n',
            "answered hookSpecificOutput.permissionDecision = null",
        ),
        (
            'print(json.dumps({"hookSpecificOutput": {"additionalContext": None}}))\n',
            "answered hookSpecificOutput.additionalContext = null; expected a string",
        ),
    ],
    ids=[
        "crash",
        "other-exit",
        "garbage",
        "duplicate-key",
        "not-object",
        "bad-decision",
        "unknown",
        "bad-type",
        "context",
        "null-decision",
        "null-reason",
        "null-specific",
        "null-permission",
        "null-context",
    ],
)
async def test_a_hook_that_crashes_or_answers_garbage_fails_the_call_closed(
    root: Path, body: str, said: str
) -> None:
    write_hook(root, "broken", python=body)
    write_config(root, ["agent/broken"])
    result = await call(root)
    assert result.code == "hook_failed"
    assert said in result.message
    assert result.message.startswith("hook agent/broken (PreToolUse) ")
    # What went wrong is the host's to read; the model reads a plain sentence.
    assert (
        result.text()
        == "error [hook_failed]: a check the user set up failed, so the call did not run"
    )
    assert not handler_ran(root)


async def test_a_program_that_cannot_start_fails_closed(root: Path) -> None:
    write_hook(root, "gone", command=["raw-no-such-program-3f9a"])
    write_config(root, ["agent/gone"])
    result = await call(root)
    assert result.code == "hook_failed"
    assert 'could not start "raw-no-such-program-3f9a"' in result.message


async def test_a_timeout_kills_the_whole_process_group_and_fails_closed(root: Path) -> None:
    hook = write_hook(
        root,
        "hangs",
        sh='sleep 300 &\necho $! > "$RAW_HOOK_DIR/child.pid"\nwait\n',
        timeout_ms=1500,
    )
    write_config(root, ["agent/hangs"])
    result = await call(root)
    assert result.code == "hook_failed"
    assert "did not finish within 1.5 s; its process group was killed" in result.message
    assert not handler_ran(root)
    child = int((hook / "child.pid").read_text())
    assert gone_within(child)


async def test_the_agent_may_lower_a_hooks_time_limit(root: Path) -> None:
    write_hook(root, "slow", sh="sleep 300\n", timeout_ms=600_000)
    write_config(root, ["agent/slow"], hooks={"timeout_ms": 1000})
    result = await call(root)
    assert "did not finish within 1 s" in result.message


async def test_a_request_to_rewrite_the_arguments_is_refused_and_logged(
    root: Path, caplog: pytest.LogCaptureFixture
) -> None:
    answer = {
        "hookSpecificOutput": {
            "hookEventName": "PreToolUse",
            "permissionDecision": "allow",
            "updatedInput": {"text": "something else"},
        }
    }
    write_hook(root, "rewriter", python=f"print(json.dumps({answer!r}))\n")
    write_config(root, ["agent/rewriter"])
    with caplog.at_level(logging.WARNING, logger="raw_core.hooks"):
        result = await call(root)
    assert result.code == "hook_failed"
    assert "asked to change the call (hookSpecificOutput.updatedInput)" in result.message
    assert not handler_ran(root)
    assert any("agent/rewriter asked to rewrite a call" in r.getMessage() for r in caplog.records)


# --- subscriptions ---------------------------------------------------------------------


async def test_a_hook_whose_subscription_does_not_match_never_starts(root: Path) -> None:
    by_glob = write_hook(root, "other-tools", python="raise SystemExit(1)\n", match="builtin/*")
    by_when = write_hook(
        root,
        "rm-only",
        python="raise SystemExit(1)\n",
        when={"source": "arguments", "any": "text", "regex": "^rm "},
    )
    write_config(root, ["agent/other-tools", "agent/rm-only"])
    result = await call(root, "ls -l")
    assert result.status == "ok"
    assert runs(by_glob) == []
    assert runs(by_when) == []
    denied = await call(root, "rm -rf /")
    assert denied.code == "hook_failed"
    assert "agent/rm-only" in denied.message
    assert runs(by_glob) == []
    assert len(runs(by_when)) == 1


async def test_hooks_run_in_hooks_use_order_and_the_first_deny_ends_the_step(root: Path) -> None:
    first = write_hook(root, "first", python='print(json.dumps({"decision": "ask"}))\n')
    second = write_hook(root, "second", sh="echo stop >&2\nexit 2\n")
    third = write_hook(root, "third", python="")
    write_config(root, ["agent/first", "agent/second", "agent/third"])
    result = await call(root)
    assert (result.code, result.message) == ("hook_denied", "stop")
    assert (len(runs(first)), len(runs(second)), len(runs(third))) == (1, 1, 0)
    verdicts = [run["payload"]["verdict"] for run in runs(first)]
    assert verdicts == ["allow"]


async def test_plug_in_check_hooks_run_before_command_hooks(root: Path) -> None:
    hook = write_hook(root, "after", python="")
    write_config(root, ["agent/after"])
    seen: list[str] = []

    class Plugin:
        @hookimpl
        def raw_tool_check(self, call: CallInfo, verdict: Verdict) -> Verdict | None:
            seen.append("plug-in")
            if call.arguments["text"] == "stop":
                return Verdict(decision="deny", reason="the plug-in says no")
            return None

    host = PluginHost()
    host.register(Plugin(), name="checker")
    assert (await call(root, "stop", host=host)).code == "hook_denied"
    assert runs(hook) == []  # the plug-in's deny ended step 5 first
    assert (await call(root, "go", host=host)).status == "ok"
    assert seen == ["plug-in", "plug-in"]
    assert len(runs(hook)) == 1


# --- payloads and environment ----------------------------------------------------------


async def test_the_payload_environment_and_working_directory(
    root: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("RAW_HOOKS_TEST_KEY", "sk-model-key")
    monkeypatch.setenv("RAW_HOOKS_TEST_VAR", "var-value")
    monkeypatch.setenv("RAW_HOOKS_TEST_PLAIN", "passed on")
    hook = write_hook(root, "audit", python="", events=["PreToolUse", "PostToolUse"])
    top = {
        "models": {
            "m": {"provider": "openai", "model": "x", "api_key": {"env": "RAW_HOOKS_TEST_KEY"}}
        },
        "vars": {"V": {"description": "a var", "from": {"env": "RAW_HOOKS_TEST_VAR"}}},
    }
    write_config(root, ["agent/audit"], top=top)
    result = await call(root, "caf\u00e9 \ud800")
    assert result.status == "ok"
    pre, post = runs(hook)
    assert pre["cwd"] == str(root / "work")
    env = pre["env"]
    assert "RAW_HOOKS_TEST_KEY" not in env
    assert "RAW_HOOKS_TEST_VAR" not in env
    assert env["RAW_HOOKS_TEST_PLAIN"] == "passed on"
    assert env["RAW_HOOK_DIR"] == str(hook.resolve())
    payload = pre["payload"]
    tool = {
        "identity": "agent/echo",
        "name": "echo",
        "tool_call_id": "call_1",
        "arguments": {"text": "caf\u00e9 \ud800"},
        "source": "model",
    }
    assert payload == {
        "protocol_version": 2,
        "event": "PreToolUse",
        "hook_event_name": "PreToolUse",
        "session_id": None,
        "cwd": str(root / "work"),
        "tool": tool,
        "tool_name": "echo",
        "tool_input": {"text": "caf\u00e9 \ud800"},
        "verdict": "allow",
    }
    assert post["payload"]["event"] == "PostToolUse"
    assert post["payload"]["result"] == {
        "status": "ok",
        "code": None,
        "text": "echo: caf\u00e9 \ufffd",  # a result's text, as the model reads it
    }
    assert "verdict" not in post["payload"]


async def test_a_large_payload_reaches_a_hook_that_never_reads_it(root: Path) -> None:
    write_hook(root, "deaf", command=["/bin/sh", "-c", "exit 0"])
    write_config(root, ["agent/deaf"])
    result = await call(root, "x" * 300_000)  # far more than a pipe holds
    assert result.status == "ok"


# --- PostToolUse -----------------------------------------------------------------------


async def test_post_tool_use_withholds_the_result_from_the_model(root: Path) -> None:
    write_hook(
        root,
        "redact",
        events=["PostToolUse"],
        python='print(json.dumps({"decision": "block", "reason": "it holds a token"}))\n',
    )
    write_config(root, ["agent/redact"])
    result = await call(root)
    assert handler_ran(root)  # the tool ran: nothing is undone
    assert result.code == "result_withheld"
    assert result.text() == "echo ran, and a hook withheld its result: it holds a token"
    assert "echo: hello" not in json.dumps(result.to_dict())


async def test_a_failing_post_tool_use_hook_withholds_the_result(root: Path) -> None:
    write_hook(root, "broken", events=["PostToolUse"], python="print('not json')\n")
    write_config(root, ["agent/broken"])
    result = await call(root)
    assert handler_ran(root)
    assert result.code == "hook_failed"
    # The model reads a plain sentence; the host gets the hook and what went wrong.
    assert (
        result.text() == "echo ran, and a hook withheld its result: a check the user set up failed"
    )
    (host,) = result.full_content
    assert host.text.startswith("echo ran, and a hook withheld its result: hook agent/broken")
    assert "not strict JSON" in host.text
    assert "echo: hello" not in json.dumps(result.to_dict())


async def test_post_tool_use_adds_one_bounded_context_line(root: Path) -> None:
    long_line = "remember the tests\\n" + "y" * 5000
    write_hook(
        root,
        "note",
        events=["PostToolUse"],
        python=f'print(json.dumps({{"context": "{long_line}"}}))\n',
    )
    write_config(root, ["agent/note"])
    result = await call(root)
    assert result.status == "ok"
    first, line = result.content
    assert first.text == "echo: hello"
    assert line.text.startswith("[hook agent/note] remember the tests yyy")
    assert line.text.endswith("…")
    assert len(line.text.encode()) < 1100
    assert "\n" not in line.text
    assert [b.text for b in result.full_content] == ["echo: hello"]  # the user's view


async def test_context_lines_stay_under_the_result_cap(root: Path) -> None:
    for name in ("one", "two"):
        write_hook(
            root,
            name,
            events=["PostToolUse"],
            python=f'print(json.dumps({{"context": "{name} " + "z" * 900}}))\n',
        )
    write_config(root, ["agent/one", "agent/two"], max_output_bytes=600)
    result = await call(root, "w" * 2000)
    assert result.status == "ok"
    assert model_bytes(result.content) <= 600
    assert result.truncated
    *output, first, second = result.content
    assert first.text.startswith("[hook agent/one] one zz")
    assert second.text.startswith("[hook agent/two] two zz")
    assert "output truncated" in output[-1].text  # the result was cut to make room
    assert output[0].text.startswith("echo: www")


async def test_post_tool_use_does_not_run_for_a_call_that_never_ran(root: Path) -> None:
    post = write_hook(root, "post", events=["PostToolUse"], python="")
    write_hook(root, "deny", sh="exit 2\n")
    write_config(root, ["agent/deny", "agent/post"])
    assert (await call(root)).code == "hook_denied"
    assert runs(post) == []


async def test_post_tool_use_does_not_run_for_a_batch_stopped_at_its_time_limit(
    root: Path,
) -> None:
    """A batch stopped at ``handler_timeout_ms`` keeps its rows, but its handler did not
    return: PostToolUse runs only after a handler returned."""
    post = write_hook(root, "post", events=["PostToolUse"], python="")
    write_config(root, ["agent/post"], tools=["builtin/bash"], handler_timeout_ms=500)
    host = PluginHost()
    host.load_entry_points()
    commands = {"commands": [{"command": "true"}, {"command": "sleep 30"}]}
    async with App.open(root / "raw.json", host=host) as app:
        stopped = await app.call_tool("builtin/bash", commands, cwd=root / "work")
        finished = await app.call_tool(
            "builtin/bash", {"commands": [{"command": "true"}]}, cwd=root / "work"
        )
    assert stopped.code == "timeout"
    assert "error (timeout)" in stopped.text()  # the rows that ran are kept
    assert finished.status == "ok"
    (run,) = runs(post)  # only the call whose handler returned
    assert run["payload"]["result"]["status"] == "ok"


async def test_output_past_its_bound_fails_closed(root: Path) -> None:
    write_hook(root, "chatty", python="sys.stdout.write('x' * (2 * 1024 * 1024))\n")
    write_config(root, ["agent/chatty"])
    result = await call(root)
    assert result.code == "hook_failed"
    assert "printed 2097152 bytes; the limit is 1048576" in result.message


async def test_cancelling_the_call_kills_a_running_hook(root: Path) -> None:
    hook = write_hook(root, "hangs", sh='echo $$ > "$RAW_HOOK_DIR/ready"\nexec sleep 300\n')
    os.mkfifo(hook / "ready")  # the hook announces its pid through it once it runs
    write_config(root, ["agent/hangs"])
    agent = load_agent(load_config(root / "raw.json"), host=PluginHost())
    dispatcher = agent.dispatcher(host=None, cwd=root / "work")
    signal = CancellationSignal()
    call = ToolCall.with_arguments(id="c1", name="echo", arguments={"text": "x"})
    found: list[Any] = []

    async def dispatch() -> None:
        found.append(await dispatcher.dispatch(call, signal=signal))

    async with anyio.create_task_group() as group:
        group.start_soon(dispatch)
        with anyio.fail_after(30):
            reader = (hook / "ready").read_text
            pid = int(await anyio.to_thread.run_sync(reader, abandon_on_cancel=True))
        signal.cancel("the user pressed Ctrl-C")
    assert found[0].code == "cancelled"
    assert gone_within(pid)
    assert not handler_ran(root)
