"""Run untrusted synchronous code off the event loop, and wait for it at most so long.

anyio's worker threads are not daemon threads, and a function that never returns would
hold one of its limited tokens for good. Code that may hang (an effect descriptor of a
tool outside raw) runs here instead, in daemon threads of raw's own: a late function is
abandoned, not waited for, and it neither keeps the process from exiting nor takes a
thread from anyone else. Threads are reused, since starting one costs the event loop
more than handing work to an idle one; a function that hangs keeps its thread, and the
next call starts a new one. At most :data:`MAX_IDLE` idle threads are kept.
"""

from __future__ import annotations

import math
import os
import queue
import threading
from collections.abc import Callable
from typing import Any, Final

import anyio
import anyio.from_thread
import anyio.lowlevel

from raw_core.tools.calls import CancellationSignal

__all__ = ["MAX_IDLE", "run_in_daemon"]

MAX_IDLE: Final = 4
"""How many idle daemon threads are kept for reuse."""

Job = Callable[[], None]

_idle: list[queue.SimpleQueue[Job]] = []
_lock = threading.Lock()
# A forked child has none of its parent's threads: their queues would never be served.
os.register_at_fork(after_in_child=_idle.clear)


def _serve(jobs: queue.SimpleQueue[Job]) -> None:
    """A daemon thread's life: run a job, offer itself again, or end when enough wait."""
    while True:
        jobs.get()()
        with _lock:
            if len(_idle) >= MAX_IDLE:
                return
            _idle.append(jobs)


def _submit(job: Job, name: str) -> None:
    with _lock:
        jobs = _idle.pop() if _idle else None
    if jobs is None:
        jobs = queue.SimpleQueue()
        threading.Thread(target=_serve, args=(jobs,), name=name, daemon=True).start()
    jobs.put(job)


async def run_in_daemon(
    function: Callable[[], Any],
    *,
    limit: float | None,
    signal: CancellationSignal,
    name: str = "raw daemon worker",
) -> tuple[bool, Any]:
    """``(True, function())`` from a daemon thread; ``(False, None)`` when ``limit``
    seconds (None: no limit) pass or ``signal`` fires first. What ``function`` raises is
    raised here (any :class:`BaseException`: the caller decides what it means)."""
    token = anyio.lowlevel.current_token()
    done = anyio.Event()
    outcome: list[tuple[bool, Any]] = []

    def job() -> None:
        try:
            outcome.append((True, function()))
        except BaseException as exc:  # handed to the waiting call, never lost in a thread
            outcome.append((False, exc))
        try:
            anyio.from_thread.run_sync(done.set, token=token)
        except RuntimeError:  # the event loop has finished: nobody waits any more
            pass

    _submit(job, name)
    deadline = anyio.current_time() + limit if limit is not None else math.inf
    with signal.cancel_scope(deadline):
        await done.wait()
    if not outcome:
        return False, None
    returned, value = outcome[0]
    if not returned:
        raise value
    return True, value
