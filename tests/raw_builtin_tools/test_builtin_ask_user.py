"""builtin/ask_user (spec 001: "Asks the user one to three structured questions"), built on
interaction requests (spec 000).

Batch-validated arguments; the answers reach the model as text and JSON; a piped run ends
at once with ``interaction_unavailable``; on a real pseudo-terminal the questions are asked
(a text field, numbered choices, a multi-select) and the answers reach the model, Ctrl-C
cancels the question and the turn, and a declined approval's message reaches the model;
raw killed with SIGKILL while a question is pending leaves a session whose reopening marks
the request ``interrupted`` and gives the call a ``cancelled`` result that says so.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
from pathlib import Path
from typing import Any

import pexpect
import pytest

from raw_builtin_tools import TOOLS_DIR
from raw_core import App, CallbackFrontEnd, Reply, ScriptedProvider
from raw_core.plugins import PluginHost
from raw_core.sessions.sqlite import ToolResultMessage
from raw_core.tools.loader import ToolLoader
from tests.conftest import Children, raw_script

BOUND = 60  # seconds; generous: what is checked is what happens, not how fast

QUESTIONS: dict[str, Any] = {
    "questions": [
        {"question": "What should the module be called?", "type": "text"},
        {"question": "Which language?", "type": "single_choice", "options": ["Python", "Rust"]},
        {
            "question": "Which checks should run?",
            "type": "multiple_choice",
            "options": ["tests", "lint", "types"],
        },
    ]
}


def host() -> PluginHost:
    loaded = PluginHost()
    loaded.load_entry_points()
    return loaded


def config(root: Path, replies: list[dict[str, Any]] | None = None, name: str = "m") -> Path:
    models: dict[str, Any] = {}
    agent: dict[str, Any] = {
        "tools": {
            "use": ["builtin/ask_user", "builtin/bash"],
            "rules": [{"match": "builtin/bash", "effect": "ask"}],
        }
    }
    if replies is not None:
        recording = root / f"{name}.jsonl"
        recording.write_text("".join(json.dumps(r) + "\n" for r in replies))
        models[name] = {"provider": "replay", "model": str(recording)}
        agent["model"] = name
    path = root / f"{name}.json"
    path.write_text(json.dumps({"models": models, "agents": {"a": agent}}))
    return path


@pytest.fixture
def env(tmp_path: Path) -> dict[str, str]:
    environment = dict(os.environ)
    environment.update(
        XDG_STATE_HOME=str(tmp_path / "state"),
        XDG_CONFIG_HOME=str(tmp_path / "xdg"),
        NO_COLOR="1",
        TERM="dumb",
    )
    return environment


def show(session_id: str, env: dict[str, str]) -> list[dict[str, Any]]:
    shown = subprocess.run(
        [raw_script(), "sessions", "show", session_id, "--json"],
        env=env,
        capture_output=True,
        text=True,
        timeout=BOUND,
    )
    assert shown.returncode == 0, shown.stderr
    items: list[dict[str, Any]] = json.loads(shown.stdout)["items"]
    return items


def only_session(env: dict[str, str]) -> str:
    listed = subprocess.run(
        [raw_script(), "sessions", "list", "--json"], env=env, capture_output=True, text=True
    )
    (session,) = json.loads(listed.stdout)
    return str(session["id"])


def results(items: list[dict[str, Any]]) -> list[dict[str, Any]]:
    return [
        i["message"] for i in items if i["kind"] == "message" and i["message"]["role"] == "tool"
    ]


def test_the_manifest_declares_a_chat_panel_and_is_explicit() -> None:
    tool = ToolLoader().load(TOOLS_DIR / "ask_user", identity="builtin/ask_user")
    (panel,) = tool.manifest.panels
    assert (panel.id, panel.placement) == ("questions", "chat")


@pytest.mark.anyio
@pytest.mark.parametrize("anyio_backend", ["asyncio"])
async def test_the_answers_reach_the_model_as_text_and_json_and_bad_batches_ask_nothing(
    tmp_path: Path, anyio_backend: str
) -> None:
    invalid: list[dict[str, Any]] = [
        {"questions": []},
        {"questions": [{"question": "Pick", "type": "single_choice"}]},
        {"questions": [{"question": "Name?", "type": "text", "options": ["a", "b"]}]},
        {
            "questions": [
                {"question": "Same?", "type": "text"},
                {"question": "Same?", "type": "single_choice", "options": ["x", "x"]},
            ]
        },
        {"questions": [{"question": f"q{i}", "type": "text"} for i in range(4)]},
        {
            "questions": [
                {"question": "Which?", "type": "single_choice", "options": ["a", "b\ud800"]}
            ]
        },
        {"questions": [{"question": "\udfff?", "type": "text"}]},
    ]
    calls: list[tuple[str, dict[str, Any]]] = [("ask_user", bad) for bad in invalid]
    calls.append(("ask_user", QUESTIONS))
    model = ScriptedProvider([Reply(tool_calls=tuple(calls)), Reply(text="ok")])
    asked: list[Any] = []

    async def interact(request: Any) -> dict[str, Any]:
        asked.append(request)
        return {"q1": "parser", "q2": "Rust", "q3": ["tests", "types"]}

    async with App.open(config(tmp_path), host=host(), provider=model) as app:
        async with app.open_session(front_end=CallbackFrontEnd(interact=interact)) as session:
            await session.run_turn("go")
        page = await app.page(session.id)
    found = [i.message for i in page.items if isinstance(i.message, ToolResultMessage)]
    assert [r.error_code for r in found[:-1]] == ["invalid_arguments"] * len(invalid)
    duplicate = getattr(found[3].content[0], "text", "")
    assert "asked twice" in duplicate
    assert "listed twice" in duplicate  # every problem of the batch at once
    assert "options[1] holds a lone surrogate (U+D800)" in getattr(found[5].content[0], "text", "")
    (request,) = asked  # only the valid batch was asked
    fields = request.form["fields"]
    assert [f["type"] for f in fields] == ["text", "single_select", "multi_select"]
    last = found[-1]
    assert last.status == "ok"
    text, data = last.content
    assert getattr(text, "text", "") == (
        "The user answered:\n"
        "1. What should the module be called?\n   parser\n"
        "2. Which language?\n   Rust\n"
        "3. Which checks should run?\n   tests, types"
    )
    assert json.loads(getattr(data, "json_text", "null"))["answers"][2] == {
        "question": "Which checks should run?",
        "answer": ["tests", "types"],
    }


def test_a_piped_call_ends_at_once_with_interaction_unavailable(
    tmp_path: Path, env: dict[str, str]
) -> None:
    called = subprocess.run(
        [
            raw_script(),
            "tools",
            "call",
            "builtin/ask_user",
            json.dumps(QUESTIONS),
            "--json",
            "--config",
            str(config(tmp_path)),
        ],
        env=env,
        cwd=tmp_path,
        stdin=subprocess.DEVNULL,
        capture_output=True,
        text=True,
        timeout=BOUND,
    )
    assert called.returncode == 1, called.stderr
    outcome = json.loads(called.stdout)
    assert (outcome["status"], outcome["code"]) == ("error", "interaction_unavailable")
    assert "Traceback" not in called.stderr


def spawn(children: Children, args: list[str], env: dict[str, str], cwd: Path) -> Any:
    return children.spawn(
        raw_script(),
        args,
        env=env,
        cwd=str(cwd),
        encoding="utf-8",
        timeout=BOUND,
        dimensions=(40, 200),
    )


ASKS = {"text": "", "tool_calls": [{"name": "ask_user", "arguments": QUESTIONS}]}


def test_on_a_terminal_the_questions_are_asked_and_the_answers_reach_the_model(
    tmp_path: Path, env: dict[str, str], children: Children
) -> None:
    path = config(tmp_path, [ASKS, {"text": "Thanks, noted."}])
    child = spawn(children, ["run", "start", "--config", str(path)], env, tmp_path)
    child.expect("Questions — builtin/ask_user asks:")
    child.expect("What should the module be called\\?: ")
    child.sendline("")  # a required text field: asked again
    child.expect("expected an answer")
    child.expect("What should the module be called\\?: ")
    child.sendline("parser")
    child.expect("2\\) Rust")
    child.expect("number: ")
    child.sendline("7")
    child.expect("expected one number from 1 to 2")
    child.sendline("2")
    child.expect("3\\) types")
    child.expect("numbers: ")
    child.sendline("1, 3")
    child.expect("✓ ask_user")
    child.expect("Thanks, noted.")
    child.expect(pexpect.EOF)
    child.close()
    assert child.exitstatus == 0
    items = show(only_session(env), env)
    (result,) = results(items)
    text = result["content"][0]["text"]
    assert "1. What should the module be called?\n   parser" in text
    assert "2. Which language?\n   Rust" in text
    assert "3. Which checks should run?\n   tests, types" in text
    requests = [i for i in items if i["kind"] == "request"]
    assert [(r["request_kind"], r["state"]) for r in requests] == [
        ("interaction", "pending"),
        ("interaction", "answered"),
    ]
    assert requests[1]["answer"]["by"] == "terminal"
    human = subprocess.run(
        [raw_script(), "sessions", "show", only_session(env)],
        env=env,
        capture_output=True,
        text=True,
        timeout=BOUND,
    )
    assert "  ? question from builtin/ask_user (Questions) asked (req_" in human.stdout
    assert "  ? question from builtin/ask_user (Questions): answered by terminal\n" in human.stdout


def test_ctrl_c_at_a_question_cancels_it_and_the_turn(
    tmp_path: Path, env: dict[str, str], children: Children
) -> None:
    path = config(tmp_path, [ASKS, {"text": "never reached"}])
    child = spawn(children, ["run", "start", "--config", str(path)], env, tmp_path)
    child.expect("What should the module be called\\?: ")
    child.sendintr()
    child.expect("✗ ask_user \\[cancelled\\]")
    child.expect(pexpect.EOF)
    child.close()
    assert child.exitstatus == 130
    requests = [i for i in show(only_session(env), env) if i["kind"] == "request"]
    assert [r["state"] for r in requests] == ["pending", "cancelled"]


def test_a_declined_approval_with_a_message_reaches_the_model(
    tmp_path: Path, env: dict[str, str], children: Children
) -> None:
    bash = {"commands": [{"command": "rm -rf build"}]}
    path = config(
        tmp_path,
        [{"text": "", "tool_calls": [{"name": "bash", "arguments": bash}]}, {"text": "ok"}],
    )
    child = spawn(children, ["run", "clean", "--config", str(path)], env, tmp_path)
    child.expect("Run it\\? \\[y/N\\]: ")
    child.sendline("keep the build folder")
    child.expect("✗ bash \\[approval_denied\\]")
    child.expect(pexpect.EOF)
    child.close()
    items = show(only_session(env), env)
    (result,) = results(items)
    assert result["content"][0]["text"] == (
        "error [approval_denied]: the user declined this call: keep the build folder"
    )
    ended = [i for i in items if i["kind"] == "request"][-1]
    assert ended["answer"] == {
        "approved": False,
        "by": "terminal",
        "message": "keep the build folder",
    }


def test_raw_killed_during_a_question_leaves_it_interrupted_when_reopened(
    tmp_path: Path, env: dict[str, str], children: Children
) -> None:
    path = config(tmp_path, [ASKS, {"text": "never reached"}])
    child = spawn(children, ["run", "start", "--config", str(path)], env, tmp_path)
    child.expect("What should the module be called\\?: ")
    os.kill(child.pid, signal.SIGKILL)
    child.expect(pexpect.EOF)
    child.close()
    session_id = only_session(env)
    before = [i for i in show(session_id, env) if i["kind"] == "request"]
    assert [r["state"] for r in before] == ["pending"]  # stored before it was asked
    resumed = subprocess.run(
        [
            raw_script(),
            "sessions",
            "resume",
            session_id,
            "go on",
            "--config",
            str(config(tmp_path, [{"text": "resumed"}], name="again")),
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
    items = show(session_id, env)
    requests = [i for i in items if i["kind"] == "request"]
    assert [r["state"] for r in requests] == ["pending", "interrupted"]
    assert requests[0]["request_id"] == requests[1]["request_id"]
    (result,) = results(items)
    assert result["error_code"] == "cancelled"
    assert "the request" in result["content"][0]["text"]
    assert "was interrupted" in result["content"][0]["text"]
