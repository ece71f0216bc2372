"""The plug-in host: one per application, holding the plug-ins of the ``raw`` group.

There is no module-level plug-in manager and nothing is loaded at import time: an app
builds a :class:`PluginHost`, calls :meth:`PluginHost.load_entry_points` (or registers
plug-ins by hand, as tests do), and passes the host on. Duplicate names are an error
naming both plug-ins, never a silent rename; a plug-in that fails to load is an error,
never a log line.
"""

from __future__ import annotations

import importlib.metadata
from pathlib import Path
from typing import Any

import attrs
import pluggy

from raw_core import hookspecs
from raw_core.errors import PluginConflict, PluginInvalid
from raw_core.identity import RESERVED_SOURCES, SEGMENT_RE

__all__ = ["ENTRY_POINT_GROUP", "PluginHost", "ToolFolder"]

ENTRY_POINT_GROUP = "raw"


@attrs.frozen(kw_only=True)
class ToolFolder:
    """A tool a plug-in ships: a folder holding ``tool.json`` and its entry module.

    The folder's name is the tool's name inside the plug-in (``<plugin>/<folder>``).
    """

    path: Path = attrs.field(converter=Path)

    @property
    def name(self) -> str:
        """The tool's name inside its plug-in."""
        return self.path.name


class PluginHost:
    """Owns a pluggy manager for the ``raw`` project and what its plug-ins register."""

    def __init__(self) -> None:
        self._manager = pluggy.PluginManager(hookspecs.PROJECT_NAME)
        self._manager.add_hookspecs(hookspecs)
        self._origins: dict[str, str] = {}
        self._tool_folders: dict[str, dict[str, ToolFolder]] | None = None
        self._providers: dict[str, Any] | None = None

    @property
    def hook(self) -> Any:
        """The hook relay (``host.hook.raw_tool_check(...)``)."""
        return self._manager.hook

    @property
    def manager(self) -> pluggy.PluginManager:
        """The underlying pluggy manager, for advanced use and tests."""
        return self._manager

    def plugin_names(self) -> list[str]:
        """Names of the registered plug-ins, in registration order."""
        return list(self._origins)

    def register(self, plugin: object, *, name: str, origin: str | None = None) -> None:
        """Register ``plugin`` under ``name`` (its entry-point name).

        Raises :class:`PluginConflict` when the name is reserved or taken, and
        :class:`PluginInvalid` when it is not a valid name or pluggy refuses the plug-in.
        """
        where = origin or repr(plugin)
        if not SEGMENT_RE.fullmatch(name):
            raise PluginInvalid(
                f"plug-in name {name!r} ({where}) must be lowercase letters, digits, _ and -,"
                " starting with a letter",
                plugin=name,
            )
        if name in RESERVED_SOURCES:
            raise PluginConflict(
                f"plug-in {where} takes the name {name!r}, which is reserved for raw's"
                f" {name}/ tools",
                plugin=name,
            )
        if name in self._origins:
            raise PluginConflict(
                f"two plug-ins are named {name!r}: {self._origins[name]} and {where}", plugin=name
            )
        try:
            self._manager.register(plugin, name=name)
        except (pluggy.PluginValidationError, ValueError) as exc:
            raise PluginInvalid(
                f"plug-in {name!r} ({where}) is invalid: {exc}", plugin=name
            ) from exc
        unknown = self._unknown_hooks(plugin)
        if unknown:
            self._manager.unregister(plugin)
            raise PluginInvalid(
                f"plug-in {name!r} ({where}) implements unknown hooks: {', '.join(unknown)}",
                plugin=name,
            )
        self._origins[name] = where
        self._tool_folders = None
        self._providers = None

    def _unknown_hooks(self, plugin: object) -> list[str]:
        """Hook implementations of ``plugin`` that match no raw hookspec (typos)."""
        unknown = []
        for hook_name, caller in vars(self._manager.hook).items():
            if hook_name.startswith("_") or caller.has_spec():
                continue
            if any(
                impl.plugin is plugin and not impl.optionalhook for impl in caller.get_hookimpls()
            ):
                unknown.append(hook_name)
        return sorted(unknown)

    def load_entry_points(self, group: str = ENTRY_POINT_GROUP) -> None:
        """Import and register every plug-in of the entry-point group."""
        for entry_point in importlib.metadata.entry_points(group=group):
            origin = f"{entry_point.value} (from {_distribution(entry_point)})"
            if entry_point.name in self._origins:
                raise PluginConflict(
                    f"two plug-ins are named {entry_point.name!r}:"
                    f" {self._origins[entry_point.name]} and {origin}",
                    plugin=entry_point.name,
                )
            try:
                plugin = entry_point.load()
            except Exception as exc:
                raise PluginInvalid(
                    f"plug-in {entry_point.name!r} ({origin}) failed to load:"
                    f" {type(exc).__name__}: {exc}",
                    plugin=entry_point.name,
                ) from exc
            self.register(plugin, name=entry_point.name, origin=origin)

    def providers(self) -> dict[str, Any]:
        """Provider name → :class:`raw_core.provider.ProviderRecord`: raw_core's own
        ``replay`` provider and every ``raw_register_providers`` hook's; two registering one
        name is an error."""
        if self._providers is None:
            self._providers = _provider_records(self)
        return self._providers

    def tool_folders(self) -> dict[str, dict[str, ToolFolder]]:
        """Plug-in name → tool name → folder, from every ``raw_register_tools`` hook.

        Computed once per set of registered plug-ins.
        """
        if self._tool_folders is not None:
            return self._tool_folders
        result: dict[str, dict[str, ToolFolder]] = {}
        for impl in self._manager.hook.raw_register_tools.get_hookimpls():
            name = impl.plugin_name
            try:
                records: Any = impl.function()
            except Exception as exc:
                raise PluginInvalid(
                    f"plug-in {name!r}: raw_register_tools raised {type(exc).__name__}: {exc}",
                    plugin=name,
                ) from exc
            tools: dict[str, ToolFolder] = {}
            for record in records or []:
                if not isinstance(record, ToolFolder):
                    raise PluginInvalid(
                        f"plug-in {name!r}: raw_register_tools must return ToolFolder records,"
                        f" found {type(record).__name__}",
                        plugin=name,
                    )
                if not SEGMENT_RE.fullmatch(record.name):
                    raise PluginInvalid(
                        f"plug-in {name!r}: tool folder name {record.name!r} must be lowercase"
                        " letters, digits, _ and -, starting with a letter",
                        plugin=name,
                    )
                if record.name in tools:
                    raise PluginInvalid(
                        f"plug-in {name!r} registers two tools named {record.name!r}:"
                        f" {tools[record.name].path} and {record.path}",
                        plugin=name,
                    )
                tools[record.name] = record
            result[name] = tools
        self._tool_folders = result
        return result


def _provider_records(host: PluginHost) -> dict[str, Any]:
    from raw_core.provider import ProviderRecord
    from raw_core.scripted import replay_provider_record

    core = replay_provider_record()
    found: dict[str, Any] = {core.name: core}
    owners: dict[str, str] = {core.name: "raw_core"}
    for impl in host.manager.hook.raw_register_providers.get_hookimpls():
        name = impl.plugin_name
        try:
            records: Any = impl.function()
        except Exception as exc:
            raise PluginInvalid(
                f"plug-in {name!r}: raw_register_providers raised {type(exc).__name__}: {exc}",
                plugin=name,
            ) from exc
        for record in records or []:
            if not isinstance(record, ProviderRecord):
                raise PluginInvalid(
                    f"plug-in {name!r}: raw_register_providers must return ProviderRecord"
                    f" records, found {type(record).__name__}",
                    plugin=name,
                )
            if record.name in found:
                raise PluginConflict(
                    f"two plug-ins register a provider named {record.name!r}:"
                    f" {owners[record.name]!r} and {name!r}",
                    plugin=name,
                )
            found[record.name] = record
            owners[record.name] = name
    return found


def _distribution(entry_point: importlib.metadata.EntryPoint) -> str:
    dist = entry_point.dist
    return f"{dist.name} {dist.version}" if dist is not None else "unknown distribution"
