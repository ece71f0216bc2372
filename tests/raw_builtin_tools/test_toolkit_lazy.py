"""The toolkit imports a helper's submodule when the helper is first used: a built-in tool
(and the start of every command that loads one) pays for the helpers it uses alone."""

from __future__ import annotations

import ast
import importlib
import subprocess
import sys

import pytest

import raw_builtin_tools.toolkit as toolkit

SUBMODULES = "sorted(m for m in sys.modules if m.startswith('raw_builtin_tools.toolkit.'))"


def _loaded_after(code: str) -> list[str]:
    """The toolkit's submodules a fresh interpreter has imported after running ``code``."""
    result = subprocess.run(
        [sys.executable, "-c", f"import sys\n{code}\nprint({SUBMODULES})"],
        capture_output=True,
        text=True,
        check=True,
        timeout=60,
    )
    loaded: list[str] = ast.literal_eval(result.stdout)
    return loaded


def test_importing_the_toolkit_imports_none_of_its_submodules() -> None:
    assert _loaded_after("import raw_builtin_tools.toolkit") == []


def test_a_name_imports_the_submodules_it_is_made_of_alone() -> None:
    loaded = _loaded_after("from raw_builtin_tools.toolkit import normalize, path_problem")
    assert loaded == ["raw_builtin_tools.toolkit.lines", "raw_builtin_tools.toolkit.paths"]


def test_every_public_name_is_its_submodules_own_object() -> None:
    for name in toolkit.__all__:
        value = getattr(toolkit, name)
        defining = importlib.import_module(toolkit._EXPORTS[name])
        assert value is getattr(defining, name), name
    assert set(toolkit._EXPORTS) == set(toolkit.__all__)
    assert set(toolkit.__all__) <= set(dir(toolkit))


def test_an_unknown_name_is_an_attribute_error() -> None:
    with pytest.raises(AttributeError, match="no_such_helper"):
        _ = toolkit.no_such_helper  # type: ignore[attr-defined]
