"""builtin/process: background processes that live across the turns of a session.

Each call runs 1 to 16 actions in order (``start``, ``list``, ``read``, ``write``,
``signal``, ``wait``, ``stop``), one result row each. The processes are kept in the
session's resources (``context.resources``) as a :class:`raw_builtin_tools.toolkit.ProcessTable`:
each runs in a process group of its own, its output goes to a bounded file in raw's state
directory, and the runtime stops every group when the session ends.

The arguments are checked as a whole twice before anything runs: the schema and
:func:`validate_args` (``invalid_arguments``: which fields each action takes, one start per
name), then the handler against the session's table (a name no process has, a name that
still runs, no room left). When one action cannot run, its row says why and every other
row is ``skipped``: nothing ran.

``describe_effects`` says what each ``start`` would run in the shape of builtin/bash's
effects (``commands[*].programs``, ``flags``, and the files a command line's redirections
write), so one rule covers both tools. An ``argv`` is read as the command line that quotes
each word, so wrappers (``sudo``, ``xargs``...) are seen through the same way.
"""

from __future__ import annotations

import os
import shlex
import shutil
import signal as signals
from collections.abc import Mapping
from typing import Any, Final

from raw_builtin_tools.toolkit import (
    STOP_GRACE_SECONDS,
    BackgroundProcess,
    OutputChunk,
    ProcessProblem,
    ProcessTable,
    commands_effects,
    normalize,
    path_problem,
    surrogate_problem,
)
from raw_core import BatchResult, ToolContext

KEY: Final = "builtin/process"
"""Where the session's table is kept in ``context.resources``."""
DEFAULT_WAIT_MS: Final = 10_000
LABEL_CHARS: Final = 100
ROW_OVERHEAD: Final = 200
"""Bytes of a read row that are not output (header, range line, drop note)."""

_FIELDS: Final = {
    "start": ({"name"}, {"command", "argv", "cwd"}),
    "list": (set(), set()),
    "read": ({"name"}, {"offset", "max_bytes"}),
    "write": ({"name", "input"}, {"close"}),
    "signal": ({"name", "signal"}, set()),
    "wait": ({"name"}, {"timeout_ms"}),
    "stop": ({"name"}, set()),
}
"""Each action's required and optional fields, beside ``action``."""


def _text_problem(text: str) -> str | None:
    if "\x00" in text:
        return "must not contain a NUL character"
    return surrogate_problem(text)


def validate_args(args: Mapping[str, Any]) -> str | None:
    """Each action has exactly the fields it takes (a start one of ``command`` and
    ``argv``), no text holds a NUL or a lone surrogate, and no two starts share a name."""
    started: set[str] = set()
    for index, entry in enumerate(args["actions"]):
        where = f"actions[{index}]"
        action = entry["action"]
        required, optional = _FIELDS[action]
        given = set(entry) - {"action"}
        missing = sorted(required - given)
        if missing:
            return f"{where}: {action} needs {', '.join(missing)}"
        extra = sorted(given - required - optional)
        if extra:
            return f"{where}: {action} does not take {', '.join(extra)}"
        if action == "start":
            if ("command" in entry) == ("argv" in entry):
                return f"{where}: start takes exactly one of command and argv"
            texts = [entry.get("command", ""), *entry.get("argv", ())]
            if "command" in entry and not entry["command"].strip():
                return f"{where}.command is blank"
            if "argv" in entry and not entry["argv"][0]:
                return f"{where}.argv[0] is empty: name the program to run"
            if "cwd" in entry:
                problem = path_problem(entry["cwd"].rstrip("/") or "/")
                if problem is not None:
                    return f"{where}.cwd {problem}"
            for text in texts:
                problem = _text_problem(text)
                if problem is not None:
                    return f"{where}: the command {problem}"
            if entry["name"] in started:
                return f"{where}: two starts name {entry['name']!r}; give each process its own name"
            started.add(entry["name"])
        if action == "write":
            problem = _text_problem(entry["input"])
            if problem is not None:
                return f"{where}.input {problem}"
    return None


def _cwd(entry: Mapping[str, Any], context: ToolContext) -> str:
    given = entry.get("cwd")
    return normalize(given, str(context.cwd)) if given else str(context.cwd)


def _line(entry: Mapping[str, Any]) -> str:
    """The command line a start runs: its ``command``, or its ``argv`` quoted word by word."""
    if "command" in entry:
        text: str = entry["command"]
        return text
    return shlex.join(entry["argv"])


def describe_effects(args: Mapping[str, Any], context: ToolContext) -> dict[str, Any]:
    """``{"commands": [{"programs", "flags"}], "files": [{"path", "operation"}]}``, as
    builtin/bash's: one entry per ``start``, in order."""
    home = os.environ.get("HOME") or None
    starts = (entry for entry in args["actions"] if entry["action"] == "start")
    return commands_effects(((_line(entry), _cwd(entry, context)) for entry in starts), home=home)


def _short(text: str) -> str:
    first, _, rest = text.strip().partition("\n")
    if len(first) > LABEL_CHARS:
        return first[:LABEL_CHARS] + " …"
    return first + (" …" if rest else "")


def _label(entry: Mapping[str, Any]) -> str:
    action = entry["action"]
    if action == "list":
        return "list"
    if action == "start":
        return f"start {entry['name']}: {_short(_line(entry))}"
    if action == "signal":
        return f"signal {entry['name']} SIG{entry['signal']}"
    return f"{action} {entry['name']}"


def _precheck(actions: list[Mapping[str, Any]], table: ProcessTable) -> tuple[int, str, str] | None:
    """The first action that cannot run against ``table`` as the earlier actions leave it,
    as ``(index, code, message)``: a name no process has (nor an earlier start), a start
    whose name still runs, or a start with no room left (a ``stop`` earlier in the batch
    makes room)."""
    running = {p.name for p in table if p.running}
    ended = [p.name for p in sorted(table, key=lambda p: p.ended or 0.0) if not p.running]
    known = set(running) | set(ended)
    for index, entry in enumerate(actions):
        name: str = entry.get("name", "")
        action = entry["action"]
        if action == "list":
            continue
        if action != "start":
            if name not in known:
                names = ", ".join(sorted(known)) or "none"
                return (
                    index,
                    "process_unknown",
                    f"no process is named {name!r} (processes: {names})",
                )
            if action == "stop" and name in running:
                running.discard(name)
                ended.append(name)
            continue
        if name in running:
            return index, "process_name_taken", f"{name!r} names a process that is still running"
        if name in ended:
            ended.remove(name)
        elif len(known) >= table.limit:
            if not ended:
                return (
                    index,
                    "process_limit",
                    (
                        f"{table.limit} processes run already, the most a session keeps:"
                        " stop one first"
                    ),
                )
            known.discard(ended.pop(0))
        known.add(name)
        running.add(name)
    return None


def _listing(table: ProcessTable) -> str:
    rows = [
        f"{p.name}: {p.state()} after {p.seconds():.1f} s, pid {p.pid}, output"
        f" {p.log.total} bytes ({p.log.total - p.cursor} unread): {_short(p.label)}"
        for p in table
    ]
    return "\n".join(rows) if rows else "no processes"


def _read_body(process: BackgroundProcess, chunk: OutputChunk) -> str:
    lines = []
    if chunk.dropped:
        lines.append(
            f"[{chunk.dropped} bytes of older output were dropped: only the newest 2 to 4 MiB"
            " are kept]"
        )
    text = chunk.data.decode("utf-8", "replace")
    more = chunk.total - chunk.end
    state = process.state()
    head = f"bytes {chunk.start}-{chunk.end} of {chunk.total}; {state}"
    if more:
        head += f"; {more} more bytes: read on with offset={chunk.end}"
    elif not chunk.data:
        head += "; no new output"
    lines.append(head)
    if text:
        lines.append(text if text.endswith("\n") else text + "\n[no newline at the end]")
    return "\n".join(lines)


async def _run(
    entry: Mapping[str, Any],
    table: ProcessTable,
    context: ToolContext,
    read_budget: int,
) -> str:
    """One action; its row's body. Raises :class:`ProcessProblem` when it fails."""
    action = entry["action"]
    if action == "list":
        return _listing(table)
    if action == "start":
        cwd = _cwd(entry, context)
        if "command" in entry:
            argv = [shutil.which("bash") or "/bin/bash", "-c", entry["command"]]
        else:
            argv = list(entry["argv"])
        process = table.start(entry["name"], argv, cwd=cwd, label=_line(entry))
        return f"started {process.name}: pid {process.pid} (its process group), in {cwd}"
    process = table.get(entry["name"])
    if action == "read":
        # int(): JSON Schema's integer takes 2.0 too
        limit = min(int(entry.get("max_bytes", read_budget)), read_budget)
        offset = entry.get("offset")
        return _read_body(process, process.read(None if offset is None else int(offset), limit))
    if action == "write":
        data = entry["input"].encode("utf-8")
        await process.write(data, close=entry.get("close", False))
        closed = "; stdin closed" if entry.get("close") else ""
        return f"wrote {len(data)} bytes to {process.name}{closed}"
    if action == "signal":
        process.send(signals.Signals[f"SIG{entry['signal']}"])
        return f"sent SIG{entry['signal']} to the process group of {process.name}"
    if action == "wait":
        seconds = int(entry.get("timeout_ms", DEFAULT_WAIT_MS)) / 1000
        if await process.wait(seconds, context.signal):
            return f"{process.name} {process.state()} after {process.seconds():.2f} s"
        return f"{process.name} is still running after {seconds:g} s of waiting"
    ending = await process.stop(STOP_GRACE_SECONDS)
    return f"stopped {process.name}: {ending}"


async def handler(args: Mapping[str, Any], context: ToolContext) -> BatchResult:
    """Check the actions against the session's processes, then run them in order."""
    actions = list(args["actions"])
    labels = [_label(entry) for entry in actions]
    batch = context.progress.start(labels)
    table = None
    if context.resources is not None and not context.resources.closed:
        try:
            table = context.resources.get(KEY, ProcessTable)
        except RuntimeError:  # the session ended meanwhile
            table = None
    if table is None:
        batch.error(labels[0], "process_unavailable", "processes need a session to live in")
        for label in labels[1:]:
            batch.skipped(label, "not run: processes need a session")
        return batch
    refused = _precheck(actions, table)
    if refused is not None:
        failed, code, message = refused
        for index, label in enumerate(labels):
            if index == failed:
                batch.error(label, code, message)
            else:
                batch.skipped(label, f"not run: action {failed + 1} cannot run, so none ran")
        return batch
    reads = sum(1 for entry in actions if entry["action"] == "read")
    budget = max((context.max_output_bytes - ROW_OVERHEAD * len(actions)) // max(reads, 1), 256)
    for entry, label in zip(actions, labels, strict=True):
        if context.signal.cancelled:
            batch.skipped(label, "not run: the call was cancelled")
            continue
        try:
            batch.ok(label, await _run(entry, table, context, budget))
        except ProcessProblem as problem:
            batch.error(label, problem.code, problem.message)
    return batch
