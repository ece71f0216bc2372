"""Tool results: the result record, the error form, the shared size cap, and batches.

A handler returns ``{"content": [blocks]}`` (optionally with ``"is_error": true``) or a
:class:`BatchResult`. The dispatcher turns either into a :class:`ToolResult` whose blocks
are the records of :mod:`raw_core.sessions.blocks`: ``content`` is what the model receives,
capped at ``max_output_bytes`` with a visible marker, and ``full_content`` keeps the
uncapped output for the terminal.

The cap is a hard cap: the model's copy, markers included, is at most ``max_output_bytes``
as :func:`model_bytes` counts it — the UTF-8 bytes of text, of JSON as serialized, and
:data:`IMAGE_BLOCK_BYTES` for each image whatever its size (a model reads an image by its
pixels, not by the bytes of its base64 text). A variable placeholder counts nothing: the
agent loop puts the variable's value in only when it builds a request, and its size is the
user's choice, not the tool's.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any, Final, Literal

import attrs

from raw_core.errors import HandlerError, RawError
from raw_core.frozen import thaw
from raw_core.sessions.blocks import (
    IMAGE_MIME_TYPES,
    BlockInvalid,
    ContentBlock,
    ImageBlock,
    JsonBlock,
    TextBlock,
    block_from_dict,
    block_text,
    block_to_dict,
    clean_text,
    cut_utf8,
)

if TYPE_CHECKING:  # the session records: a result carries panel updates, made elsewhere
    from raw_core.sessions.backend import PanelUpdate

__all__ = [
    "DEFAULT_MAX_OUTPUT_BYTES",
    "IMAGE_BLOCK_BYTES",
    "IMAGE_MIME_TYPES",
    "BatchEntry",
    "BatchResult",
    "ToolResult",
    "cap_blocks",
    "model_bytes",
    "normalize_content",
]

DEFAULT_MAX_OUTPUT_BYTES: Final = 8192
IMAGE_BLOCK_BYTES: Final = 1024
"""What one image block counts toward the result cap."""

Status = Literal["ok", "error"]


@attrs.frozen(kw_only=True)
class ToolResult:
    """The outcome of one tool call, as the model and the user see it.

    ``status`` is ``"ok"`` or ``"error"``; an error has a stable ``code`` (see
    ``docs/reference/errors.md``) and ``message``. ``content`` is what the model receives;
    ``full_content`` is the output before the cap (equal to ``content`` when nothing was
    cut). ``effects`` are the call's intended effects when the tool declares them.
    ``panels`` are the call's panel updates, accepted and rejected (the model's content
    ends with a short note of them, never with a document).
    """

    status: Status
    content: tuple[ContentBlock, ...]
    full_content: tuple[ContentBlock, ...]
    code: str | None = None
    message: str | None = None
    effects: Any = None
    truncated: bool = False
    details: Mapping[str, Any] = attrs.field(factory=dict)
    panels: tuple[PanelUpdate, ...] = ()

    @property
    def is_error(self) -> bool:
        """Whether the call ended in an error."""
        return self.status == "error"

    @classmethod
    def withheld(
        cls,
        tool_name: str,
        error: RawError,
        *,
        by: str,
        why: str | None = None,
        effects: Any = None,
    ) -> ToolResult:
        """The result in place of one that ``by`` (``"a hook"``, ``"a plug-in"``) withheld
        after the tool ran: the model reads ``<tool> ran, and <by> withheld its result:
        <why>`` (by default the error's text for the model), the host the same with the
        error's whole message. Nothing the tool did is undone."""
        said = "{} ran, and {} withheld its result: {}"
        return cls(
            status="error",
            code=error.code,
            message=error.message,
            content=(TextBlock(text=said.format(tool_name, by, why or error.model_message)),),
            full_content=(TextBlock(text=said.format(tool_name, by, error.message)),),
            effects=effects,
            details=dict(error.context),
        )

    @classmethod
    def from_error(cls, error: RawError, *, effects: Any = None) -> ToolResult:
        """The error result for ``error``. The model reads ``error [code]: <text>`` with
        the error's :attr:`~raw_core.errors.RawError.model_message` (no host-side text:
        no identity, rule or approval text); ``full_content`` and ``message`` keep the
        whole message for the host."""
        host = (TextBlock(text=f"error [{error.code}]: {error.message}"),)
        model = error.model_message
        block = (
            host if model == error.message else (TextBlock(text=f"error [{error.code}]: {model}"),)
        )
        details = {k: v for k, v in error.context.items() if k != "problems"}
        return cls(
            status="error",
            content=block,
            full_content=host,
            code=error.code,
            message=error.message,
            effects=effects,
            details=details,
        )

    def capped(self, max_bytes: int) -> ToolResult:
        """This result with ``content`` under the cap (itself when it already is)."""
        content, truncated = cap_blocks(self.content, max_bytes)
        if not truncated:
            return self
        return attrs.evolve(self, content=content, truncated=True)

    def text(self) -> str:
        """The model's view as plain text: text blocks and serialized JSON, joined."""
        return "\n".join(text for text in map(block_text, self.content) if text is not None)

    def full_text(self) -> str:
        """The user's view (before the cap) as plain text, joined as :meth:`text` is."""
        return "\n".join(text for text in map(block_text, self.full_content) if text is not None)

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready: ``{status, code, content, effects, panels}`` (a detached copy);
        ``panels`` lists the call's panel updates (:meth:`PanelUpdate.to_dict`)."""
        return {
            "status": self.status,
            "code": self.code,
            "content": [block_to_dict(block) for block in self.content],
            "effects": thaw(self.effects),
            "panels": [update.to_dict() for update in self.panels],
        }


def normalize_content(returned: Any) -> tuple[tuple[ContentBlock, ...], bool]:
    """Check a handler's ``{"content": [...], "is_error"?}``; return ``(blocks, is_error)``.

    Raises :class:`~raw_core.errors.HandlerError` naming what is wrong.
    """
    if (type(returned) is not dict and not isinstance(returned, Mapping)) or (
        "content" not in returned
    ):
        raise HandlerError(
            'the handler must return {"content": [blocks]} or a BatchResult,'
            f" found {type(returned).__name__}"
        )
    extra = set(returned) - {"content", "is_error"} if len(returned) > 1 else ()
    if extra:
        listed = ", ".join(f'"{name}"' for name in sorted(extra))
        raise HandlerError(f"the handler's result has unknown fields: {listed}")
    content = returned["content"]
    if type(content) not in (list, tuple) and (
        not isinstance(content, Sequence) or isinstance(content, str | bytes)
    ):
        raise HandlerError("the handler's content must be a list of blocks")
    is_error = returned.get("is_error", False)
    if not isinstance(is_error, bool):
        raise HandlerError("is_error must be a boolean")
    try:
        blocks = tuple(block_from_dict(block, f"content[{i}]") for i, block in enumerate(content))
    except BlockInvalid as exc:
        raise HandlerError(str(exc)) from None
    return blocks, is_error


# --- the cap -----------------------------------------------------------------------------


def _size(block: ContentBlock) -> int:
    if isinstance(block, TextBlock):
        text = block.text
        return len(text) if text.isascii() else len(text.encode("utf-8"))
    if isinstance(block, JsonBlock):
        text = block.json_text
        return len(text) if text.isascii() else len(text.encode("utf-8"))
    if isinstance(block, ImageBlock):
        return IMAGE_BLOCK_BYTES
    return 0


def model_bytes(blocks: Sequence[ContentBlock]) -> int:
    """What ``blocks`` count toward the result cap (see the module's docstring)."""
    return sum(map(_size, blocks))


def _marker(shown: int, total: int, room: int) -> str:
    """The longest of the truncation markers that fits in ``room`` bytes (cut to it when
    none does): the model always learns that it received less."""
    for marker in (
        f"\n[output truncated: the model sees {shown} of {total} bytes; the full output"
        " is shown to the user]",
        f"\n[truncated: {shown} of {total} bytes shown]",
        "\n[truncated]",
    ):
        if len(marker) <= room:
            return marker
    return "[truncated]"[: max(room, 0)]


def cap_blocks(
    blocks: Sequence[ContentBlock], max_bytes: int
) -> tuple[tuple[ContentBlock, ...], bool]:
    """Cap ``blocks`` to ``max_bytes`` in total, the marker included.

    Returns ``(blocks, truncated)``. When cut, the kept blocks are followed by a text block
    that says how much the model sees; a text or JSON block that does not fit whole is cut
    to text, and an image that does not fit whole is left out.
    """
    total = model_bytes(blocks)
    if total <= max_bytes:
        return tuple(blocks), False
    # Room for the marker first, sized for the largest numbers it can show.
    room = len(_marker(total, total, max_bytes // 4 if max_bytes >= 400 else max_bytes * 2 // 3))
    budget = max(max_bytes - room, 0)
    shown = 0
    out: list[ContentBlock] = []
    for block in blocks:
        size = _size(block)
        if size <= budget:
            out.append(block)
            budget -= size
            shown += size
        elif budget > 0 and isinstance(block, TextBlock | JsonBlock):
            text = block_text(block) or ""
            cut = cut_utf8(text, budget)  # may keep less than the budget: whole characters
            if cut:
                out.append(TextBlock(text=cut))
                used = len(cut.encode("utf-8"))
                budget -= used
                shown += used
    out.append(TextBlock(text=_marker(shown, total, max_bytes - shown)))
    return tuple(out), True


LABEL_BYTES = 200
"""The most bytes of a row's label the model text shows once a batch is over its cap."""


@attrs.frozen(kw_only=True)
class BatchEntry:
    """One row of a batch: its label, status, and body (the output, or the error message)."""

    label: str = attrs.field(converter=clean_text)  # a lone surrogate reads as U+FFFD
    status: Literal["ok", "error", "skipped"]
    body: str = attrs.field(default="", converter=clean_text)
    code: str | None = None


@attrs.define
class BatchResult:
    """A batch tool's result, built row by row; the dispatcher renders it under one cap.

    Every row keeps its header (index, status, label, the label cut to ``LABEL_BYTES``) as
    long as the headers fit the cap; the remaining bytes are shared fairly among the rows'
    bodies, so one large output cannot hide the others.
    """

    entries: list[BatchEntry] = attrs.field(factory=list)

    def ok(self, label: str, body: str = "") -> None:
        """Record a row that succeeded."""
        self.entries.append(BatchEntry(label=label, status="ok", body=body))

    def error(self, label: str, code: str, message: str) -> None:
        """Record a row that failed with a stable ``code``."""
        self.entries.append(BatchEntry(label=label, status="error", body=message, code=code))

    def skipped(self, label: str, reason: str) -> None:
        """Record a row that did not run."""
        self.entries.append(BatchEntry(label=label, status="skipped", body=reason))

    def _header(self, index: int, entry: BatchEntry, *, label_bytes: int | None = None) -> str:
        status = f"error ({entry.code})" if entry.code else entry.status
        label = entry.label
        if label_bytes is not None and len(label.encode("utf-8")) > label_bytes:
            label = cut_utf8(label, label_bytes) + "…"
        return f"[{index + 1}/{len(self.entries)}] {status}: {label}\n"

    def render(self, max_bytes: int) -> tuple[str, str, bool]:
        """Return ``(model_text, full_text, truncated)`` under a shared cap of ``max_bytes``.

        The full text keeps every label and body whole. The model text is at most
        ``max_bytes``, every marker included: a label longer than ``LABEL_BYTES`` is cut
        with ``…``, a body cut to its share ends with a note of how much was left out, and
        when the headers alone would overrun the cap, rows are shown until it is used and
        one marker counts the rest, so a batch of many long labels cannot flood the context.
        """
        bodies = [
            e.body if not e.body or e.body.endswith("\n") else e.body + "\n" for e in self.entries
        ]
        rows = enumerate(zip(self.entries, bodies, strict=True))
        full = "".join(self._header(i, entry) + body for i, (entry, body) in rows)
        if _utf8_len(full) <= max_bytes:
            return full, full, False
        headers = [self._header(i, e, label_bytes=LABEL_BYTES) for i, e in enumerate(self.entries)]
        shared = _render_shared(headers, bodies, max_bytes)
        if shared is None:
            shared = _render_headers_only(headers, max_bytes)
        return shared, full, True


def _utf8_len(text: str) -> int:
    return len(text) if text.isascii() else len(text.encode("utf-8"))


def _cut_note(left_out: int) -> str:
    return f"\n[... {left_out} more bytes of this row cut]\n"


def _render_shared(headers: list[str], bodies: list[str], max_bytes: int) -> str | None:
    """Every header, and the bytes left shared fairly among the bodies; each body cut to
    its share ends with a note, counted in its share. ``None`` when the headers and the
    notes do not fit."""
    sizes = [_utf8_len(body) for body in bodies]
    budget = max_bytes - sum(map(_utf8_len, headers))
    cut: set[int] = set()
    while True:  # the notes of the bodies that are cut come out of the budget first
        left = budget - sum(len(_cut_note(sizes[i])) for i in cut)
        if left < 0:
            return None
        shares = _fair_shares(sizes, left)
        more = {
            i for i, (size, share) in enumerate(zip(sizes, shares, strict=True)) if share < size
        }
        if more <= cut:
            break
        cut |= more
    parts = []
    for header, body, size, share in zip(headers, bodies, sizes, shares, strict=True):
        parts.append(header)
        if share >= size:
            parts.append(body)
            continue
        kept = cut_utf8(body, share)  # its note's bytes were reserved above
        parts.append(kept)
        parts.append(_cut_note(size - _utf8_len(kept)))
    return "".join(parts)


def _render_headers_only(headers: list[str], max_bytes: int) -> str:
    """As many headers as fit in ``max_bytes`` with the marker that says how many rows were
    left out (the marker alone, cut to the cap, when not even it fits)."""

    def marker(hidden: int) -> str:
        if hidden == 0:  # every header fits, but not the bodies with their notes
            return f"[... the rows' output is not shown: the output cap is {max_bytes} bytes]\n"
        return f"[... {hidden} more rows not shown: the output cap is {max_bytes} bytes]\n"

    room = max(len(marker(len(headers))), len(marker(0)))
    budget = max_bytes - room
    if budget < 0:
        return cut_utf8(marker(len(headers)), max_bytes)
    shown: list[str] = []
    for header in headers:
        size = _utf8_len(header)
        if size > budget:
            break
        shown.append(header)
        budget -= size
    return "".join(shown) + marker(len(headers) - len(shown))


def _fair_shares(sizes: list[int], budget: int) -> list[int]:
    """Split ``budget`` among ``sizes``: small ones whole, the rest an equal share (water-fill)."""
    shares = [0] * len(sizes)
    pending = sorted(range(len(sizes)), key=lambda i: sizes[i])
    remaining = budget
    while pending:
        share = remaining // len(pending)
        index = pending[0]
        if sizes[index] <= share:
            shares[index] = sizes[index]
            remaining -= sizes[index]
            pending.pop(0)
        else:
            for i in pending:
                shares[i] = share
            break
    return shares
