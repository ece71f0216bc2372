"""The examples in docs/sessions.md run as written and print what the page says."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

PAGE = Path(__file__).parents[3] / "docs" / "sessions.md"
EXAMPLE = re.compile(
    r"<!-- test: (?P<name>[a-z_-]+) -->\n```python\n(?P<body>.*?)```"
    r"\n\nOutput:\n\n```\n(?P<output>.*?)```",
    re.S,
)


def test_the_sessions_page_examples_print_what_the_page_says(tmp_path: Path) -> None:
    examples = list(EXAMPLE.finditer(PAGE.read_text(encoding="utf-8")))
    assert [example["name"] for example in examples] == [
        "sessions-compact",
        "sessions-async",
        "sessions-sync",
    ]
    for example in examples:
        script = tmp_path / f"{example['name']}.py"
        script.write_text(example["body"], encoding="utf-8")
        result = subprocess.run(
            [sys.executable, str(script)], capture_output=True, text=True, cwd=tmp_path
        )
        assert result.returncode == 0, result.stderr
        assert result.stdout == example["output"]


def test_the_sessions_page_documents_every_store_error_code() -> None:
    from raw_core.errors import StoreError, all_error_classes

    text = PAGE.read_text(encoding="utf-8")
    codes = [cls.code for cls in all_error_classes() if issubclass(cls, StoreError)]
    assert codes
    for code in codes:
        assert f"| `{code}` |" in text
