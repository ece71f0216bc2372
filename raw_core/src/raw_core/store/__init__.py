"""The session store: raw's conversations in a private SQLite database.

Each session keeps two streams: the display history (what the user saw, append-only, paged
with opaque cursors) and the model context (what the next request sends; compaction
replaces an older part with a summary). One writer per session across processes, readers
never wait. See ``docs/sessions.md``.

* :class:`SessionStore` and its :class:`SessionReader` / :class:`SessionWriter`: the
  synchronous core, the hot path;
* :class:`AsyncSessionStore` and its readers and writers: the same operations for anyio
  code (run inline, see :mod:`raw_core.store.async_store`);
* :mod:`raw_core.store.messages`: the message records and their one JSON form.
"""

from __future__ import annotations

from raw_core.store.async_store import AsyncSessionReader, AsyncSessionStore, AsyncSessionWriter
from raw_core.store.messages import (
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
from raw_core.store.store import (
    DEFAULT_EXPIRE_AFTER_DAYS,
    MAX_PAGE_SIZE,
    DisplayItem,
    DisplayPage,
    SessionInfo,
    SessionReader,
    SessionStore,
    SessionWriter,
    default_store_directory,
)

__all__ = [
    "DEFAULT_EXPIRE_AFTER_DAYS",
    "MAX_PAGE_SIZE",
    "MESSAGE_FORMAT",
    "AssistantMessage",
    "AsyncSessionReader",
    "AsyncSessionStore",
    "AsyncSessionWriter",
    "ContentBlock",
    "DisplayItem",
    "DisplayPage",
    "ImageBlock",
    "JsonBlock",
    "Message",
    "ProviderPart",
    "SessionInfo",
    "SessionReader",
    "SessionStore",
    "SessionWriter",
    "TextBlock",
    "ToolCall",
    "ToolResultMessage",
    "UserBlock",
    "UserMessage",
    "VarPlaceholder",
    "default_store_directory",
    "dumps_message",
    "loads_message",
    "message_from_dict",
    "message_to_dict",
]
