"""Run synchronous code that may hang off the event loop: sync handlers, and the effect
descriptors of tools outside raw.

A thread cannot be interrupted, so a cancelled or timed-out call abandons its thread and
ends at once. anyio's worker threads are not daemon threads: the interpreter joins them
at exit, so one function that never returns would keep the program alive long after its
call ended (and hold one of anyio's limited tokens for good). Such code runs here instead,
in daemon threads of raw's own: a late function is abandoned, not waited for, and it
neither keeps the process from exiting nor takes a thread from anyone else. Threads are
reused, since starting one costs the event loop more than handing work to an idle one; a
function that hangs keeps its thread, and the next call starts a new one. At most
:data:`MAX_IDLE` idle threads are kept.
"""

from __future__ import annotations

import contextvars
import os
import queue
import threading
from collections.abc import Callable
from typing import Any, Final, TypeVar

import anyio
import anyio.from_thread
import anyio.lowlevel

__all__ = ["MAX_IDLE", "call_in_daemon"]

T = TypeVar("T")

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


async def call_in_daemon(function: Callable[..., T], *args: Any, name: str) -> T:
    """``function(*args)`` in a daemon thread (named ``name`` while it runs), with the
    caller's context variables; what it raises is raised here (any
    :class:`BaseException`: the caller decides what it means).

    The wait is an ordinary await: when the caller is cancelled (its signal, its deadline)
    the wait ends at once, the thread runs on until the function returns, its late outcome
    is dropped, and the interpreter does not wait for it at exit.
    """
    token = anyio.lowlevel.current_token()
    context = contextvars.copy_context()
    done = anyio.Event()
    outcome: list[tuple[bool, Any]] = []

    def job() -> None:
        threading.current_thread().name = name
        try:
            outcome.append((True, context.run(function, *args)))
        except BaseException as exc:  # handed to the waiting call, never lost in a thread
            outcome.append((False, exc))
        try:
            anyio.from_thread.run_sync(done.set, token=token)
        except RuntimeError:  # the event loop has finished: nobody waits any more
            pass

    _submit(job, name)
    await done.wait()
    returned, value = outcome[0]
    if not returned:
        raise value
    return value  # type: ignore[no-any-return]
