"""Reading the user's lines without a blocked thread: the event loop waits for stdin.

The chat prompt and the approval prompt both read here, so a prompt cancelled by Ctrl-C
leaves no reader behind to swallow the next line.
"""

from __future__ import annotations

import os
import stat
import sys

__all__ = ["LineReader"]


class LineReader:
    """Lines from a file descriptor (stdin by default), read when the loop says it is
    readable. ``None`` at end of input."""

    def __init__(self, fd: int | None = None) -> None:
        self._fd = fd if fd is not None else sys.stdin.fileno()
        self._buffer = b""
        self._eof = False
        self._wait = _pollable(self._fd)

    async def readline(self, prompt: str = "") -> str | None:
        """Print ``prompt`` (on stderr) and return the next line, without its newline."""
        if prompt:
            sys.stderr.write(prompt)
            sys.stderr.flush()
        import anyio  # imported when first used: it costs startup time

        while b"\n" not in self._buffer and not self._eof:
            if self._wait:
                await anyio.wait_readable(self._fd)
            chunk = os.read(self._fd, 4096)
            if not chunk:
                self._eof = True
            self._buffer += chunk
        if not self._buffer:
            return None
        line, _, rest = self._buffer.partition(b"\n")
        self._buffer = rest
        return line.decode("utf-8", "replace")

    async def confirm(self, question: str) -> bool:
        """Ask a yes/no question (default no)."""
        while True:
            answer = await self.readline(f"{question} [y/N]: ")
            if answer is None:
                return False
            choice = answer.strip().lower()
            if choice in ("y", "yes"):
                return True
            if choice in ("", "n", "no"):
                return False


def _pollable(fd: int) -> bool:
    """Whether the loop can wait for ``fd``: a terminal, a pipe or a socket. A regular file
    or ``/dev/null`` (``raw chat < prompts.txt``, ``</dev/null``) is always ready, and the
    loop's poller refuses to watch one, so it is read at once."""
    try:
        mode = os.fstat(fd).st_mode
    except OSError:
        return True
    if stat.S_ISFIFO(mode) or stat.S_ISSOCK(mode):
        return True
    return stat.S_ISCHR(mode) and os.isatty(fd)
