"""One call, one explanation and the tool list through the session service match a real
turn: the agent's variables, skills and limits, and the plug-ins' hooks."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from raw_core import Reply, ScriptedProvider, Verdict, hookimpl
from raw_core.app import App
from raw_core.cli import cli
from raw_core.dispatch import Dispatcher
from raw_core.plugins import PluginHost
from tests.raw_core.app.conftest import SECRET

pytestmark = pytest.mark.anyio


def tools_call(config: Path, identity: str, arguments: Any) -> tuple[int, dict[str, Any]]:
    result = CliRunner().invoke(
        cli,
        ["tools", "call", identity, json.dumps(arguments), "--config", str(config), "--json"],
    )
    return result.exit_code, json.loads(result.stdout)


@pytest.mark.parametrize(
    ("identity", "arguments", "expected"),
    [
        pytest.param("builtin/list_vars", {}, "TOKEN: The service token", id="list_vars"),
        pytest.param(
            "builtin/list_skills", {}, "review: How to review a change.", id="list_skills"
        ),
        pytest.param("builtin/read_var", {"name": "TOKEN"}, SECRET, id="read_var"),
    ],
)
def test_tools_call_sees_the_agents_variables_and_skills(
    project: Path, identity: str, arguments: Any, expected: str
) -> None:
    code, shown = tools_call(project / "raw.json", identity, arguments)
    assert code == 0, shown
    assert shown["status"] == "ok"
    assert expected in json.dumps(shown["content"])


def test_tools_call_ends_a_slow_handler_at_the_agents_time_limit(project: Path) -> None:
    code, shown = tools_call(project / "raw.json", "agent/slow", {"seconds": 20})
    assert code == 1
    assert shown["code"] == "timeout"
    assert "within 0.3 s" in shown["content"][0]["text"]


class Describer:
    """A plug-in that rewrites descriptions and asks about every echo call."""

    @hookimpl
    def raw_tool_describe(self, tool: Any, description: str) -> str | None:
        return f"{description} (reviewed)" if tool.identity == "agent/echo" else None

    @hookimpl
    def raw_tool_check(self, call: Any, verdict: Any) -> Any:
        if call.identity == "agent/echo":
            return Verdict(decision="ask", reason="echo needs a second look")
        return None


class Passer:
    """A plug-in whose check hook always passes."""

    @hookimpl
    def raw_tool_check(self, call: Any, verdict: Any) -> Any:
        return None


@pytest.fixture
def hooked(host: PluginHost) -> PluginHost:
    host.register(Describer(), name="describer")
    host.register(Passer(), name="passer")
    return host


async def test_the_tool_list_has_the_descriptions_a_turn_sends(
    project: Path, hooked: PluginHost, tmp_path: Path
) -> None:
    model = ScriptedProvider([Reply(text="ok")])
    async with App.open(
        project / "raw.json", host=hooked, store_dir=tmp_path / "s", provider=model
    ) as app:
        listing = await app.list_tools()
        async with app.open_session() as session:
            await session.run_turn("hi")
    listed = {d.name: d.description for d in listing.definitions}
    sent = {t.name: t.description for t in model.requests[0].tools}
    assert listed == sent
    assert listed["echo"] == "The echo test tool. (reviewed)"


async def test_explain_shows_each_check_hooks_answer(project: Path, hooked: PluginHost) -> None:
    async with App.open(project / "raw.json", host=hooked) as app:
        explained = await app.explain("agent/echo", '{"text": "plain"}')
        asking = await app.explain("agent/echo", {"text": "ask now"})
    assert explained.verdict == "allow"
    assert [h.to_dict() for h in explained.hooks] == [
        {
            "plugin": "describer",
            "decision": "ask",
            "reason": "echo needs a second look",
            "error": None,
        },
        {"plugin": "passer", "decision": None, "reason": None, "error": None},
    ]
    assert explained.final_verdict == "ask"
    assert explained.final_reason == "echo needs a second look"
    assert asking.verdict == "ask"
    assert asking.decided_by == 0


def test_policy_explain_prints_the_hooks(
    project: Path, hooked: PluginHost, monkeypatch: Any
) -> None:
    # The CLI loads the installed plug-ins; add the two test plug-ins to its host.
    original = PluginHost.load_entry_points

    def load_with_hooks(self: PluginHost, *args: Any, **kwargs: Any) -> None:
        original(self, *args, **kwargs)
        self.register(Describer(), name="describer")

    monkeypatch.setattr(PluginHost, "load_entry_points", load_with_hooks)
    result = CliRunner().invoke(
        cli,
        ["policy", "explain", "agent/echo", '{"text": "x"}', "--config", str(project / "raw.json")],
    )
    assert result.exit_code == 0, result.output
    assert "check hooks:\n  describer: ask (echo needs a second look)" in result.stdout
    assert "after hooks: ask (echo needs a second look)" in result.stdout


async def test_a_turn_a_tools_call_and_an_explanation_prepare_calls_the_same_way(
    project: Path, host: PluginHost, tmp_path: Path, monkeypatch: Any
) -> None:
    prepared: list[str] = []
    original = Dispatcher.prepare

    def spy(self: Dispatcher, tool: Any, call: Any, signal: Any = None) -> Any:
        prepared.append(tool.identity)
        return original(self, tool, call, signal)

    monkeypatch.setattr(Dispatcher, "prepare", spy)
    model = ScriptedProvider([Reply(tool_calls=(("echo", {"text": "a"}),)), Reply(text="ok")])
    async with App.open(
        project / "raw.json", host=host, store_dir=tmp_path / "s", provider=model
    ) as app:
        async with app.open_session() as session:
            await session.run_turn("go")
        await app.call_tool("agent/echo", {"text": "b"})
        await app.explain("agent/echo", {"text": "c"})
    assert prepared == ["agent/echo"] * 3
