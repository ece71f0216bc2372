"""What tools keep for the length of a session: :class:`SessionResources`.

A tool whose work outlives one call — ``builtin/process`` keeps the processes it started
across the turns of a session — stores its state here (``context.resources``), under a
key of its own, made on first use. The runtime makes one per open session and closes it
when the session's block ends, however it ends: every value is closed then, newest first,
so nothing a tool started outlives the session that started it. ``App.call_tool`` makes
one for its one call, closed when the call returns.

A value is closed by its ``aclose()`` (awaited) or ``close()`` method, whichever it has;
a failure to close one is logged and the others are still closed. After the close,
:meth:`SessionResources.get` raises :class:`RuntimeError`: a call that still runs then
(one abandoned by the dispatcher) cannot start anything that nobody would stop.
"""

from __future__ import annotations

import inspect
import logging
import threading
from collections.abc import Callable
from typing import Any, TypeVar

import anyio

__all__ = ["SessionResources"]

logger = logging.getLogger("raw_core.tools.resources")

T = TypeVar("T")


class SessionResources:
    """Per-session state that tools own, by key (a tool uses its identity, or a name
    under it: ``builtin/process``), closed when the session ends."""

    __slots__ = ("_closed", "_lock", "_values")

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._values: dict[str, Any] = {}
        self._closed = False

    @property
    def closed(self) -> bool:
        """Whether :meth:`aclose` has run."""
        return self._closed

    def get(self, key: str, make: Callable[[], T]) -> T:
        """The value kept under ``key``, made with ``make()`` on first use. Raises
        :class:`RuntimeError` once the resources are closed."""
        with self._lock:
            if self._closed:
                raise RuntimeError("the session's resources are closed: the session has ended")
            if key not in self._values:
                self._values[key] = make()
            value: T = self._values[key]
            return value

    async def aclose(self) -> None:
        """Close every value, newest first (shielded from cancellation: a session ending
        because it was cancelled still stops what its tools started). Idempotent."""
        with self._lock:
            if self._closed:
                return
            self._closed = True
            values = list(reversed(self._values.items()))
            self._values.clear()
        with anyio.CancelScope(shield=True):
            for key, value in values:
                try:
                    closer = getattr(value, "aclose", None)
                    if closer is not None:
                        outcome = closer()
                        if inspect.isawaitable(outcome):
                            await outcome
                        continue
                    closer = getattr(value, "close", None)
                    if closer is not None:
                        closer()
                except Exception:  # one value failing to close must not leave the others
                    logger.exception("closing the session resource %r failed", key)
