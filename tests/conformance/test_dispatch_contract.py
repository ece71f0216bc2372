"""Spec 000, "Arguments and intended effects", "Approval" and "Hook payloads"; design.md
"Plugin API": frozen arguments, approval requests, hooks that only tighten, middlewares
that never touch arguments, detached copies for observers."""

from __future__ import annotations

import json
import threading
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

import pytest

from raw_core import hookimpl
from raw_core.agent import load_agent
from raw_core.config import load_config
from raw_core.dispatch import Dispatcher
from raw_core.errors import InvalidArguments
from raw_core.plugins import PluginHost
from raw_core.plugins.hooks import describe_definitions
from raw_core.policy import Policy
from raw_core.tools.calls import ApprovalRequest, CallInfo, ToolCall, Verdict

pytestmark = pytest.mark.anyio

TOOL = """
import threading
SEEN = []

def describe_effects(args, context):
    return {"files": [{"path": context.cwd + "/" + p} for p in args["paths"]]}

async def handler(args, context):
    SEEN.append(("handler", args, threading.current_thread().name))
    try:
        args["paths"] = ["changed"]
    except TypeError as exc:
        SEEN.append(("mutation refused", str(exc)))
    return {"content": [{"type": "text", "text": ",".join(args["paths"])}]}
"""

SYNC_TOOL = """
import threading
def handler(args, context):
    return {"content": [{"type": "text", "text": threading.current_thread().name}]}
"""

SCHEMA = {
    "type": "object",
    "properties": {"paths": {"type": "array", "items": {"type": "string"}}},
    "required": ["paths"],
    "additionalProperties": False,
}
EFFECTS = {
    "type": "object",
    "properties": {
        "files": {
            "type": "array",
            "items": {"type": "object", "properties": {"path": {"type": "string"}}},
        }
    },
}


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


class Plugin:
    """Records what each hook sees; answers with ``verdict`` and wraps with ``middleware``."""

    def __init__(
        self,
        verdict: Verdict | None = None,
        middleware: Callable[..., Awaitable[Any]] | None = None,
        description: str | None = None,
    ) -> None:
        self.verdict = verdict
        self.middleware = middleware
        self.description = description
        self.seen: list[tuple[str, Any]] = []

    @hookimpl
    def raw_tool_check(self, call: CallInfo, verdict: Verdict) -> Verdict | None:
        self.seen.append(("check", call))
        return self.verdict

    @hookimpl
    def raw_tool_call(self, call: CallInfo) -> Any:
        self.seen.append(("call", call))
        return self.middleware

    @hookimpl
    def raw_tool_describe(self, tool: Any, description: str) -> str | None:
        return self.description

    @hookimpl
    def raw_session_event(self, event: dict[str, Any]) -> None:
        self.seen.append(("event", event))


def setup(
    tmp_path: Path,
    make_tool: Any,
    *plugins: Plugin,
    rules: Any = (),
    code: str = TOOL,
    **options: Any,
) -> tuple[Dispatcher, list[Any]]:
    make_tool(
        "files",
        root=tmp_path / "tools",
        code=code,
        input_schema=SCHEMA,
        effects_schema=EFFECTS if code == TOOL else None,
        condition_sources=["arguments", "effects"] if code == TOOL else ["arguments"],
    )
    path = tmp_path / "raw.json"
    path.write_text(
        json.dumps({"agents": {"a": {"tools": {"use": ["agent/files"], "rules": list(rules)}}}})
    )
    agent = load_agent(load_config(path), host=PluginHost())
    host = PluginHost()
    for index, plugin in enumerate(plugins):
        host.register(plugin, name=f"plugin{index}")
    policy = Policy.bind(agent.config.tools.rules, agent.registry.tools)
    dispatcher = Dispatcher(agent.registry, policy, host=host, cwd=str(tmp_path), **options)
    seen = agent.registry.tools[0].handler.__globals__.get("SEEN", [])
    return dispatcher, seen


CALL = ToolCall(id="call-7", name="files", arguments='{"paths": ["a.txt", "b.txt"]}')


async def test_hooks_approval_and_handler_see_the_same_frozen_arguments(
    tmp_path: Path, make_tool: Any
) -> None:
    plugin = Plugin()
    requests: list[ApprovalRequest] = []

    async def approve(request: ApprovalRequest) -> bool:
        requests.append(request)
        return True

    dispatcher, seen = setup(
        tmp_path,
        make_tool,
        plugin,
        rules=[{"match": "agent/files", "effect": "ask"}],
        approval=approve,
    )
    result = await dispatcher.dispatch(CALL)
    assert result.text() == "a.txt,b.txt"
    check_call = plugin.seen[0][1]
    handler_args = seen[0][1]
    assert requests[0].arguments is check_call.arguments is handler_args
    assert seen[1][0] == "mutation refused"
    assert json.dumps(handler_args) == '{"paths": ["a.txt", "b.txt"]}'


CONTEXT_TOOL = """
def handler(args, context):
    for klass in type(context).__mro__:  # every slot set: reading one raises otherwise
        for slot in getattr(klass, "__slots__", ()):
            getattr(context, slot)
    refused = []
    for name in ("cwd", "signal", "progress", "panels", "interactions", "vars", "other"):
        try:
            setattr(context, name, None)
        except AttributeError:
            refused.append(name)
    return {"content": [{"type": "text", "text": ",".join(refused) + " " + context.cwd}]}
"""


async def test_a_handler_cannot_replace_what_its_context_holds(
    tmp_path: Path, make_tool: Any
) -> None:
    """The dispatcher reads the call's progress and panels after the handler: a handler
    cannot swap them (or anything else its context holds), nor add attributes."""
    dispatcher, _ = setup(tmp_path, make_tool, code=CONTEXT_TOOL)
    result = await dispatcher.dispatch(CALL)
    assert result.text() == f"cwd,signal,progress,panels,interactions,vars,other {tmp_path}"


async def test_the_approval_request_has_the_spec_fields(tmp_path: Path, make_tool: Any) -> None:
    requests: list[ApprovalRequest] = []

    async def approve(request: ApprovalRequest) -> bool:
        requests.append(request)
        return True

    dispatcher, _ = setup(
        tmp_path, make_tool, rules=[{"match": "agent/*", "effect": "ask"}], approval=approve
    )
    await dispatcher.dispatch(CALL)
    (request,) = requests
    assert request.identity == "agent/files"
    assert request.name == "files"
    assert request.tool_call_id == "call-7"
    assert dict(request.arguments) == {"paths": ("a.txt", "b.txt")}
    assert request.effects == {
        "files": ({"path": f"{tmp_path}/a.txt"}, {"path": f"{tmp_path}/b.txt"})
    }
    assert not request.signal.cancelled


async def test_a_hook_allow_never_turns_an_ask_rule_into_an_allow(
    tmp_path: Path, make_tool: Any
) -> None:
    dispatcher, seen = setup(
        tmp_path,
        make_tool,
        Plugin(Verdict(decision="allow")),
        rules=[{"match": "agent/files", "effect": "ask"}],
    )
    result = await dispatcher.dispatch(CALL)
    assert result.code == "approval_unavailable"
    assert seen == []


async def test_a_hook_can_tighten_allow_to_ask(tmp_path: Path, make_tool: Any) -> None:
    asked: list[str | None] = []

    async def approve(request: ApprovalRequest) -> bool:
        asked.append(request.reason)
        return False

    dispatcher, _ = setup(
        tmp_path, make_tool, Plugin(Verdict(decision="ask", reason="why")), approval=approve
    )
    result = await dispatcher.dispatch(CALL)
    assert result.code == "approval_denied"
    assert asked == ["why"]


async def test_a_hook_deny_reason_reaches_the_model(tmp_path: Path, make_tool: Any) -> None:
    dispatcher, seen = setup(
        tmp_path, make_tool, Plugin(Verdict(decision="deny", reason="files are frozen today"))
    )
    result = await dispatcher.dispatch(CALL)
    assert result.code == "hook_denied"
    assert "files are frozen today" in result.text()
    assert result.details["hook"] == "plugin0"
    assert seen == []


async def test_hook_payload_follows_the_spec(tmp_path: Path, make_tool: Any) -> None:
    plugin = Plugin()
    dispatcher, _ = setup(tmp_path, make_tool, plugin)
    await dispatcher.dispatch(CALL)
    await dispatcher.dispatch(
        ToolCall(id="c2", name="files", arguments='{"paths": []}', source="user_action")
    )
    checks = [value for kind, value in plugin.seen if kind == "check"]
    payload = checks[0].payload()
    assert payload["protocol_version"] == 2
    assert payload["tool"]["arguments"] == {"paths": ["a.txt", "b.txt"]}
    assert payload["tool"]["effects"] == {
        "files": [{"path": f"{tmp_path}/a.txt"}, {"path": f"{tmp_path}/b.txt"}]
    }
    assert payload["tool"]["source"] == "model"
    assert checks[1].payload()["tool"]["source"] == "user_action"


async def test_payload_of_a_tool_without_effects_has_no_effects_key(
    tmp_path: Path, make_tool: Any
) -> None:
    plugin = Plugin()
    dispatcher, _ = setup(tmp_path, make_tool, plugin, code=SYNC_TOOL)
    await dispatcher.dispatch(CALL)
    assert "effects" not in plugin.seen[0][1].payload()["tool"]


async def test_middlewares_wrap_in_registration_order_and_may_replace_the_result(
    tmp_path: Path, make_tool: Any
) -> None:
    order: list[str] = []

    def tagging(tag: str) -> Callable[..., Awaitable[Any]]:
        async def middleware(call: CallInfo, call_next: Callable[[], Awaitable[Any]]) -> Any:
            order.append(f"{tag} before")
            result = await call_next()
            order.append(f"{tag} after")
            return result

        return middleware

    async def replacing(call: CallInfo, call_next: Callable[[], Awaitable[Any]]) -> Any:
        await call_next()
        return {"content": [{"type": "text", "text": "result withheld by policy plug-in"}]}

    dispatcher, seen = setup(
        tmp_path,
        make_tool,
        Plugin(middleware=tagging("outer")),
        Plugin(middleware=tagging("inner")),
        Plugin(middleware=replacing),
    )
    result = await dispatcher.dispatch(CALL)
    assert order == ["outer before", "inner before", "inner after", "outer after"]
    assert result.text() == "result withheld by policy plug-in"
    assert seen[0][0] == "handler"  # the handler ran; its result was replaced


async def test_a_middleware_cannot_change_the_arguments(tmp_path: Path, make_tool: Any) -> None:
    async def meddling(call: CallInfo, call_next: Callable[[], Awaitable[Any]]) -> Any:
        call.arguments["paths"] = ["evil"]  # type: ignore[index]
        return await call_next()

    dispatcher, seen = setup(tmp_path, make_tool, Plugin(middleware=meddling))
    result = await dispatcher.dispatch(CALL)
    assert result.code == "handler_error"
    assert "plugin0" in result.text()
    assert seen == []


async def test_observers_receive_detached_copies(tmp_path: Path, make_tool: Any) -> None:
    received: list[dict[str, Any]] = []

    def vandal(event: dict[str, Any]) -> None:
        event["arguments"]["paths"].append("vandal")
        event["content"].clear()
        received.append(event)

    def polite(event: dict[str, Any]) -> None:
        received.append(event)

    plugin = Plugin()
    dispatcher, seen = setup(tmp_path, make_tool, plugin, observers=[vandal, polite])
    result = await dispatcher.dispatch(CALL)
    assert result.text() == "a.txt,b.txt"
    assert received[1]["arguments"] == {"paths": ["a.txt", "b.txt"]}
    assert received[1]["content"] == [{"type": "text", "text": "a.txt,b.txt"}]
    events = [value for kind, value in plugin.seen if kind == "event"]
    assert events[0]["arguments"] == {"paths": ["a.txt", "b.txt"]}
    assert dict(seen[0][1]) == {"paths": ("a.txt", "b.txt")}


async def test_a_failing_observer_does_not_fail_the_call(
    tmp_path: Path, make_tool: Any, caplog: pytest.LogCaptureFixture
) -> None:
    def broken(event: dict[str, Any]) -> None:
        raise RuntimeError("observer bug")

    dispatcher, _ = setup(tmp_path, make_tool, observers=[broken])
    result = await dispatcher.dispatch(CALL)
    assert result.status == "ok"
    assert "observer" in caplog.text


async def test_describe_hooks_rewrite_what_the_model_reads(tmp_path: Path, make_tool: Any) -> None:
    dispatcher, _ = setup(tmp_path, make_tool)
    host = PluginHost()
    host.register(Plugin(description="first"), name="one")
    host.register(Plugin(description=None), name="two")
    (definition,) = describe_definitions(dispatcher.registry.definitions(), host)
    assert definition.description == "first"


async def test_sync_handlers_run_in_a_worker_thread_async_handlers_inline(
    tmp_path: Path, make_tool: Any
) -> None:
    dispatcher, _ = setup(tmp_path, make_tool, code=SYNC_TOOL)
    result = await dispatcher.dispatch(CALL)
    assert result.text() != threading.current_thread().name
    async_dispatcher, seen = setup(tmp_path / "async", make_tool, code=TOOL)
    await async_dispatcher.dispatch(CALL)
    assert seen[0][2] == threading.current_thread().name


async def test_arguments_over_the_size_limit_are_invalid(tmp_path: Path, make_tool: Any) -> None:
    dispatcher, seen = setup(tmp_path, make_tool, max_argument_bytes=100)
    big = json.dumps({"paths": ["x" * 200]})
    result = await dispatcher.dispatch(ToolCall(id="c", name="files", arguments=big))
    assert result.code == "invalid_arguments"
    assert "over the limit of 100 bytes" in result.text()
    assert seen == []


async def test_parsed_arguments_from_an_app_are_validated_too(
    tmp_path: Path, make_tool: Any
) -> None:
    dispatcher, _ = setup(tmp_path, make_tool)
    good = await dispatcher.dispatch(
        ToolCall.with_arguments(id="c", name="files", arguments={"paths": ["q"]})
    )
    assert good.text() == "q"
    bad = await dispatcher.dispatch(
        ToolCall.with_arguments(id="c", name="files", arguments={"paths": "q"})
    )
    assert bad.code == "invalid_arguments"
    assert bad.details["field"] == "$.paths"


async def test_parsed_arguments_go_through_the_same_strict_parse(
    tmp_path: Path, make_tool: Any
) -> None:
    """An app's dict becomes JSON text: the size limit holds, and a value JSON cannot
    hold is refused before any call exists."""
    dispatcher, seen = setup(tmp_path, make_tool, max_argument_bytes=100)
    big = ToolCall.with_arguments(id="c", name="files", arguments={"paths": ["x" * 200]})
    assert (await dispatcher.dispatch(big)).code == "invalid_arguments"
    with pytest.raises(InvalidArguments, match="not a JSON value"):
        ToolCall.with_arguments(id="c", name="files", arguments={"paths": [float("nan")]})
    with pytest.raises(InvalidArguments, match="not a JSON value"):
        ToolCall.with_arguments(id="c", name="files", arguments={"paths": {1, 2}})
    assert seen == []


UNIQUE_TOOL = """
def handler(args, context):
    return {"content": [{"type": "text", "text": "ran"}]}
"""


@pytest.mark.parametrize(
    ("arguments", "code"),
    [
        ('{"v": [[true], [1]]}', None),  # true is not 1 in JSON Schema
        ('{"v": [[{"a": 1}], [{"a": 2}]]}', None),
        ('{"v": [{"a": [true]}, {"a": [1]}]}', None),
        ('{"v": [[{"a": 1}], [{"a": 1}]]}', "invalid_arguments"),
    ],
)
async def test_unique_items_judges_nested_arrays_and_objects_by_their_json_values(
    tmp_path: Path, make_tool: Any, arguments: str, code: str | None
) -> None:
    """The schema checks the arguments as parsed, before they are frozen: uniqueItems
    compares nested arrays and objects as JSON values (it hashes them), never failing."""
    schema = {"type": "object", "properties": {"v": {"type": "array", "uniqueItems": True}}}
    make_tool("unique", root=tmp_path / "tools", code=UNIQUE_TOOL, input_schema=schema)
    path = tmp_path / "raw.json"
    path.write_text(json.dumps({"agents": {"a": {"tools": {"use": ["agent/unique"]}}}}))
    agent = load_agent(load_config(path), host=PluginHost())
    dispatcher = Dispatcher(agent.registry, cwd=str(tmp_path))
    result = await dispatcher.dispatch(ToolCall(id="u", name="unique", arguments=arguments))
    assert result.code == code, result.text()
    assert (result.text() == "ran") is (code is None)


async def _passing(call: CallInfo, call_next: Callable[[], Awaitable[Any]]) -> Any:
    return await call_next()


@pytest.mark.parametrize("middleware", [None, _passing], ids=["direct", "in-a-middleware"])
@pytest.mark.parametrize(
    ("code", "expected"),
    [
        ("import sys\nasync def handler(args, context):\n    sys.exit(4)\n", "handler_error"),
        ("import sys\ndef handler(args, context):\n    sys.exit(4)\n", "handler_error"),
        (
            "import sys\ndef validate_args(args):\n    sys.exit(5)\n"
            "def handler(args, context):\n    return 'ran'\n",
            "invalid_arguments",
        ),
    ],
    ids=["async-handler", "sync-handler", "validate-args"],
)
async def test_sys_exit_in_a_tool_ends_the_call_not_raw(
    tmp_path: Path, make_tool: Any, code: str, expected: str, middleware: Any
) -> None:
    plugins = [Plugin(middleware=middleware)] if middleware is not None else []
    dispatcher, _ = setup(tmp_path, make_tool, *plugins, code=code)
    result = await dispatcher.dispatch(CALL)
    assert result.code == expected, result.text()
    assert "SystemExit" in result.text() or expected == "invalid_arguments"
