"""``raw-packages.json``: the aliases one config file's agents may name as ``pkg/<alias>/...``.

The index sits beside the config file it serves. Each alias records the store entry's hash,
the package's name and version, where it was installed from and, for an archive, the
archive's own SHA-256::

    {"api_version": 1, "packages": {"acme": {"hash": "...", "name": "acme-tools",
     "version": "1.2.0", "source": "/home/me/acme.tar.gz", "archive_digest": "..."}}}

A ``pkg/`` identity resolves through the index beside the config file that names it; so
with several config files each keeps its own aliases.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from pathlib import Path
from typing import Any, Final

import attrs

from raw_core._convert import FieldValueError, StructureFailed, make_converter, structure
from raw_core._identity import SEGMENT_RE
from raw_core._json import JsonInputError, loads_strict
from raw_core.errors import PackageIndexInvalid
from raw_core.packages.store import write_json_atomic

__all__ = ["INDEX_FILE", "IndexEntry", "PackageIndex", "index_path", "read_index", "write_index"]

INDEX_FILE: Final = "raw-packages.json"
_HASH_RE: Final = re.compile(r"[0-9a-f]{64}")


def index_path(config_file: Path) -> Path:
    """The index of the config file ``config_file``: ``raw-packages.json`` beside it."""
    return config_file.parent / INDEX_FILE


def _hex(_instance: Any, attribute: attrs.Attribute[Any], value: str | None) -> None:
    if value is not None and not _HASH_RE.fullmatch(value):
        raise FieldValueError(attribute.name, "expected a SHA-256 in lowercase hex")


@attrs.frozen(kw_only=True)
class IndexEntry:
    """What the index records for one alias."""

    hash: str = attrs.field(validator=_hex)
    name: str
    version: str
    source: str
    archive_digest: str | None = attrs.field(default=None, validator=_hex)

    def to_dict(self) -> dict[str, Any]:
        """The entry as JSON."""
        return attrs.asdict(self)


def _aliases(_instance: Any, attribute: attrs.Attribute[Any], value: Mapping[str, Any]) -> None:
    for alias in value:
        if not SEGMENT_RE.fullmatch(alias):
            raise FieldValueError(attribute.name, f"{alias!r} is not an alias")


@attrs.frozen(kw_only=True)
class PackageIndex:
    """A read index: ``path`` and its aliases."""

    api_version: int
    packages: Mapping[str, IndexEntry] = attrs.field(factory=dict, validator=_aliases)


_CONVERTER: Final = make_converter()


def read_index(path: Path) -> PackageIndex:
    """Read the index at ``path``; a missing file is an empty index."""
    try:
        text = path.read_bytes()
    except FileNotFoundError:
        return PackageIndex(api_version=1)
    except OSError as exc:
        raise PackageIndexInvalid(f"cannot read {path}: {exc.strerror}", path=str(path)) from None
    try:
        index = structure(_CONVERTER, loads_strict(text), PackageIndex)
    except JsonInputError as exc:
        raise PackageIndexInvalid(
            f"{path} is not valid JSON: {exc}", field="$", path=str(path)
        ) from None
    except StructureFailed as exc:
        first = exc.problems[0]
        raise PackageIndexInvalid(
            f"{path}: {first.message}", field=first.path, path=str(path)
        ) from None
    if index.api_version != 1:
        raise PackageIndexInvalid(
            f"{path}: expected api_version 1, found {index.api_version}",
            field="$.api_version",
            path=str(path),
        )
    return index


def write_index(path: Path, packages: Mapping[str, IndexEntry]) -> None:
    """Write the index at ``path`` atomically."""
    document = {
        "api_version": 1,
        "packages": {alias: packages[alias].to_dict() for alias in sorted(packages)},
    }
    write_json_atomic(path, document)
