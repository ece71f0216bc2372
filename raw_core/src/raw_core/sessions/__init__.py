"""Sessions: the conversation's records, the session backend protocol, and raw's SQLite
backend (``raw_core.sessions.sqlite``).

Public names are imported lazily (PEP 562): importing the package imports none of
its modules, so a module of it can be imported without the others.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from raw_core._lazy import lazy_exports

if TYPE_CHECKING:
    from raw_core.sessions.backend import (
        MAX_TITLE_CHARS,
        MAX_TOOL_OUTPUT_BYTES,
        ApprovalAnswer,
        DisplayEntry,
        DisplayItem,
        DisplayPage,
        InteractionAnswer,
        ModelOnly,
        PanelUpdate,
        PendingRequest,
        RequestAnswer,
        RequestEntry,
        RequestKind,
        RequestState,
        SessionBackend,
        SessionBackendRecord,
        SessionInfo,
        SessionState,
        SessionWriter,
        ToolOutput,
        new_request_id,
        prompt_title,
        title_text,
    )
    from raw_core.sessions.cursors import Cursor, CursorFormat
    from raw_core.sessions.messages import (
        MESSAGE_FORMAT,
        AssistantMessage,
        ContentBlock,
        ImageBlock,
        JsonBlock,
        Message,
        ProviderPart,
        TextBlock,
        ToolCall,
        ToolResultMessage,
        UserBlock,
        UserMessage,
        VarPlaceholder,
        dumps_message,
        loads_message,
        message_from_dict,
        message_to_dict,
    )

_EXPORTS: dict[str, str] = {
    "Cursor": "raw_core.sessions.cursors",
    "CursorFormat": "raw_core.sessions.cursors",
    "ApprovalAnswer": "raw_core.sessions.backend",
    "InteractionAnswer": "raw_core.sessions.backend",
    "RequestAnswer": "raw_core.sessions.backend",
    "RequestEntry": "raw_core.sessions.backend",
    "RequestKind": "raw_core.sessions.backend",
    "AssistantMessage": "raw_core.sessions.messages",
    "ContentBlock": "raw_core.sessions.blocks",
    "DisplayEntry": "raw_core.sessions.backend",
    "DisplayItem": "raw_core.sessions.backend",
    "DisplayPage": "raw_core.sessions.backend",
    "ImageBlock": "raw_core.sessions.blocks",
    "JsonBlock": "raw_core.sessions.blocks",
    "MAX_TITLE_CHARS": "raw_core.sessions.backend",
    "MAX_TOOL_OUTPUT_BYTES": "raw_core.sessions.backend",
    "MESSAGE_FORMAT": "raw_core.sessions.messages",
    "Message": "raw_core.sessions.messages",
    "ModelOnly": "raw_core.sessions.backend",
    "PendingRequest": "raw_core.sessions.backend",
    "ProviderPart": "raw_core.sessions.messages",
    "RequestState": "raw_core.sessions.backend",
    "SessionBackend": "raw_core.sessions.backend",
    "SessionBackendRecord": "raw_core.sessions.backend",
    "SessionInfo": "raw_core.sessions.backend",
    "SessionState": "raw_core.sessions.backend",
    "SessionWriter": "raw_core.sessions.backend",
    "TextBlock": "raw_core.sessions.blocks",
    "ToolCall": "raw_core.sessions.messages",
    "ToolOutput": "raw_core.sessions.backend",
    "PanelUpdate": "raw_core.sessions.backend",
    "ToolResultMessage": "raw_core.sessions.messages",
    "UserBlock": "raw_core.sessions.blocks",
    "UserMessage": "raw_core.sessions.messages",
    "VarPlaceholder": "raw_core.sessions.blocks",
    "dumps_message": "raw_core.sessions.messages",
    "loads_message": "raw_core.sessions.messages",
    "message_from_dict": "raw_core.sessions.messages",
    "message_to_dict": "raw_core.sessions.messages",
    "new_request_id": "raw_core.sessions.backend",
    "prompt_title": "raw_core.sessions.backend",
    "title_text": "raw_core.sessions.backend",
}


# Hidden from the type checker, which would otherwise take any name as existing here: the
# imports above give every public name its real type, and a misspelt one stays an error.
if not TYPE_CHECKING:
    __getattr__, __dir__ = lazy_exports(globals(), _EXPORTS)


__all__ = [
    "MAX_TITLE_CHARS",
    "MAX_TOOL_OUTPUT_BYTES",
    "MESSAGE_FORMAT",
    "ApprovalAnswer",
    "AssistantMessage",
    "ContentBlock",
    "Cursor",
    "CursorFormat",
    "DisplayEntry",
    "DisplayItem",
    "DisplayPage",
    "ImageBlock",
    "InteractionAnswer",
    "JsonBlock",
    "Message",
    "ModelOnly",
    "PanelUpdate",
    "PendingRequest",
    "ProviderPart",
    "RequestAnswer",
    "RequestEntry",
    "RequestKind",
    "RequestState",
    "SessionBackend",
    "SessionBackendRecord",
    "SessionInfo",
    "SessionState",
    "SessionWriter",
    "TextBlock",
    "ToolCall",
    "ToolOutput",
    "ToolResultMessage",
    "UserBlock",
    "UserMessage",
    "VarPlaceholder",
    "dumps_message",
    "loads_message",
    "message_from_dict",
    "message_to_dict",
    "new_request_id",
    "prompt_title",
    "title_text",
]
