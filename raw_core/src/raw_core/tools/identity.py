"""Tool identities (``builtin/bash``, ``local/<folder>``...): see :mod:`raw_core._identity`.

The grammar lives with the foundation modules because the config checks ``tools.use``
against it and the config sits below the tools; this module is its public name.
"""

from __future__ import annotations

from raw_core._identity import RESERVED_SOURCES, ToolIdentity, parse_identity
from raw_core._identity import SEGMENT_RE as SEGMENT_RE

__all__ = ["RESERVED_SOURCES", "ToolIdentity", "parse_identity"]
