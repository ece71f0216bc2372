"""Spec 000, "Dispatch order": seven steps, and nothing of a later step runs once an
earlier one has failed — shown for every failure kind with an instrumented tool, hook and
approval callback."""

from __future__ import annotations

import json
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

import anyio
import anyio.lowlevel
import pytest

from raw_core import hookimpl
from raw_core.agent import load_agent
from raw_core.config import load_config
from raw_core.dispatch import Dispatcher
from raw_core.plugins import PluginHost
from raw_core.policy import Policy
from raw_core.tools.calls import ApprovalRequest, CallInfo, CancellationSignal, ToolCall, Verdict
from raw_core.tools.results import ToolResult

pytestmark = pytest.mark.anyio

PROBE = """
import anyio, time
LOG = []
IN_HANDLER = []  # events a test waits on: set when a slow handler has started

def validate_args(args):
    LOG.append("validate_args")
    if args.get("mode") == "refuse":
        return "mode refuse is refused by validate_args"
    if args.get("mode") == "validate-raises":
        raise ValueError("validator bug")
    return None

def describe_effects(args, context):
    LOG.append("describe_effects")
    mode = args.get("mode")
    if mode == "effects-raise":
        raise RuntimeError("descriptor bug")
    if mode == "effects-async":
        async def later():
            return {"files": []}
        return later()
    if mode == "effects-bad":
        return {"files": [{"path": 5}]}
    return {"files": [{"path": context.cwd + "/" + args.get("path", "x")}]}

async def handler(args, context):
    LOG.append("handler")
    mode = args.get("mode")
    if mode == "raise":
        raise KeyError("boom")
    if mode == "slow":
        for started in IN_HANDLER:
            started.set()
        await anyio.sleep(30)
    if mode == "garbage":
        return 42
    if mode == "tool-error":
        return {"content": [{"type": "text", "text": "no such thing"}], "is_error": True}
    return {"content": [{"type": "text", "text": "handled " + args.get("path", "")}]}
"""

SCHEMA = {
    "type": "object",
    "properties": {"path": {"type": "string"}, "mode": {"type": "string"}},
    "additionalProperties": False,
}
EFFECTS = {
    "type": "object",
    "properties": {
        "files": {
            "type": "array",
            "items": {
                "type": "object",
                "properties": {"path": {"type": "string"}},
                "required": ["path"],
            },
        }
    },
}


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


class Recorder:
    """A plug-in with a check hook and an approval callback that record their calls."""

    def __init__(self, log: list[str], answer: Any = None) -> None:
        self.log = log
        self.answer = answer

    @hookimpl
    def raw_tool_check(self, call: CallInfo, verdict: Verdict) -> Any:
        self.log.append("hook")
        answer = self.answer
        if callable(answer):
            return answer()
        return answer


def build(
    tmp_path: Path,
    make_tool: Any,
    *,
    rules: list[dict[str, Any]] | None = None,
    hook_answer: Any = None,
    approve: bool | None = None,
    with_hook: bool = True,
    **dispatcher_options: Any,
) -> tuple[Dispatcher, list[str]]:
    folder = make_tool(
        "probe",
        root=tmp_path / "tools",
        code=PROBE,
        input_schema=SCHEMA,
        effects_schema=EFFECTS,
        condition_sources=["arguments", "effects"],
    )
    config_path = tmp_path / "raw.json"
    config_path.write_text(
        json.dumps({"agents": {"a": {"tools": {"use": ["agent/probe"], "rules": rules or []}}}})
    )
    agent = load_agent(load_config(config_path), host=PluginHost())
    log: list[str] = agent.registry.tools[0].handler.__globals__["LOG"]
    log.clear()
    host = PluginHost()
    if with_hook:
        host.register(Recorder(log, hook_answer), name="recorder")
    approval: Callable[[ApprovalRequest], Awaitable[bool]] | None = None
    if approve is not None:

        async def approval(request: ApprovalRequest) -> bool:
            log.append("approval")
            return approve

    policy = Policy.bind(agent.config.tools.rules, agent.registry.tools)
    dispatcher = Dispatcher(
        agent.registry,
        policy,
        host=host,
        approval=approval,
        cwd=str(folder.parent),
        **dispatcher_options,
    )
    return dispatcher, log


ASK_ALL = [{"match": "agent/probe", "effect": "ask"}]
DENY_THEN_ASK_PROTECTED = [
    {"match": "agent/*", "effect": "deny"},
    {
        "match": "agent/probe",
        "effect": "ask",
        "when": {"source": "effects", "any": "files[*].path", "regex": "protected"},
    },
]


def _slow_hook() -> Awaitable[Verdict]:
    async def wait() -> Verdict:
        await anyio.sleep(30)
        return Verdict(decision="allow")

    return wait()


# (id, call arguments or name override, build options, expected code, steps that ran)
CASES = [
    pytest.param({"name": "nope"}, {}, "tool_unknown", [], id="1-tool_unknown"),
    pytest.param(
        {},
        {"rules": [{"match": "agent/probe", "effect": "deny"}]},
        "tool_not_exposed",
        [],
        id="1-tool_not_exposed",
    ),
    pytest.param(
        {"arguments": '{"path": "a", "path": "b"}'},
        {},
        "invalid_arguments",
        [],
        id="2-duplicate-key",
    ),
    pytest.param({"arguments": '{"path": NaN}'}, {}, "invalid_arguments", [], id="2-nan"),
    pytest.param({"arguments": "[" * 65 + "]" * 65}, {}, "invalid_arguments", [], id="2-too-deep"),
    pytest.param({"arguments": '{"path": 3}'}, {}, "invalid_arguments", [], id="2-schema"),
    pytest.param(
        {"arguments": '{"mode": "refuse"}'},
        {},
        "invalid_arguments",
        ["validate_args"],
        id="2-validate_args",
    ),
    pytest.param(
        {"arguments": '{"mode": "validate-raises"}'},
        {},
        "invalid_arguments",
        ["validate_args"],
        id="2-validate_args-raises",
    ),
    pytest.param(
        {"arguments": '{"mode": "effects-raise"}'},
        {},
        "effects_invalid",
        ["validate_args", "describe_effects"],
        id="3-effects-raise",
    ),
    pytest.param(
        {"arguments": '{"mode": "effects-async"}'},
        {},
        "effects_invalid",
        ["validate_args", "describe_effects"],
        id="3-effects-awaitable",
    ),
    pytest.param(
        {"arguments": '{"mode": "effects-bad"}'},
        {},
        "effects_invalid",
        ["validate_args", "describe_effects"],
        id="3-effects-schema",
    ),
    pytest.param(
        {"arguments": '{"path": "open"}'},
        {"rules": DENY_THEN_ASK_PROTECTED},
        "denied",
        ["validate_args", "describe_effects"],
        id="4-denied",
    ),
    pytest.param(
        {},
        {"hook_answer": Verdict(decision="deny", reason="not today")},
        "hook_denied",
        ["validate_args", "describe_effects", "hook"],
        id="5-hook_denied",
    ),
    pytest.param(
        {},
        {"hook_answer": lambda: 1 / 0},
        "hook_failed",
        ["validate_args", "describe_effects", "hook"],
        id="5-hook-raises",
    ),
    pytest.param(
        {},
        {"hook_answer": "allow"},
        "hook_failed",
        ["validate_args", "describe_effects", "hook"],
        id="5-hook-garbage",
    ),
    pytest.param(
        {},
        {"hook_answer": _slow_hook, "hook_timeout": 0.05},
        "hook_failed",
        ["validate_args", "describe_effects", "hook"],
        id="5-hook-timeout",
    ),
    pytest.param(
        {},
        {"rules": ASK_ALL},
        "approval_unavailable",
        ["validate_args", "describe_effects", "hook"],
        id="6-approval_unavailable",
    ),
    pytest.param(
        {},
        {"rules": ASK_ALL, "approve": False},
        "approval_denied",
        ["validate_args", "describe_effects", "hook", "approval"],
        id="6-approval_denied",
    ),
    pytest.param(
        {"arguments": '{"mode": "raise"}'},
        {},
        "handler_error",
        ["validate_args", "describe_effects", "hook", "handler"],
        id="7-handler_error",
    ),
    pytest.param(
        {"arguments": '{"mode": "garbage"}'},
        {},
        "handler_error",
        ["validate_args", "describe_effects", "hook", "handler"],
        id="7-handler-returns-garbage",
    ),
    pytest.param(
        {"arguments": '{"mode": "tool-error"}'},
        {},
        "tool_error",
        ["validate_args", "describe_effects", "hook", "handler"],
        id="7-tool_error",
    ),
    pytest.param(
        {"arguments": '{"mode": "slow"}'},
        {"handler_timeout": 0.05},
        "timeout",
        ["validate_args", "describe_effects", "hook", "handler"],
        id="7-timeout",
    ),
]


@pytest.mark.parametrize(("call", "options", "code", "ran"), CASES)
async def test_a_failure_stops_the_call_before_the_next_step(
    tmp_path: Path,
    make_tool: Any,
    call: dict[str, Any],
    options: dict[str, Any],
    code: str,
    ran: list[str],
) -> None:
    dispatcher, log = build(tmp_path, make_tool, **options)
    tool_call = ToolCall(
        id="call-1",
        name=call.get("name", "probe"),
        arguments=call.get("arguments", '{"path": "a"}'),
    )
    result = await dispatcher.dispatch(tool_call)
    assert result.status == "error"
    assert result.code == code
    assert log == ran
    assert result.text().startswith(f"error [{code}]") or code == "tool_error"


async def test_a_call_that_passes_every_step_runs_each_once_in_order(
    tmp_path: Path, make_tool: Any
) -> None:
    dispatcher, log = build(tmp_path, make_tool, rules=ASK_ALL, approve=True)
    result = await dispatcher.dispatch(ToolCall(id="c", name="probe", arguments='{"path": "a"}'))
    assert result.status == "ok", result.text()
    assert result.text() == "handled a"
    assert log == ["validate_args", "describe_effects", "hook", "approval", "handler"]


async def test_cancellation_during_the_handler_is_a_cancelled_result(
    tmp_path: Path, make_tool: Any
) -> None:
    dispatcher, log = build(tmp_path, make_tool)
    signal = CancellationSignal()
    results: list[ToolResult] = []
    started = anyio.Event()
    dispatcher.registry.tools[0].handler.__globals__["IN_HANDLER"].append(started)

    async def run() -> None:
        results.append(
            await dispatcher.dispatch(
                ToolCall(id="c", name="probe", arguments='{"mode": "slow"}'), signal=signal
            )
        )

    async with anyio.create_task_group() as group:
        group.start_soon(run)
        with anyio.fail_after(60):
            await started.wait()  # the (async) handler waits inside its sleep
        assert "handler" in log
        signal.cancel("the user pressed Ctrl-C")
    assert results[0].code == "cancelled"
    assert "Ctrl-C" in results[0].text()


async def test_cancellation_while_waiting_for_approval_is_a_cancelled_result(
    tmp_path: Path, make_tool: Any
) -> None:
    dispatcher, log = build(tmp_path, make_tool, rules=ASK_ALL)
    signal = CancellationSignal()
    asked = anyio.Event()

    async def never_answers(request: ApprovalRequest) -> bool:
        assert request.signal is signal
        asked.set()
        await anyio.sleep(30)
        return True

    dispatcher.approval = never_answers
    results: list[ToolResult] = []

    async def run() -> None:
        results.append(
            await dispatcher.dispatch(ToolCall(id="c", name="probe", arguments="{}"), signal=signal)
        )

    async with anyio.create_task_group() as group:
        group.start_soon(run)
        await asked.wait()
        signal.cancel()
    assert results[0].code == "cancelled"
    assert "handler" not in log


async def test_a_signal_cancelled_before_the_call_runs_nothing(
    tmp_path: Path, make_tool: Any
) -> None:
    dispatcher, log = build(tmp_path, make_tool)
    signal = CancellationSignal()
    signal.cancel()
    result = await dispatcher.dispatch(
        ToolCall(id="c", name="probe", arguments="{}"), signal=signal
    )
    assert result.code == "cancelled"
    assert log == []


async def test_a_scope_attached_to_a_signal_is_cancelled_until_detached() -> None:
    signal = CancellationSignal()
    with anyio.CancelScope() as kept:
        signal.attach(kept)
        signal.detach(kept)
        signal.cancel("stop")
        await anyio.lowlevel.checkpoint()
    assert not kept.cancel_called
    with anyio.CancelScope() as stopped:
        signal.attach(stopped)  # already fired: cancelled at once
        await anyio.sleep(1)
    assert stopped.cancelled_caught
    fresh = CancellationSignal()
    with anyio.CancelScope() as waiting:
        fresh.attach(waiting)
        fresh.cancel("later")
        await anyio.sleep(1)
    assert waiting.cancelled_caught
