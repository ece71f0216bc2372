"""docs/architecture.md names modules that exist, and draws every layer the layer test
knows."""

from __future__ import annotations

import re
from pathlib import Path

import raw_core
from tests.contracts.test_layers import LAYERS

DOCS = Path(__file__).parents[2] / "docs"
SOURCE = Path(raw_core.__file__).parent
PAGE = (DOCS / "architecture.md").read_text(encoding="utf-8")

# `tools/loader.py`, `sessions/sqlite/backend.py`, `_json.py`: paths below raw_core/ (a
# path that starts with tests/ is the repository's).
MODULE = re.compile(r"`((?:[a-z_]+/)*[a-z_]+\.py)`")


def test_every_module_the_page_names_exists() -> None:
    named = set(MODULE.findall(PAGE))
    assert len(named) > 30
    repository = DOCS.parent
    missing = sorted(
        path
        for path in named
        if not (repository / path if path.startswith("tests/") else SOURCE / path).is_file()
    )
    assert missing == []


def test_the_picture_has_every_layer() -> None:
    picture = PAGE.split("```")[1]
    lines = picture.strip().splitlines()
    drawn = [line.split()[0].rstrip("/") for line in lines if line[1:2] != " "]
    for layer in LAYERS:
        if layer == "facade":
            assert "__init__.py" in drawn
        else:
            assert layer in drawn, layer
