"""``session/load``: a raw session's display history replayed as session updates.

What the user saw, in order: their messages (``user_message_chunk``), the assistant's
text (``agent_message_chunk``), each call (``tool_call``, then ``tool_call_update`` with
its result, its output as the user saw it when the model got a capped copy, and the
files its approval named), and each revision of an ``acp_plan`` panel (``plan``). Any
raw session works, also one started in the terminal.
"""

from __future__ import annotations

import json
from typing import Any

from acp.schema import (
    AgentMessageChunk,
    TextContentBlock,
    ToolCallProgress,
    UserMessageChunk,
)

from raw_acp import updates
from raw_acp.frontend import AcpFrontEnd, Outbox
from raw_core import App, PanelUpdate, thaw

__all__ = ["replay"]

_PAGE = 200


def _text_blocks(blocks: Any) -> list[str]:
    return [block.text for block in blocks if type(block).__name__ == "TextBlock" and block.text]


def _item_updates(entry: Any, front_end: AcpFrontEnd, calls: dict[str, str | None]) -> list[Any]:
    """The updates one display item becomes."""
    kind = type(entry).__name__
    cwd = front_end.cwd
    found: list[Any] = []
    if kind == "UserMessage":
        for text in _text_blocks(entry.content):
            found.append(
                UserMessageChunk(
                    session_update="user_message_chunk",
                    content=TextContentBlock(type="text", text=text),
                )
            )
    elif kind == "AssistantMessage":
        if entry.text:
            found.append(
                AgentMessageChunk(
                    session_update="agent_message_chunk",
                    content=TextContentBlock(type="text", text=entry.text),
                )
            )
        for call in entry.tool_calls:
            identity = front_end.identities.get(call.name)
            calls[call.id] = identity
            found.append(updates.started_update(call.id, call.name, identity, call.arguments))
    elif kind == "ToolResultMessage":
        found.append(
            updates.finished_update(
                entry.tool_call_id,
                calls.get(entry.tool_call_id),
                "ok" if entry.status == "ok" else "error",
                entry.error_code,
                None,
                entry.content,
                cwd,
            )
        )
    elif kind == "ToolOutput":
        found.append(
            ToolCallProgress(
                session_update="tool_call_update",
                tool_call_id=entry.tool_call_id,
                content=updates.result_content(entry.content) or None,  # type: ignore[arg-type]
            )
        )
    elif kind == "RequestEntry" and entry.request_kind == "approval" and entry.state != "pending":
        # An approval as it ended (the entry of its opening adds nothing to replay).
        effects = thaw(entry.show.get("effects"))
        identity = str(entry.show.get("identity", ""))
        found.append(
            ToolCallProgress(
                session_update="tool_call_update",
                tool_call_id=entry.tool_call_id,
                kind=updates.tool_kind(identity, effects),  # type: ignore[arg-type]
                locations=updates.locations(effects, cwd) or None,
                field_meta={
                    "raw": {
                        "approval": entry.state,
                        "effects": json.loads(json.dumps(effects, default=str)),
                    }
                },
            )
        )
    elif isinstance(entry, PanelUpdate) and entry.accepted:
        plan = updates.plan_update(thaw(entry.declaration), entry.document)
        if plan is not None:
            found.append(plan)
    return found


async def replay(app: App, session_id: str, outbox: Outbox, front_end: AcpFrontEnd) -> int:
    """Queue the session's whole display history as updates; how many were queued."""
    calls: dict[str, str | None] = {}
    cursor: str | None = None
    sent = 0
    while True:
        page = await app.page(session_id, cursor, limit=_PAGE)
        for item in page.items:
            for update in _item_updates(item.entry, front_end, calls):
                outbox.put(session_id, update)
                sent += 1
        if not page.has_more or not page.items:
            return sent
        cursor = page.next_cursor
