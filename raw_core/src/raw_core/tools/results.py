"""Tool results: content blocks, the error form, the shared size cap, and batches.

A handler returns ``{"content": [blocks]}`` (optionally with ``"is_error": true``) or a
:class:`BatchResult`. The dispatcher turns either into a :class:`ToolResult`: ``content`` is
what the model receives, capped at ``max_output_bytes`` with a visible marker, and
``full_content`` keeps the uncapped output for the terminal. Blocks are text
(``{"type": "text", "text"}``), JSON (``{"type": "json", "json"}``) or images
(``{"type": "image", "media_type", "data"}`` with base64 data), or a variable placeholder
(``{"type": "var", "name"}``: the agent loop puts the variable's value in only when it builds
a request, so the value is never stored). The cap counts the UTF-8 bytes of text and of JSON
as serialized; images and placeholders do not count.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping, Sequence
from typing import Any, Final, Literal

import attrs

from raw_core.errors import HandlerError, RawError
from raw_core.frozen import thaw

__all__ = [
    "DEFAULT_MAX_OUTPUT_BYTES",
    "IMAGE_MIME_TYPES",
    "BatchEntry",
    "BatchResult",
    "ToolResult",
    "cap_blocks",
    "normalize_content",
]

DEFAULT_MAX_OUTPUT_BYTES: Final = 8192
IMAGE_MIME_TYPES: Final = frozenset({"image/png", "image/jpeg", "image/gif", "image/webp"})

Block = Mapping[str, Any]
Status = Literal["ok", "error"]


@attrs.frozen(kw_only=True)
class ToolResult:
    """The outcome of one tool call, as the model and the user see it.

    ``status`` is ``"ok"`` or ``"error"``; an error has a stable ``code`` (see
    ``docs/reference/errors.md``) and ``message``. ``content`` is what the model receives;
    ``full_content`` is the output before the cap (equal to ``content`` when nothing was
    cut). ``effects`` are the call's intended effects when the tool declares them.
    """

    status: Status
    content: tuple[Block, ...]
    full_content: tuple[Block, ...]
    code: str | None = None
    message: str | None = None
    effects: Any = None
    truncated: bool = False
    details: Mapping[str, Any] = attrs.field(factory=dict)

    @property
    def is_error(self) -> bool:
        """Whether the call ended in an error."""
        return self.status == "error"

    @classmethod
    def from_error(cls, error: RawError, *, effects: Any = None) -> ToolResult:
        """The error result for ``error``: the model reads ``error [code]: message``."""
        block = ({"type": "text", "text": f"error [{error.code}]: {error.message}"},)
        details = {k: v for k, v in error.context.items() if k != "problems"}
        return cls(
            status="error",
            content=block,
            full_content=block,
            code=error.code,
            message=error.message,
            effects=effects,
            details=details,
        )

    def text(self) -> str:
        """The model's view as plain text: text blocks and serialized JSON, joined."""
        return "\n".join(
            _block_text(block) for block in self.content if block.get("type") in ("text", "json")
        )

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready: ``{status, code, content, effects}`` (a detached copy)."""
        return {
            "status": self.status,
            "code": self.code,
            "content": thaw(self.content),
            "effects": thaw(self.effects),
        }


def _block_text(block: Block) -> str:
    if block.get("type") == "text":
        return str(block["text"])
    return json.dumps(block.get("json"), ensure_ascii=False)


_LONE_SURROGATE: Final = re.compile("[\ud800-\udfff]")


def _has_surrogate(text: str) -> bool:
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return True
    return False


def _clean(text: str) -> str:
    """``text`` with each lone surrogate read as U+FFFD, so it can be encoded."""
    return _LONE_SURROGATE.sub("\ufffd", text) if _has_surrogate(text) else text


def _clean_json(value: Any, where: str) -> Any:
    """``value`` with every lone surrogate in its strings and keys read as U+FFFD; two keys
    of one object that become the same are refused rather than one silently dropped."""
    if isinstance(value, str):
        return _clean(value)
    if isinstance(value, Mapping):
        cleaned: dict[str, Any] = {}
        originals: dict[str, str] = {}
        for key, item in value.items():
            name = _clean(key)
            if name in cleaned:
                raise HandlerError(
                    f"{where}: the keys {originals[name]!r} and {key!r} both read as {name!r}"
                    " once their lone surrogates are replaced; rename one"
                )
            originals[name] = key
            cleaned[name] = _clean_json(item, f"{where}.{name}")
        return cleaned
    if isinstance(value, list | tuple):
        return [_clean_json(item, f"{where}[{i}]") for i, item in enumerate(value)]
    return value


def _check_block(block: Any, index: int) -> dict[str, Any]:
    where = f"content[{index}]"
    if type(block) is not dict and not isinstance(block, Mapping):
        raise HandlerError(f"{where} must be an object, found {type(block).__name__}")
    kind = block.get("type")
    if kind == "text":
        # exactly the keys "type" and "text" (counted: this runs for every result)
        if len(block) != 2 or "text" not in block or not isinstance(block["text"], str):
            raise HandlerError(f'{where}: a text block is {{"type": "text", "text": <string>}}')
        text = block["text"]
        if _has_surrogate(text):  # e.g. a file name os.fsdecode could not decode
            return {"type": "text", "text": _clean(text)}
    elif kind == "json":
        if set(block) != {"type", "json"}:
            raise HandlerError(f'{where}: a JSON block is {{"type": "json", "json": <value>}}')
        try:
            text = json.dumps(block["json"], allow_nan=False, ensure_ascii=False)
        except (TypeError, ValueError) as exc:
            raise HandlerError(f"{where}: the JSON block's value is not JSON: {exc}") from None
        if _has_surrogate(text):  # a string in it holds one, as a text block may
            return {"type": "json", "json": _clean_json(block["json"], f"{where}.json")}
    elif kind == "var":
        if set(block) != {"type", "name"} or not isinstance(block["name"], str):
            raise HandlerError(f'{where}: a variable block is {{"type": "var", "name": <name>}}')
    elif kind == "image":
        if (
            set(block) != {"type", "media_type", "data"}
            or not isinstance(block["data"], str)
            or block["media_type"] not in IMAGE_MIME_TYPES
        ):
            raise HandlerError(
                f'{where}: an image block is {{"type": "image", "media_type":'
                f' one of {sorted(IMAGE_MIME_TYPES)}, "data": <base64>}}'
            )
    else:
        raise HandlerError(
            f"{where}: unknown block type {kind!r}; expected text, json, image or var"
        )
    return dict(block)


def normalize_content(returned: Any) -> tuple[tuple[dict[str, Any], ...], bool]:
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
        raise HandlerError(f"the handler's result has unknown fields: {sorted(extra)}")
    content = returned["content"]
    if type(content) not in (list, tuple) and (
        not isinstance(content, Sequence) or isinstance(content, str | bytes)
    ):
        raise HandlerError("the handler's content must be a list of blocks")
    is_error = returned.get("is_error", False)
    if not isinstance(is_error, bool):
        raise HandlerError("is_error must be a boolean")
    return tuple(_check_block(block, i) for i, block in enumerate(content)), is_error


def _marker(shown: int, total: int) -> str:
    return (
        f"\n[output truncated: the model sees {shown} of {total} bytes; the full output"
        " is shown to the user]"
    )


def _cut_utf8(text: str, limit: int) -> str:
    """The longest prefix of ``text`` that is at most ``limit`` UTF-8 bytes."""
    return text.encode("utf-8")[: max(limit, 0)].decode("utf-8", "ignore")


def cap_blocks(blocks: Sequence[Block], max_bytes: int) -> tuple[tuple[Block, ...], bool]:
    """Cap text and JSON blocks to ``max_bytes`` in total; images pass unchanged.

    Returns ``(blocks, truncated)``. When cut, the kept text ends with a marker that says how
    much the model sees; JSON blocks that do not fit whole become text.
    """
    texts = [_block_text(b) if b.get("type") in ("text", "json") else "" for b in blocks]
    if sum(map(len, texts)) * 4 <= max_bytes:  # fits whatever the text: 4 bytes a char at most
        return tuple(blocks), False
    sizes = [len(text.encode("utf-8")) for text in texts]
    total = sum(sizes)
    if total <= max_bytes:
        return tuple(blocks), False
    budget = max_bytes
    shown = 0
    out: list[Block] = []
    for block, text, size in zip(blocks, texts, sizes, strict=True):
        if block.get("type") not in ("text", "json"):
            out.append(block)
        elif size <= budget:
            out.append(block)
            budget -= size
            shown += size
        elif budget > 0:
            cut = _cut_utf8(text, budget)  # may keep less than the budget: whole characters
            out.append({"type": "text", "text": cut})
            budget = 0
            shown += len(cut.encode("utf-8"))
    out.append({"type": "text", "text": _marker(shown, total)})
    return tuple(out), True


LABEL_BYTES = 200
"""The most bytes of a row's label the model text shows once a batch is over its cap."""


@attrs.frozen(kw_only=True)
class BatchEntry:
    """One row of a batch: its label, status, and body (the output, or the error message)."""

    label: str = attrs.field(converter=_clean)  # a lone surrogate reads as U+FFFD
    status: Literal["ok", "error", "skipped"]
    body: str = attrs.field(default="", converter=_clean)
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
            label = _cut_utf8(label, label_bytes) + "…"
        return f"[{index + 1}/{len(self.entries)}] {status}: {label}\n"

    def render(self, max_bytes: int) -> tuple[str, str, bool]:
        """Return ``(model_text, full_text, truncated)`` under a shared cap of ``max_bytes``.

        The full text keeps every label and body whole. The model text counts headers
        against the cap too: a label longer than ``LABEL_BYTES`` is cut with ``…``, and when
        the headers alone would overrun the cap, rows are shown until it is used and one
        marker counts the rest, so a batch of many long labels cannot flood the context.
        """
        bodies = [
            e.body if not e.body or e.body.endswith("\n") else e.body + "\n" for e in self.entries
        ]
        rows = enumerate(zip(self.entries, bodies, strict=True))
        full = "".join(self._header(i, entry) + body for i, (entry, body) in rows)
        if len(full.encode("utf-8")) <= max_bytes:
            return full, full, False
        headers = [self._header(i, e, label_bytes=LABEL_BYTES) for i, e in enumerate(self.entries)]
        header_sizes = [len(h.encode("utf-8")) for h in headers]
        if sum(header_sizes) > max_bytes:
            return self._render_headers_only(headers, header_sizes, max_bytes), full, True
        sizes = [len(b.encode("utf-8")) for b in bodies]
        shares = _fair_shares(sizes, max_bytes - sum(header_sizes))
        parts = []
        for header, body, size, share in zip(headers, bodies, sizes, shares, strict=True):
            parts.append(header)
            if share >= size:
                parts.append(body)
            else:
                parts.append(_cut_utf8(body, share))
                parts.append(f"[... {size - share} more bytes of this entry truncated]\n")
        return "".join(parts), full, True

    def _render_headers_only(self, headers: list[str], sizes: list[int], max_bytes: int) -> str:
        """Show as many headers as fit in ``max_bytes``, then say how many rows were left out."""
        shown: list[str] = []
        budget = max_bytes
        for header, size in zip(headers, sizes, strict=True):
            if size > budget:
                break
            shown.append(header)
            budget -= size
        hidden = len(headers) - len(shown)
        shown.append(f"[... {hidden} more rows not shown: the output cap is {max_bytes} bytes]\n")
        return "".join(shown)


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
