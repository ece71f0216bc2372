"""Colour on the terminal: one role per kind of line (a tool call, its effects, a result,
an error, a note), drawn with rich's styles, imported only when colour is on.

Colour is on when the stream is a terminal, ``NO_COLOR`` is unset (or empty), ``TERM`` is
not ``dumb`` and ``raw --no-color`` was not given; otherwise every line is written as
plain text, byte for byte what a pipe or a log should hold.
"""

from __future__ import annotations

import os
from typing import TextIO

__all__ = ["Painter", "colour_wanted", "disable_colour"]

ROLES = {
    "call": "bold cyan",
    "effects": "yellow",
    "ok": "green",
    "error": "bold red",
    "output": "",
    "fold": "dim italic",
    "note": "dim",
    "approval": "bold yellow",
    "banner": "dim",
}

_disabled = False


def disable_colour() -> None:
    """No colour for the rest of the process (``raw --no-color``)."""
    global _disabled
    _disabled = True


def colour_wanted(stream: TextIO) -> bool:
    """Whether lines written to ``stream`` should be coloured."""
    if _disabled or os.environ.get("NO_COLOR") or os.environ.get("TERM") == "dumb":
        return False
    isatty = getattr(stream, "isatty", None)
    return bool(isatty and isatty())


class Painter:
    """Writes lines to one stream, each in the style of its role when colour is on."""

    def __init__(self, stream: TextIO) -> None:
        self.stream = stream
        self.on = colour_wanted(stream)
        self._styles: dict[str, object] = {}

    def paint(self, text: str, role: str) -> str:
        """``text`` in the style of ``role`` (itself when colour is off)."""
        if not self.on or not ROLES.get(role):
            return text
        from rich.color import ColorSystem
        from rich.style import Style

        style = self._styles.get(role)
        if style is None:
            style = self._styles[role] = Style.parse(ROLES[role])
        assert isinstance(style, Style)
        return style.render(text, color_system=ColorSystem.STANDARD)

    def line(self, text: str, role: str) -> None:
        """Write ``text`` and a newline."""
        self.stream.write(self.paint(text, role) + "\n")
