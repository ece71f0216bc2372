"""An MCP result that updates a declared panel: a content item whose ``_meta`` holds
``"raw.panel/2"`` is that panel update, applied by the same path as a local tool's panel
block (declared panels only, the document checked, the limits kept) and never shown to the
model; an item without it is unchanged. Against the real test server
(tests/raw_mcp/mcp_test_server.py, its ``plan`` tool), through the app and through
``raw run`` in a subprocess."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from raw_core import App, PluginHost
from raw_core.tools.calls import ToolCall
from raw_mcp.content import result_content
from tests.raw_mcp.conftest import SERVER, make_config, server_entry

pytestmark = pytest.mark.anyio

PLAN = {"id": "plan", "title": "Plan"}
CHECKLIST = {
    "blocks": [
        {"type": "checklist", "items": [{"text": "read the server's notes", "status": "done"}]}
    ]
}
PANEL_META = "raw.panel/2"
REPLACE = {"panel": "plan", "op": "replace", "document": CHECKLIST}


def planner(marks: Path) -> dict[str, Any]:
    entry = server_entry(marks)
    entry["tools"] = {"plan": {"panels": [PLAN]}}
    return entry


def texts(result: Any) -> list[str]:
    return [b["text"] for b in result.to_dict()["content"] if b["type"] == "text"]


def test_a_meta_panel_item_becomes_the_panel_block_and_others_stay() -> None:
    noted = {"type": "text", "text": "noted", "_meta": {"example.org/x": 1}}
    mapped = result_content(
        {
            "content": [
                {"type": "text", "text": "for other clients", "_meta": {PANEL_META: REPLACE}},
                {"type": "image", "data": "", "mimeType": "image/png", "_meta": {PANEL_META: 7}},
                noted,
            ]
        }
    )
    assert mapped["content"] == [
        {"type": "panel", **REPLACE},
        {"type": "panel", "panel": None},  # names no panel: the dispatcher rejects it
        {"type": "text", "text": "noted"},
    ]
    typed = result_content(
        {"content": [{"type": "text", "_meta": {PANEL_META: {**REPLACE, "type": "panel"}}}]}
    )
    assert typed["content"] == [{"type": "panel", **REPLACE}]


async def test_an_mcp_result_updates_its_declared_panel(mcp_host: PluginHost, marks: Path) -> None:
    config = make_config(mcp_host, {"t": planner(marks)}, ["mcp/t/plan"])
    invalid = {"panel": "plan", "op": "replace", "document": {"blocks": [{"type": "video"}]}}
    undeclared = {**REPLACE, "panel": "other"}
    huge = {**REPLACE, "document": {"blocks": [{"type": "text", "text": "x" * 70_000}]}}
    patch = {
        "panel": "plan",
        "op": "patch",
        "revision": 1,
        "patch": [{"op": "replace", "path": "/blocks/0/items/0/status", "value": "pending"}],
    }
    async with App.open(config, host=mcp_host) as app, app.agent() as agent:
        dispatcher = agent.dispatcher(host=mcp_host)

        async def call(update: Any, **more: Any) -> Any:
            arguments = {"update": json.dumps(update), **more}
            return await dispatcher.dispatch(
                ToolCall(id="c", name="plan", arguments=json.dumps(arguments))
            )

        replaced = await call(REPLACE)
        rejected = await call(invalid)
        foreign = await call(undeclared)
        too_large = await call(huge)
        patched = await call(patch, fail=True)

    assert replaced.status == "ok"
    assert texts(replaced) == ["kept", "noted", "panel plan updated (revision 1)"]
    ((panel, revision, document, error),) = [
        (u.panel, u.revision, u.document, u.error) for u in replaced.panels
    ]
    assert (panel, revision, document, error) == ("plan", 1, CHECKLIST, None)
    assert "read the server's notes" not in json.dumps(replaced.to_dict()["content"])

    # A rejected update never fails the call: the rest of the result is there.
    assert rejected.status == "ok"
    assert texts(rejected)[:2] == ["kept", "noted"]
    assert texts(rejected)[2].startswith("panel plan update rejected: panel_invalid ")
    assert [u.error["code"] for u in rejected.panels if u.error] == ["panel_invalid"]
    assert texts(foreign)[2].startswith("panel other update rejected: panel_undeclared ")
    assert texts(too_large)[2].startswith("panel plan update rejected: panel_too_large ")

    # An error result still carries its panel update.
    assert (patched.status, patched.code) == ("error", "tool_error")
    assert [(u.op, u.revision, u.error) for u in patched.panels] == [("patch", 2, None)]
    assert "kept" in patched.text()


def raw(env: dict[str, str], *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "raw_core", *args],
        env=env,
        capture_output=True,
        text=True,
        stdin=subprocess.DEVNULL,
        timeout=180,
    )


def test_raw_run_records_an_mcp_panel_update_the_model_never_reads(
    tmp_path: Path, marks: Path
) -> None:
    invalid = {"panel": "plan", "op": "replace", "document": {"blocks": "none"}}
    replies = [
        {"tool_calls": [{"name": "plan", "arguments": {"update": json.dumps(REPLACE)}}]},
        {"tool_calls": [{"name": "plan", "arguments": {"update": json.dumps(invalid)}}]},
        {"text": "done"},
    ]
    recording = tmp_path / "replies.jsonl"
    recording.write_text("".join(json.dumps(r) + "\n" for r in replies))
    entry = {
        "command": [sys.executable, str(SERVER)],
        "env": {"MCP_TEST_DIR": {"env": "RAW_MCP_TEST_DIR"}},
        "tools": {"plan": {"panels": [PLAN]}},
    }
    config = tmp_path / "raw.json"
    config.write_text(
        json.dumps(
            {
                "models": {"m": {"provider": "replay", "model": str(recording)}},
                "mcp": {"servers": {"t": entry}},
                "agents": {
                    "a": {
                        "model": "m",
                        "tools": {
                            "use": ["mcp/t/plan"],
                            "rules": [{"match": "mcp/t/plan", "effect": "allow"}],
                        },
                    }
                },
            }
        )
    )
    env = dict(
        os.environ,
        XDG_STATE_HOME=str(tmp_path / "state"),
        XDG_CONFIG_HOME=str(tmp_path / "xdg"),
        NO_COLOR="1",
    )
    run = raw(env, "run", "go", "--config", str(config), "--json")
    assert run.returncode == 0, run.stderr
    events = [json.loads(line) for line in run.stdout.splitlines()]
    updates = [e for e in events if e["type"] == "panel_updated"]
    assert [(u["panel"], u["revision"], (u["error"] or {}).get("code")) for u in updates] == [
        ("plan", 1, None),
        ("plan", 1, "panel_invalid"),
    ]
    session = next(e["session_id"] for e in events if e.get("session_id"))

    panels = raw(env, "sessions", "panels", session, "--json")
    assert panels.returncode == 0, panels.stderr
    ((shown),) = json.loads(panels.stdout)
    assert (shown["identity"], shown["panel"], shown["revision"]) == ("mcp/t/plan", "plan", 1)
    assert shown["document"] == CHECKLIST

    # What the model is sent of the calls' results: the other items and the confirmation
    # lines, never the document or the panel item's own text.
    history = raw(env, "sessions", "show", session, "--json")
    assert history.returncode == 0, history.stderr
    items = json.loads(history.stdout)["items"]
    results = [i["message"] for i in items if i["kind"] == "message"]
    model_text = json.dumps([m["content"] for m in results if m["role"] == "tool"])
    assert "panel plan updated (revision 1)" in model_text
    assert "panel plan update rejected: panel_invalid" in model_text
    assert "kept" in model_text
    assert "read the server's notes" not in model_text
    assert 'plan updated"' not in model_text
