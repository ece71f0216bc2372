"""Every relative link in README.md and docs/ leads to a file that exists."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

ROOT = Path(__file__).parents[2]
PAGES = [ROOT / "README.md", *sorted((ROOT / "docs").rglob("*.md"))]
LINK = re.compile(r"\]\(([^)#\s]+)(?:#[^)]*)?\)")


@pytest.mark.parametrize("page", PAGES, ids=lambda p: str(p.relative_to(ROOT)))
def test_relative_links_resolve(page: Path) -> None:
    text = page.read_text(encoding="utf-8")
    missing = [
        target
        for target in LINK.findall(text)
        if "://" not in target and not (page.parent / target).exists()
    ]
    assert missing == []
