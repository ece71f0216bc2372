"""What a batch handler has done so far, readable before the handler returns.

A batch tool that names its entries up front (``context.progress.start(labels)``) gets the
:class:`~raw_core.tools.results.BatchResult` to fill as usual. When the dispatcher stops the
call at its time limit, the handler never returns that batch; the dispatcher then reads the
rows recorded so far from here, so the model still learns which entries ran (spec 001,
"Batch rules": a timeout stops the running entry and skips the rest).
"""

from __future__ import annotations

import threading
from collections.abc import Sequence

from raw_core.tools.results import BatchEntry, BatchResult

__all__ = ["BatchProgress"]


class BatchProgress:
    """One call's announced batch: the labels of its entries, in order, and its rows.

    Each :class:`~raw_core.tools.calls.ToolContext` has its own. A handler calls
    :meth:`start` once, before it runs any entry, and records each entry's row in the
    returned batch as the entry finishes, in order. A sync handler in a worker thread may
    record rows while the dispatcher reads a :meth:`snapshot`.
    """

    __slots__ = ("_batch", "_labels", "_lock")

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._labels: tuple[str, ...] | None = None
        self._batch: BatchResult | None = None

    def start(self, labels: Sequence[str]) -> BatchResult:
        """Announce the entries' ``labels`` and return the batch to record their rows in.

        Raises :class:`RuntimeError` when called a second time for the same call.
        """
        with self._lock:
            if self._batch is not None:
                raise RuntimeError("context.progress.start was already called for this call")
            self._labels = tuple(labels)
            self._batch = BatchResult()
            return self._batch

    @property
    def started(self) -> bool:
        """Whether the handler announced a batch."""
        return self._batch is not None

    def snapshot(self) -> tuple[tuple[str, ...], tuple[BatchEntry, ...]]:
        """``(labels, rows)``: the announced labels and the rows recorded by now (both
        empty when nothing was announced)."""
        with self._lock:
            if self._batch is None or self._labels is None:
                return (), ()
            return self._labels, tuple(self._batch.entries)
