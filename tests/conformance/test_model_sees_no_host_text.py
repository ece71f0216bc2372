"""Spec 004, "What the model receives": configuration and approval text stay on the host side.

A denied, hidden, unanswerable or declined call tells the model its code and a plain
sentence; the identity, the rule index and the rule's text reach the host's events only.
Text a person or a hook wrote for the model (a user's message when declining, a hook's
deny reason) still reaches it."""

from __future__ import annotations

import json
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import attrs
import pytest

from raw_core import hookimpl
from raw_core.agent import Agent, load_agent
from raw_core.config import load_config
from raw_core.plugins import PluginHost
from raw_core.providers.scripted import Reply, ScriptedProvider
from raw_core.runtime import Runtime
from raw_core.runtime.events import LoopEvent, ToolCallFinished
from raw_core.runtime.frontend import CallbackFrontEnd
from raw_core.sessions.sqlite import ApprovalAnswer, SqliteBackend, ToolResultMessage
from raw_core.tools.calls import ApprovalRequest, CallInfo, Verdict

pytestmark = pytest.mark.anyio

ECHO = (
    "async def handler(args, context):\n"
    "    return {'content': [{'type': 'text', 'text': args['text']}]}\n"
)
SCHEMA = {"type": "object", "properties": {"text": {"type": "string"}}}
ASK_REGEX = "host-only-ask-[0-9]+"
HOST_ONLY = ("agent/echo", "agent/hidden", "rule 0", "tools.rules", ASK_REGEX)


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


@pytest.fixture
async def backend(tmp_path: Path) -> AsyncIterator[SqliteBackend]:
    async with await SqliteBackend.open(tmp_path / "state") as opened:
        yield opened


def make_agent(tmp_path: Path, make_tool: Any, host: PluginHost | None = None) -> Agent:
    for name in ("echo", "hidden"):
        make_tool(
            name,
            root=tmp_path / "tools",
            code=ECHO,
            input_schema=SCHEMA,
            condition_sources=["arguments"],
        )

    def when(regex: str) -> dict[str, Any]:
        return {"source": "arguments", "any": "text", "regex": regex}

    rules = [  # echo: denied, unless its text matches the ask's regex
        {"match": "agent/echo", "effect": "deny"},
        {"match": "agent/echo", "effect": "ask", "when": when(ASK_REGEX)},
        {"match": "agent/hidden", "effect": "deny"},
    ]
    config = {"agents": {"a": {"tools": {"use": ["agent/echo", "agent/hidden"], "rules": rules}}}}
    (tmp_path / "raw.json").write_text(json.dumps(config), encoding="utf-8")
    return load_agent(load_config(tmp_path / "raw.json"), host=host or PluginHost())


async def one_call(
    backend: SqliteBackend,
    agent: Agent,
    name: str,
    text: str,
    *,
    host: PluginHost | None = None,
    front_end: CallbackFrontEnd | None = None,
) -> tuple[ToolResultMessage, ToolCallFinished, ScriptedProvider]:
    """One turn in which the model calls ``name`` once: the stored result, the host's
    event of it, and the provider (whose requests are what the model received)."""
    events: list[LoopEvent] = []
    provider = ScriptedProvider([Reply(tool_calls=((name, {"text": text}),)), Reply(text="ok")])
    async with Runtime(backend, host=host).open_session(
        agent, provider, front_end=front_end
    ) as session:
        await session.run_turn("go", on_event=events.append)
        session_id = session.id
    (stored,) = [
        m for m in await backend.read_context(session_id) if isinstance(m, ToolResultMessage)
    ]
    (finished,) = [e for e in events if isinstance(e, ToolCallFinished)]
    return stored, finished, provider


def model_text(provider: ScriptedProvider) -> str:
    """Everything the model received in its second request, as JSON text."""
    return json.dumps(attrs.asdict(provider.requests[1]), default=str)


def host_text(finished: ToolCallFinished) -> str:
    return json.dumps(finished.to_dict()["full_content"])


async def test_a_denied_call_reads_a_plain_sentence(
    tmp_path: Path, make_tool: Any, backend: SqliteBackend
) -> None:
    agent = make_agent(tmp_path, make_tool)
    stored, finished, provider = await one_call(backend, agent, "echo", "plain")
    assert stored.error_code == "denied"
    assert stored.content[0].text == (  # type: ignore[union-attr]
        "error [denied]: a rule of the user's policy denies this call"
    )
    sent = model_text(provider)
    for host_only in HOST_ONLY:
        assert host_only not in sent
    assert "agent/echo" in host_text(finished)
    assert "rule 0 of tools.rules" in host_text(finished)


async def test_a_hidden_tool_reads_a_plain_sentence(
    tmp_path: Path, make_tool: Any, backend: SqliteBackend
) -> None:
    agent = make_agent(tmp_path, make_tool)
    stored, finished, provider = await one_call(backend, agent, "hidden", "x")
    assert stored.error_code == "tool_not_exposed"
    assert "agent/hidden" not in model_text(provider)
    assert "agent/hidden" in host_text(finished)


async def test_an_ask_nobody_can_answer_reads_a_plain_sentence(
    tmp_path: Path, make_tool: Any, backend: SqliteBackend
) -> None:
    agent = make_agent(tmp_path, make_tool)
    stored, finished, provider = await one_call(backend, agent, "echo", "host-only-ask-1")
    assert stored.error_code == "approval_unavailable"
    assert stored.content[0].text == (  # type: ignore[union-attr]
        "error [approval_unavailable]: this call needs the user's approval,"
        " and nobody could be asked"
    )
    sent = model_text(provider)
    for host_only in HOST_ONLY:
        assert host_only not in sent
    assert "rule 1 of tools.rules asks" in host_text(finished)


@pytest.mark.parametrize(
    ("message", "expected"),
    [
        (None, "error [approval_denied]: the user declined this call"),
        (
            "use git rm instead",
            "error [approval_denied]: the user declined this call: use git rm instead",
        ),
    ],
    ids=["without-a-message", "with-the-user-s-message"],
)
async def test_a_declined_call_reads_the_user_s_words_and_nothing_else(
    tmp_path: Path, make_tool: Any, backend: SqliteBackend, message: str | None, expected: str
) -> None:
    agent = make_agent(tmp_path, make_tool)

    async def decline(request: ApprovalRequest) -> ApprovalAnswer:
        return ApprovalAnswer(approved=False, by="terminal", message=message)

    stored, finished, provider = await one_call(
        backend,
        agent,
        "echo",
        "host-only-ask-2",
        front_end=CallbackFrontEnd(approve=decline, name="terminal"),
    )
    assert stored.error_code == "approval_denied"
    assert stored.content[0].text == expected  # type: ignore[union-attr]
    assert "agent/echo" not in model_text(provider)
    assert "agent/echo" in host_text(finished)


class Guard:
    """A check hook that denies every call, with or without a reason for the model."""

    def __init__(self, reason: str | None) -> None:
        self.reason = reason

    @hookimpl
    def raw_tool_check(self, call: CallInfo, verdict: Verdict) -> Verdict:
        return Verdict(decision="deny", reason=self.reason)


@pytest.mark.parametrize(
    ("reason", "expected"),
    [
        ("run the tests first", "error [hook_denied]: run the tests first"),
        (None, "error [hook_denied]: a check the user set up denies this call"),
    ],
    ids=["the-hook-s-reason", "no-reason"],
)
async def test_a_hook_s_reason_reaches_the_model_and_its_name_does_not(
    tmp_path: Path,
    make_tool: Any,
    backend: SqliteBackend,
    reason: str | None,
    expected: str,
) -> None:
    host = PluginHost()
    host.register(Guard(reason), name="secret-guard")
    agent = make_agent(tmp_path, make_tool, host)
    stored, finished, provider = await one_call(
        backend, agent, "echo", "host-only-ask-3", host=host
    )
    assert stored.content[0].text == expected  # type: ignore[union-attr]
    assert "secret-guard" not in model_text(provider)
    if reason is None:
        assert "secret-guard" in host_text(finished)
