"""The plug-in host: one per application, holding the plug-ins of the ``raw`` group.

There is no module-level plug-in manager and nothing is loaded at import time: an app
builds a :class:`PluginHost`, calls :meth:`PluginHost.load_entry_points` (or registers
plug-ins by hand, as tests do), and passes the host on. Duplicate names are an error
naming both plug-ins, never a silent rename; a plug-in that fails to load is an error,
never a log line.

Loading the plug-ins imports none of the modules their records are defined in (the tool
loader behind :class:`~raw_core.tools.sources.ToolFolder`, the config, the session
records, the provider contract): each is imported when its records are first asked for,
so a command that asks for none (``raw --help``) does not pay for them.

:attr:`PluginHost.hook` is pluggy's hook relay, typed as :class:`HookRelay` (one
:class:`pluggy.HookCaller` per raw hook), so a misspelt hook name is a mypy error; what a
hook implementation takes and returns is checked through
:func:`raw_core.plugins.hookspecs.implements`.
"""

from __future__ import annotations

import importlib.metadata
from collections.abc import Iterator
from typing import TYPE_CHECKING, Any, Final, Literal, Protocol, TypeVar, cast

import pluggy

from raw_core._names import RESERVED_SOURCES, SEGMENT_RE
from raw_core.errors import PluginConflict, PluginInvalid
from raw_core.plugins import hookspecs

if TYPE_CHECKING:
    from pluggy import HookImpl

    from raw_core.config import ConfigSection
    from raw_core.providers.contract import ProviderRecord
    from raw_core.sessions.backend import SessionBackendRecord
    from raw_core.tools.sources import ToolFolder, ToolSourceRecord

__all__ = ["ENTRY_POINT_GROUP", "HookRelay", "PluginHost", "RecordKind"]

ENTRY_POINT_GROUP = "raw"
_SQLITE: Final = "sqlite"
"""The session backend raw ships itself; no plug-in may register this name."""
_PLUGIN_SERVED: Final = frozenset({"mcp", "pkg"})
"""The reserved identity prefixes a plug-in's tool source may serve."""

RecordKind = Literal["tool_source", "config_section", "session_backend", "provider"]
"""What :meth:`PluginHost.registered_by` can look up."""

R = TypeVar("R")


class HookRelay(Protocol):
    """The hook callers of :attr:`PluginHost.hook`, one per hookspec of
    :mod:`raw_core.plugins.hookspecs` (pluggy's own relay declares none)."""

    raw_register_tools: pluggy.HookCaller
    raw_register_providers: pluggy.HookCaller
    raw_register_tool_sources: pluggy.HookCaller
    raw_register_config_sections: pluggy.HookCaller
    raw_register_session_backends: pluggy.HookCaller
    raw_register_commands: pluggy.HookCaller
    raw_tool_describe: pluggy.HookCaller
    raw_tool_check: pluggy.HookCaller
    raw_tool_call: pluggy.HookCaller
    raw_session_event: pluggy.HookCaller


class PluginHost:
    """Owns a pluggy manager for the ``raw`` project and what its plug-ins register."""

    def __init__(self) -> None:
        self._manager = pluggy.PluginManager(hookspecs.PROJECT_NAME)
        self._manager.add_hookspecs(hookspecs)
        self._origins: dict[str, str | _EntryPointOrigin] = {}
        self._tool_folders: dict[str, dict[str, ToolFolder]] | None = None
        self._providers: dict[str, ProviderRecord] | None = None
        self._tool_sources: dict[str, ToolSourceRecord] | None = None
        self._config_sections: dict[str, ConfigSection] | None = None
        self._session_backends: dict[str, SessionBackendRecord] | None = None
        self._owners: dict[tuple[str, str], str] = {}

    @property
    def hook(self) -> HookRelay:
        """The hook relay (``host.hook.raw_tool_check`` and so on). Its callers are
        pluggy's, whose calls are untyped; raw calls each implementation itself, in the
        order of :meth:`implementations` (see :mod:`raw_core.plugins.hooks`)."""
        return cast("HookRelay", self._manager.hook)

    @property
    def manager(self) -> pluggy.PluginManager:
        """The underlying pluggy manager, for advanced use and tests."""
        return self._manager

    def plugin_names(self) -> list[str]:
        """Names of the registered plug-ins, in registration order."""
        return list(self._origins)

    def implementations(self, hook: str) -> list[HookImpl]:
        """The implementations of ``hook`` in plug-in registration order, the order raw
        calls them in: pluggy keeps them in an order of its own (``tryfirst`` ones last,
        ``trylast`` ones first), which raw does not consult. A plug-in registered on the
        pluggy manager directly comes after those registered here."""
        impls: list[HookImpl] = getattr(self._manager.hook, hook).get_hookimpls()
        if len(impls) < 2:
            return impls
        order = {name: index for index, name in enumerate(self._origins)}
        last = len(order)
        return sorted(impls, key=lambda impl: order.get(impl.plugin_name, last))

    def register(self, plugin: object, *, name: str, origin: str | None = None) -> None:
        """Register ``plugin`` under ``name`` (its entry-point name).

        Raises :class:`PluginConflict` when the name is reserved or taken, and
        :class:`PluginInvalid` when it is not a valid name or pluggy refuses the plug-in.
        """
        self._register(plugin, name, origin or repr(plugin))

    def _register(self, plugin: object, name: str, where: str | _EntryPointOrigin) -> None:
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
        self._tool_sources = None
        self._config_sections = None
        self._session_backends = None
        self._owners = {}

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
            origin = _EntryPointOrigin(entry_point)
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
            self._register(plugin, entry_point.name, origin)

    def providers(self) -> dict[str, ProviderRecord]:
        """Provider name → :class:`raw_core.providers.contract.ProviderRecord`: raw_core's own
        ``replay`` provider and every ``raw_register_providers`` hook's; two registering one
        name is an error."""
        if self._providers is None:
            self._providers = _provider_records(self)
        return self._providers

    def tool_sources(self) -> dict[str, ToolSourceRecord]:
        """Prefix → :class:`raw_core.tools.sources.ToolSourceRecord`, from every
        ``raw_register_tool_sources`` hook.

        A prefix must be a valid identity segment; ``local`` and ``agent`` are raw's own
        (``plugin_conflict``), while ``mcp`` and ``pkg`` may be served. Two records for one
        prefix, or a prefix that is also a plug-in's ``raw_register_tools`` name, are
        ``plugin_conflict`` naming both plug-ins; a ``section`` the same plug-in does not
        claim is ``plugin_invalid``.
        """
        if self._tool_sources is not None:
            return self._tool_sources
        from raw_core.tools.sources import ToolSourceRecord

        folders = self.tool_folders()
        sections = self.config_sections()
        found: dict[str, ToolSourceRecord] = {}
        for name, record in self._records(
            "raw_register_tool_sources", ToolSourceRecord, "ToolSourceRecord"
        ):
            prefix = record.prefix
            _check_name(name, "tool source prefix", prefix)
            if prefix in RESERVED_SOURCES - _PLUGIN_SERVED:
                raise PluginConflict(
                    f"plug-in {name!r} registers a tool source for {prefix}/, which raw"
                    f" serves itself (a plug-in may serve mcp/ and pkg/ only of the reserved"
                    " prefixes)",
                    plugin=name,
                )
            if prefix in found:
                self._conflict("tool_source", prefix, name, "a tool source for")
            if prefix in folders:
                raise PluginConflict(
                    f"plug-in {name!r} registers a tool source for {prefix}/, but plug-in"
                    f" {prefix!r} ships tool folders under that prefix",
                    plugin=name,
                )
            if record.section is not None and (
                record.section not in sections
                or self._owners[("config_section", record.section)] != name
            ):
                raise PluginInvalid(
                    f"plug-in {name!r}: the tool source for {prefix}/ reads config section"
                    f" {record.section!r}, which the plug-in does not claim"
                    " (raw_register_config_sections)",
                    plugin=name,
                )
            found[prefix] = record
            self._owners[("tool_source", prefix)] = name
        self._tool_sources = found
        return found

    def config_sections(self) -> dict[str, ConfigSection]:
        """Top-level config key → :class:`raw_core.config.ConfigSection`, from every
        ``raw_register_config_sections`` hook.

        A key raw's config owns (``agents``, ``sessions``...) cannot be claimed, and two
        plug-ins claiming one key are ``plugin_conflict`` naming both.
        """
        if self._config_sections is not None:
            return self._config_sections
        from raw_core.config import CORE_SECTIONS, ConfigSection

        found: dict[str, ConfigSection] = {}
        for name, record in self._records(
            "raw_register_config_sections", ConfigSection, "ConfigSection"
        ):
            _check_name(name, "config section name", record.name)
            if record.name in CORE_SECTIONS:
                raise PluginConflict(
                    f"plug-in {name!r} claims the config key {record.name!r}, which raw's"
                    " own config owns",
                    plugin=name,
                )
            if record.name in found:
                self._conflict("config_section", record.name, name, "the config section")
            found[record.name] = record
            self._owners[("config_section", record.name)] = name
        self._config_sections = found
        return found

    def session_backends(self) -> dict[str, SessionBackendRecord]:
        """Backend name → :class:`raw_core.sessions.backend.SessionBackendRecord`, from every
        ``raw_register_session_backends`` hook.

        ``sqlite`` is raw's own backend and not among them (a plug-in registering it is
        ``plugin_conflict``); two plug-ins registering one name are a conflict naming both.
        """
        if self._session_backends is not None:
            return self._session_backends
        from raw_core.sessions.backend import SessionBackendRecord

        found: dict[str, SessionBackendRecord] = {}
        for name, record in self._records(
            "raw_register_session_backends", SessionBackendRecord, "SessionBackendRecord"
        ):
            _check_name(name, "session backend name", record.name)
            if record.name == _SQLITE:
                raise PluginConflict(
                    f"plug-in {name!r} registers a session backend named 'sqlite', which is"
                    " raw's own",
                    plugin=name,
                )
            if record.name in found:
                self._conflict("session_backend", record.name, name, "a session backend named")
            found[record.name] = record
            self._owners[("session_backend", record.name)] = name
        self._session_backends = found
        return found

    def registered_by(self, kind: RecordKind, name: str) -> str:
        """The plug-in that registered the record ``name`` of ``kind`` (``raw_core`` for
        raw's own). ``KeyError`` when there is none."""
        accessors = {
            "tool_source": self.tool_sources,
            "config_section": self.config_sections,
            "session_backend": self.session_backends,
            "provider": self.providers,
        }
        accessors[kind]()
        return self._owners[(kind, name)]

    def _conflict(self, kind: RecordKind, key: str, name: str, what: str) -> None:
        raise PluginConflict(
            f"two plug-ins register {what} {key!r}: {self._owners[(kind, key)]!r} and {name!r}",
            plugin=name,
        )

    def _records(self, hook: str, cls: type[R], label: str) -> Iterator[tuple[str, R]]:
        """``(plug-in name, record)`` for every record the registration ``hook`` returns;
        a hook that raises, or a record that is not a ``cls``, is ``plugin_invalid``."""
        for impl in self.implementations(hook):
            name = impl.plugin_name
            try:
                records: Any = impl.function()
            except Exception as exc:
                raise PluginInvalid(
                    f"plug-in {name!r}: {hook} raised {type(exc).__name__}: {exc}",
                    plugin=name,
                ) from exc
            if records is None:
                continue
            if not isinstance(records, list | tuple):
                raise PluginInvalid(
                    f"plug-in {name!r}: {hook} must return a list of {label} records,"
                    f" found {type(records).__name__}",
                    plugin=name,
                )
            for record in records:
                if not isinstance(record, cls):
                    raise PluginInvalid(
                        f"plug-in {name!r}: {hook} must return {label} records,"
                        f" found {type(record).__name__}",
                        plugin=name,
                    )
                yield name, record

    def tool_folders(self) -> dict[str, dict[str, ToolFolder]]:
        """Plug-in name → tool name → folder, from every ``raw_register_tools`` hook.

        Computed once per set of registered plug-ins.
        """
        if self._tool_folders is not None:
            return self._tool_folders
        from raw_core.tools.sources import ToolFolder

        result: dict[str, dict[str, ToolFolder]] = {}
        for impl in self.implementations("raw_register_tools"):
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


def _check_name(plugin: str, what: str, value: str) -> None:
    if not isinstance(value, str) or not SEGMENT_RE.fullmatch(value):
        raise PluginInvalid(
            f"plug-in {plugin!r}: {what} {value!r} must be lowercase letters, digits, _ and -,"
            " starting with a letter",
            plugin=plugin,
        )


def _provider_records(host: PluginHost) -> dict[str, ProviderRecord]:
    from raw_core.providers.contract import ProviderRecord
    from raw_core.providers.scripted import replay_provider_record

    core = replay_provider_record()
    found: dict[str, ProviderRecord] = {core.name: core}
    host._owners[("provider", core.name)] = "raw_core"
    for name, record in host._records("raw_register_providers", ProviderRecord, "ProviderRecord"):
        if record.name in found:
            host._conflict("provider", record.name, name, "a provider named")
        found[record.name] = record
        host._owners[("provider", record.name)] = name
    return found


class _EntryPointOrigin:
    """Where a plug-in loaded from an entry point comes from (``module (from dist
    version)``), written out only when an error message says it: reading a
    distribution's name and version parses its metadata, which loading the plug-ins at
    every start of raw would otherwise pay for each of them."""

    __slots__ = ("_entry_point",)

    def __init__(self, entry_point: importlib.metadata.EntryPoint) -> None:
        self._entry_point = entry_point

    def __str__(self) -> str:
        dist = self._entry_point.dist
        found = f"{dist.name} {dist.version}" if dist is not None else "unknown distribution"
        return f"{self._entry_point.value} (from {found})"
