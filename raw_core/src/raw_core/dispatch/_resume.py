"""Driving a coroutine on from its first suspension, so that a call's time limit costs a
timer only when the call waits.

Setting a cancel scope's deadline schedules a timer on the event loop and cancelling it
again, which costs about as much as a whole call of a handler that answers at once (most
handlers of an in-process tool). Such a handler cannot be stopped anyway: nothing else
runs until it yields. So :func:`~raw_core.dispatch._support.guard` enters the call's
scope without a deadline, runs the coroutine's first step itself, and sets the deadline
only when the coroutine yields; :func:`resume` then hands what it yielded to the event
loop and drives the rest, as ``await`` (``yield from``) would. The scope is entered
before the first step, so the scopes the coroutine enters nest inside it as they would
under a plain ``await``.
"""

from __future__ import annotations

import types
from collections.abc import Coroutine, Generator
from typing import Any

__all__ = ["resume"]


@types.coroutine
def resume(coroutine: Coroutine[Any, Any, Any], yielded: Any) -> Generator[Any, Any, Any]:
    """Await the rest of ``coroutine``, which has just yielded ``yielded`` to its event
    loop: what the loop sends or throws goes on to the coroutine, what the coroutine
    yields goes back to the loop, and what it returns is the result."""
    while True:
        try:
            sent = yield yielded
        except GeneratorExit:
            coroutine.close()
            raise
        except BaseException as exc:  # the loop's cancellation, among others
            try:
                yielded = coroutine.throw(exc)
            except StopIteration as stop:
                return stop.value
        else:
            try:
                yielded = coroutine.send(sent)
            except StopIteration as stop:
                return stop.value
