"""docs/reference/toolkit.md and raw_builtin_tools.toolkit agree, and its example runs."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

import raw_builtin_tools.toolkit as toolkit

PAGE = Path(__file__).parents[2] / "docs" / "reference" / "toolkit.md"
ROW_NAME = re.compile(r"^\| `(?P<name>[A-Za-z_]+)", re.M)
TEST_BLOCK = re.compile(
    r"<!-- test: (?P<name>[a-z_-]+) -->\n```python\n(?P<body>.*?)```"
    r"\n\nOutput:\n\n```\n(?P<output>.*?)```",
    re.S,
)


def test_the_page_lists_every_public_name_once_and_nothing_else() -> None:
    listed = ROW_NAME.findall(PAGE.read_text(encoding="utf-8"))
    assert len(listed) == len(set(listed)), "a name is listed twice"
    assert sorted(listed) == sorted(toolkit.__all__)


def test_the_examples_print_what_the_page_says(tmp_path: Path) -> None:
    examples = list(TEST_BLOCK.finditer(PAGE.read_text(encoding="utf-8")))
    assert examples
    for example in examples:
        script = tmp_path / f"{example['name']}.py"
        script.write_text(example["body"], encoding="utf-8")
        result = subprocess.run(
            [sys.executable, str(script)], capture_output=True, text=True, cwd=tmp_path
        )
        assert result.returncode == 0, result.stderr
        assert result.stdout == example["output"]
