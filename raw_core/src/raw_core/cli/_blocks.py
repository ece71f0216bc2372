"""How the terminal shows a content block: the one rendering of `raw run`, `raw tools
call` and `raw sessions show`. Blocks arrive in their JSON form (``to_dict()``)."""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any

__all__ = ["block_display"]


def block_display(block: Mapping[str, Any]) -> str:
    """The text the terminal shows for ``block``: text as is, JSON indented, an image or a
    variable as a note (a variable's value is for the model only)."""
    kind = block.get("type")
    if kind == "text":
        return str(block["text"])
    if kind == "json":
        return json.dumps(block["json"], indent=2, ensure_ascii=False)
    if kind == "var":
        return f"[the value of {block['name']}, shown only to the model]"
    if kind == "image":
        return f"[{block['media_type']} image, {len(block['data'])} base64 bytes]"
    return json.dumps(block, ensure_ascii=False)
