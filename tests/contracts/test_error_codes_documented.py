"""docs/reference/errors.md and raw_core.errors agree, code for code."""

from __future__ import annotations

import re
from pathlib import Path

from raw_core import errors

DOC = Path(__file__).parents[2] / "docs" / "reference" / "errors.md"


def documented_codes() -> list[str]:
    return re.findall(r"^### ([a-z_]+)$", DOC.read_text(encoding="utf-8"), flags=re.M)


def test_every_code_has_a_section_and_every_section_a_code() -> None:
    code_codes = {cls.code for cls in errors.all_error_classes()}
    doc_codes = documented_codes()
    assert len(doc_codes) == len(set(doc_codes)), "a code is documented twice"
    assert set(doc_codes) == code_codes


def test_codes_are_unique_and_snake_case() -> None:
    classes = errors.all_error_classes()
    codes = [cls.code for cls in classes]
    assert len(codes) == len(set(codes))
    assert all(re.fullmatch(r"[a-z]+(_[a-z]+)*", code) for code in codes)


def test_every_error_class_is_exported() -> None:
    for cls in errors.all_error_classes():
        assert cls.__name__ in errors.__all__


def test_to_dict_carries_code_message_and_context() -> None:
    error = errors.ManifestInvalid("expected x", field="$.id", tool="local/a")
    assert error.to_dict() == {
        "code": "manifest_invalid",
        "message": "expected x",
        "field": "$.id",
        "tool": "local/a",
    }
    assert str(error) == "manifest_invalid: expected x (at $.id)"
