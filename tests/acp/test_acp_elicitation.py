"""``builtin/ask_user`` over ACP, driven by the protocol SDK's client side against a real
``raw acp``: a client that advertises form elicitation is sent the question as
``elicitation/create`` and its answer is checked against the form (a wrong one is asked
again with what was wrong); declined or cancelled, the question ends as cancelled (and
with it the turn, like any cancelled call); a
client without elicitation gets ``interaction_unavailable`` at once.
"""

from __future__ import annotations

import json
import subprocess
from typing import Any

import pytest
from acp import text_block
from acp.schema import (
    ClientCapabilities,
    CreateElicitationResponse,
    ElicitationCapabilities,
    ElicitationFormCapabilities,
)
from pydantic import TypeAdapter

from tests.acp.conftest import Project
from tests.acp.test_acp_client import Recorder, connected

pytestmark = pytest.mark.anyio

QUESTIONS = {
    "questions": [
        {"question": "Which branch?", "type": "single_choice", "options": ["main", "dev"]},
        {"question": "Anything else?", "type": "text"},
    ]
}
ASK: list[dict[str, Any]] = [
    {"text": "Let me ask.", "tool_calls": [{"name": "ask_user", "arguments": QUESTIONS}]},
    {"text": "Thanks."},
]
ELICITS = ClientCapabilities(
    elicitation=ElicitationCapabilities(form=ElicitationFormCapabilities())
)
_RESPONSE = TypeAdapter(CreateElicitationResponse)


class Asked(Recorder):
    """A client that answers each elicitation with the next of ``answers`` (protocol JSON:
    ``{"action": ..., "content": ...}``) and records what it was asked."""

    def __init__(self, *answers: dict[str, Any]) -> None:
        super().__init__()
        self.answers = list(answers)
        self.elicited: list[dict[str, Any]] = []

    async def create_elicitation(self, message: str, mode: Any, **kwargs: Any) -> Any:
        self.elicited.append(
            {"message": message, **mode.model_dump(mode="json", by_alias=True, exclude_none=True)}
        )
        return _RESPONSE.validate_python(self.answers.pop(0))


def _finished(client: Recorder) -> dict[str, Any]:
    """The ask_user call's last update."""
    return [u for u in client.updates if u["sessionUpdate"] == "tool_call_update"][-1]


def _requests(project: Project, session_id: str) -> list[dict[str, Any]]:
    """The session's request items, as ``raw sessions show --json`` lists them."""
    shown = subprocess.run(
        project.raw("sessions", "show", session_id, "--json"),
        env=project.env,
        capture_output=True,
        text=True,
        timeout=120,
        stdin=subprocess.DEVNULL,
    )
    assert shown.returncode == 0, shown.stderr
    items = json.loads(shown.stdout)["items"]
    return [item for item in items if item.get("kind") == "request"]


async def test_ask_user_over_elicitation_is_answered(project: Project) -> None:
    project.write(ASK, use=["builtin/ask_user"])
    client = Asked(
        {"action": "accept", "content": {"q1": "release", "q2": "ship it"}},  # not an option
        {"action": "accept", "content": {"q1": "dev", "q2": "ship it"}},
    )
    async with connected(project, client, ELICITS) as conn:
        session = await conn.new_session(cwd=str(project.work), mcp_servers=[])
        answer = await conn.prompt(session_id=session.session_id, prompt=[text_block("ask me")])
    assert answer.stop_reason == "end_turn"
    first, second = client.elicited
    call = next(u for u in client.updates if u["sessionUpdate"] == "tool_call")
    assert first["sessionId"] == session.session_id
    assert first["toolCallId"] == call["toolCallId"]
    assert first["message"] == "The assistant asks"
    schema = first["requestedSchema"]
    assert schema["required"] == ["q1", "q2"]
    assert schema["properties"]["q1"] == {
        "type": "string",
        "title": "Which branch?",
        "oneOf": [{"const": "main", "title": "main"}, {"const": "dev", "title": "dev"}],
    }
    assert schema["properties"]["q2"] == {
        "type": "string",
        "title": "Anything else?",
        "minLength": 1,
    }
    # The answer that did not fit was asked again, saying what was wrong.
    assert second["requestedSchema"] == schema
    assert second["message"].startswith("The previous answer did not fit the form:\n- q1: ")
    assert "'release'" in second["message"]
    finished = _finished(client)
    assert finished["status"] == "completed"
    text = finished["content"][0]["content"]["text"]
    assert "1. Which branch?\n   dev" in text
    assert "2. Anything else?\n   ship it" in text
    ended = _requests(project, session.session_id)[-1]
    assert ended["state"] == "answered"
    assert ended["answer"] == {"values": {"q1": "dev", "q2": "ship it"}, "by": "acp"}


@pytest.mark.parametrize("action", ["decline", "cancel"])
async def test_a_declined_elicitation_cancels_the_question(project: Project, action: str) -> None:
    project.write(ASK, use=["builtin/ask_user"])
    client = Asked({"action": action})
    async with connected(project, client, ELICITS) as conn:
        session = await conn.new_session(cwd=str(project.work), mcp_servers=[])
        answer = await conn.prompt(session_id=session.session_id, prompt=[text_block("ask me")])
    # A cancelled call ends its turn, as everywhere in raw: the model is not asked again.
    assert answer.stop_reason == "cancelled"
    assert len(client.elicited) == 1
    assert "Thanks." not in json.dumps(client.updates)
    finished = _finished(client)
    assert finished["status"] == "failed"
    assert finished["rawOutput"] == {"status": "error", "code": "cancelled"}
    assert _requests(project, session.session_id)[-1]["state"] == "cancelled"


async def test_a_client_without_elicitation_gets_interaction_unavailable(
    project: Project,
) -> None:
    project.write(ASK, use=["builtin/ask_user"])
    client = Asked()
    async with connected(project, client) as conn:
        session = await conn.new_session(cwd=str(project.work), mcp_servers=[])
        answer = await conn.prompt(session_id=session.session_id, prompt=[text_block("ask me")])
    assert answer.stop_reason == "end_turn"
    assert client.elicited == []
    finished = _finished(client)
    assert finished["rawOutput"] == {"status": "error", "code": "interaction_unavailable"}
    assert _requests(project, session.session_id) == []  # never stored: unavailable at once
