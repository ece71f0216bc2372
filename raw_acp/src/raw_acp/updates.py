"""What raw's events and records become on the wire: ACP ``session/update`` payloads.

Pure functions, no I/O: a turn's events (streamed text, calls, results, approvals), an
``acp_plan`` panel's checklist, and a session's display history (for ``session/load``)
each become the protocol's updates (this module imports the SDK: only the server does).
A call's ``kind`` comes from the tool it is, its ``locations`` from the intended effects'
``files[*].path`` (made absolute against the session's working directory), so an editor
can follow the files a call touches.
"""

from __future__ import annotations

import json
import os
from collections.abc import Iterable, Iterator, Mapping, Sequence
from typing import Any, Final

from acp.schema import (
    AgentPlanUpdate,
    ContentToolCallContent,
    ImageContentBlock,
    PlanEntry,
    TextContentBlock,
    ToolCallLocation,
    ToolCallProgress,
    ToolCallStart,
    ToolCallUpdate,
)

__all__ = [
    "approval_tool_call",
    "effects_content",
    "finished_update",
    "locations",
    "plan_entries",
    "plan_update",
    "result_content",
    "started_update",
    "tool_kind",
]

_KINDS: Final[Mapping[str, str]] = {
    "builtin/read_file": "read",
    "builtin/write_file": "edit",
    "builtin/bash": "execute",
    "builtin/todo": "think",
    "builtin/load_skill": "read",
    "builtin/list_skills": "read",
    "builtin/read_var": "read",
    "builtin/list_vars": "read",
}
_PLAN_STATUS: Final[Mapping[str, str]] = {
    "pending": "pending",
    "in_progress": "in_progress",
    "done": "completed",
}


def _files(effects: Any) -> list[Mapping[str, Any]]:
    files = effects.get("files") if isinstance(effects, Mapping) else None
    if not isinstance(files, Sequence) or isinstance(files, str):
        return []
    return [entry for entry in files if isinstance(entry, Mapping)]


def tool_kind(identity: str | None, effects: Any = None) -> str:
    """The ACP ``kind`` of a call: from what its effects do to files (only deletions:
    ``delete``; only renames: ``move``), else from the tool (``read``, ``edit``,
    ``execute``, ``think``), else ``other``."""
    operations = {entry.get("operation") for entry in _files(effects)} - {None}
    if operations == {"delete"}:
        return "delete"
    if operations and operations <= {"rename_source", "rename_destination"}:
        return "move"
    return _KINDS.get(identity or "", "other")


def locations(effects: Any, cwd: str | None) -> list[ToolCallLocation]:
    """The files the intended effects name (``files[*].path``), absolute, each once."""

    found: list[ToolCallLocation] = []
    seen: set[str] = set()
    for entry in _files(effects):
        path = entry.get("path")
        if not isinstance(path, str) or not path:
            continue
        if not os.path.isabs(path) and cwd:
            path = os.path.join(cwd, path)
        path = os.path.normpath(path)
        if path not in seen:
            seen.add(path)
            found.append(ToolCallLocation(path=path))
    return found


def _text(text: str) -> ContentToolCallContent:

    return ContentToolCallContent(type="content", content=TextContentBlock(type="text", text=text))


def result_content(blocks: Iterable[Any]) -> list[ContentToolCallContent]:
    """A result's blocks as tool-call content: text as text, JSON as its text, images as
    images; a variable's placeholder names the variable, never its value."""

    content: list[ContentToolCallContent] = []
    for block in blocks:
        kind = type(block).__name__
        if kind == "TextBlock":
            content.append(_text(block.text))
        elif kind == "JsonBlock":
            content.append(_text(block.json_text))
        elif kind == "ImageBlock":
            image = ImageContentBlock(type="image", data=block.data, mime_type=block.media_type)
            content.append(ContentToolCallContent(type="content", content=image))
        elif kind == "VarPlaceholder":
            content.append(_text(f"[the value of variable {block.name}]"))
    return content


def effects_content(effects: Any) -> list[ContentToolCallContent]:
    """The intended effects as one text block of their own, apart from the arguments."""
    if effects is None:
        return []
    shown = json.dumps(effects, indent=2, ensure_ascii=False, sort_keys=True)
    return [_text(f"Intended effects:\n{shown}")]


def started_update(
    tool_call_id: str, name: str, identity: str | None, arguments: str
) -> ToolCallStart:
    """``tool_call``: a call the model made, pending, with its arguments as given."""

    try:
        raw_input: Any = json.loads(arguments)
    except ValueError:
        raw_input = arguments
    return ToolCallStart(
        session_update="tool_call",
        tool_call_id=tool_call_id,
        title=identity or name,
        kind=tool_kind(identity),  # type: ignore[arg-type]
        status="pending",
        raw_input=raw_input,
    )


def finished_update(
    tool_call_id: str,
    identity: str | None,
    status: str,
    code: str | None,
    effects: Any,
    content: Iterable[Any],
    cwd: str | None,
) -> ToolCallProgress:
    """``tool_call_update``: the call's end (``completed`` or ``failed``) with its kind and
    locations from the effects and its result as the user sees it."""

    return ToolCallProgress(
        session_update="tool_call_update",
        tool_call_id=tool_call_id,
        status="completed" if status == "ok" else "failed",
        kind=tool_kind(identity, effects),  # type: ignore[arg-type]
        locations=locations(effects, cwd) or None,
        content=result_content(content) or None,  # type: ignore[arg-type]
        raw_output={"status": status, "code": code} if code else {"status": status},
    )


def approval_tool_call(
    tool_call_id: str,
    identity: str,
    arguments: Any,
    effects: Any,
    reason: str | None,
    cwd: str | None,
) -> ToolCallUpdate:
    """The call a ``session/request_permission`` asks about: its arguments as
    ``rawInput`` and its intended effects as content of their own (and as locations)."""

    content = effects_content(effects)
    if reason:
        content.insert(0, _text(f"Why raw asks: {reason}"))
    return ToolCallUpdate(
        tool_call_id=tool_call_id,
        title=identity,
        kind=tool_kind(identity, effects),  # type: ignore[arg-type]
        status="pending",
        raw_input=arguments,
        locations=locations(effects, cwd) or None,
        content=content or None,  # type: ignore[arg-type]
        field_meta={"raw": {"identity": identity, "effects": effects, "reason": reason}},
    )


def _checklists(document: Any) -> Iterator[Mapping[str, Any]]:
    blocks = document.get("blocks") if isinstance(document, Mapping) else None
    for block in blocks if isinstance(blocks, Sequence) else ():
        if isinstance(block, Mapping) and block.get("type") == "checklist":
            yield block


def plan_entries(document: Any) -> list[PlanEntry]:
    """Every checklist item of a panel's document, in order, as plan entries."""

    entries: list[PlanEntry] = []
    for checklist in _checklists(document):
        for item in checklist.get("items", ()):
            status = _PLAN_STATUS.get(str(item.get("status")), "pending")
            entries.append(
                PlanEntry(content=str(item.get("text", "")), priority="medium", status=status)  # type: ignore[arg-type]
            )
    return entries


def plan_update(declaration: Any, document: Any) -> AgentPlanUpdate | None:
    """``plan`` for an update of a panel declared ``acp_plan`` (the whole checklist, as
    the protocol's plans are sent whole; empty once the panel closed); None for any
    other panel."""

    if not isinstance(declaration, Mapping) or declaration.get("acp_plan") is not True:
        return None
    return AgentPlanUpdate(session_update="plan", entries=plan_entries(document))
