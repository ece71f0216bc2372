"""The test suite's own rules: a missing prerequisite (Node.js...) skips, except under CI,
where it fails, and CI runs the suite as CI; no test finds ``raw`` on PATH."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from tests.conftest import RAW, missing_prerequisite, under_ci

ROOT = Path(__file__).parents[2]


@pytest.mark.parametrize("value", [None, "", "0", "false"])
def test_a_missing_prerequisite_skips_outside_ci(
    monkeypatch: pytest.MonkeyPatch, value: str | None
) -> None:
    if value is None:
        monkeypatch.delenv("CI", raising=False)
    else:
        monkeypatch.setenv("CI", value)
    assert not under_ci()
    with pytest.raises(pytest.skip.Exception, match="needs Node"):
        missing_prerequisite("needs Node.js")


@pytest.mark.parametrize("value", ["1", "true"])
def test_a_missing_prerequisite_fails_under_ci(monkeypatch: pytest.MonkeyPatch, value: str) -> None:
    monkeypatch.setenv("CI", value)
    with pytest.raises(pytest.fail.Exception, match="needs Node"):
        missing_prerequisite("needs Node.js")


def test_ci_runs_the_tests_as_ci() -> None:
    script = (ROOT / ".ci" / "run").read_text(encoding="utf-8")
    assert re.search(r"^export CI=1$", script, re.MULTILINE), ".ci/run must export CI=1"
    assert script.index("export CI=1") < script.index("uv run pytest")


def test_no_test_finds_raw_on_path() -> None:
    """Tests run the console script beside the interpreter (``tests.conftest.RAW``)."""
    assert RAW.is_file()
    offending = []
    for path in sorted((ROOT / "tests").rglob("*.py")):
        text = path.read_text(encoding="utf-8")
        if re.search(r"""which\(\s*["']raw["']""", text):
            offending.append(str(path.relative_to(ROOT)))
    assert offending == []
