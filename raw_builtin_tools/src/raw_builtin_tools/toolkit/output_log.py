"""A process's output on disk, bounded: :class:`OutputLog`.

Output is numbered by byte from 0, the way a reader counts it: offset ``n`` is the ``n``-th
byte the process ever wrote, however much has been dropped since. The log keeps the newest
bytes in two segment files of at most ``segment_bytes`` each; when the newer one is full,
the older one is deleted and a new one begun. So at most ``2 * segment_bytes`` are on disk
and at least the last ``segment_bytes`` written are kept (:data:`OUTPUT_BYTES`,
:data:`SEGMENT_BYTES`); a read that starts before the first byte kept learns how many bytes
were dropped. Memory holds one chunk at a time.

One thread appends (the process's reader), any thread reads; a lock orders them.
"""

from __future__ import annotations

import os
import threading
from dataclasses import dataclass
from pathlib import Path
from typing import Final

__all__ = ["OUTPUT_BYTES", "SEGMENT_BYTES", "OutputChunk", "OutputLog"]

SEGMENT_BYTES: Final = 2 * 1024 * 1024
"""Bytes in one segment file at most; at least this many of the newest bytes are kept."""
OUTPUT_BYTES: Final = 2 * SEGMENT_BYTES
"""Bytes of one process's output on disk at most (4 MiB)."""


@dataclass(frozen=True, slots=True)
class OutputChunk:
    """Bytes ``[start, end)`` of the output; ``dropped`` bytes before ``start`` were asked
    for but are no longer kept; ``total`` is how many bytes were written in all."""

    data: bytes
    start: int
    end: int
    dropped: int
    total: int


@dataclass(slots=True)
class _Segment:
    path: Path
    start: int
    fd: int
    size: int = 0


class OutputLog:
    """The newest output of one process, in ``folder`` (made by the caller, private)."""

    def __init__(self, folder: Path, *, segment_bytes: int = SEGMENT_BYTES) -> None:
        self.folder = folder
        self.segment_bytes = segment_bytes
        self._lock = threading.Lock()
        self._count = 0
        self._total = 0
        self._segments: list[_Segment] = [self._open(0)]
        self._closed = False

    def _open(self, start: int) -> _Segment:
        path = self.folder / f"output-{self._count}"
        self._count += 1
        fd = os.open(path, os.O_RDWR | os.O_CREAT | os.O_EXCL | os.O_APPEND, 0o600)
        return _Segment(path=path, start=start, fd=fd)

    @property
    def total(self) -> int:
        """Bytes written in all."""
        with self._lock:
            return self._total

    @property
    def kept_from(self) -> int:
        """The offset of the first byte still kept."""
        with self._lock:
            return self._segments[0].start

    def disk_bytes(self) -> int:
        """Bytes the segment files hold now."""
        with self._lock:
            return sum(segment.size for segment in self._segments)

    def append(self, data: bytes) -> None:
        """Add ``data`` at the end, dropping the oldest segment when the newest fills."""
        view = memoryview(data)
        with self._lock:
            if self._closed:
                return
            while view:
                current = self._segments[-1]
                room = self.segment_bytes - current.size
                if room <= 0:
                    if len(self._segments) == 2:
                        old = self._segments.pop(0)
                        os.close(old.fd)
                        old.path.unlink(missing_ok=True)
                    self._segments.append(self._open(self._total))
                    continue
                piece = view[:room]
                written = os.write(current.fd, piece)
                current.size += written
                self._total += written
                view = view[written:]

    def read(self, offset: int, max_bytes: int) -> OutputChunk:
        """At most ``max_bytes`` from ``offset`` on (from the first byte kept when it
        starts before; from the end when it is past it)."""
        with self._lock:
            total = self._total
            first = self._segments[0].start
            start = min(max(offset, first), total)
            dropped = max(first - offset, 0)
            pieces: list[bytes] = []
            position, left = start, max(max_bytes, 0)
            for segment in self._segments:
                end = segment.start + segment.size
                if left <= 0 or position >= end or self._closed:
                    continue
                piece = os.pread(segment.fd, min(left, end - position), position - segment.start)
                pieces.append(piece)
                position += len(piece)
                left -= len(piece)
            data = b"".join(pieces)
            return OutputChunk(
                data=data, start=start, end=start + len(data), dropped=dropped, total=total
            )

    def close(self) -> None:
        """Close and delete the segment files; later appends are dropped."""
        with self._lock:
            if self._closed:
                return
            self._closed = True
            for segment in self._segments:
                os.close(segment.fd)
                segment.path.unlink(missing_ok=True)
