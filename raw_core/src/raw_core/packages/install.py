"""Installing packages, and the other ``raw pkg`` operations: list, show, remove, gc.

Install unpacks the source into a temporary folder of its own (checking every member
first, :mod:`raw_core.packages.archive`), reads ``raw-package.json``, checks each exported
tool folder by the loader's rules *without importing it*, hashes the tree and checks the
alias. Only then, under the store's lock, does it record the index in raw's list, move the
tree into the store read-only and write the index beside the config file. Nothing of the
package runs. Should a step fail, the store, the index and the data directory are left as
they were.
"""

from __future__ import annotations

import errno
import os
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import attrs

from raw_core._identity import SEGMENT_RE
from raw_core.errors import (
    ManifestError,
    PackageAliasTaken,
    PackageDamaged,
    PackageInvalid,
    PackageNotFound,
    PackageUnsafe,
    RawError,
)
from raw_core.packages.index import (
    IndexEntry,
    PackageIndex,
    index_path,
    read_index,
    write_index,
)
from raw_core.packages.manifest import MANIFEST_FILE, PackageManifest, parse_package
from raw_core.packages.store import PackageStore, store_unavailable
from raw_core.packages.tree import TreeProblem, hash_tree, remove_tree
from raw_core.tools.loader import MANIFEST_FILE as TOOL_MANIFEST
from raw_core.tools.loader import ToolLoader

__all__ = [
    "GcReport",
    "InstallReport",
    "PackageDetails",
    "gc_packages",
    "install_package",
    "list_packages",
    "remove_package",
    "show_package",
]


@attrs.frozen(kw_only=True)
class InstallReport:
    """What install did: ``changed`` is ``False`` when the alias already named this
    content (a no-op); ``stored`` is whether a new store entry was written."""

    alias: str
    entry: IndexEntry
    index: Path
    changed: bool
    stored: bool

    def to_dict(self) -> dict[str, Any]:
        return {
            "alias": self.alias,
            **self.entry.to_dict(),
            "index": str(self.index),
            "changed": self.changed,
            "stored": self.stored,
        }


def _package_root(staged: Path, where: str) -> Path:
    """The package's top folder inside ``staged``: itself, or its one top folder."""
    if (staged / MANIFEST_FILE).is_file():
        return staged
    children = list(staged.iterdir())
    top = children[0] if len(children) == 1 else None
    if (
        top is not None
        and top.is_dir()
        and not top.is_symlink()
        and (top / MANIFEST_FILE).is_file()
    ):
        return top
    raise PackageInvalid(
        f"{where}: no {MANIFEST_FILE} at the top of the package (nor under one top folder)",
        path=where,
    )


def _check_exports(root: Path, manifest: PackageManifest, alias: str, where: str) -> None:
    """Check each exported tool folder by the loader's rules, importing nothing."""
    loader = ToolLoader()
    for export in manifest.exports.tools:
        folder = root / manifest.exports.tool_folder(export)
        label = f"pkg/{alias}/tools/{export}"
        if not folder.is_dir() or folder.is_symlink():
            raise PackageInvalid(
                f"{where}: export {export!r} names {manifest.exports.tools[export]!r},"
                " which is no folder in the package",
                field=f"$.exports.tools.{export}",
                path=where,
            )
        try:
            loader.check(folder, identity=label, root=root)
        except ManifestError as exc:
            message = exc.message.replace(f"{root}{os.sep}", "")
            raise PackageInvalid(
                f"{where}: export {export!r} is no valid tool folder: {exc.code}: {message}",
                field=f"$.exports.tools.{export}",
                path=where,
            ) from None


def _unpack(source: Path, scratch: Path) -> tuple[Path, str | None]:
    """Unpack ``source`` into ``scratch``; return the package's root and the archive's
    digest (``None`` for a folder)."""
    from raw_core.packages import archive  # tarfile and the decompressors: install only

    tree = scratch / "tree"
    tree.mkdir()
    if source.is_dir():
        archive.copy_folder(source, tree)
        return _package_root(tree, str(source)), None
    if not source.is_file():
        raise PackageInvalid(f"no package folder or archive at {source}", path=str(source))
    archive.unpack_archive(source, tree)
    return _package_root(tree, str(source)), archive.file_digest(source)


@contextmanager
def _scratch() -> Iterator[Path]:
    """A private folder of the system's temporary directory (``$TMPDIR``), removed with
    what is left in it when the block ends: a package is unpacked and checked there, so
    that nothing is written to the data directory before every check has passed."""
    try:
        folder = Path(tempfile.mkdtemp(prefix="raw-package-"))
    except OSError as exc:
        raise store_unavailable(Path(tempfile.gettempdir()), exc) from None
    try:
        yield folder
    finally:
        remove_tree(folder)


def _into_store(store: PackageStore, root: Path, digest: str, *, package: str) -> bool:
    """Move the checked tree ``root`` into the store as entry ``digest`` (through a staging
    folder beside the entries); see :meth:`PackageStore.commit` for the result. A tree on
    another file system than the store is copied, and the copy hashed again."""
    from raw_core.packages import archive

    with store.staging() as staging:
        tree = staging / "tree"
        try:
            os.rename(root, tree)
        except OSError as exc:
            if exc.errno != errno.EXDEV:
                raise store_unavailable(store.root, exc) from None
        else:
            return store.commit(tree, digest, package=package)
        tree.mkdir()
        archive.copy_folder(root, tree)
        if hash_tree(tree).digest != digest:
            raise PackageUnsafe(
                f"{root}: the unpacked package changed before it was stored", path=str(root)
            )
        return store.commit(tree, digest, package=package)


def _check_alias(
    index: PackageIndex, alias: str, digest: str, *, force: bool, index_file: Path
) -> IndexEntry | None:
    """What ``alias`` names now in ``index``; ``package_alias_taken`` when that is other
    content and ``force`` was not given."""
    existing = index.packages.get(alias)
    if existing is not None and existing.hash != digest and not force:
        raise PackageAliasTaken(
            f"alias {alias!r} in {index_file} already names {existing.name}"
            f" {existing.version} ({existing.hash[:12]}); pass --force to replace it,"
            " or --alias to install under another name",
            package=alias,
            path=str(index_file),
        )
    return existing


def install_package(
    source: str | os.PathLike[str],
    *,
    config_file: Path,
    alias: str | None = None,
    force: bool = False,
    store: PackageStore | None = None,
) -> InstallReport:
    """Install the package at ``source`` (a folder or a tar archive) for ``config_file``.

    Raises ``package_invalid``, ``package_unsafe``, ``package_alias_taken`` (without
    ``force``) and leaves the store, the index and the data directory as they were when it
    does: the package is unpacked and checked in a temporary folder of its own first."""
    store = store or PackageStore()
    path = Path(os.path.abspath(source))
    where = str(path)
    index_file = index_path(config_file)
    with _scratch() as scratch:
        root, archive_digest = _unpack(path, scratch)
        manifest = parse_package((root / MANIFEST_FILE).read_bytes(), where=where)
        name = manifest.name if alias is None else alias  # an empty alias is no alias
        if not SEGMENT_RE.fullmatch(name):
            raise PackageInvalid(
                f"{name!r} is no alias: lowercase letters, digits, _ and -, starting with a letter",
                field="--alias",
            )
        _check_exports(root, manifest, name, where)
        try:
            digest = hash_tree(root).digest
        except TreeProblem as exc:
            raise PackageUnsafe(f"{where}: {exc}", path=where) from None
        entry = IndexEntry(
            hash=digest,
            name=manifest.name,
            version=manifest.version,
            source=where,
            archive_digest=archive_digest,
        )
        _check_alias(read_index(index_file), name, digest, force=force, index_file=index_file)
        with store.locked():
            index = read_index(index_file)  # again: another install may have changed it
            existing = _check_alias(index, name, digest, force=force, index_file=index_file)
            # Listed first: the list only tells gc which indexes to read, so an index listed
            # early is harmless, while one written but not listed would let gc take its files.
            store.record_index(index_file)
            if existing is not None and existing.hash == digest and _intact(store, digest, name):
                return InstallReport(
                    alias=name, entry=existing, index=index_file, changed=False, stored=False
                )
            stored = _into_store(store, root, digest, package=name)
            try:
                write_index(index_file, {**index.packages, name: entry})
            except BaseException:
                if stored:
                    store.remove(digest)
                raise
        return InstallReport(alias=name, entry=entry, index=index_file, changed=True, stored=stored)


def _intact(store: PackageStore, digest: str, package: str) -> bool:
    try:
        store.verify(digest, package=package)
    except PackageDamaged:
        return False
    return True


def list_packages(config_file: Path) -> dict[str, IndexEntry]:
    """The aliases of ``config_file``'s index."""
    return dict(read_index(index_path(config_file)).packages)


def _entry(config_file: Path, alias: str) -> IndexEntry:
    index_file = index_path(config_file)
    packages = read_index(index_file).packages
    entry = packages.get(alias)
    if entry is None:
        installed = ", ".join(sorted(packages)) or "none"
        raise PackageNotFound(
            f"no package is installed as {alias!r} in {index_file} (installed: {installed})",
            package=alias,
            path=str(index_file),
        )
    return entry


@attrs.frozen(kw_only=True)
class PackageDetails:
    """What ``raw pkg show`` prints: the index entry, the manifest, each exported tool's
    ``tool.json`` as written, and whether the store entry still matches its hash."""

    alias: str
    entry: IndexEntry
    folder: Path
    intact: bool
    problem: str | None
    manifest: PackageManifest | None
    tools: dict[str, dict[str, Any]]

    def to_dict(self) -> dict[str, Any]:
        return {
            "alias": self.alias,
            **self.entry.to_dict(),
            "folder": str(self.folder),
            "intact": self.intact,
            "problem": self.problem,
            "manifest": self.manifest.to_dict() if self.manifest is not None else None,
            "tools": self.tools,
        }


def show_package(
    alias: str, *, config_file: Path, store: PackageStore | None = None
) -> PackageDetails:
    """Describe alias ``alias``: reads files, imports nothing."""
    from raw_core._json import JsonInputError, loads_strict

    store = store or PackageStore()
    entry = _entry(config_file, alias)
    folder = store.entry(entry.hash)
    try:
        store.verify(entry.hash, package=alias)
    except PackageDamaged as exc:
        return PackageDetails(
            alias=alias,
            entry=entry,
            folder=folder,
            intact=False,
            problem=str(exc),
            manifest=None,
            tools={},
        )
    manifest = parse_package((folder / MANIFEST_FILE).read_bytes(), where=str(folder))
    tools: dict[str, dict[str, Any]] = {}
    for export in manifest.exports.tools:
        tool_file = folder / manifest.exports.tool_folder(export) / TOOL_MANIFEST
        try:
            tools[export] = {
                "folder": manifest.exports.tool_folder(export),
                "manifest": loads_strict(tool_file.read_bytes()),
            }
        except (OSError, JsonInputError) as exc:  # checked at install: the entry is intact
            tools[export] = {"folder": manifest.exports.tool_folder(export), "error": str(exc)}
    return PackageDetails(
        alias=alias,
        entry=entry,
        folder=folder,
        intact=True,
        problem=None,
        manifest=manifest,
        tools=tools,
    )


def remove_package(
    alias: str, *, config_file: Path, store: PackageStore | None = None
) -> IndexEntry:
    """Remove ``alias`` from ``config_file``'s index; its store entry stays until gc."""
    store = store or PackageStore()
    index_file = index_path(config_file)
    with store.locked():
        entry = _entry(config_file, alias)
        packages = dict(read_index(index_file).packages)
        del packages[alias]
        write_index(index_file, packages)
    return entry


@attrs.frozen(kw_only=True)
class GcReport:
    """What gc removed and kept, and which listed indexes no longer exist."""

    removed: list[str]
    kept: list[str]
    dropped_indexes: list[str]

    def to_dict(self) -> dict[str, Any]:
        return attrs.asdict(self)


def gc_packages(store: PackageStore | None = None) -> GcReport:
    """Remove the store entries that no listed index refers to (and staging folders a
    crashed install left). An index in the list that no longer exists drops out of it; one
    that cannot be read stops gc before anything is removed."""
    store = store or PackageStore()
    with store.locked():
        listed = store.indexes()
        used: set[str] = set()
        alive: list[Path] = []
        dropped: list[str] = []
        for index_file in listed:
            if not index_file.exists():
                dropped.append(str(index_file))
                continue
            alive.append(index_file)
            try:
                used.update(e.hash for e in read_index(index_file).packages.values())
            except RawError as exc:
                exc.message = f"gc removed nothing: {exc.message}"
                exc.args = (exc.message,)
                raise
        removed: list[str] = []
        kept: list[str] = []
        for digest in store.hashes():
            if digest in used:
                kept.append(digest)
            else:
                store.remove(digest)
                removed.append(digest)
        for folder in store.stale_staging():
            store.remove(folder.name)
        if dropped:
            store.write_indexes(alive)
    return GcReport(removed=removed, kept=kept, dropped_indexes=dropped)
