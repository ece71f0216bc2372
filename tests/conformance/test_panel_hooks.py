"""Panels meet command hooks (spec 000, "Panel actions", "Hook payloads", "Updates"): a
panel's tool action runs the tool through PreToolUse and PostToolUse with ``tool.source``
``"user_action"``; hooks see a result without its panel blocks; a withheld result keeps
its panel updates; the hard result cap covers the hooks' lines and the panel note
together. Real tool and hook folders, a scripted model, a real SQLite session store."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from raw_core.sessions.sqlite import TextBlock
from raw_core.tools.results import model_bytes
from tests.command_hooks import runs, write_hook
from tests.conformance.test_panels import Project, tool_folder

pytestmark = pytest.mark.anyio

# Updates panel "plan" twice — through the context, then as a result block — and returns
# text the hooks (not the panel) see. A user action (``reset``) does the same.
STEPPER = """
async def handler(args, context):
    word = args.get("reset") or args.get("word", "none")
    def document(text):
        return {"blocks": [{"type": "text", "text": text}]}
    await context.panels.update("plan", {"op": "replace", "document": document("ctx " + word)})
    block = {"type": "panel", "panel": "plan", "op": "replace",
             "document": document("panel-doc-" + word)}
    text = "tool-text-" + word + args.get("pad", "")
    return {"content": [{"type": "text", "text": text}, block]}
"""

PLAN = {
    "id": "plan",
    "title": "Plan",
    "actions": [{"id": "reset", "title": "Reset", "type": "tool", "arguments": {"reset": "act"}}],
}


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


def project(root: Path, hooks: list[str], **agent: Any) -> Project:
    made = Project(root)
    tool_folder(root, "stepper", [PLAN], code=STEPPER)
    config = {
        "agents": {
            "a": {
                "tools": {"use": ["agent/stepper"]},
                "hooks": {"use": hooks},
                **agent,
            }
        }
    }
    (root / "raw.json").write_text(json.dumps(config))
    return made


def texts(blocks: Any) -> list[str]:
    return [b["text"] if isinstance(b, dict) else b.text for b in blocks]


async def test_a_tool_action_goes_through_command_hooks_as_a_user_action(tmp_path: Path) -> None:
    audit = write_hook(
        tmp_path,
        "audit",
        events=["PreToolUse", "PostToolUse"],
        python=(
            'if payload["event"] == "PreToolUse" and payload["tool"]["source"] == "user_action":\n'
            '    print(json.dumps({"decision": "deny", "reason": "not from a panel"}))\n'
        ),
    )
    made = project(tmp_path, ["agent/audit"])
    async with made.app() as app:
        sid, (finished,) = await made.turn(app, [("stepper", {"word": "one"})])
        assert finished["status"] == "ok"
        refused = await app.panel_action(sid, "agent/stepper:plan", "reset")
        (panel,) = await app.panels(sid)
    assert refused.result is not None
    assert (refused.result.code, refused.result.message) == ("hook_denied", "not from a panel")
    seen = [(r["payload"]["event"], r["payload"]["tool"]["source"]) for r in runs(audit)]
    # the action's call was stopped at PreToolUse: its handler never ran, nor PostToolUse
    assert seen == [
        ("PreToolUse", "model"),
        ("PostToolUse", "model"),
        ("PreToolUse", "user_action"),
    ]
    assert {r["payload"]["session_id"] for r in runs(audit)} == {sid}
    assert panel.revision == 2  # the action changed nothing
    assert panel.document == {"blocks": [{"type": "text", "text": "panel-doc-one"}]}


async def test_a_withheld_result_keeps_its_panel_updates_and_hooks_never_see_a_document(
    tmp_path: Path,
) -> None:
    redact = write_hook(
        tmp_path,
        "redact",
        events=["PostToolUse"],
        python='print(json.dumps({"decision": "block", "reason": "it holds a token"}))\n',
    )
    made = project(tmp_path, ["agent/redact"])
    async with made.app() as app:
        sid, (finished,) = await made.turn(app, [("stepper", {"word": "one"})])
        acted = await app.panel_action(sid, "agent/stepper:plan", "reset")
        page = await app.page(sid)
        (panel,) = await app.panels(sid)
    # the model reads why the result was withheld, then the panel's confirmation line
    assert finished["code"] == "result_withheld"
    assert texts(finished["content"]) == [
        "stepper ran, and a hook withheld its result: it holds a token",
        "panel plan updated (revision 2)",
    ]
    assert [u["revision"] for u in finished["panels"]] == [1, 2]
    assert acted.result is not None
    assert acted.result.code == "result_withheld"
    assert [u.revision for u in acted.result.panels] == [3, 4]
    # the updates were applied and stored: the tool's effects stay
    assert [i.entry.revision for i in page.items if i.kind == "panel"] == [1, 2, 3, 4]
    assert panel.document == {"blocks": [{"type": "text", "text": "panel-doc-act"}]}
    # the hook read the tool's text, never a panel document
    payloads = [r["payload"] for r in runs(redact)]
    assert [p["tool"]["source"] for p in payloads] == ["model", "user_action"]
    assert [p["result"]["text"] for p in payloads] == ["tool-text-one", "tool-text-act"]
    assert "panel-doc" not in json.dumps(payloads)
    # and neither the withheld text nor a document reached the model
    sent = json.dumps([r.messages for r in made.model.requests], default=str)
    assert "tool-text-" not in sent
    assert "panel-doc" not in sent


async def test_the_result_cap_covers_the_hook_lines_and_the_panel_note(tmp_path: Path) -> None:
    write_hook(
        tmp_path,
        "note",
        events=["PostToolUse"],
        python='print(json.dumps({"context": "mind the plan " + "z" * 900}))\n',
    )
    made = project(tmp_path, ["agent/note"], max_output_bytes=300)
    async with made.app() as app:
        result = await app.call_tool("agent/stepper", {"word": "one", "pad": "w" * 2000})
    assert result.status == "ok"
    assert result.truncated
    assert model_bytes(result.content) <= 300
    *output, line, note = result.content
    assert isinstance(line, TextBlock)
    assert line.text.startswith("[hook agent/note] mind the plan zz")
    assert isinstance(note, TextBlock)
    assert note.text == "panel plan updated (revision 2)"
    assert texts(output)[0].startswith("tool-text-onewww")
