"""The result of a batch stopped at the handler's time limit or cancelled: what it had
done by then.

Spec 001, "Batch rules": a timeout or abort stops the running entry and skips the rest,
and each entry reports its own status. A handler that announced its entries
(``context.progress.start(labels)``) is stopped by the dispatcher before it can return its
batch, so the dispatcher reports it: the rows recorded by then as they are, the first
entry without a row as ``error (timeout)`` or ``error (cancelled)`` — it was running — and
every later one as ``skipped``. The call itself still ends as ``timeout`` or
``cancelled``; the rows follow its error line, under the same shared cap as any batch.
"""

from __future__ import annotations

import attrs

from raw_core.errors import RawError, Timeout
from raw_core.sessions.blocks import TextBlock
from raw_core.tools.progress import BatchProgress
from raw_core.tools.results import BatchResult, ToolResult

__all__ = ["stopped_batch"]


def stopped_batch(
    error: RawError,
    progress: BatchProgress,
    *,
    limit: float | None,
    effects: object,
    max_output_bytes: int,
) -> ToolResult | None:
    """The ``error`` result with the announced batch's rows, or None when the handler
    announced no entries (the call then ends as the plain error)."""
    labels, rows = progress.snapshot()
    if not labels:
        return None
    batch = BatchResult(entries=list(rows))
    running = len(rows)
    if running < len(labels):
        if isinstance(error, Timeout):
            within = f" of {limit:g} s" if limit is not None else ""
            stopped = f"the call reached its time limit{within}"
            stopped_skip = "the call reached its time limit"
        else:
            stopped = stopped_skip = "the call was cancelled"
        batch.error(labels[running], error.code, f"stopped: {stopped} while this entry ran")
        for label in labels[running + 1 :]:
            batch.skipped(label, f"not run: {stopped_skip} during entry {running + 1}")
    head = f"error [{error.code}]: {error.message}; each entry's row follows\n"
    room = max(max_output_bytes - len(head.encode("utf-8")), 0)
    model_text, full_text, truncated = batch.render(room)
    plain = ToolResult.from_error(error, effects=effects)
    return attrs.evolve(
        plain,
        content=(TextBlock(text=head + model_text),),
        full_content=(TextBlock(text=head + full_text),),
        truncated=truncated,
    )
