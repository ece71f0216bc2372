"""A small project for the dashboard's tests: a config whose model is a replay recording,
``builtin/todo`` (a sidebar panel), a local tool drawing a mermaid diagram in a chat panel
(with a panel action), and ``builtin/bash`` behind an ask rule for ``rm``; and a second
agent, ``f``, whose model asks a form with ``builtin/ask_user``."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

DIAGRAM = """
def handler(args, context):
    label = args.get("label", "start")
    source = "graph TD\\n  A[" + label + "] --> B{tests pass?}\\n  B -->|yes| C[ship]"
    document = {"blocks": [{"type": "text", "text": "The flow"},
                           {"type": "mermaid", "title": "Flow", "source": source}]}
    return {"content": [{"type": "text", "text": "drawn"},
                        {"type": "panel", "panel": "flow", "op": "replace",
                         "document": document}]}
"""

MANIFEST: dict[str, Any] = {
    "api_version": 2,
    "id": "diagram",
    "version": "1.0.0",
    "name": "diagram",
    "description": "Draw the flow of the work as a diagram the user sees.",
    "input_schema": {
        "type": "object",
        "properties": {"label": {"type": "string"}},
        "additionalProperties": False,
    },
    "condition_sources": ["arguments"],
    "entry": "./tool.py",
    "panels": [
        {
            "id": "flow",
            "title": "Flow",
            "placement": "chat",
            "actions": [
                {
                    "id": "redraw",
                    "title": "Redraw",
                    "type": "tool",
                    "arguments": {"label": "redrawn"},
                },
                {
                    "id": "explain",
                    "title": "Explain",
                    "type": "prompt",
                    "prompt": "Explain the flow.",
                },
            ],
        }
    ],
}

TURN: list[dict[str, Any]] = [
    {
        "text": "Planning the work.",
        "tool_calls": [
            {
                "name": "todo",
                "arguments": {
                    "items": [
                        {"text": "draw the flow", "status": "in_progress"},
                        {"text": "clean up", "status": "pending"},
                    ]
                },
            }
        ],
    },
    {"text": "Drawing it.", "tool_calls": [{"name": "diagram", "arguments": {"label": "plan"}}]},
    {
        "text": "Removing the junk file.",
        "tool_calls": [
            {"name": "bash", "arguments": {"commands": [{"command": "rm -f junk.txt"}]}}
        ],
    },
    {"text": "All done: the flow is drawn and the junk is gone."},
]
"""One turn: a todo update, a diagram, an ask (``rm``), the final answer."""

FINAL_TEXT: str = TURN[-1]["text"]

FORM_TURN: list[dict[str, Any]] = [
    {
        "text": "One question first.",
        "tool_calls": [
            {
                "name": "ask_user",
                "arguments": {
                    "questions": [
                        {
                            "question": "Which language?",
                            "type": "single_choice",
                            "options": ["Python", "Rust"],
                        },
                        {"question": "What should the module be called?", "type": "text"},
                    ]
                },
            }
        ],
    },
    {"text": "Thanks: noted."},
]
"""A turn of agent ``f``: an ``ask_user`` form, then the answer."""


def make_project(root: Path, replies: list[dict[str, Any]] | None = None) -> Path:
    """Write the project under ``root``; the config's path."""
    tool = root / "tools" / "diagram"
    tool.mkdir(parents=True)
    (tool / "tool.json").write_text(json.dumps(MANIFEST), encoding="utf-8")
    (tool / "tool.py").write_text(DIAGRAM, encoding="utf-8")
    recording = root / "recording.jsonl"
    recording.write_text(
        "".join(json.dumps(reply) + "\n" for reply in (replies or TURN)), encoding="utf-8"
    )
    forms = root / "forms.jsonl"
    forms.write_text("".join(json.dumps(reply) + "\n" for reply in FORM_TURN), encoding="utf-8")
    (root / "junk.txt").write_text("junk\n", encoding="utf-8")
    config = {
        "models": {
            "replay": {"provider": "replay", "model": str(recording)},
            "forms": {"provider": "replay", "model": str(forms)},
        },
        "default_agent": "a",
        "agents": {
            "f": {"model": "forms", "tools": {"use": ["builtin/ask_user"]}},
            "a": {
                "model": "replay",
                "tools": {
                    "use": ["builtin/todo", "agent/diagram", "builtin/bash"],
                    "rules": [
                        {
                            "match": "builtin/bash",
                            "effect": "ask",
                            "when": {
                                "source": "effects",
                                "any": "commands[*].programs[*].name",
                                "regex": "^rm$",
                            },
                        }
                    ],
                },
            },
        },
    }
    path = root / "raw.json"
    path.write_text(json.dumps(config, indent=2), encoding="utf-8")
    return path
