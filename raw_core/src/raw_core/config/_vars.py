"""The checks of a variable's source (``vars.<name>.from``), run when the config is read.

A source raw could never read is refused at its field, so that reading it later cannot
fail in a way that is not ``var_unavailable``: an empty name or path, and text the
operating system cannot take — a NUL character, or a lone surrogate (which strict JSON
lets through as ``\\ud800`` but which is not UTF-8) — in an environment variable's name,
a file's path or a command's arguments.
"""

from __future__ import annotations

from typing import Any

import attrs

from raw_core._field_error import FieldValueError
from raw_core._os_text import unfit_for_os

__all__ = ["check_command", "check_env_name", "check_file"]


def check_env_name(_instance: Any, attribute: attrs.Attribute[Any], value: str | None) -> None:
    """``from.env``: the name of an environment variable."""
    if value is None:
        return
    expected = "expected the name of an environment variable"
    if not value:
        raise FieldValueError(attribute.name, f"{expected}, found an empty string")
    found = unfit_for_os(value) or ("'='" if "=" in value else None)
    if found is not None:
        raise FieldValueError(attribute.name, f"{expected}, found one with {found}")


def check_file(_instance: Any, attribute: attrs.Attribute[Any], value: str | None) -> None:
    """``from.file``: a file's path (relative to the config's folder, or absolute)."""
    if value is None:
        return
    expected = "expected the path of a file, relative to the config's folder or absolute"
    if not value:
        raise FieldValueError(attribute.name, f"{expected}, found an empty string")
    found = unfit_for_os(value)
    if found is not None:
        raise FieldValueError(attribute.name, f"{expected}, found one with {found}")


def check_command(
    _instance: Any, attribute: attrs.Attribute[Any], value: tuple[str, ...] | None
) -> None:
    """``from.command``: the program and its arguments (an empty array is reported with
    the config's other value checks)."""
    if value is None:
        return
    if value and not value[0]:
        raise FieldValueError(
            f"{attribute.name}[0]", "expected the program to run, found an empty string"
        )
    for index, argument in enumerate(value):
        found = unfit_for_os(argument)
        if found is not None:
            raise FieldValueError(
                f"{attribute.name}[{index}]",
                f"expected a program or an argument as text, found one with {found}",
            )
