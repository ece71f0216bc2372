"""builtin/read_file: read up to 16 UTF-8 text files, with line numbers, one row per file.

Each file is read in chunks: the whole file is checked (a NUL byte makes it binary, a bad
UTF-8 sequence makes it not text) and its lines are counted, but only the requested range
is kept, so a large file costs time, not memory. Lines are split on ``\\n`` only (a form
feed or U+2028 is not a line break), so numbers match what an editor shows and what
write_file's ``replace_lines`` expects. A file that cannot be read is that row's error;
the other rows still report.

The handler is synchronous: it only reads files, so the dispatcher runs it in a worker
thread, and on cancellation the call ends at once (the abandoned thread reads on but
changes nothing).
"""

from __future__ import annotations

import codecs
import os
import stat
from collections.abc import Mapping
from typing import Any, Final

from raw_builtin_tools.toolkit import normalize, path_problem
from raw_core import BatchResult, ToolContext

DEFAULT_MAX_LINES: Final = 2000
MAX_KEPT_CHARS: Final = 1024 * 1024  # per file: what the terminal may show at most
CHUNK_BYTES: Final = 256 * 1024
_LINE: Final = "{:>6}\t{}"  # line number, tab, text: as `cat -n` prints it


class ReadError(Exception):
    """A file this row cannot show: a stable ``code`` and a message."""

    def __init__(self, code: str, message: str) -> None:
        super().__init__(message)
        self.code = code
        self.message = message


def validate_args(args: Mapping[str, Any]) -> str | None:
    """Each path must name a file."""
    for index, entry in enumerate(args["files"]):
        problem = path_problem(entry["path"])
        if problem is not None:
            return f"files[{index}].path {problem}"
    return None


def _open_regular(path: str) -> int:
    try:
        fd = os.open(path, os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | os.O_CLOEXEC)
    except FileNotFoundError:
        raise ReadError("file_not_found", f"{path} does not exist") from None
    except NotADirectoryError:
        raise ReadError("file_not_found", f"{path} does not exist (a parent is a file)") from None
    except IsADirectoryError:
        raise ReadError("is_a_directory", f"{path} is a folder, not a file") from None
    except PermissionError:
        raise ReadError("permission_denied", f"cannot read {path}: permission denied") from None
    except OSError as exc:
        raise ReadError("read_failed", f"cannot read {path}: {exc.strerror or exc}") from None
    mode = os.fstat(fd).st_mode
    if stat.S_ISDIR(mode):
        os.close(fd)
        raise ReadError("is_a_directory", f"{path} is a folder, not a file")
    if not stat.S_ISREG(mode):
        os.close(fd)
        raise ReadError("not_a_file", f"{path} is not a regular file (a device, pipe or socket)")
    return fd


def _read_chunk(handle: Any, path: str) -> bytes:
    try:
        chunk: bytes = handle.read(CHUNK_BYTES)
    except OSError as exc:  # an I/O error, a special file that refuses reads...
        raise ReadError("read_failed", f"cannot read {path}: {exc.strerror or exc}") from None
    return chunk


def read_lines(path: str, start: int, limit: int) -> tuple[list[str], int, bool]:
    """``(lines start..start+limit-1, total line count, cut_by_size)`` of a UTF-8 file.

    Raises :class:`ReadError` for a file that is missing, a folder, binary or not UTF-8.
    """
    fd = _open_regular(path)
    decoder = codecs.getincrementaldecoder("utf-8")("strict")
    stop = start + limit  # the first line number not wanted
    kept: list[str] = []
    kept_chars = 0
    cut = False
    number = 0  # lines completed so far
    offset = 0
    pending = ""
    with os.fdopen(fd, "rb") as handle:
        while chunk := _read_chunk(handle, path):
            if b"\x00" in chunk:
                raise ReadError("binary_file", f"{path} holds binary data (a NUL byte)")
            try:
                text = decoder.decode(chunk)
            except UnicodeDecodeError as exc:
                raise ReadError(
                    "not_utf8",
                    f"{path} is not UTF-8 text (bad byte at offset {offset + exc.start})",
                ) from None
            offset += len(chunk)
            pieces = (pending + text).split("\n")
            # A line longer than the whole budget need not be kept whole (one past the budget
            # still marks it too long), so a file without line breaks costs no memory.
            pending = pieces.pop()[: MAX_KEPT_CHARS + 1]
            # pieces are lines number+1 .. number+len(pieces); keep those in the range
            first, last = max(start, number + 1), min(stop - 1, number + len(pieces))
            if first <= last and not cut:
                wanted = pieces[first - number - 1 : last - number]
                size = sum(map(len, wanted))
                if kept_chars + size > MAX_KEPT_CHARS:
                    wanted = _within(wanted, MAX_KEPT_CHARS - kept_chars, whole=bool(kept))
                    cut = True
                kept.extend(wanted)
                kept_chars += size
            number += len(pieces)
        try:
            decoder.decode(b"", final=True)
        except UnicodeDecodeError:
            raise ReadError(
                "not_utf8", f"{path} is not UTF-8 text (it ends mid-character)"
            ) from None
    if pending:  # a last line without a final newline
        number += 1
        if start <= number < stop and not cut:
            if kept_chars + len(pending) > MAX_KEPT_CHARS:
                kept.extend(_within([pending], MAX_KEPT_CHARS - kept_chars, whole=bool(kept)))
                cut = True
            else:
                kept.append(pending)
    return kept, number, cut


def _within(lines: list[str], budget: int, *, whole: bool) -> list[str]:
    """The leading lines of ``lines`` whose lengths add up to at most ``budget``; unless
    ``whole``, a first line longer than the budget is kept cut to it (so something shows)."""
    taken: list[str] = []
    for line in lines:
        if len(line) > budget:
            if not taken and not whole:
                taken.append(line[:budget])
            break
        budget -= len(line)
        taken.append(line)
    return taken


def _show(path: str, start: int, limit: int) -> str:
    lines, total, cut = read_lines(path, start, limit)
    if total == 0:
        return "(empty file: 0 lines)"
    if start > total:
        raise ReadError(
            "line_out_of_range", f"start_line {start} is past the end: the file has {total} lines"
        )
    end = start + len(lines) - 1
    if start == 1 and end == total and not cut:
        header = f"lines 1-{total} of {total} (whole file)"
    else:
        header = f"lines {start}-{end} of {total}"
        if end < total:
            header += f"; more follows: read on with start_line={end + 1}"
    if cut:
        header += f"; stopped at {MAX_KEPT_CHARS} characters"
    if "\r\n" in "\n".join(lines) + "\n":
        header += "; CRLF line endings (the \\r is not shown)"
        lines = [line.removesuffix("\r") for line in lines]
    body = "\n".join(map(_LINE.format, range(start, end + 1), lines))
    return f"{header}\n{body}"


def handler(args: Mapping[str, Any], context: ToolContext) -> BatchResult:
    """One row per file: its numbered lines, or an error code."""
    batch = BatchResult()
    for entry in args["files"]:
        label = entry["path"]
        path = normalize(label, str(context.cwd))
        # int(): JSON Schema's integer takes 2.0 too
        start = int(entry.get("start_line", 1))
        limit = int(entry.get("max_lines", DEFAULT_MAX_LINES))
        try:
            batch.ok(label, _show(path, start, limit))
        except ReadError as error:
            batch.error(label, error.code, error.message)
    return batch
