"""The model-facing name of an MCP tool: one rule for every provider.

An MCP tool's name may hold characters providers refuse (``.``, ``/``, spaces) and be up
to 128 characters long, while providers take ``[A-Za-z0-9_-]{1,64}``. raw gives the model a
name that every provider takes, so the name (and with it the prompt-cache key and the
session's history) does not change when the model does:

* each character outside letters, digits, ``_`` and ``-`` becomes ``_``;
* a name that does not start with a letter or ``_`` gets a leading ``_``;
* a name over 64 characters keeps its first 55 and gets ``_`` and 8 hex digits of the
  SHA-256 of the original name, so two long names that share a start stay apart.

A server's config may give a tool another name (``tools.<tool>.name``), for two servers
that both have ``search``.
"""

from __future__ import annotations

import hashlib
import re
from typing import Final

__all__ = ["MAX_NAME", "model_name"]

MAX_NAME: Final = 64
_OUTSIDE: Final = re.compile(r"[^A-Za-z0-9_-]")
_HASHED_KEEP: Final = MAX_NAME - 9


def model_name(tool: str) -> str:
    """The model-facing name of the MCP tool named ``tool`` (see the module's rule)."""
    name = _OUTSIDE.sub("_", tool) or "_"
    if not (name[0].isascii() and (name[0].isalpha() or name[0] == "_")):
        name = "_" + name
    if len(name) <= MAX_NAME:
        return name
    digest = hashlib.sha256(tool.encode("utf-8")).hexdigest()[:8]
    return f"{name[:_HASHED_KEEP]}_{digest}"
