"""docs/reference/panel-blocks.md prints the block catalog's schemas as the code has them,
and each of its examples is a valid block."""

from __future__ import annotations

import json
import re
from pathlib import Path

from raw_core.tools.panel_blocks import BLOCK_SCHEMAS, DOCUMENT_SCHEMA, check_document

PAGE = (Path(__file__).parents[2] / "docs" / "reference" / "panel-blocks.md").read_text("utf-8")


def _marked(kind: str) -> dict[str, object]:
    found = re.findall(rf"<!-- {kind}: ([a-z]+) -->\n```json\n(.*?)```", PAGE, re.S)
    return {name: json.loads(body) for name, body in found}


def test_the_page_has_every_schema_of_the_catalog() -> None:
    schemas = _marked("schema")
    assert schemas.pop("document") == DOCUMENT_SCHEMA
    assert schemas == dict(BLOCK_SCHEMAS)


def test_every_example_is_a_valid_block() -> None:
    examples = _marked("example")
    assert sorted(examples) == sorted(BLOCK_SCHEMAS)
    for block in examples.values():
        check_document({"blocks": [block]})
