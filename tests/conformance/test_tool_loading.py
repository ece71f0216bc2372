"""Spec 001, "Write a local tool" and "Entry module": paths, links, import and exports."""

from __future__ import annotations

import os
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from raw_core.errors import (
    ManifestInvalid,
    ToolEntryInvalid,
    ToolImportFailed,
    ToolNotFound,
    ToolPathOutsideRoot,
)
from raw_core.tools.loader import ToolLoader


def test_symlinked_folder_pointing_outside_the_root_fails_before_import(
    make_tool: Any, imported: Callable[[Path], bool], tmp_path: Path
) -> None:
    outside = make_tool("sample", root=tmp_path / "elsewhere")
    root = tmp_path / "tools"
    root.mkdir()
    (root / "sample").symlink_to(outside, target_is_directory=True)
    with pytest.raises(ToolPathOutsideRoot) as caught:
        ToolLoader().load(root / "sample", root=root)
    assert caught.value.code == "tool_path_outside_root"
    assert not imported(outside)


def test_symlinked_folder_inside_the_root_loads(make_tool: Any, tmp_path: Path) -> None:
    real = make_tool("sample")
    alias_root = tmp_path / "tools"
    (alias_root / "alias").symlink_to(real, target_is_directory=True)
    # The folder name is the link's name, so the manifest id must match the real one.
    with pytest.raises(ManifestInvalid) as caught:
        ToolLoader().load(alias_root / "alias", root=alias_root)
    assert caught.value.field == "$.id"


def test_symlinked_manifest_outside_the_folder_fails_before_import(
    make_tool: Any, imported: Callable[[Path], bool], tmp_path: Path, manifest: Any
) -> None:
    folder = make_tool("sample")
    elsewhere = tmp_path / "manifest.json"
    elsewhere.write_text((folder / "tool.json").read_text())
    (folder / "tool.json").unlink()
    (folder / "tool.json").symlink_to(elsewhere)
    with pytest.raises(ToolPathOutsideRoot):
        ToolLoader().load(folder)
    assert not imported(folder)


def test_symlinked_entry_outside_the_folder_fails_before_import(
    make_tool: Any, tmp_path: Path
) -> None:
    folder = make_tool("sample")
    outside = tmp_path / "evil.py"
    marker = tmp_path / "evil.marker"
    outside.write_text(f"open({str(marker)!r}, 'w').write('ran')\ndef handler(a, c): pass\n")
    (folder / "tool.py").unlink()
    (folder / "tool.py").symlink_to(outside)
    with pytest.raises(ToolPathOutsideRoot) as caught:
        ToolLoader().load(folder)
    assert caught.value.field == "$.entry"
    assert not marker.exists()


def test_symlinked_entry_inside_the_folder_loads(make_tool: Any) -> None:
    folder = make_tool("sample")
    (folder / "impl.py").write_text((folder / "tool.py").read_text())
    (folder / "tool.py").unlink()
    (folder / "tool.py").symlink_to(folder / "impl.py")
    assert ToolLoader().load(folder).name == "sample"


def test_missing_folder_is_tool_not_found(tmp_path: Path) -> None:
    (tmp_path / "tools").mkdir()
    with pytest.raises(ToolNotFound):
        ToolLoader().load(tmp_path / "tools" / "nothing")


def test_import_error_names_the_tool(make_tool: Any) -> None:
    folder = make_tool("sample", code="import no_such_module_anywhere\n")
    with pytest.raises(ToolImportFailed) as caught:
        ToolLoader().load(folder, identity="local/sample")
    error = caught.value
    assert error.code == "tool_import_failed"
    assert error.context["tool"] == "local/sample"
    assert "ModuleNotFoundError" in error.message
    assert "line 1" in error.message


def test_module_calling_sys_exit_at_import_is_an_import_failure(make_tool: Any) -> None:
    with pytest.raises(ToolImportFailed, match="SystemExit"):
        ToolLoader().load(make_tool("sample", code="import sys\nsys.exit(3)\n"))


@pytest.mark.parametrize(
    "code",
    [
        pytest.param("x = 1\n", id="no-handler"),
        pytest.param("handler = 5\n", id="handler-not-callable"),
        pytest.param(
            "def handler(a, c): pass\nvalidate_args = 'no'\n", id="validate_args-not-callable"
        ),
    ],
)
def test_entry_must_export_a_callable_handler(make_tool: Any, code: str) -> None:
    with pytest.raises(ToolEntryInvalid) as caught:
        ToolLoader().load(make_tool("sample", code=code))
    assert caught.value.code == "tool_entry_invalid"


def test_effects_schema_without_describe_effects_is_refused(make_tool: Any) -> None:
    folder = make_tool("sample", effects_schema={"type": "object"})
    with pytest.raises(ToolEntryInvalid, match="describe_effects"):
        ToolLoader().load(folder)


def test_sync_and_async_handlers_and_validate_args_are_found(make_tool: Any) -> None:
    code = (
        "async def handler(args, context): return {'content': []}\n"
        "def validate_args(args): return None if args else 'empty'\n"
    )
    tool = ToolLoader().load(make_tool("sample", code=code))
    assert tool.validate_args is not None
    assert tool.validate_args({}) == "empty"


def test_a_second_load_reuses_the_module_until_the_file_changes(make_tool: Any) -> None:
    code = (
        "from pathlib import Path\n"
        "p = Path(__file__).with_name('count')\n"
        "p.write_text(str(int(p.read_text()) + 1 if p.exists() else 1))\n"
        "def handler(args, context): return {'content': []}\n"
    )
    folder = make_tool("sample", code=code)
    loader = ToolLoader()
    first = loader.load(folder)
    loader.load(folder)
    assert (folder / "count").read_text() == "1"
    (folder / "tool.py").write_text(code + "\n# changed\n")
    os.utime(folder / "tool.py", ns=(1, 1))
    second = loader.load(folder)
    assert (folder / "count").read_text() == "2"
    assert first.handler is not second.handler


def test_compiled_schemas_are_shared_between_identical_tools(make_tool: Any) -> None:
    one = ToolLoader().load(make_tool("one"))
    two = ToolLoader().load(make_tool("two"))
    assert one.input_validator is two.input_validator
