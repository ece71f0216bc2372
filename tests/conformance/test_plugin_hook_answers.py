"""What plug-ins' runtime hooks answer and how raw uses it (the hookspecs, docs/design.md
"Plugin API", docs/reference/hooks.md): the order hooks run in, a check hook that rewords
an ask, ``raw policy explain`` agreeing with a real call, and a describe hook that fails.
Each test registers real plug-in objects on a real :class:`PluginHost` and runs real
dispatches of a real tool folder."""

from __future__ import annotations

import json
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import attrs
import pytest

from raw_core import hookimpl
from raw_core.agent import Agent, load_agent
from raw_core.app._explain import explain_call
from raw_core.config import load_config
from raw_core.errors import HookDenied, HookFailed, ResultWithheld
from raw_core.plugins import PluginHost
from raw_core.plugins.hooks import model_definitions
from raw_core.sessions.blocks import TextBlock
from raw_core.tools.calls import ApprovalRequest, CallInfo, ToolCall, Verdict
from raw_core.tools.results import ToolResult

pytestmark = pytest.mark.anyio

ECHO = """
def handler(args, context):
    return {"content": [{"type": "text", "text": "echo " + args.get("text", "")}]}
"""
SCHEMA = {"type": "object", "properties": {"text": {"type": "string"}}}


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


def make_agent(
    tmp_path: Path, make_tool: Any, rules: list[dict[str, Any]] | None = None, code: str = ECHO
) -> Agent:
    make_tool("echo", root=tmp_path / "tools", code=code, input_schema=SCHEMA)
    config = tmp_path / "raw.json"
    tools = {"use": ["agent/echo"], "rules": rules or []}
    config.write_text(json.dumps({"agents": {"a": {"tools": tools}}}))
    return load_agent(load_config(config), host=PluginHost())


def checker(name: str, log: list[str], answer: Any) -> SimpleNamespace:
    """A plug-in whose check hook logs its name and the verdict it was given, then answers
    ``answer(verdict)``."""

    @hookimpl
    def raw_tool_check(call: CallInfo, verdict: Verdict) -> Verdict | None:
        log.append(f"{name}:{verdict.decision}")
        return answer(verdict)  # type: ignore[no-any-return]

    return SimpleNamespace(raw_tool_check=raw_tool_check)


CALL = ToolCall(id="c1", name="echo", arguments='{"text": "hi"}')


async def test_check_hooks_run_in_registration_order_whatever_pluggys_flags_say(
    tmp_path: Path, make_tool: Any
) -> None:
    log: list[str] = []
    host = PluginHost()
    flagged = [("first", True, False), ("second", False, False), ("third", False, True)]
    for name, tryfirst, trylast in flagged:

        def check(call: CallInfo, verdict: Verdict, name: str = name) -> None:
            log.append(name)

        host.register(
            SimpleNamespace(raw_tool_check=hookimpl(tryfirst=tryfirst, trylast=trylast)(check)),
            name=name,
        )
    dispatcher = make_agent(tmp_path, make_tool).dispatcher(host=host, cwd=tmp_path)
    result = await dispatcher.dispatch(CALL)
    assert result.status == "ok"
    assert log == ["first", "second", "third"]
    assert [impl.plugin_name for impl in host.implementations("raw_tool_check")] == [
        "first",
        "second",
        "third",
    ]


async def test_a_check_hooks_ask_with_a_reason_rewords_a_rules_ask(
    tmp_path: Path, make_tool: Any
) -> None:
    log: list[str] = []
    host = PluginHost()
    host.register(
        checker("reword", log, lambda v: Verdict(decision="ask", reason="reworded ask")),
        name="reword",
    )
    asked: list[str | None] = []

    async def approve(request: ApprovalRequest) -> bool:
        asked.append(request.reason)
        return True

    agent = make_agent(tmp_path, make_tool, rules=[{"match": "agent/echo", "effect": "ask"}])
    dispatcher = agent.dispatcher(host=host, cwd=tmp_path, approval=approve)
    result = await dispatcher.dispatch(CALL)
    assert result.status == "ok"
    assert asked == ["reworded ask"]


async def test_a_check_hooks_ask_without_a_reason_keeps_the_rules_reason(
    tmp_path: Path, make_tool: Any
) -> None:
    host = PluginHost()
    host.register(checker("plain", [], lambda v: Verdict(decision="ask")), name="plain")
    asked: list[str | None] = []

    async def approve(request: ApprovalRequest) -> bool:
        asked.append(request.reason)
        return True

    agent = make_agent(tmp_path, make_tool, rules=[{"match": "agent/echo", "effect": "ask"}])
    await agent.dispatcher(host=host, cwd=tmp_path, approval=approve).dispatch(CALL)
    assert asked == ["rule 0 of tools.rules asks"]


def deny_if_asked(verdict: Verdict) -> Verdict | None:
    return Verdict(decision="deny", reason="no asks here") if verdict.decision == "ask" else None


async def test_explain_asks_each_hook_with_the_verdict_the_hooks_before_it_left(
    tmp_path: Path, make_tool: Any
) -> None:
    log: list[str] = []
    host = PluginHost()
    host.register(checker("asker", log, lambda v: Verdict(decision="ask")), name="asker")
    host.register(checker("strict", log, deny_if_asked), name="strict")
    agent = make_agent(tmp_path, make_tool)
    dispatcher = agent.dispatcher(host=host, cwd=tmp_path)
    real = await dispatcher.dispatch(CALL)
    assert real.status == "error"
    assert real.code == "hook_denied"
    called = list(log)
    log.clear()
    explained = await explain_call(dispatcher, agent, "agent/echo", '{"text": "hi"}', host=host)
    assert log == called == ["asker:allow", "strict:ask"]
    assert explained.final_verdict == "deny"
    assert [hook.decision for hook in explained.hooks] == ["ask", "deny"]


def test_a_describe_hook_that_raises_is_hook_failed_naming_the_plugin(
    tmp_path: Path, make_tool: Any
) -> None:
    @hookimpl
    def raw_tool_describe(tool: Any, description: str) -> str:
        raise ValueError("boom in describe")

    host = PluginHost()
    host.register(SimpleNamespace(raw_tool_describe=raw_tool_describe), name="describer")
    agent = make_agent(tmp_path, make_tool)
    with pytest.raises(HookFailed) as raised:
        model_definitions(agent, host)
    assert "describer" in raised.value.message
    assert "boom in describe" in raised.value.message


def test_a_describe_hook_cannot_change_the_schema_the_model_receives(
    tmp_path: Path, make_tool: Any
) -> None:
    @hookimpl
    def raw_tool_describe(tool: Any, description: str) -> str:
        tool.input_schema["properties"]["injected"] = {"type": "string"}
        return description + " (described)"

    host = PluginHost()
    host.register(SimpleNamespace(raw_tool_describe=raw_tool_describe), name="describer")
    agent = make_agent(tmp_path, make_tool)
    described = model_definitions(agent, host)
    assert described[0].description.endswith("(described)")
    assert "injected" not in described[0].input_schema["properties"]
    assert "injected" not in agent.definitions()[0].input_schema["properties"]
    assert "injected" not in model_definitions(agent, host)[0].input_schema["properties"]


def middleware_plugin(middleware: Any) -> SimpleNamespace:
    @hookimpl
    def raw_tool_call(call: CallInfo) -> Any:
        return middleware

    return SimpleNamespace(raw_tool_call=raw_tool_call)


async def test_call_next_returns_a_tool_result_whatever_the_tool_returned(
    tmp_path: Path, make_tool: Any
) -> None:
    seen: list[Any] = []

    async def stamp(call: CallInfo, call_next: Any) -> Any:
        result = await call_next()
        seen.append(result)
        return attrs.evolve(result, content=(*result.content, TextBlock(text="[audited]")))

    (tmp_path / "work").mkdir()
    (tmp_path / "work" / "a.txt").write_text("alpha\n")
    config = tmp_path / "raw.json"
    uses = ["builtin/read_file", "agent/echo"]
    make_tool("echo", root=tmp_path / "tools", code=ECHO, input_schema=SCHEMA)
    config.write_text(json.dumps({"agents": {"a": {"tools": {"use": uses}}}}))
    host = PluginHost()
    host.load_entry_points()
    host.register(middleware_plugin(stamp), name="stamp")
    agent = load_agent(load_config(config), host=host)
    dispatcher = agent.dispatcher(host=host, cwd=tmp_path / "work")
    batch = await dispatcher.dispatch(
        ToolCall(id="c1", name="read_file", arguments='{"files": [{"path": "a.txt"}]}')
    )
    plain = await dispatcher.dispatch(CALL)
    assert batch.status == plain.status == "ok"
    assert all(isinstance(result, ToolResult) for result in seen)
    assert "alpha" in batch.text()
    assert batch.text().endswith("[audited]")
    assert plain.text() == "echo hi\n[audited]"


@pytest.mark.parametrize("raised", ["hook_denied", "result_withheld"])
async def test_a_deny_a_middleware_raises_after_the_tool_ran_withholds_the_result(
    tmp_path: Path, make_tool: Any, raised: str
) -> None:
    async def withhold(call: CallInfo, call_next: Any) -> Any:
        await call_next()
        error = HookDenied if raised == "hook_denied" else ResultWithheld
        raise error("secret stuff", for_model="it held a secret")

    host = PluginHost()
    host.register(middleware_plugin(withhold), name="guard")
    dispatcher = make_agent(tmp_path, make_tool).dispatcher(host=host, cwd=tmp_path)
    result = await dispatcher.dispatch(CALL)
    assert result.code == "result_withheld"
    assert result.text() == "echo ran, and a plug-in withheld its result: it held a secret"
    assert result.full_text() == "echo ran, and a plug-in withheld its result: secret stuff"


async def test_a_deny_a_middleware_raises_before_the_tool_runs_stays_a_deny(
    tmp_path: Path, make_tool: Any
) -> None:
    async def refuse(call: CallInfo, call_next: Any) -> Any:
        raise HookDenied("not today", for_model="not today")

    host = PluginHost()
    host.register(middleware_plugin(refuse), name="guard")
    dispatcher = make_agent(tmp_path, make_tool).dispatcher(host=host, cwd=tmp_path)
    result = await dispatcher.dispatch(CALL)
    assert result.code == "hook_denied"


async def test_a_middleware_cannot_run_the_handler_twice(tmp_path: Path, make_tool: Any) -> None:
    async def twice(call: CallInfo, call_next: Any) -> Any:
        await call_next()
        return await call_next()

    code = ECHO + "\nRAN = []\n"
    code = code.replace(
        "def handler(args, context):\n", "def handler(args, context):\n    RAN.append(1)\n"
    )
    agent = make_agent(tmp_path, make_tool, code=code)
    host = PluginHost()
    host.register(middleware_plugin(twice), name="twice")
    result = await agent.dispatcher(host=host, cwd=tmp_path).dispatch(CALL)
    assert result.code == "hook_failed"
    assert "call_next twice" in result.full_text()
    assert agent.registry.tools[0].handler.__globals__["RAN"] == [1]


async def test_a_deny_after_a_handler_that_failed_still_says_the_tool_ran(
    tmp_path: Path, make_tool: Any
) -> None:
    """The handler started (and may have changed things) before it raised: a deny the
    middleware raises then withholds, it does not claim the call never ran."""

    async def cover(call: CallInfo, call_next: Any) -> Any:
        try:
            await call_next()
        except Exception:
            raise HookDenied("the tool failed badly", for_model="the tool failed") from None
        return None

    failing = "def handler(args, context):\n    raise RuntimeError('half done')\n"
    agent = make_agent(tmp_path, make_tool, code=failing)
    host = PluginHost()
    host.register(middleware_plugin(cover), name="cover")
    result = await agent.dispatcher(host=host, cwd=tmp_path).dispatch(CALL)
    assert result.code == "result_withheld"
    assert result.text() == "echo ran, and a plug-in withheld its result: the tool failed"
