"""Running a synchronous handler in a thread that cannot keep the process alive.

A thread cannot be interrupted, so a cancelled or timed-out call abandons its handler's
thread and the call ends at once. anyio's worker threads (``anyio.to_thread``) are not
daemon threads: the interpreter joins them when it exits, so one handler that never
returns would keep the program from exiting long after its call ended. Each synchronous
handler therefore runs in a daemon thread of its own, which the interpreter does not wait
for; its outcome comes back to the event loop through a blocking portal.
"""

from __future__ import annotations

import contextvars
import threading
from collections.abc import Callable
from typing import Any, TypeVar

import anyio
from anyio.from_thread import BlockingPortal

__all__ = ["run_in_daemon_thread"]

T = TypeVar("T")


async def run_in_daemon_thread(function: Callable[..., T], *args: Any, name: str) -> T:
    """Call ``function(*args)`` in a new daemon thread named ``name`` and return what it
    returns (or raise what it raises), with the caller's context variables.

    When the caller is cancelled the wait ends at once: the thread runs on until the
    function returns, its late outcome is dropped, and the interpreter does not wait for
    it at exit.
    """
    outcome: list[tuple[bool, Any]] = []
    context = contextvars.copy_context()
    async with BlockingPortal() as portal:
        done = anyio.Event()

        def work() -> None:
            try:
                outcome.append((True, context.run(function, *args)))
            except BaseException as exc:  # handed to the caller, who raises it
                outcome.append((False, exc))
            try:
                portal.start_task_soon(done.set)
            except RuntimeError:  # the caller stopped waiting: nobody reads the outcome
                pass

        threading.Thread(target=work, name=name, daemon=True).start()
        await done.wait()
    succeeded, value = outcome[0]
    if not succeeded:
        raise value
    return value  # type: ignore[no-any-return]
