"""The session store: raw's conversations in a private SQLite database.

Each session keeps two streams: the display history (what the user saw, append-only, paged
with opaque cursors: messages and display-only entries) and the model context (what the
next request sends: messages and model-only messages; compaction replaces an older part
with a summary). One writer per session across processes, readers never wait; pending
requests are records any process can answer. See ``docs/sessions.md``.

* :class:`SqliteBackend`: the async :class:`raw_core.sessions.backend.SessionBackend` on SQLite,
  which keeps every long wait off the event loop (see :mod:`raw_core.sessions.sqlite.backend`);
* :class:`SessionStore` and its :class:`SessionReader` / :class:`SessionWriter`: the
  synchronous core the backend runs on;
* :mod:`raw_core.sessions.messages`: the message records and their one JSON form;
  :mod:`raw_core.sessions.sqlite.entries`: the display-only entries' JSON form and
  :func:`tool_output_for`.
"""

from __future__ import annotations

from raw_core.sessions.backend import (
    MAX_TOOL_OUTPUT_BYTES,
    ApprovalAnswer,
    DisplayItem,
    DisplayPage,
    ModelOnly,
    PanelUpdate,
    PendingRequest,
    RequestEntry,
    SessionInfo,
    SessionState,
    ToolOutput,
)
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
from raw_core.sessions.sqlite._ids import new_request_id
from raw_core.sessions.sqlite.backend import SqliteBackend, SqliteWriter
from raw_core.sessions.sqlite.entries import tool_output_for
from raw_core.sessions.sqlite.reader import MAX_PAGE_SIZE, SessionReader
from raw_core.sessions.sqlite.record import SQLITE_BACKEND
from raw_core.sessions.sqlite.store import (
    DEFAULT_EXPIRE_AFTER_DAYS,
    SessionStore,
    default_store_directory,
)
from raw_core.sessions.sqlite.writer import SessionWriter

__all__ = [
    "DEFAULT_EXPIRE_AFTER_DAYS",
    "MAX_PAGE_SIZE",
    "MAX_TOOL_OUTPUT_BYTES",
    "MESSAGE_FORMAT",
    "SQLITE_BACKEND",
    "ApprovalAnswer",
    "AssistantMessage",
    "ContentBlock",
    "DisplayItem",
    "DisplayPage",
    "ImageBlock",
    "JsonBlock",
    "Message",
    "ModelOnly",
    "PanelUpdate",
    "PendingRequest",
    "ProviderPart",
    "RequestEntry",
    "SessionInfo",
    "SessionReader",
    "SessionState",
    "SessionStore",
    "SessionWriter",
    "SqliteBackend",
    "SqliteWriter",
    "TextBlock",
    "ToolCall",
    "ToolOutput",
    "ToolResultMessage",
    "UserBlock",
    "UserMessage",
    "VarPlaceholder",
    "default_store_directory",
    "dumps_message",
    "loads_message",
    "message_from_dict",
    "message_to_dict",
    "new_request_id",
    "tool_output_for",
]
