"""The contract every front end keeps, as tests a front end's own suite can reuse.

A front end (the terminal, an ACP server, the dashboard, an embedding app) is what the
session service talks to while a turn runs. To check one, subclass :class:`FrontEndContract`
in a test module and provide the fixture ``front_end_case``: a :class:`FrontEndCase` that
makes the front end, says how it answers an approval, and reads back what it received::

    class TestMyFrontEnd(FrontEndContract):
        @pytest.fixture
        def front_end_case(self) -> FrontEndCase:
            ...

The contract: the front end names itself and says whether it can ask; it receives every
event of a turn in order, ``turn_started`` first and exactly one ``turn_ended`` last; when it
can ask, it is asked about a call that needs approval, with the intended effects apart from
the arguments, and its answer decides the call and is stored with its name; one that
cannot ask cannot answer a tool's question either (``can_interact`` false or missing); and a
panel update given to ``show_panel`` is taken without an error.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import attrs
import pytest

from raw_core import App, Reply, ScriptedProvider, thaw
from raw_core.plugins import PluginHost
from raw_core.runtime.frontend import FrontEnd
from raw_core.sessions.backend import PanelUpdate
from raw_core.sessions.sqlite import ToolResultMessage

ECHO = """
def describe_effects(args, context):
    return {"files": [{"path": context.cwd + "/" + args["text"]}]}

def handler(args, context):
    return {"content": [{"type": "text", "text": args["text"]}]}
"""


@attrs.frozen(kw_only=True)
class FrontEndCase:
    """How to check one front end.

    ``make(approves)`` builds the front end; ``approves`` is the answer it should give when
    asked (``None``: build one that cannot ask). ``events()`` gives the ``type`` of each
    event it received, in order; ``asked()`` the ``identity`` and ``effects`` of each
    approval request it was asked.
    """

    make: Callable[[bool | None], FrontEnd]
    events: Callable[[], list[str]]
    asked: Callable[[], list[tuple[str, Any]]]


def _project(root: Path) -> Path:
    folder = root / "tools" / "echo"
    folder.mkdir(parents=True)
    schema = {
        "type": "object",
        "properties": {"text": {"type": "string"}},
        "required": ["text"],
        "additionalProperties": False,
    }
    effects = {
        "type": "object",
        "properties": {
            "files": {
                "type": "array",
                "items": {"type": "object", "properties": {"path": {"type": "string"}}},
            }
        },
    }
    (folder / "tool.json").write_text(
        json.dumps(
            {
                "api_version": 2,
                "id": "echo",
                "version": "1.0.0",
                "name": "echo",
                "description": "Echo the text back.",
                "input_schema": schema,
                "effects_schema": effects,
                "condition_sources": ["arguments"],
                "entry": "./tool.py",
            }
        )
    )
    (folder / "tool.py").write_text(ECHO)
    config = root / "raw.json"
    rule = {
        "match": "agent/echo",
        "effect": "ask",
        "when": {"source": "arguments", "any": "text", "regex": "^ask"},
    }
    config.write_text(
        json.dumps({"agents": {"a": {"tools": {"use": ["agent/echo"], "rules": [rule]}}}})
    )
    return config


async def _turn(root: Path, front_end: FrontEnd, text: str) -> list[Any]:
    """One turn calling echo with ``text``; the session's display items."""
    model = ScriptedProvider([Reply(tool_calls=(("echo", {"text": text}),)), Reply(text="ok")])
    async with App.open(
        _project(root), host=PluginHost(), store_dir=root / "sessions", provider=model
    ) as app:
        async with app.open_session(front_end=front_end, cwd=root) as session:
            await session.run_turn("go")
        page = await app.page(session.id)
    return list(page.items)


def _result(items: list[Any]) -> ToolResultMessage:
    return next(i.message for i in items if isinstance(i.message, ToolResultMessage))


@pytest.mark.anyio
class FrontEndContract:
    """Tests every front end passes; see the module docstring."""

    @pytest.fixture
    def anyio_backend(self) -> str:
        return "asyncio"

    async def test_it_names_itself_and_says_whether_it_can_ask(
        self, front_end_case: FrontEndCase
    ) -> None:
        asking, silent = front_end_case.make(True), front_end_case.make(None)
        assert isinstance(asking.name, str)
        assert asking.name
        assert asking.can_approve is True
        assert silent.can_approve is False
        assert isinstance(asking, FrontEnd)

    async def test_it_receives_a_turns_events_in_order(
        self, front_end_case: FrontEndCase, tmp_path: Path
    ) -> None:
        await _turn(tmp_path, front_end_case.make(None), "plain")
        events = front_end_case.events()
        assert events[0] == "turn_started"
        assert events[-1] == "turn_ended"
        assert events.count("turn_ended") == 1
        assert events.index("tool_call_started") < events.index("tool_call_finished")

    async def test_its_answer_decides_an_ask_and_is_stored_with_its_name(
        self, front_end_case: FrontEndCase, tmp_path: Path
    ) -> None:
        front_end = front_end_case.make(False)
        items = await _turn(tmp_path, front_end, "ask first")
        asked = [(identity, thaw(effects)) for identity, effects in front_end_case.asked()]
        assert asked == [("agent/echo", {"files": [{"path": f"{tmp_path}/ask first"}]})]
        assert _result(items).error_code == "approval_denied"
        opened, approval = (i.to_dict() for i in items if i.kind == "request")
        assert opened["state"] == "pending"
        # what was asked is stored when it opens: the arguments and the effects apart
        assert opened["show"]["arguments"] == {"text": "ask first"}
        assert opened["show"]["effects"] == {"files": [{"path": f"{tmp_path}/ask first"}]}
        assert approval["state"] == "denied"
        assert approval["answer"]["by"] == front_end.name
        events = front_end_case.events()
        assert events.index("approval_requested") < events.index("approval_answered")

    async def test_an_approval_it_gives_lets_the_call_run(
        self, front_end_case: FrontEndCase, tmp_path: Path
    ) -> None:
        items = await _turn(tmp_path, front_end_case.make(True), "ask and run")
        assert _result(items).status == "ok"

    async def test_one_that_cannot_ask_is_never_asked(
        self, front_end_case: FrontEndCase, tmp_path: Path
    ) -> None:
        items = await _turn(tmp_path, front_end_case.make(None), "ask anyway")
        assert front_end_case.asked() == []
        assert _result(items).error_code == "approval_unavailable"

    async def test_one_that_cannot_ask_answers_no_question_and_takes_panel_updates(
        self, front_end_case: FrontEndCase
    ) -> None:
        front_end = front_end_case.make(None)
        assert getattr(front_end, "can_interact", False) is False
        update = PanelUpdate(
            tool_call_id="c1",
            identity="builtin/todo",
            panel="todo",
            op="replace",
            source="result",
            revision=1,
            document_text='{"blocks":[{"type":"text","text":"hi"}]}',
            declaration={"id": "todo", "title": "Tasks", "placement": "sidebar"},
        )
        await front_end.show_panel(update)  # shown or not, never an error
