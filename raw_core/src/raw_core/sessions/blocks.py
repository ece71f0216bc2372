"""Content blocks: the one vocabulary of what a tool result, a user message and a display
entry hold.

Four frozen records — :class:`TextBlock`, :class:`JsonBlock`, :class:`ImageBlock`,
:class:`VarPlaceholder` — travel everywhere inside raw: from the handler's result through
the cap, the events, the store and the providers. Outside raw a block is a JSON object,
the form a handler returns and ``to_dict()`` gives back (docs/reference/manifest.md):

* ``{"type": "text", "text": <string>}``
* ``{"type": "json", "json": <any JSON value>}``
* ``{"type": "image", "media_type": <one of IMAGE_MIME_TYPES>, "data": <base64>}``
* ``{"type": "var", "name": <variable name>}``

:func:`block_from_dict` reads that form (every key checked) and :func:`block_to_dict`
writes it; nothing else converts. A lone surrogate in a string (a file name
``os.fsdecode`` could not decode) is read as U+FFFD, so every block can be encoded.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping
from typing import Any, Final

import attrs

__all__ = [
    "IMAGE_MIME_TYPES",
    "BlockInvalid",
    "ContentBlock",
    "ImageBlock",
    "JsonBlock",
    "TextBlock",
    "UserBlock",
    "VarPlaceholder",
    "block_from_dict",
    "block_text",
    "block_to_dict",
    "clean_text",
    "cut_utf8",
]

IMAGE_MIME_TYPES: Final = frozenset({"image/png", "image/jpeg", "image/gif", "image/webp"})


@attrs.frozen(kw_only=True)
class TextBlock:
    """Plain text. JSON: ``{"type": "text", "text": ...}``."""

    text: str


@attrs.frozen(kw_only=True)
class JsonBlock:
    """A JSON value a tool returned, kept as its JSON text (serialized once: the cap counts
    these bytes, the store writes them). JSON: ``{"type": "json", "json": <value>}``."""

    json_text: str

    @property
    def value(self) -> Any:
        """The JSON value."""
        return json.loads(self.json_text)


@attrs.frozen(kw_only=True)
class ImageBlock:
    """An image, base64-encoded. JSON: ``{"type": "image", "media_type", "data"}``."""

    media_type: str
    data: str


@attrs.frozen(kw_only=True)
class VarPlaceholder:
    """Where a variable's value goes; only the name is kept. JSON: ``{"type": "var",
    "name"}``."""

    name: str


ContentBlock = TextBlock | JsonBlock | ImageBlock | VarPlaceholder
"""A block of a tool result."""

UserBlock = TextBlock | ImageBlock
"""A block of a user message."""


class BlockInvalid(ValueError):
    """A JSON object that is not one of the four block shapes; the message names where."""


# --- reading and writing the JSON form ---------------------------------------------------

_LONE_SURROGATE: Final = re.compile("[\ud800-\udfff]")


def _has_surrogate(text: str) -> bool:
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return True
    return False


def clean_text(text: str) -> str:
    """``text`` with each lone surrogate read as U+FFFD, so it can be encoded."""
    return _LONE_SURROGATE.sub("\ufffd", text) if _has_surrogate(text) else text


def _clean_json(value: Any, where: str) -> Any:
    """``value`` with every lone surrogate in its strings and keys read as U+FFFD; two keys
    of one object that become the same are refused rather than one silently dropped."""
    if isinstance(value, str):
        return clean_text(value)
    if isinstance(value, Mapping):
        cleaned: dict[str, Any] = {}
        originals: dict[str, str] = {}
        for key, item in value.items():
            name = clean_text(key)
            if name in cleaned:
                raise BlockInvalid(
                    f"{where}: the keys {originals[name]!r} and {key!r} both read as {name!r}"
                    " once their lone surrogates are replaced; rename one"
                )
            originals[name] = key
            cleaned[name] = _clean_json(item, f"{where}.{name}")
        return cleaned
    if isinstance(value, list | tuple):
        return [_clean_json(item, f"{where}[{i}]") for i, item in enumerate(value)]
    return value


def _json_text(value: Any, where: str) -> str:
    try:
        text = json.dumps(value, allow_nan=False, ensure_ascii=False)
    except (TypeError, ValueError) as exc:
        raise BlockInvalid(f"{where}: the JSON block's value is not JSON: {exc}") from None
    if _has_surrogate(text):  # a string in it holds one, as a text block may
        text = json.dumps(_clean_json(value, f"{where}.json"), ensure_ascii=False)
    return text


_IMAGE_TYPES_JSON: Final = json.dumps(sorted(IMAGE_MIME_TYPES))


def block_from_dict(block: Any, where: str = "content[0]") -> ContentBlock:
    """The block whose JSON form is ``block``; :class:`BlockInvalid` naming ``where`` and
    the expected shape otherwise."""
    if type(block) is not dict and not isinstance(block, Mapping):
        raise BlockInvalid(f"{where} must be an object, found {type(block).__name__}")
    kind = block.get("type")
    if kind == "text":
        # exactly the keys "type" and "text" (counted: this runs for every result)
        if len(block) != 2 or "text" not in block or not isinstance(block["text"], str):
            raise BlockInvalid(f'{where}: a text block is {{"type": "text", "text": <string>}}')
        return TextBlock(text=clean_text(block["text"]))
    if kind == "json":
        if len(block) != 2 or "json" not in block:
            raise BlockInvalid(f'{where}: a JSON block is {{"type": "json", "json": <value>}}')
        return JsonBlock(json_text=_json_text(block["json"], where))
    if kind == "image":
        if (
            set(block) != {"type", "media_type", "data"}
            or not isinstance(block["data"], str)
            or block["media_type"] not in IMAGE_MIME_TYPES
        ):
            raise BlockInvalid(
                f'{where}: an image block is {{"type": "image", "media_type":'
                f' one of {_IMAGE_TYPES_JSON}, "data": <base64>}}'
            )
        return ImageBlock(media_type=block["media_type"], data=block["data"])
    if kind == "var":
        if set(block) != {"type", "name"} or not isinstance(block["name"], str):
            raise BlockInvalid(f'{where}: a variable block is {{"type": "var", "name": <name>}}')
        return VarPlaceholder(name=block["name"])
    found = json.dumps(kind) if isinstance(kind, str | int | float | bool) else "nothing"
    raise BlockInvalid(
        f'{where}: unknown block type {found}; expected "text", "json", "image" or "var"'
    )


def block_to_dict(block: ContentBlock) -> dict[str, Any]:
    """The JSON form of ``block`` (a new, detached object)."""
    if isinstance(block, TextBlock):
        return {"type": "text", "text": block.text}
    if isinstance(block, JsonBlock):
        return {"type": "json", "json": block.value}
    if isinstance(block, ImageBlock):
        return {"type": "image", "media_type": block.media_type, "data": block.data}
    if isinstance(block, VarPlaceholder):
        return {"type": "var", "name": block.name}
    raise TypeError(f"expected a content block, found {type(block).__name__}")


def block_text(block: ContentBlock) -> str | None:
    """The text a block reads as: a text block's text, a JSON block's JSON text; ``None``
    for an image or a variable placeholder."""
    if isinstance(block, TextBlock):
        return block.text
    if isinstance(block, JsonBlock):
        return block.json_text
    return None


def cut_utf8(text: str, limit: int) -> str:
    """The longest prefix of ``text`` that is at most ``limit`` UTF-8 bytes, never
    splitting a character."""
    return text.encode("utf-8", "surrogatepass")[: max(limit, 0)].decode("utf-8", "ignore")
