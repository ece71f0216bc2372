"""Tool names on the wire: the model-facing name when the service accepts it, else an alias.

OpenAI and Anthropic accept tool names of 1 to 64 characters from ``[A-Za-z0-9_-]``. A name
outside that (``mcp/github/search``, a long name) is sent as a deterministic alias: its
characters mapped into the allowed set, cut to fit, and ending in ``_`` and 8 hex digits of
the name's SHA-256, so the same name always gets the same alias (request after request,
which keeps the prompt-cache prefix stable) and two names that clean up alike do not meet.

A :class:`WireNames` table is built per request from the tools *and* the names in history
(a tool that has since been removed still appears in old tool calls); names the service
sends back are mapped through it, and a name it does not know passes through unchanged (the
dispatcher then reports ``tool_unknown``).
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Iterable
from typing import Final

__all__ = ["MAX_NAME_LENGTH", "WireNames", "is_wire_safe", "wire_alias"]

MAX_NAME_LENGTH: Final = 64
_SAFE: Final = re.compile(r"[A-Za-z0-9_-]{1,64}")
_UNSAFE_CHARACTER: Final = re.compile(r"[^A-Za-z0-9_-]")


def is_wire_safe(name: str) -> bool:
    """Whether the services accept ``name`` as it is."""
    return _SAFE.fullmatch(name) is not None


def wire_alias(name: str, *, digits: int = 8) -> str:
    """The alias of ``name``: cleaned, cut, and tagged with ``digits`` hex of its hash."""
    tag = hashlib.sha256(name.encode("utf-8")).hexdigest()[:digits]
    cleaned = _UNSAFE_CHARACTER.sub("_", name).strip("_") or "tool"
    return f"{cleaned[: MAX_NAME_LENGTH - digits - 1]}_{tag}"


class WireNames:
    """Model-facing name ↔ wire name, for one request."""

    def __init__(self, names: Iterable[str]) -> None:
        self._to_wire: dict[str, str] = {}
        self._from_wire: dict[str, str] = {}
        ordered = list(dict.fromkeys(names))
        for name in ordered:
            if is_wire_safe(name):
                self._to_wire[name] = name
                self._from_wire[name] = name
        for name in ordered:
            if name in self._to_wire:
                continue
            alias = wire_alias(name)
            if alias in self._from_wire:  # vanishingly rare: a real tool has this very name
                alias = wire_alias(name, digits=16)
            self._to_wire[name] = alias
            self._from_wire[alias] = name

    def to_wire(self, name: str) -> str:
        """The name to send for ``name``."""
        known = self._to_wire.get(name)
        if known is not None:
            return known
        return name if is_wire_safe(name) else wire_alias(name)

    def from_wire(self, wire: str) -> str:
        """The model-facing name behind ``wire`` (``wire`` itself when unknown)."""
        return self._from_wire.get(wire, wire)

    @property
    def aliased(self) -> dict[str, str]:
        """The names that travel under an alias: name → alias."""
        return {name: wire for name, wire in self._to_wire.items() if name != wire}
