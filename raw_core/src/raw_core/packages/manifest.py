"""``raw-package.json``: what a package is called and which of its folders it exports.

A package is a folder (or a tar archive of one) holding ``raw-package.json`` at its top::

    {"api_version": 1, "name": "acme-tools", "version": "1.2.0",
     "description": "...", "exports": {"tools": {"grep": "tools/grep"}}}

Each export maps a name (the last segment of ``pkg/<alias>/tools/<export>``) to a folder
inside the package, which must be a normal tool folder. Unknown fields are refused with
their JSON path, as everywhere else; reading the manifest runs nothing.
"""

from __future__ import annotations

import posixpath
from collections.abc import Mapping
from typing import Any, Final

import attrs

from raw_core._convert import FieldValueError, StructureFailed, json_text, make_converter, structure
from raw_core._identity import SEGMENT_RE
from raw_core._json import JsonInputError, loads_strict
from raw_core.errors import PackageInvalid

__all__ = ["API_VERSION", "MANIFEST_FILE", "PackageExports", "PackageManifest", "parse_package"]

MANIFEST_FILE: Final = "raw-package.json"
API_VERSION: Final = 1
MAX_MANIFEST_BYTES: Final = 1024 * 1024
_SEGMENT: Final = "lowercase letters, digits, _ and -, starting with a letter"


def _is_text(value: str) -> bool:
    """Whether ``value`` is Unicode text: JSON's ``\\ud800`` escapes give a string with a
    lone surrogate, which no UTF-8 file, terminal or path can hold."""
    try:
        value.encode("utf-8")
    except UnicodeEncodeError:
        return False
    return True


_NOT_TEXT: Final = "expected Unicode text (a lone surrogate such as \\ud800 is none)"


def _folder_problem(folder: str) -> str | None:
    """Why ``folder`` cannot name a folder inside the package, or ``None``."""
    if not _is_text(folder):
        return "Unicode text (a lone surrogate such as \\ud800 is none)"
    if not folder or folder.startswith("/") or "\\" in folder or "\0" in folder:
        return "a relative folder inside the package, with / between its parts"
    parts = [p for p in folder.split("/") if p not in ("", ".")]
    if not parts:
        return "a folder inside the package, not the package itself"
    if ".." in parts:
        return "a folder inside the package, without .."
    return None


def _check_tools(_instance: Any, attribute: attrs.Attribute[Any], value: Mapping[str, str]) -> None:
    for export, folder in value.items():
        if not SEGMENT_RE.fullmatch(export):
            raise FieldValueError(
                f"{attribute.name}[{json_text(export)}]",
                f"expected an export name of {_SEGMENT}, found {json_text(export)}",
            )
        problem = _folder_problem(folder)
        if problem is not None:
            raise FieldValueError(
                f"{attribute.name}.{export}", f"expected {problem}, found {json_text(folder)}"
            )


@attrs.frozen(kw_only=True)
class PackageExports:
    """What a package offers: ``tools`` maps each export name to its folder."""

    tools: Mapping[str, str] = attrs.field(factory=dict, validator=_check_tools)

    def tool_folder(self, export: str) -> str:
        """The export's folder, normalised (``./tools/grep/`` is ``tools/grep``)."""
        return posixpath.normpath(self.tools[export])


def _check_name(_instance: Any, attribute: attrs.Attribute[Any], value: str) -> None:
    if not SEGMENT_RE.fullmatch(value):
        raise FieldValueError(attribute.name, f"expected {_SEGMENT}, found {json_text(value)}")


def _non_empty(_instance: Any, attribute: attrs.Attribute[Any], value: str) -> None:
    if not value.strip():
        raise FieldValueError(attribute.name, "expected a non-empty string")
    if not _is_text(value):
        raise FieldValueError(attribute.name, _NOT_TEXT)


def _check_api_version(_instance: Any, attribute: attrs.Attribute[Any], value: int) -> None:
    if value != API_VERSION:
        raise FieldValueError(attribute.name, f"expected {API_VERSION}, found {json_text(value)}")


@attrs.frozen(kw_only=True)
class PackageManifest:
    """A checked ``raw-package.json``. ``name`` is the default alias."""

    api_version: int = attrs.field(validator=_check_api_version)
    name: str = attrs.field(validator=_check_name)
    version: str = attrs.field(validator=_non_empty)
    description: str = attrs.field(validator=_non_empty)
    exports: PackageExports

    def to_dict(self) -> dict[str, Any]:
        """The manifest as JSON."""
        return {
            "api_version": self.api_version,
            "name": self.name,
            "version": self.version,
            "description": self.description,
            "exports": {"tools": dict(self.exports.tools)},
        }


_CONVERTER: Final = make_converter()


def parse_package(text: bytes, *, where: str) -> PackageManifest:
    """Parse and check the bytes of a ``raw-package.json``; ``where`` names it in errors
    (``package_invalid`` with ``field``, the JSON path of the first problem)."""
    try:
        data = loads_strict(text, max_bytes=MAX_MANIFEST_BYTES)
    except JsonInputError as exc:
        raise PackageInvalid(
            f"{where}: {MANIFEST_FILE} is not valid JSON: {exc}", field="$", path=where
        ) from None
    try:
        return structure(_CONVERTER, data, PackageManifest)
    except StructureFailed as exc:
        first = exc.problems[0]
        raise PackageInvalid(f"{where}: {first.message}", field=first.path, path=where) from None
