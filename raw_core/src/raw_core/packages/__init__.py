"""Packages: tool folders installed from a folder or a tar archive into a content-addressed
store, and the ``pkg/<alias>/tools/<export>`` tool source that loads them (spec 004,
"Packages"). Installing and inspecting a package import nothing and run nothing.

Names are imported lazily: :mod:`raw_core.packages.archive` (``tarfile``, the
decompressors) only when something is installed.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from raw_core._lazy import lazy_exports

if TYPE_CHECKING:
    from raw_core.packages.index import INDEX_FILE, IndexEntry, index_path
    from raw_core.packages.install import (
        GcReport,
        InstallReport,
        PackageDetails,
        gc_packages,
        install_package,
        list_packages,
        remove_package,
        show_package,
    )
    from raw_core.packages.manifest import MANIFEST_FILE, PackageManifest, parse_package
    from raw_core.packages.source import PackageSource
    from raw_core.packages.store import PackageStore, user_data_dir

__all__ = [
    "INDEX_FILE",
    "MANIFEST_FILE",
    "GcReport",
    "IndexEntry",
    "InstallReport",
    "PackageDetails",
    "PackageManifest",
    "PackageSource",
    "PackageStore",
    "gc_packages",
    "index_path",
    "install_package",
    "list_packages",
    "parse_package",
    "remove_package",
    "show_package",
    "user_data_dir",
]

_EXPORTS: dict[str, str] = {
    "INDEX_FILE": "raw_core.packages.index",
    "IndexEntry": "raw_core.packages.index",
    "index_path": "raw_core.packages.index",
    "GcReport": "raw_core.packages.install",
    "InstallReport": "raw_core.packages.install",
    "PackageDetails": "raw_core.packages.install",
    "gc_packages": "raw_core.packages.install",
    "install_package": "raw_core.packages.install",
    "list_packages": "raw_core.packages.install",
    "remove_package": "raw_core.packages.install",
    "show_package": "raw_core.packages.install",
    "MANIFEST_FILE": "raw_core.packages.manifest",
    "PackageManifest": "raw_core.packages.manifest",
    "parse_package": "raw_core.packages.manifest",
    "PackageSource": "raw_core.packages.source",
    "PackageStore": "raw_core.packages.store",
    "user_data_dir": "raw_core.packages.store",
}

# Hidden from the type checker, which would otherwise take any name as existing here: the
# imports above give every public name its real type, and a misspelt one stays an error.
if not TYPE_CHECKING:
    __getattr__, __dir__ = lazy_exports(globals(), _EXPORTS)
