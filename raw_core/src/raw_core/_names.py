"""The grammar of raw's names: one segment (a plug-in's name, a tool folder's, a tool
source's prefix, a package's alias) and the tool-source prefixes raw reserves.

Apart from the tool-identity record (:mod:`raw_core._identity`), so that what checks a
name alone — the plug-in host, at every start of raw — imports no record library.
"""

from __future__ import annotations

import re
from typing import Final

__all__ = ["RESERVED_SOURCES", "SEGMENT_RE"]

RESERVED_SOURCES: Final = frozenset({"local", "agent", "pkg", "mcp"})
"""The first segments raw serves itself (``local``, ``agent``) or that only a registered
tool source may serve (``mcp``, ``pkg``)."""
SEGMENT_RE: Final = re.compile(r"[a-z][a-z0-9_-]*")
"""One segment: a lowercase letter, then lowercase letters, digits, ``_`` and ``-``."""
