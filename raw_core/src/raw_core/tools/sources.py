"""Tool sources: the edge that turns the identities of one prefix into loaded tools.

Every identity's first segment names its source. raw serves three kinds itself:

* ``local/<folder>`` from the user's tools directory and ``agent/<folder>`` from ``tools/``
  beside the config file (:class:`FolderSource`);
* ``<plugin>/<tool>`` from the folders a plug-in registers with ``raw_register_tools``
  (:class:`PluginFolderSource`).

Any other prefix is served by a source a plug-in registers with
``raw_register_tool_sources`` (a :class:`ToolSourceRecord`). Of the reserved prefixes only
``mcp`` and ``pkg`` may be served that way. ``mcp``'s source ships in its own distribution;
``pkg``'s is raw's own package source, which lives in a layer above this one and is handed
in by the agent layer (``own``), a plug-in's ``pkg`` source taking its place. Without a
source an ``mcp/`` or ``pkg/`` identity is ``tool_source_unavailable``.

A source lives for one session: it is built by its record's factory, opened before the
first identity is resolved, and closed when the session ends (:func:`raw_core.agent.open_agent`
does all three). Folder sources also offer a synchronous :meth:`SyncToolSource.load`, which
:func:`raw_core.agent.load_agent` uses; a prefix served only by an async source cannot be
loaded synchronously.
"""

from __future__ import annotations

import logging
import os
from collections.abc import Awaitable, Callable, Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any, Final, Literal, Protocol, TypeVar, runtime_checkable

import anyio
import attrs
from anyio.abc import TaskGroup

from raw_core.errors import PluginInvalid, RawError, ToolNotFound, ToolSourceUnavailable
from raw_core.tools.identity import ToolIdentity
from raw_core.tools.loader import LoadedTool, ToolLoader

if TYPE_CHECKING:
    from raw_core.config import Config

__all__ = [
    "CLOSE_TIMEOUT",
    "FolderSource",
    "PluginFolderSource",
    "PluginRecords",
    "SessionSources",
    "SourceContext",
    "SyncToolSource",
    "ToolFolder",
    "ToolSource",
    "ToolSourceRecord",
]

CLOSE_TIMEOUT: Final = 10.0
"""Seconds one source may take to close; closing is shielded from cancellation."""

T = TypeVar("T")
_UNSERVED: Final = {"mcp": "MCP servers", "pkg": "packages"}
_INSTALL: Final = {"mcp": "raw-mcp"}
"""The distribution that serves a reserved prefix, where one exists."""
_log = logging.getLogger(__name__)


@runtime_checkable
class ToolSource(Protocol):
    """Resolves the identities of one prefix into loaded tools, for one session.

    The owner (:func:`raw_core.agent.open_agent`, the app) calls :meth:`open` once before
    the first :meth:`resolve`, and :meth:`close` once at the session's end — also when the
    session failed, and also when :meth:`open` raised. A source that starts a process or
    opens a connection (an MCP client, say) does it in :meth:`open`, not in its factory, so
    that building a source is cheap and never leaks.
    """

    @property
    def prefix(self) -> str:
        """The first identity segment this source serves (``local``, ``builtin``, ``mcp``)."""
        ...

    async def open(self) -> None:
        """Acquire what resolving needs; called once, at session start."""
        ...

    async def resolve(self, identity: ToolIdentity) -> LoadedTool:
        """Return the loaded tool of ``identity`` (its ``identity`` is ``identity.text``).

        Raise a :class:`raw_core.errors.RawError` with a stable code and context
        (``tool_not_found`` for an identity the source does not have, naming what it
        offers; ``tool_source_unavailable`` when the source cannot serve at all).
        """
        ...

    async def close(self) -> None:
        """Release what :meth:`open` acquired; called once, at session end."""
        ...


@runtime_checkable
class SyncToolSource(ToolSource, Protocol):
    """A source that can also load without an event loop and without being opened.

    :func:`raw_core.agent.load_agent` (the synchronous path: commands that run no turn,
    tests) uses :meth:`load`; its :meth:`resolve` is the same code path.
    """

    def load(self, identity: ToolIdentity) -> LoadedTool:
        """Load ``identity`` synchronously; the same errors as :meth:`ToolSource.resolve`."""
        ...


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


class PluginRecords(Protocol):
    """What tool sources read of the plug-in host (a :class:`raw_core.plugins.PluginHost`):
    the registered source records, the plug-ins' tool folders, and who registered a
    record. A protocol, so that tools sit below the plug-ins."""

    def tool_sources(self) -> Mapping[str, ToolSourceRecord]: ...

    def tool_folders(self) -> Mapping[str, Mapping[str, ToolFolder]]: ...

    def registered_by(self, kind: Literal["tool_source"], name: str) -> str: ...


@attrs.frozen(kw_only=True)
class SourceContext:
    """What a source's factory gets to build a source for one session.

    ``config`` is the loaded config and ``host`` the plug-in host. ``section`` is the
    validated value of the config section the record names (``ToolSourceRecord.section``),
    or ``None`` when it names none or the file does not have it. ``loader`` is the session's
    tool loader (reuse it: it caches imported entry modules); ``plugin`` is the name of the
    plug-in that registered the source.

    ``tasks`` is a task group that lives while the session's sources are open (``None`` on
    the synchronous path, :func:`raw_core.agent.load_agent`): a source that keeps work
    running between calls — a connection's reader — starts it there, since a task group
    entered in :meth:`ToolSource.open` could not be left in :meth:`ToolSource.close`. Its
    tasks must not raise (one that raises ends the session); they are cancelled once every
    source is closed.
    """

    config: Config
    host: PluginRecords
    loader: ToolLoader
    plugin: str
    section: Any = None
    tasks: TaskGroup | None = None


@attrs.frozen(kw_only=True)
class ToolSourceRecord:
    """A tool source a plug-in registers (``raw_register_tool_sources``).

    ``prefix`` is the identity prefix it serves: a new name (lowercase letters, digits, ``_``
    and ``-``), or ``mcp`` / ``pkg``. ``factory(context)`` builds the source for one session
    from a :class:`SourceContext`. ``section`` names a config section the same plug-in
    claims (``raw_register_config_sections``) whose validated value the factory receives as
    ``context.section``.
    """

    prefix: str
    factory: Callable[[SourceContext], ToolSource]
    section: str | None = None


class FolderSource:
    """``local/`` or ``agent/``: tool folders directly under one directory.

    ``directory`` is ``None`` for ``agent/`` when no config file was given; resolving then
    says so. A folder must stay inside ``directory`` once links are resolved.
    """

    def __init__(
        self, prefix: str, directory: Path | None, *, loader: ToolLoader, missing: str = ""
    ) -> None:
        self._prefix = prefix
        self._directory = directory
        self._loader = loader
        self._missing = missing

    @property
    def prefix(self) -> str:
        """``local`` or ``agent``."""
        return self._prefix

    @property
    def directory(self) -> Path | None:
        """The directory the folders are in."""
        return self._directory

    def load(self, identity: ToolIdentity) -> LoadedTool:
        """Load ``<directory>/<folder>`` as ``identity``."""
        if self._directory is None:
            raise ToolNotFound(f"{identity}: {self._missing}", tool=identity.text)
        folder = self._directory / identity.folder
        if not os.path.lexists(folder):  # a link, even a dangling one, is the loader's to judge
            raise ToolNotFound(
                f"{identity}: no tool folder at {folder}", tool=identity.text, path=str(folder)
            )
        return self._loader.load(folder, identity=identity.text, root=self._directory)

    async def open(self) -> None:
        """Nothing to acquire."""

    async def resolve(self, identity: ToolIdentity) -> LoadedTool:
        """:meth:`load` in a worker thread: reading the folder and importing its entry
        module (which may import anything) must not stall other sessions."""
        return await self._loader.in_thread(self.load, identity)

    async def close(self) -> None:
        """Nothing to release."""


class PluginFolderSource:
    """``<plugin>/<tool>``: the tool folders one plug-in registers with ``raw_register_tools``."""

    def __init__(self, prefix: str, tools: Mapping[str, ToolFolder], *, loader: ToolLoader):
        self._prefix = prefix
        self._tools = tools
        self._loader = loader

    @property
    def prefix(self) -> str:
        """The plug-in's name."""
        return self._prefix

    def load(self, identity: ToolIdentity) -> LoadedTool:
        """Load the registered folder named ``identity.folder``."""
        record = self._tools.get(identity.folder)
        if record is None:
            offered = ", ".join(sorted(self._tools)) or "none"
            raise ToolNotFound(
                f"{identity}: plug-in {self._prefix!r} has no tool"
                f" {identity.folder!r} (it offers: {offered})",
                tool=identity.text,
            )
        return self._loader.load(record.path, identity=identity.text, root=record.path.parent)

    async def open(self) -> None:
        """Nothing to acquire."""

    async def resolve(self, identity: ToolIdentity) -> LoadedTool:
        """:meth:`load` in a worker thread (see :meth:`FolderSource.resolve`)."""
        return await self._loader.in_thread(self.load, identity)

    async def close(self) -> None:
        """Nothing to release."""


class SessionSources:
    """The sources of one session, built on first use of their prefix, opened and closed
    together.

    ``own`` maps a reserved prefix to the factory of raw's own source for it (``pkg``), used
    when no plug-in registers a source for that prefix.

    :meth:`source` builds (and caches) the source of a prefix; :meth:`load` is the
    synchronous path; :meth:`open`, :meth:`resolve` and :meth:`aclose` the async one.
    """

    def __init__(
        self,
        config: Config,
        *,
        host: PluginRecords,
        loader: ToolLoader,
        local_dir: Path,
        tasks: TaskGroup | None = None,
        own: Mapping[str, Callable[[Config, ToolLoader], ToolSource]] | None = None,
    ) -> None:
        self._config = config
        self._own = dict(own or {})
        self._host = host
        self._loader = loader
        self._local_dir = local_dir
        self._tasks = tasks
        self._built: dict[str, ToolSource] = {}
        self._owners: dict[str, str] = {}
        self._opened: list[ToolSource] = []

    def source(self, prefix: str) -> ToolSource:
        """The source serving ``prefix``; ``tool_source_unavailable`` for ``mcp``/``pkg``
        when no plug-in serves them, ``tool_not_found`` for a prefix nothing serves."""
        built = self._built.get(prefix)
        if built is None:
            built = self._build(prefix)
            self._built[prefix] = built
        return built

    def _build(self, prefix: str) -> ToolSource:
        if prefix == "local":
            return FolderSource("local", self._local_dir, loader=self._loader)
        if prefix == "agent":
            directory = self._config.directory
            return FolderSource(
                "agent",
                directory / "tools" if directory is not None else None,
                loader=self._loader,
                missing="agent/ tools live beside a config file, and none was given",
            )
        records = self._host.tool_sources()
        record = records.get(prefix)
        if record is not None:
            return self._from_record(record)
        folders = self._host.tool_folders()
        tools = folders.get(prefix)
        if tools is not None:
            return PluginFolderSource(prefix, tools, loader=self._loader)
        own = self._own.get(prefix)
        if own is not None:
            return own(self._config, self._loader)
        if prefix in _UNSERVED:
            distribution = _INSTALL.get(prefix)
            hint = f" (install {distribution}: pip install {distribution})" if distribution else ""
            raise ToolSourceUnavailable(
                f"{prefix}/: tools from {_UNSERVED[prefix]} are not available: no installed"
                f" plug-in serves the {prefix}/ prefix{hint}",
                source=prefix,
            )
        installed = ", ".join(sorted({*folders, *records})) or "none"
        raise ToolNotFound(
            f"no plug-in named {prefix!r} is installed and no tool source serves {prefix}/"
            f" (installed: {installed})",
            source=prefix,
        )

    def _from_record(self, record: ToolSourceRecord) -> ToolSource:
        plugin = self._host.registered_by("tool_source", record.prefix)
        context = SourceContext(
            config=self._config,
            host=self._host,
            loader=self._loader,
            plugin=plugin,
            section=self._config.sections.get(record.section) if record.section else None,
            tasks=self._tasks,
        )
        try:
            source = record.factory(context)
        except RawError:
            raise
        except Exception as exc:
            raise ToolSourceUnavailable(
                f"{record.prefix}/: plug-in {plugin!r} failed to build its tool source:"
                f" {type(exc).__name__}: {exc}",
                source=record.prefix,
                plugin=plugin,
            ) from exc
        if not isinstance(source, ToolSource) or source.prefix != record.prefix:
            found = getattr(source, "prefix", None)
            raise PluginInvalid(
                f"plug-in {plugin!r}: the factory for {record.prefix}/ must return a ToolSource"
                f" whose prefix is {record.prefix!r}, found {type(source).__name__}"
                + (f" with prefix {found!r}" if isinstance(found, str) else ""),
                plugin=plugin,
            )
        self._owners[record.prefix] = plugin
        return source

    def load(self, identity: ToolIdentity) -> LoadedTool:
        """The synchronous path: load ``identity`` through its source's :meth:`load`."""
        source = self.source(identity.source)
        if not isinstance(source, SyncToolSource):
            raise ToolSourceUnavailable(
                f"{identity}: the {identity.source}/ source is asynchronous only; open the"
                " agent with open_agent (or through the app) to use it",
                tool=identity.text,
                source=identity.source,
            )
        return source.load(identity)

    async def open(self, prefix: str) -> None:
        """Build and open the source of ``prefix`` (once); it is closed by :meth:`aclose`."""
        source = self.source(prefix)
        if any(opened is source for opened in self._opened):
            return
        self._opened.append(source)  # closed by aclose even when open raises
        await self._guard(source, "open", source.open())

    async def resolve(self, identity: ToolIdentity) -> LoadedTool:
        """Resolve ``identity`` through its opened source; check what comes back."""
        source = self.source(identity.source)
        if not any(opened is source for opened in self._opened):
            await self.open(identity.source)
        tool: object = await self._guard(source, "resolve", source.resolve(identity))
        if not isinstance(tool, LoadedTool) or tool.identity != identity.text:
            plugin = self._owners.get(identity.source, "raw_core")
            raise PluginInvalid(
                f"plug-in {plugin!r}: the {identity.source}/ source must resolve {identity} to"
                f" a LoadedTool with that identity, found {type(tool).__name__}",
                plugin=plugin,
                tool=identity.text,
            )
        return tool

    async def _guard(self, source: ToolSource, step: str, awaitable: Awaitable[T]) -> T:
        """Await a source's step; a plug-in's non-raw exception becomes
        ``tool_source_unavailable`` naming the plug-in, never a bare traceback."""
        try:
            return await awaitable
        except RawError:
            raise
        except Exception as exc:
            plugin = self._owners.get(source.prefix, "raw_core")
            raise ToolSourceUnavailable(
                f"{source.prefix}/: the tool source of plug-in {plugin!r} failed to {step}:"
                f" {type(exc).__name__}: {exc}",
                source=source.prefix,
                plugin=plugin,
            ) from exc

    async def aclose(self, error: BaseException | None = None) -> None:
        """Close every opened source, last opened first, shielded from cancellation.

        With ``error`` (the session is ending because of it) a close failure is logged and
        noted on ``error``, never raised over it. Without one, the first close failure is
        raised after every source had its turn (later ones are added as notes).
        """
        failures: list[Exception] = []
        notes: list[str] = []
        opened, self._opened = self._opened, []
        for source in reversed(opened):
            try:
                with anyio.fail_after(CLOSE_TIMEOUT, shield=True):
                    await source.close()
            except Exception as exc:
                _log.warning("closing the %s/ tool source failed: %r", source.prefix, exc)
                failures.append(exc)
                notes.append(
                    f"closing the {source.prefix}/ tool source failed: {type(exc).__name__}: {exc}"
                )
        if not failures:
            return
        if error is not None:
            for note in notes:
                error.add_note(note)
            return
        first = failures[0]
        for note in notes[1:]:
            first.add_note(note)
        raise first
