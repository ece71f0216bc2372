"""What raw's own log records look like on the command line: one line each.

The library logs what it survives (a renderer or a plug-in's hook that failed, a tool
folder skipped) with Python's ``logging``. Left to Python's last-resort handler, a record
with an exception prints its traceback, which never reaches a user of the CLI: each
record is printed as one ``raw: message (ExceptionType: what it said)`` line on stderr,
warnings and above. ``RAW_DEBUG=1`` prints the debug records too, each with its traceback.
"""

from __future__ import annotations

import logging
import os
import sys

__all__ = ["install"]

_installed = False


class _OneLine(logging.Handler):
    """A record as one line on stderr, or with its traceback under ``RAW_DEBUG``."""

    def __init__(self, *, debug: bool) -> None:
        super().__init__(logging.DEBUG if debug else logging.WARNING)
        self._debug = debug

    def emit(self, record: logging.LogRecord) -> None:
        try:
            line = f"raw: {record.getMessage()}"
            error = record.exc_info[1] if record.exc_info else None
            if error is not None:
                line += f" ({type(error).__name__}: {error})"
            if self._debug and record.exc_info:
                line += "\n" + logging.Formatter().formatException(record.exc_info)
            sys.stderr.write(line + "\n")
            sys.stderr.flush()
        except Exception:  # stderr gone too, or a message that does not format
            pass


def install() -> None:
    """Route the log records of this process to :class:`_OneLine` (once)."""
    global _installed
    if _installed:
        return
    _installed = True
    debug = os.environ.get("RAW_DEBUG", "") not in ("", "0")
    root = logging.getLogger()
    root.addHandler(_OneLine(debug=debug))
    if debug:
        root.setLevel(logging.DEBUG)
