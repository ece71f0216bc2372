"""What a call's panel updates add to its result: the short note the model reads of them
and the updates themselves, which travel with the result (errors and withheld results
included; spec 000, "Updates").

The note is part of the model's copy, so it counts in the hard result cap: the tool's
content, then the PostToolUse hooks' lines with it, get what the note leaves, and the note
itself gets at most half the cap.
"""

from __future__ import annotations

import attrs

from raw_core.sessions.blocks import TextBlock, cut_utf8
from raw_core.tools.panels import CallPanels, panel_notes
from raw_core.tools.results import ToolResult

__all__ = ["call_note", "with_panels"]


def call_note(panels: CallPanels | None, max_output_bytes: int) -> str:
    """What the model reads of the call's panel updates (empty when it made none), at most
    half of ``max_output_bytes``."""
    if panels is None or (not panels.updates and not panels.unrecorded):
        return ""
    note = panel_notes(panels.updates, panels.rejected_lines, panels.unrecorded)
    return cut_utf8(note, max_output_bytes // 2) if note else ""


def with_panels(result: ToolResult, panels: CallPanels, note: str) -> ToolResult:
    """``result`` with the call's panel updates, and the model's note of them last."""
    extra = (TextBlock(text=note),) if note else ()
    return attrs.evolve(
        result,
        content=result.content + extra,
        full_content=result.full_content + extra,
        panels=panels.updates,
    )
