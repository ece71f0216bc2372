"""builtin/bash: run 1 to 16 Bash commands one at a time, one row per command.

Each command runs as ``bash -c COMMAND`` in the session's working directory, with stdin
from ``/dev/null``, in a process group of its own (:func:`raw_builtin_tools.toolkit.run_command`). A
nonzero exit is an ordinary result and the next command still runs. A command that runs
past its ``timeout_ms`` (default 120 s, at most 10 minutes) has its whole process group
killed, and the commands after it are skipped. The same happens when the dispatcher stops
the whole call at the agent's ``handler_timeout_ms``: the commands are announced up front
(``context.progress``), so the dispatcher reports the rows that finished. The first 1 MiB
of stdout and of stderr is kept; the rest is counted and dropped. The dispatcher's shared
cap then limits what the model receives.

``describe_effects`` reads each command with
:func:`raw_builtin_tools.toolkit.parse_command` (tree-sitter-bash): the programs it would
run, seen through wrappers such as ``sudo``, ``xargs`` and ``bash -c``, and the files its
redirections write, as absolute paths in the ``files[*].path`` shape write_file uses, so
one rule covers both tools. It reads nothing and runs nothing; the commands of one call
share one budget (:func:`raw_builtin_tools.toolkit.commands_effects`) on
top of each command's own limits, so a call's effects are bounded (docs/tools/bash.md,
"Limits").

The handler is ``async`` and runs on the event loop rather than in a worker thread: a
cancellation (``context.signal``, or the dispatcher cancelling the call) then arrives at
once as an anyio cancellation of the wait, and the process group is killed before the
handler returns. A synchronous handler would be abandoned in its thread by the dispatcher
and could only notice the cancellation by polling, leaving the command running meanwhile.
"""

from __future__ import annotations

import os
import shutil
import signal as signals
from collections.abc import Mapping
from typing import Any, Final

from raw_builtin_tools.toolkit import (
    Capture,
    Outcome,
    commands_effects,
    run_command,
    surrogate_problem,
)
from raw_core import BatchResult, ToolContext

DEFAULT_TIMEOUT_MS: Final = 120_000
MAX_CAPTURE_BYTES: Final = 1024 * 1024
LABEL_CHARS: Final = 100


def validate_args(args: Mapping[str, Any]) -> str | None:
    """A command must have text, and no NUL character or lone surrogate (neither can be
    passed to a process)."""
    for index, entry in enumerate(args["commands"]):
        if not entry["command"].strip():
            return f"commands[{index}].command is empty"
        if "\x00" in entry["command"]:
            return f"commands[{index}].command must not contain a NUL character"
        surrogate = surrogate_problem(entry["command"])
        if surrogate is not None:
            return f"commands[{index}].command {surrogate}"
    return None


def describe_effects(args: Mapping[str, Any], context: ToolContext) -> dict[str, Any]:
    """``{"commands": [{"programs", "flags"}], "files": [{"path", "operation"}]}``: one
    entry per command, in order, and every file a redirection writes (``operation``
    ``write``), absolute and lexically normalized against ``context.cwd``."""
    cwd = str(context.cwd)
    home = os.environ.get("HOME") or None  # the shell inherits raw's environment
    return commands_effects(((entry["command"], cwd) for entry in args["commands"]), home=home)


def _label(command: str) -> str:
    first, _, rest = command.strip().partition("\n")
    if len(first) > LABEL_CHARS:
        return first[:LABEL_CHARS] + " …"
    return first + (" …" if rest else "")


def _ending(outcome: Outcome) -> str:
    code = outcome.returncode
    if outcome.status != "exited" or code is None:
        return "killed"
    if code >= 0:
        return f"exit code {code}"
    try:
        name = signals.Signals(-code).name
    except ValueError:
        name = f"signal {-code}"
    return f"terminated by {name}"


def _stream(name: str, capture: Capture) -> str:
    if not capture.data and not capture.dropped:
        return ""
    text = capture.data.decode("utf-8", "replace")
    if text and not text.endswith("\n"):
        text += "\n"
    if capture.dropped:
        text += (
            f"[{name}: {capture.dropped} more bytes were dropped; only the first"
            f" {capture.limit} bytes are kept]\n"
        )
    return f"--- {name} ---\n{text}"


def _body(outcome: Outcome) -> str:
    streams = _stream("stdout", outcome.stdout) + _stream("stderr", outcome.stderr)
    head = f"{_ending(outcome)} ({outcome.seconds:.2f} s)"
    return f"{head}\n{streams}" if streams else f"{head}, no output"


async def handler(args: Mapping[str, Any], context: ToolContext) -> BatchResult:
    """Run the commands in order; a timeout or cancellation skips the rest. The rows are
    announced first (``context.progress``), so a call the dispatcher stops at its own time
    limit still reports the commands that finished."""
    shell = shutil.which("bash") or "/bin/bash"
    labels = [_label(entry["command"]) for entry in args["commands"]]
    batch = context.progress.start(labels)
    stop: str | None = None
    for index, (entry, label) in enumerate(zip(args["commands"], labels, strict=True)):
        if stop is None and context.signal.cancelled:
            stop = "not run: the call was cancelled"
        if stop is not None:
            batch.skipped(label, stop)
            continue
        limit_ms = int(entry.get("timeout_ms", DEFAULT_TIMEOUT_MS))  # 2.0 is an integer too
        try:
            outcome = await run_command(
                [shell, "-c", entry["command"]],
                cwd=str(context.cwd),
                time_limit=limit_ms / 1000,
                signal=context.signal,
                limit=MAX_CAPTURE_BYTES,
            )
        except OSError as exc:
            batch.error(label, "spawn_failed", f"could not start {shell}: {exc.strerror or exc}")
            continue
        if outcome.status == "exited":
            batch.ok(label, _body(outcome))
        elif outcome.status == "timeout":
            batch.error(
                label,
                "timeout",
                f"timed out after {limit_ms / 1000:g} s; its process group was killed\n"
                + _body(outcome),
            )
            stop = f"not run: command {index + 1} timed out"
        else:
            batch.error(
                label, "cancelled", "cancelled; its process group was killed\n" + _body(outcome)
            )
            stop = f"not run: the call was cancelled during command {index + 1}"
    return batch
