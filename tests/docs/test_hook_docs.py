"""docs/reference/hooks.md documents the payload of every command-hook event with a JSON
Schema, and real payloads — recorded by real hooks in a turn and in ``raw tools call`` —
satisfy them."""

from __future__ import annotations

import json
import os
import re
import shlex
import subprocess
import sys
from pathlib import Path
from typing import Any

import anyio
import fastjsonschema
import pytest

from raw_core import Reply, ScriptedProvider
from raw_core.app import App
from raw_core.hooks import EVENTS
from raw_core.plugins import PluginHost
from tests.command_hooks import runs, write_config, write_hook, write_tool
from tests.conftest import raw_script

PAGE = Path(__file__).parents[2] / "docs" / "reference" / "hooks.md"
SCHEMA = re.compile(r"<!-- payload-schema: (?P<event>\w+) -->\n```json\n(?P<body>.*?)```", re.S)


def schemas() -> dict[str, Any]:
    return {m["event"]: json.loads(m["body"]) for m in SCHEMA.finditer(PAGE.read_text())}


def test_every_event_has_a_payload_schema() -> None:
    assert sorted(schemas()) == sorted(EVENTS)


def test_real_payloads_satisfy_the_documented_schemas(tmp_path: Path) -> None:
    write_tool(tmp_path)
    hook = write_hook(tmp_path, "every", python="", events=list(EVENTS))
    write_config(tmp_path, ["agent/every"])
    model = ScriptedProvider([Reply(tool_calls=(("echo", {"text": "hi"}),)), Reply(text="ok")])

    async def main() -> None:
        async with App.open(
            tmp_path / "raw.json", host=PluginHost(), store_dir=tmp_path / "store", provider=model
        ) as app:
            # Tools run in tmp_path: the test tool marks its runs in its working directory.
            async with app.open_session(cwd=tmp_path) as session:
                await session.run_turn("go")
            await app.call_tool("agent/echo", {"text": "outside a session"}, cwd=tmp_path)

    anyio.run(main)
    payloads = [run["payload"] for run in runs(hook)]
    seen = [p["event"] for p in payloads]
    assert seen == [
        "SessionStart",
        "UserPromptSubmit",
        "PreToolUse",
        "PostToolUse",
        "Stop",
        "PreToolUse",
        "PostToolUse",
    ]
    validators = {event: fastjsonschema.compile(schema) for event, schema in schemas().items()}
    for payload in payloads:
        try:
            validators[payload["event"]](payload)
        except fastjsonschema.JsonSchemaException as exc:  # pragma: no cover - the failure
            pytest.fail(f"{payload['event']} payload breaks its schema: {exc}")
    pre = validators["PreToolUse"]
    with pytest.raises(fastjsonschema.JsonSchemaException):
        pre({**payloads[2], "surprise": 1})  # the schemas are closed: they can fail


HOW_TO = Path(__file__).parents[2] / "docs" / "how-to" / "write-a-command-hook.md"
FILE_BLOCK = re.compile(r"<!-- file: (?P<path>[^ ]+) -->\n```[a-z]*\n(?P<body>.*?)```", re.S)
RUN_BLOCK = re.compile(r"<!-- run -->\n```console\n(?P<body>.*?)```", re.S)


def commands(body: str) -> list[tuple[str, str]]:
    """``(command, expected output)`` of each ``$ `` line of a console block."""
    found: list[tuple[str, str]] = []
    for line in body.splitlines(keepends=True):
        if line.startswith("$ "):
            found.append((line[2:].strip(), ""))
        else:
            command, output = found[-1]
            found[-1] = (command, output + line)
    return found


def test_the_command_hook_how_to_runs_as_written(tmp_path: Path) -> None:
    text = HOW_TO.read_text(encoding="utf-8")
    files = list(FILE_BLOCK.finditer(text))
    assert {b["path"] for b in files} == {
        "hooks/no-force-push/hook.json",
        "hooks/no-force-push/check.py",
        "raw.json",
    }
    for block in files:
        target = tmp_path / block["path"]
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text(block["body"], encoding="utf-8")
    (tmp_path / "hooks" / "no-force-push" / "check.py").chmod(0o755)  # the page's chmod +x
    # The script's "#!/usr/bin/env python3" finds the interpreter running the tests.
    env = {**os.environ, "PATH": f"{Path(sys.executable).parent}{os.pathsep}{os.environ['PATH']}"}
    steps = [step for block in RUN_BLOCK.finditer(text) for step in commands(block["body"])]
    assert len(steps) == 3
    for command, expected in steps:
        argv = shlex.split(command)
        assert argv[0] == "raw"
        result = subprocess.run(
            [raw_script(), *argv[1:]], capture_output=True, text=True, cwd=tmp_path, env=env
        )
        assert result.stdout == expected, (command, result.stderr)
