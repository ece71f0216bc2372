"""The ``pkg/`` tool source: ``pkg/<alias>/tools/<export>`` from the package store.

An identity resolves through the index beside the config file that names it
(:func:`raw_core.packages.index.index_path`); an alias the index lacks, or an export the
package lacks, is ``tool_not_found`` (as for every source). The alias gives a store entry,
whose files are hashed again before its first tool is loaded — an entry whose files were
changed or damaged is ``package_damaged`` naming the package, and nothing of it is
imported. Only the
aliases and exports the agent's ``tools.use`` names are read; a source lives for one
session, so each index is read and each entry verified once per session.
"""

from __future__ import annotations

from pathlib import Path

from raw_core.config import Config
from raw_core.errors import ToolNotFound
from raw_core.packages.index import PackageIndex, index_path, read_index
from raw_core.packages.manifest import MANIFEST_FILE, PackageManifest, parse_package
from raw_core.packages.store import PackageStore
from raw_core.tools.identity import ToolIdentity
from raw_core.tools.loader import LoadedTool, ToolLoader

__all__ = ["PackageSource"]


class PackageSource:
    """Serves ``pkg/`` for one config: a :class:`raw_core.tools.sources.SyncToolSource`.

    ``config_file`` is the config file whose index the identities resolve through
    (``None``: no config file, so no packages); ``store`` the package store (the user's
    by default).
    """

    def __init__(
        self,
        config_file: Path | None,
        *,
        loader: ToolLoader,
        store: PackageStore | None = None,
    ) -> None:
        self._config_file = config_file
        self._loader = loader
        self._store = store or PackageStore()
        self._indexes: dict[Path, PackageIndex] = {}
        self._verified: dict[str, tuple[Path, PackageManifest]] = {}

    @classmethod
    def for_config(cls, config: Config, loader: ToolLoader) -> PackageSource:
        """The source for ``config``'s own file."""
        return cls(config.path, loader=loader)

    @property
    def prefix(self) -> str:
        """``pkg``."""
        return "pkg"

    def _index(self, identity: ToolIdentity) -> tuple[Path, PackageIndex]:
        if self._config_file is None:
            raise ToolNotFound(
                f"{identity}: packages are installed for a config file, and none was given",
                tool=identity.text,
            )
        path = index_path(self._config_file)
        index = self._indexes.get(path)
        if index is None:
            index = self._indexes[path] = read_index(path)
        return path, index

    def _package(self, alias: str, digest: str) -> tuple[Path, PackageManifest]:
        found = self._verified.get(digest)
        if found is None:
            folder = self._store.verify(digest, package=alias)
            manifest = parse_package((folder / MANIFEST_FILE).read_bytes(), where=str(folder))
            found = self._verified[digest] = (folder, manifest)
        return found

    def load(self, identity: ToolIdentity) -> LoadedTool:
        """Load ``pkg/<alias>/tools/<export>`` from the verified store entry."""
        alias, export = identity.parts
        path, index = self._index(identity)
        entry = index.packages.get(alias)
        if entry is None:
            installed = ", ".join(sorted(index.packages)) or "none"
            raise ToolNotFound(
                f"{identity}: no package is installed as {alias!r} in {path}"
                f" (installed: {installed}); install one with `raw pkg install SOURCE"
                f" --alias {alias}`",
                tool=identity.text,
                package=alias,
                path=str(path),
            )
        folder, manifest = self._package(alias, entry.hash)
        if export not in manifest.exports.tools:
            offered = ", ".join(sorted(manifest.exports.tools)) or "none"
            raise ToolNotFound(
                f"{identity}: package {alias!r} ({manifest.name} {manifest.version}) exports"
                f" no tool {export!r} (it exports: {offered})",
                tool=identity.text,
                package=alias,
            )
        tool_folder = folder / manifest.exports.tool_folder(export)
        return self._loader.load(tool_folder, identity=identity.text, root=folder)

    async def open(self) -> None:
        """Nothing to acquire."""

    async def resolve(self, identity: ToolIdentity) -> LoadedTool:
        """:meth:`load` in the loader's worker thread: hashing the entry and importing the
        entry module must not stall other sessions."""
        return await self._loader.in_thread(self.load, identity)

    async def close(self) -> None:
        """Nothing to release."""
