"""The block catalog of panel documents (``raw.panel/2``): one versioned catalog for both
placements, each block with a JSON Schema.

A panel document is ``{"blocks": [block, ...]}``; each block is an object whose ``type``
names its entry in :data:`BLOCK_SCHEMAS`:

* ``text``: Markdown text;
* ``checklist``: items, each with a status (``pending``, ``in_progress``, ``done``); what
  ``builtin/todo`` and ACP plans use;
* ``form``: a request for input with text, single-select and multi-select fields, and a
  submit and a cancel action (which never grant a tool permission);
* ``mermaid``: a diagram with its source (shown as text where it cannot be drawn).

:func:`check_document` checks a document against the catalog and the size limit. The
schemas are data (``docs/reference/panel-blocks.md`` prints them; a test keeps the two
equal); the few rules a schema cannot say (unique field ids, a default among the options)
are checked beside them.
"""

from __future__ import annotations

import functools
import json
from collections.abc import Mapping
from typing import Any, Final

from raw_core.errors import PanelInvalid, PanelTooLarge
from raw_core.sessions.records import document_json
from raw_core.tools._schema import (
    SchemaValidationError,
    SchemaValidator,
    compile_schema,
    prepare_schema,
)

__all__ = [
    "BLOCK_SCHEMAS",
    "CATALOG_VERSION",
    "CHECKLIST_STATUSES",
    "DOCUMENT_SCHEMA",
    "MAX_DOCUMENT_BYTES",
    "PANEL_API",
    "check_document",
    "document_bytes",
]

PANEL_API: Final = "raw.panel/2"
CATALOG_VERSION: Final = 1
"""The version of the block catalog; a release that adds a block or a field raises it."""
MAX_DOCUMENT_BYTES: Final = 64 * 1024
"""The largest document: its compact JSON text, in UTF-8 bytes."""
CHECKLIST_STATUSES: Final = ("pending", "in_progress", "done")

_ID: Final = {"type": "string", "pattern": "^[a-z][a-z0-9_-]{0,63}$"}
_LABEL: Final = {"type": "string", "minLength": 1, "maxLength": 200}
_ACTION: Final = {
    "type": "object",
    "properties": {"label": _LABEL},
    "required": ["label"],
    "additionalProperties": False,
}
_OPTIONS: Final = {
    "type": "array",
    "minItems": 1,
    "maxItems": 64,
    "items": {
        "type": "object",
        "properties": {"value": {"type": "string", "minLength": 1}, "label": _LABEL},
        "required": ["value", "label"],
        "additionalProperties": False,
    },
}

BLOCK_SCHEMAS: Final[Mapping[str, Mapping[str, Any]]] = {
    "text": {
        "type": "object",
        "properties": {"type": {"const": "text"}, "text": {"type": "string"}},
        "required": ["type", "text"],
        "additionalProperties": False,
    },
    "checklist": {
        "type": "object",
        "properties": {
            "type": {"const": "checklist"},
            "title": {"type": "string"},
            "items": {
                "type": "array",
                "items": {
                    "type": "object",
                    "properties": {
                        "text": {"type": "string", "minLength": 1},
                        "status": {"enum": list(CHECKLIST_STATUSES)},
                    },
                    "required": ["text", "status"],
                    "additionalProperties": False,
                },
            },
        },
        "required": ["type", "items"],
        "additionalProperties": False,
    },
    "form": {
        "type": "object",
        "properties": {
            "type": {"const": "form"},
            "title": {"type": "string"},
            "fields": {
                "type": "array",
                "minItems": 1,
                "maxItems": 32,
                "items": {
                    "type": "object",
                    "properties": {"type": {"enum": ["text", "single_select", "multi_select"]}},
                    "required": ["type"],
                    "allOf": [
                        {
                            "if": {"properties": {"type": {"const": "text"}}},
                            "then": {
                                "properties": {
                                    "type": {"const": "text"},
                                    "id": _ID,
                                    "label": _LABEL,
                                    "placeholder": {"type": "string"},
                                    "multiline": {"type": "boolean"},
                                    "required": {"type": "boolean"},
                                    "default": {"type": "string"},
                                },
                                "required": ["id", "label"],
                                "additionalProperties": False,
                            },
                        },
                        {
                            "if": {"properties": {"type": {"const": "single_select"}}},
                            "then": {
                                "properties": {
                                    "type": {"const": "single_select"},
                                    "id": _ID,
                                    "label": _LABEL,
                                    "options": _OPTIONS,
                                    "required": {"type": "boolean"},
                                    "default": {"type": "string"},
                                },
                                "required": ["id", "label", "options"],
                                "additionalProperties": False,
                            },
                        },
                        {
                            "if": {"properties": {"type": {"const": "multi_select"}}},
                            "then": {
                                "properties": {
                                    "type": {"const": "multi_select"},
                                    "id": _ID,
                                    "label": _LABEL,
                                    "options": _OPTIONS,
                                    "min_selected": {"type": "integer", "minimum": 0},
                                    "max_selected": {"type": "integer", "minimum": 1},
                                    "default": {"type": "array", "items": {"type": "string"}},
                                },
                                "required": ["id", "label", "options"],
                                "additionalProperties": False,
                            },
                        },
                    ],
                },
            },
            "submit": _ACTION,
            "cancel": _ACTION,
        },
        "required": ["type", "fields"],
        "additionalProperties": False,
    },
    "mermaid": {
        "type": "object",
        "properties": {
            "type": {"const": "mermaid"},
            "title": {"type": "string"},
            "source": {"type": "string", "minLength": 1},
        },
        "required": ["type", "source"],
        "additionalProperties": False,
    },
}
"""Each block type's JSON Schema (draft-07)."""

DOCUMENT_SCHEMA: Final[Mapping[str, Any]] = {
    "type": "object",
    "properties": {"blocks": {"type": "array", "items": {"type": "object"}}},
    "required": ["blocks"],
    "additionalProperties": False,
}
"""A document: ``{"blocks": [...]}``, each block checked by its own schema."""

_KINDS: Final = ", ".join(f'"{kind}"' for kind in BLOCK_SCHEMAS)


@functools.cache
def _validators() -> tuple[SchemaValidator, dict[str, SchemaValidator]]:
    """The compiled document and block schemas (compiled when first needed: a process
    that never updates a panel never pays for them)."""
    blocks = {kind: compile_schema(prepare_schema(s)) for kind, s in BLOCK_SCHEMAS.items()}
    return compile_schema(prepare_schema(DOCUMENT_SCHEMA)), blocks


def document_bytes(document: Any) -> int:
    """The size a document counts toward :data:`MAX_DOCUMENT_BYTES`: its compact JSON as
    stored (a lone surrogate as its ``\\u`` escape: JSON holds one, UTF-8 does not);
    ``panel_invalid`` for a value that is not JSON."""
    try:
        text = document_json(document)
    except (TypeError, ValueError, RecursionError) as exc:
        raise PanelInvalid(f"the document is not JSON: {exc}", field="$.document") from None
    return len(text) if text.isascii() else len(text.encode("utf-8"))


def _invalid(message: str, field: str) -> PanelInvalid:
    return PanelInvalid(message, field=field)


def _validate(validator: SchemaValidator, value: Any, base: str) -> None:
    try:
        validator.validate(value)
    except SchemaValidationError as exc:
        raise _invalid(f"{base + exc.path[1:]}: {exc.message}", base + exc.path[1:]) from None


def _unique(values: list[str], what: str, field: str) -> None:
    seen: set[str] = set()
    for index, value in enumerate(values):
        if value in seen:
            raise _invalid(f"{field}[{index}]: {what} {json.dumps(value)} appears twice", field)
        seen.add(value)


def _check_form(block: Mapping[str, Any], where: str) -> None:
    fields = block["fields"]
    _unique([f["id"] for f in fields], "field id", f"{where}.fields")
    for index, field in enumerate(fields):
        at = f"{where}.fields[{index}]"
        if field["type"] == "text":
            continue
        values = [option["value"] for option in field["options"]]
        _unique(values, "option value", f"{at}.options")
        default = field.get("default")
        chosen = [default] if isinstance(default, str) else list(default or ())
        for value in chosen:
            if value not in values:
                raise _invalid(f"{at}.default: {json.dumps(value)} is not an option", at)
        low, high = field.get("min_selected", 0), field.get("max_selected", len(values))
        if low > high or high > len(values):
            raise _invalid(
                f"{at}: min_selected ({low}) and max_selected ({high}) must fit the"
                f" {len(values)} options",
                at,
            )


def check_document(document: Any, *, size: int | None = None) -> None:
    """Check a JSON document against the catalog: ``panel_too_large`` past
    :data:`MAX_DOCUMENT_BYTES` (``size``, when the caller measured it already),
    ``panel_invalid`` naming the offending field otherwise."""
    size = document_bytes(document) if size is None else size
    if size > MAX_DOCUMENT_BYTES:
        raise PanelTooLarge(
            f"the document is {size:,} bytes as JSON; the limit is {MAX_DOCUMENT_BYTES:,}",
            field="$.document",
        )
    document_validator, block_validators = _validators()
    _validate(document_validator, document, "$.document")
    for index, block in enumerate(document["blocks"]):
        where = f"$.document.blocks[{index}]"
        kind = block.get("type")
        validator = block_validators.get(kind) if isinstance(kind, str) else None
        if validator is None:
            found = json.dumps(kind) if isinstance(kind, str) else "no type"
            raise _invalid(f"{where}: unknown block type {found}; the catalog has {_KINDS}", where)
        _validate(validator, block, where)
        if kind == "form":
            _check_form(block, where)
