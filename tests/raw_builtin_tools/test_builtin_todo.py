"""builtin/todo: the task list in the live side panel ``todo`` (spec 001, "Built-in tools").

The tool replaces the panel's checklist from batch-validated arguments and the model reads
one confirmation line; a session with todo updates, killed and resumed by the real ``raw``
command, shows the panel's last revision.
"""

from __future__ import annotations

import json
import os
import select
import signal
import subprocess
import time
from pathlib import Path
from typing import Any

import pytest

from raw_builtin_tools import TOOLS_DIR
from raw_core import App, CallbackFrontEnd, Reply, ScriptedProvider, thaw
from raw_core.plugins import PluginHost
from raw_core.sessions.sqlite import ToolResultMessage
from raw_core.tools.loader import ToolLoader
from tests.conftest import Children, raw_script

BOUND = 60.0  # seconds; generous: what is checked is what happens, not how fast


def items(*pairs: tuple[str, str]) -> dict[str, Any]:
    return {"items": [{"text": text, "status": status} for text, status in pairs]}


def host() -> PluginHost:
    loaded = PluginHost()
    loaded.load_entry_points()
    return loaded


def config(root: Path, **models: Any) -> Path:
    path = root / "raw.json"
    agent: dict[str, Any] = {"tools": {"use": ["builtin/todo"]}}
    if models:
        agent["model"] = next(iter(models))
    path.write_text(json.dumps({"models": models, "agents": {"a": agent}}))
    return path


def test_the_manifest_declares_one_summary_sidebar_panel_sent_as_a_plan() -> None:
    tool = ToolLoader().load(TOOLS_DIR / "todo", identity="builtin/todo")
    (panel,) = tool.manifest.panels
    assert (panel.id, panel.placement, panel.context, panel.acp_plan) == (
        "todo",
        "sidebar",
        "summary",
        True,
    )


@pytest.mark.anyio
@pytest.mark.parametrize("anyio_backend", ["asyncio"])
async def test_a_call_replaces_the_list_and_the_model_reads_one_line(
    tmp_path: Path, anyio_backend: str
) -> None:
    first = items(("read the code", "done"), ("  fix the bug  ", "in_progress"))
    second = items(("fix the bug", "done"))
    invalid = [
        items(("twice", "pending"), ("twice", "done")),
        items(("   ", "pending")),
        items(("x", "later")),
        {"items": [{"text": "x", "status": "done", "extra": 1}]},
    ]
    calls = [("todo", first), *(("todo", bad) for bad in invalid), ("todo", second)]
    model = ScriptedProvider([Reply(tool_calls=tuple(calls)), Reply(text="ok")])
    shown: list[Any] = []

    async def show(update: Any) -> None:
        shown.append(update)

    async with App.open(
        config(tmp_path), host=host(), store_dir=tmp_path / "sessions", provider=model
    ) as app:
        async with app.open_session(front_end=CallbackFrontEnd(show_panel=show)) as session:
            await session.run_turn("plan it")
        page = await app.page(session.id)
        (panel,) = await app.panels(session.id)
    results = [i.message for i in page.items if isinstance(i.message, ToolResultMessage)]
    texts = [[getattr(b, "text", None) for b in r.content] for r in results]
    assert texts[0] == ["panel todo updated (revision 1)"]
    assert [r.error_code for r in results[1:5]] == ["invalid_arguments"] * 4
    assert texts[5] == ["panel todo updated (revision 2)"]
    assert [u.revision for u in shown] == [1, 2]
    assert thaw(shown[0].document) == {
        "blocks": [
            {
                "type": "checklist",
                "items": [
                    {"text": "read the code", "status": "done"},
                    {"text": "fix the bug", "status": "in_progress"},
                ],
            }
        ]
    }
    assert panel.revision == 2
    assert panel.declaration is not None
    assert panel.declaration["context"] == "summary"
    for request in model.requests:  # the list went to the panel, never back to the model
        sent = [m for m in request.messages if isinstance(m, ToolResultMessage)]
        assert "read the code" not in json.dumps([str(m) for m in sent])


def _read_until(process: subprocess.Popen[bytes], needle: bytes, count: int) -> bytes:
    """What ``process`` wrote on stderr until ``needle`` had appeared ``count`` times (or
    it ended, or the bound passed)."""
    assert process.stderr is not None
    seen = b""
    deadline = time.monotonic() + BOUND
    while seen.count(needle) < count and time.monotonic() < deadline:
        ready, _, _ = select.select([process.stderr], [], [], deadline - time.monotonic())
        if not ready:
            break
        chunk = os.read(process.stderr.fileno(), 65536)
        if not chunk:
            break
        seen += chunk
    return seen


def test_a_killed_session_resumes_with_the_last_revision(
    tmp_path: Path, children: Children
) -> None:
    env = {**os.environ, "XDG_STATE_HOME": str(tmp_path / "state"), "NO_COLOR": "1"}
    env["XDG_CONFIG_HOME"] = str(tmp_path / "xdg")
    first = tmp_path / "first.jsonl"
    replies = [
        {"text": "", "tool_calls": [{"name": "todo", "arguments": items(("plan", "in_progress"))}]},
        {
            "text": "",
            "tool_calls": [
                {"name": "todo", "arguments": items(("plan", "done"), ("ship", "pending"))}
            ],
        },
        {"text": "never sent", "delay_ms": 60_000},  # the process is killed while it waits
    ]
    first.write_text("".join(json.dumps(r) + "\n" for r in replies))
    run = children.popen(
        [
            raw_script(),
            "run",
            "go",
            "--config",
            str(config(tmp_path, m={"provider": "replay", "model": str(first)})),
        ],
        env=env,
        cwd=tmp_path,
        stdin=subprocess.DEVNULL,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
    )
    assert run.stderr is not None
    with run.stderr:
        seen = _read_until(run, "✓ todo".encode(), 2)
        assert seen.count("✓ todo".encode()) == 2, seen.decode()
        os.killpg(run.pid, signal.SIGKILL)
        run.wait()
    listed = subprocess.run(
        [raw_script(), "sessions", "list", "--json"], env=env, capture_output=True, text=True
    )
    (session,) = json.loads(listed.stdout)
    panels = subprocess.run(
        [raw_script(), "sessions", "panels", session["id"], "--json"],
        env=env,
        capture_output=True,
        text=True,
    )
    (panel,) = json.loads(panels.stdout)
    assert (panel["panel"], panel["revision"]) == ("todo", 2)
    assert [i["text"] for i in panel["document"]["blocks"][0]["items"]] == ["plan", "ship"]
    second = tmp_path / "second.jsonl"
    second.write_text(json.dumps({"text": "resumed"}) + "\n")
    resumed = subprocess.run(
        [
            raw_script(),
            "sessions",
            "resume",
            session["id"],
            "go on",
            "--config",
            str(config(tmp_path, m={"provider": "replay", "model": str(second)})),
        ],
        env=env,
        cwd=tmp_path,
        stdin=subprocess.DEVNULL,
        capture_output=True,
        text=True,
        timeout=BOUND,
    )
    assert resumed.returncode == 0, resumed.stderr
    assert resumed.stdout == "resumed\n"
    assert "┌ Tasks · revision 2 (builtin/todo:todo)\n│ [x] plan\n│ [ ] ship\n└\n" in resumed.stderr
