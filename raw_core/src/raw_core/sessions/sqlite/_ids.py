"""Session and request ids: lowercase hex that sorts by creation time.

A session id is 32 hex digits: the first 12 are the creation time in milliseconds, the
other 20 are random (80 bits), so ids are unique across processes without coordination and
list in the order they were made. An id is also a file name (the session's lock file), so
anything else is refused before it can reach the file system.

A pending request's id is the same 32 digits after ``req_``, so the two kinds of id can
never be taken for each other (a front end answering a request by id, say).
"""

from __future__ import annotations

import re
import secrets
import time

__all__ = ["is_request_id", "is_session_id", "new_request_id", "new_session_id"]

_SESSION_ID = re.compile(r"[0-9a-f]{32}")
_REQUEST_ID = re.compile(r"req_[0-9a-f]{32}")


def new_session_id() -> str:
    """A fresh id: creation time in milliseconds, then 80 random bits."""
    return f"{time.time_ns() // 1_000_000:012x}{secrets.token_hex(10)}"


def is_session_id(value: str) -> bool:
    """Whether ``value`` has the form of a session id (and is safe as a file name)."""
    return _SESSION_ID.fullmatch(value) is not None


def new_request_id() -> str:
    """A fresh pending-request id: ``req_`` and a session-id-like time-ordered number."""
    return "req_" + new_session_id()


def is_request_id(value: str) -> bool:
    """Whether ``value`` has the form of a pending request's id."""
    return _REQUEST_ID.fullmatch(value) is not None
