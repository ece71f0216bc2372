"""Command hooks at a session's events, with real scripts: UserPromptSubmit may block a
prompt (and its failure blocks it too), SessionStart and Stop only observe, and a turn's
tool calls run their PreToolUse and PostToolUse hooks with the session's id."""

from __future__ import annotations

import logging
from pathlib import Path
from typing import Any

import pytest

from raw_core import Reply, ScriptedProvider
from raw_core.app import App
from raw_core.plugins import PluginHost
from raw_core.runtime.events import TurnEnded
from raw_core.sessions.messages import UserMessage
from tests.command_hooks import runs, write_config, write_hook, write_tool

pytestmark = pytest.mark.anyio


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


@pytest.fixture
def root(tmp_path: Path) -> Path:
    write_tool(tmp_path)
    (tmp_path / "work").mkdir()
    return tmp_path


async def turn(
    root: Path, model: ScriptedProvider, prompt: str = "go"
) -> tuple[str, TurnEnded, tuple[Any, ...]]:
    """One turn in a new session: its id, the terminal event, and the model context."""
    async with App.open(
        root / "raw.json", host=PluginHost(), store_dir=root / "store", provider=model
    ) as app:
        async with app.open_session(cwd=root / "work") as session:
            ended = await session.run_turn(prompt)
        context = await (await app.backend()).read_context(session.id)
    return session.id, ended, context


BLOCK_SECRETS = """
if "password" in payload["prompt"]:
    print(json.dumps({"decision": "block", "reason": "prompts must not hold passwords"}))
"""


async def test_user_prompt_submit_blocks_a_prompt_before_anything_is_sent(root: Path) -> None:
    hook = write_hook(root, "prompts", events=["UserPromptSubmit"], python=BLOCK_SECRETS)
    write_config(root, ["agent/prompts"])
    model = ScriptedProvider([Reply(text="never")])
    session_id, ended, context = await turn(root, model, "my password is hunter2")
    assert ended.reason == "error"
    assert ended.error is not None
    assert ended.error["code"] == "hook_denied"
    assert ended.error["message"] == "prompts must not hold passwords"
    assert model.requests == []  # nothing was sent to the model
    assert context == ()  # nor committed
    (run,) = runs(hook)
    assert run["payload"]["prompt"] == "my password is hunter2"
    assert run["payload"]["session_id"] == session_id
    assert run["payload"]["event"] == "UserPromptSubmit"


async def test_a_blocked_prompt_does_not_title_its_session(root: Path) -> None:
    """An untitled session is titled by its first prompt the hooks let through, whichever
    front end runs it: a blocked one is not stored, as a title either."""
    write_hook(root, "prompts", events=["UserPromptSubmit"], python=BLOCK_SECRETS)
    write_config(root, ["agent/prompts"])
    model = ScriptedProvider([Reply(text="fine")])
    async with App.open(
        root / "raw.json", host=PluginHost(), store_dir=root / "store", provider=model
    ) as app:
        async with app.open_session(cwd=root / "work") as session:
            blocked = await session.run_turn("my password is hunter2")
            assert blocked.error is not None
            assert blocked.error["code"] == "hook_denied"
            assert (await app.session_info(session.id)).title == ""
            await session.run_turn("tidy\n  up")
            assert (await app.session_info(session.id)).title == "tidy up"
            await session.run_turn("something else")
        assert (await app.session_info(session.id)).title == "tidy up"  # the first one


async def test_a_failing_user_prompt_submit_hook_blocks_the_prompt(root: Path) -> None:
    write_hook(root, "prompts", events=["UserPromptSubmit"], python="raise SystemExit(3)\n")
    write_config(root, ["agent/prompts"])
    model = ScriptedProvider([Reply(text="never")])
    _, ended, context = await turn(root, model)
    assert ended.error is not None
    assert ended.error["code"] == "hook_failed"
    assert "exited with status 3" in ended.error["message"]
    assert model.requests == []
    assert context == ()


async def test_a_prompt_that_passes_goes_on_with_the_hooks_context_line(root: Path) -> None:
    write_hook(
        root,
        "prompts",
        events=["UserPromptSubmit"],
        python=BLOCK_SECRETS + 'print(json.dumps({"context": "the repo uses tabs"}))\n',
    )
    write_config(root, ["agent/prompts"])
    model = ScriptedProvider([Reply(text="fine")])
    _, ended, _ = await turn(root, model, "tidy up")
    assert ended.reason == "completed"
    (request,) = model.requests
    prompt = request.messages[0]
    assert isinstance(prompt, UserMessage)
    texts = [getattr(block, "text", None) for block in prompt.content]
    assert texts == ["tidy up", "[hook agent/prompts] the repo uses tabs"]


async def test_session_start_and_stop_observe_and_their_failures_change_nothing(
    root: Path, caplog: pytest.LogCaptureFixture
) -> None:
    watcher = write_hook(root, "watch", events=["SessionStart", "Stop"], python="")
    failing = write_hook(
        root,
        "fails",
        events=["SessionStart", "Stop"],
        python='print(json.dumps({"decision": "deny"}))\nraise SystemExit(1)\n',
    )
    write_config(root, ["agent/fails", "agent/watch"])
    model = ScriptedProvider([Reply(text="done")])
    with caplog.at_level(logging.WARNING, logger="raw_core.hooks"):
        session_id, ended, _ = await turn(root, model)
    assert ended.reason == "completed"
    start, stop = (run["payload"] for run in runs(watcher))
    assert (start["event"], start["source"], start["session_id"]) == (
        "SessionStart",
        "startup",
        session_id,
    )
    assert (stop["event"], stop["reason"], stop["steps"], stop["error"]) == (
        "Stop",
        "completed",
        1,
        None,
    )
    assert len(runs(failing)) == 2
    logged = [r.getMessage() for r in caplog.records]
    assert sum("agent/fails" in m and "only observes" in m for m in logged) == 2


async def test_a_turns_tool_calls_run_their_hooks_with_the_session_id(root: Path) -> None:
    hook = write_hook(root, "guard", events=["PreToolUse", "PostToolUse"], sh="exit 2\n")
    write_config(root, ["agent/guard"])
    model = ScriptedProvider(
        [Reply(tool_calls=(("echo", {"text": "hi"}),)), Reply(text="it was denied")]
    )
    _, ended, context = await turn(root, model)
    assert ended.reason == "completed"
    assert not (root / "work" / "handler-ran").exists()
    result = context[2]
    # No reason on stderr: the model reads a plain sentence, not the hook's identity.
    assert result.content[0].text == "error [hook_denied]: a check the user set up denies this call"
    assert len(runs(hook)) == 1  # the shell hook records a line, not its payload


async def test_a_resumed_session_says_so_to_session_start(root: Path) -> None:
    watcher = write_hook(root, "watch", events=["SessionStart"], python="")
    write_config(root, ["agent/watch"])
    async with App.open(
        root / "raw.json",
        host=PluginHost(),
        store_dir=root / "store",
        provider=ScriptedProvider([]),
    ) as app:
        async with app.open_session() as session:
            pass
        async with app.open_session(session.id):
            pass
    assert [run["payload"]["source"] for run in runs(watcher)] == ["startup", "resume"]
