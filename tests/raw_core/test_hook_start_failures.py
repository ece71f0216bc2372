"""A hook command that cannot start, for whatever reason, is ``hook_failed`` at every event
that decides (and a logged failure at an observer's): never an error of raw's own that
escapes the hook runner. ``hook.json`` refuses the commands it can see will not start (a
string the system cannot take); these hooks are given such a command past that check, as
the runner must hold whatever it is given."""

from __future__ import annotations

import logging
from pathlib import Path

import attrs
import pytest

from raw_core import load_hook
from raw_core.errors import HookFailed
from raw_core.hooks import (
    HookContext,
    HookSet,
    LoadedHook,
    observe,
    post_tool_use,
    pre_tool_use,
    user_prompt_submit,
)
from raw_core.hooks._process import run_process
from raw_core.sessions.blocks import TextBlock
from raw_core.tools.calls import CallInfo, Verdict
from raw_core.tools.results import ToolResult
from tests.command_hooks import write_hook

pytestmark = pytest.mark.anyio

UNSTARTABLE = ("\ud800",)  # a lone surrogate: no file name the system can be given


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


def broken(tmp_path: Path, events: list[str]) -> tuple[HookSet, LoadedHook]:
    folder = write_hook(tmp_path, "broken", python="", events=events)
    hook = attrs.evolve(load_hook(folder, identity="agent/broken"), argv=UNSTARTABLE)
    return HookSet((hook,), {}), hook


CALL = CallInfo(
    identity="agent/echo",
    name="echo",
    tool_call_id="call_1",
    arguments={"text": "x"},
    effects=None,
    has_effects=False,
)


def context(tmp_path: Path) -> HookContext:
    return HookContext(session_id=None, cwd=str(tmp_path))


async def test_the_runner_reports_a_command_it_cannot_start() -> None:
    finished = await run_process(UNSTARTABLE, stdin=b"", cwd=".", env={}, timeout=5)
    assert finished.status == "not_started"
    assert finished.error


async def test_pre_tool_use_fails_closed(tmp_path: Path) -> None:
    hooks, hook = broken(tmp_path, ["PreToolUse"])
    allow = Verdict(decision="allow")
    with pytest.raises(HookFailed, match=r"hook agent/broken \(PreToolUse\) could not start"):
        await pre_tool_use(hooks, (hook,), CALL, allow, context(tmp_path))


async def test_post_tool_use_withholds_the_result(tmp_path: Path) -> None:
    hooks, hook = broken(tmp_path, ["PostToolUse"])
    blocks = (TextBlock(text="secret"),)
    result = ToolResult(status="ok", content=blocks, full_content=blocks)
    withheld = await post_tool_use(
        hooks, (hook,), CALL, result, context(tmp_path), max_bytes=10_000
    )
    assert withheld.code == "hook_failed"
    said = "echo ran, and a hook withheld its result: a check the user set up failed"
    assert withheld.text() == said
    assert "could not start" in withheld.full_text()
    assert "secret" not in withheld.full_text()


async def test_user_prompt_submit_blocks_the_prompt(tmp_path: Path) -> None:
    hooks, _ = broken(tmp_path, ["UserPromptSubmit"])
    error, lines = await user_prompt_submit(hooks, "hello", context(tmp_path))
    assert isinstance(error, HookFailed)
    assert "could not start" in error.message
    assert lines == ()


async def test_an_observer_logs_it(tmp_path: Path, caplog: pytest.LogCaptureFixture) -> None:
    hooks, _ = broken(tmp_path, ["Stop"])
    with caplog.at_level(logging.WARNING, logger="raw_core.hooks"):
        await observe(hooks, "Stop", context(tmp_path), reason="completed")
    assert any("could not start" in r.getMessage() for r in caplog.records)
