"""Lazy re-exports (PEP 562) for a package's ``__init__``: public names are imported from
their module only when first used, so importing a package imports none of its modules
and a command such as ``raw --help`` stays fast.

A package imports each public name under ``TYPE_CHECKING`` (for its real type) and ends
its ``__init__`` with::

    if not TYPE_CHECKING:  # hidden from the type checker: a misspelt name stays an error
        __getattr__, __dir__ = lazy_exports(globals(), _EXPORTS)

where ``_EXPORTS`` maps each public name to the module that defines it.
"""

from __future__ import annotations

import importlib
from collections.abc import Callable, Mapping
from typing import Any

__all__ = ["lazy_exports"]


def lazy_exports(
    namespace: dict[str, Any], exports: Mapping[str, str]
) -> tuple[Callable[[str], Any], Callable[[], list[str]]]:
    """The ``__getattr__`` and ``__dir__`` of a package whose ``namespace`` (its
    ``globals()``) re-exports ``exports`` (name -> module). A name is imported once, then
    kept in the namespace; an unknown name is an ``AttributeError``, as for any module."""
    package = namespace["__name__"]

    def __getattr__(name: str) -> Any:
        module = exports.get(name)
        if module is None:
            raise AttributeError(f"module {package!r} has no attribute {name!r}")
        value = getattr(importlib.import_module(module), name)
        namespace[name] = value
        return value

    def __dir__() -> list[str]:
        return sorted([*namespace, *exports])

    return __getattr__, __dir__
