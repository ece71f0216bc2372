"""A tool's question as the protocol's form elicitation (``elicitation/create``).

An interaction request carries one ``form`` block (text, single-select and multi-select
fields). A client that advertised ``elicitation.form`` is sent it as a form elicitation
tied to the session and the asking tool call:

* the message is the form's title, then the text blocks around the form;
* each field becomes one property of the requested schema, keyed by the field's id: a
  ``text`` field a string (``minLength: 1`` when required, its placeholder as the
  description), a ``single_select`` field a string with titled options (``oneOf``), a
  ``multi_select`` field an array of titled options (``anyOf``) with ``minItems`` /
  ``maxItems``; defaults and required fields carried over.

The answer's content goes back through the request model's check
(:func:`raw_core.tools.interactions.check_answer`), which decides what counts: the schema
is only what the client shows.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

__all__ = ["message_of", "requested_schema", "retry_message"]


def message_of(document: Mapping[str, Any], fallback: str) -> str:
    """What the client shows above the form: its title and the document's text blocks
    (``fallback``, the panel's title, when there are none)."""
    parts: list[str] = []
    for block in document.get("blocks", ()):
        if block.get("type") == "form" and block.get("title"):
            parts.insert(0, str(block["title"]))
        elif block.get("type") == "text" and block.get("text"):
            parts.append(str(block["text"]))
    return "\n\n".join(parts) if parts else fallback


def _options(field: Mapping[str, Any]) -> list[dict[str, str]]:
    return [{"const": o["value"], "title": o.get("label", o["value"])} for o in field["options"]]


def _property(field: Mapping[str, Any]) -> dict[str, Any]:
    """One form field as a property of the requested schema."""
    kind = field["type"]
    found: dict[str, Any] = {"title": field["label"]}
    if kind == "text":
        found["type"] = "string"
        if field.get("placeholder"):
            found["description"] = field["placeholder"]
        if field.get("required"):
            found["minLength"] = 1
    elif kind == "single_select":
        found["type"] = "string"
        found["oneOf"] = _options(field)
    else:
        found["type"] = "array"
        found["items"] = {"anyOf": _options(field)}
        if field.get("min_selected"):
            found["minItems"] = field["min_selected"]
        if "max_selected" in field:
            found["maxItems"] = field["max_selected"]
    if "default" in field:
        found["default"] = field["default"]
    return found


def requested_schema(form: Mapping[str, Any]) -> dict[str, Any]:
    """The requested schema (JSON, protocol field names) of a plain (thawed) ``form``
    block."""
    fields = list(form["fields"])
    schema: dict[str, Any] = {
        "type": "object",
        "properties": {f["id"]: _property(f) for f in fields},
    }
    required = [
        f["id"]
        for f in fields
        if f.get("required") or (f["type"] == "multi_select" and f.get("min_selected", 0) > 0)
    ]
    if required:
        schema["required"] = required
    if form.get("title"):
        schema["title"] = form["title"]
    return schema


def retry_message(message: str, errors: Sequence[Mapping[str, Any]]) -> str:
    """The message of a second ask, after an answer that did not fit the form: what was
    wrong with it, field by field, then the question again."""
    lines = ["The previous answer did not fit the form:"]
    for error in errors:
        field = str(error.get("field", "")).removeprefix("$.values.")
        lines.append(f"- {field}: {error.get('message', '')}")
    return "\n".join(lines) + "\n\n" + message
