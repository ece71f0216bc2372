"""Panels on the command line: ``raw tools call --json`` lists a call's updates, ``raw run``
draws a chat panel inline and a sidebar panel as a box (a diagram as its source), ``--json``
carries ``panel_updated`` events, ``raw sessions show`` and ``panels`` read them back, and
``raw sessions action`` runs a panel's action."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from raw_core.cli import cli

PAINTER = """
async def handler(args, context):
    side = {"blocks": [{"type": "checklist", "items": [
        {"text": f"step {i}", "status": "done" if i < 2 else "pending"} for i in range(12)]}]}
    await context.panels.update("side", {"op": "replace", "document": side})
    inline = {"blocks": [{"type": "text", "text": "Inline note"},
                         {"type": "mermaid", "source": "graph TD\\n  A-->B"}]}
    return {"content": [
        {"type": "text", "text": "painted"},
        {"type": "panel", "panel": "inline", "op": "replace", "document": inline},
        {"type": "panel", "panel": "inline", "op": "patch", "revision": 9, "patch": []},
    ]}
"""
PANELS = [
    {
        "id": "side",
        "title": "Steps",
        "actions": [{"id": "again", "title": "Again", "type": "tool", "arguments": {}}],
    },
    {
        "id": "inline",
        "title": "Note",
        "placement": "chat",
        "actions": [{"id": "ask", "title": "Ask", "type": "prompt", "prompt": "Explain the note."}],
    },
]


@pytest.fixture
def project(tmp_path: Path, make_tool: Any, monkeypatch: pytest.MonkeyPatch) -> Path:
    make_tool("painter", root=tmp_path / "tools", code=PAINTER, panels=PANELS)
    recording = tmp_path / "recording.jsonl"
    replies = [{"text": "", "tool_calls": [{"name": "painter", "arguments": {}}]}, {"text": "done"}]
    recording.write_text("".join(json.dumps(r) + "\n" for r in replies))
    config = tmp_path / "raw.json"
    config.write_text(
        json.dumps(
            {
                "models": {"m": {"provider": "replay", "model": str(recording)}},
                "agents": {"a": {"model": "m", "tools": {"use": ["agent/painter"]}}},
            }
        )
    )
    monkeypatch.setenv("XDG_STATE_HOME", str(tmp_path / "state"))
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path / "xdg"))
    return config


def invoke(*args: str) -> Any:
    return CliRunner().invoke(cli, list(args), catch_exceptions=False)


def test_tools_call_json_lists_each_update_of_the_call(project: Path) -> None:
    result = invoke("tools", "call", "agent/painter", "{}", "--config", str(project), "--json")
    assert result.exit_code == 0, result.output
    outcome = json.loads(result.stdout)
    rows = [
        (u["panel"], u["op"], u["revision"], u["error"]["code"] if u["error"] else None)
        for u in outcome["panels"]
    ]
    assert rows == [
        ("side", "replace", 1, None),
        ("inline", "replace", 1, None),
        ("inline", "patch", 1, "panel_revision_conflict"),
    ]
    assert outcome["panels"][0]["document"]["blocks"][0]["type"] == "checklist"
    assert outcome["content"][-1]["text"].split("\n")[:2] == [
        "panel side updated (revision 1)",
        "panel inline updated (revision 1)",
    ]


def test_tools_call_draws_the_panels_it_updated(project: Path) -> None:
    result = invoke("tools", "call", "agent/painter", "{}", "--config", str(project))
    assert result.exit_code == 0
    assert "▣ Note (agent/painter:inline), revision 1" in result.stderr
    assert "  mermaid diagram (source):\n  graph TD\n    A-->B\n" in result.stderr


def test_a_run_draws_chat_panels_inline_and_sidebar_panels_as_a_box(project: Path) -> None:
    result = invoke("run", "go", "--config", str(project))
    assert result.exit_code == 0, result.stderr
    err = result.stderr
    box = err[err.index("┌ Steps") :]
    assert box.startswith("┌ Steps · revision 1 (agent/painter:side)\n│ [x] step 0\n")
    assert "│ [ ] step 7\n│ … 4 more lines: raw sessions panels " in box
    inline = err[err.index("▣ Note") :]
    assert inline.startswith(
        "▣ Note (agent/painter:inline), revision 1\n  Inline note\n  mermaid diagram (source):\n"
    )
    assert err.index("┌ Steps") < err.index("✓ painter")


def test_json_output_carries_panel_events_and_the_store_reads_them_back(project: Path) -> None:
    result = invoke("run", "go", "--config", str(project), "--json")
    events = [json.loads(line) for line in result.stdout.splitlines()]
    updates = [e for e in events if e["type"] == "panel_updated"]
    assert [(u["panel"], u["revision"], bool(u["error"])) for u in updates] == [
        ("side", 1, False),
        ("inline", 1, False),
        ("inline", 1, True),
    ]
    finished = next(e for e in events if e["type"] == "tool_call_finished")
    assert len(finished["panels"]) == 3
    (session,) = json.loads(invoke("sessions", "list", "--json").stdout)
    shown = invoke("sessions", "show", session["id"]).stdout
    assert "  ▣ panel agent/painter:side replace: revision 1\n" in shown
    assert "  ▣ panel inline update rejected: panel_revision_conflict" in shown
    panels = json.loads(invoke("sessions", "panels", session["id"], "--json").stdout)
    assert [(p["panel"], p["revision"]) for p in panels] == [("side", 1), ("inline", 1)]
    full = invoke("sessions", "panels", session["id"]).stdout
    assert "[ ] step 11" in full  # in full, not cut to the box

    prompt = invoke(
        "sessions", "action", session["id"], "agent/painter:inline", "ask", "--config", str(project)
    )
    assert (prompt.exit_code, prompt.stdout) == (0, "Explain the note.\n")
    bare = invoke(  # a bare panel id will do when one selected tool declares it
        "sessions", "action", session["id"], "inline", "ask", "--config", str(project), "--json"
    )
    assert bare.exit_code == 0, bare.output
    assert json.loads(bare.stdout)["panel"] == "agent/painter:inline"
    again = invoke(
        "sessions",
        "action",
        session["id"],
        "agent/painter:side",
        "again",
        "--config",
        str(project),
        "--json",
    )
    assert again.exit_code == 0, again.output
    done = json.loads(again.stdout)
    assert done["kind"] == "tool"
    assert done["result"]["panels"][0]["revision"] == 2
    unknown = invoke(
        "sessions", "action", session["id"], "agent/painter:side", "nope", "--config", str(project)
    )
    assert unknown.exit_code == 2
    assert "panel_invalid" in unknown.stderr
