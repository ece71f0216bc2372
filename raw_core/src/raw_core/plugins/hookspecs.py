"""Every hook a raw plug-in can implement, grouped by phase.

A plug-in is a module (or object) named by an entry point in the ``raw`` group; the entry
point's name is the plug-in's name, and tools it registers get the identity
``<plugin>/<tool>``. Implement hooks with :data:`hookimpl`, or with :func:`implements`, which
marks the function the same way and lets mypy check it against the hookspec::

    from raw_core import ToolFolder, hookspecs
    from raw_core.plugins.hookspecs import implements

    @implements(hookspecs.raw_register_tools)
    def raw_register_tools() -> list[ToolFolder]:
        return [ToolFolder(path=Path(__file__).parent / "tools" / "my_tool")]

pluggy calls hooks synchronously. A hook that must wait returns an awaitable (a check
verdict) or an async middleware (a call), and raw awaits it under anyio with a timeout.
Runtime hooks may tighten what raw decided, never loosen it.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any, ParamSpec, TypeVar

import pluggy

if TYPE_CHECKING:
    import click

    from raw_core.config import ConfigSection
    from raw_core.plugins import ToolFolder
    from raw_core.providers.contract import ProviderRecord
    from raw_core.sessions.backend import SessionBackendRecord
    from raw_core.tools.calls import CallInfo, CheckAnswer, Middleware, Verdict
    from raw_core.tools.registry import ToolDefinition
    from raw_core.tools.sources import ToolSourceRecord

__all__ = ["PROJECT_NAME", "hookimpl", "hookspec", "implements"]

PROJECT_NAME = "raw"

hookspec = pluggy.HookspecMarker(PROJECT_NAME)
hookimpl = pluggy.HookimplMarker(PROJECT_NAME)

_P = ParamSpec("_P")
_R = TypeVar("_R")


def implements(spec: Callable[_P, _R]) -> Callable[[Callable[_P, _R]], Callable[_P, _R]]:
    """Mark a function as the implementation of the hookspec ``spec`` (one of this
    module's ``raw_*`` functions), checked by mypy against it.

    The function must take the hookspec's arguments, with the same names and types raw
    passes (or wider ones), and return what the hookspec returns (or something narrower);
    anything else is a mypy error at the decorator. At run time it is ``hookimpl`` with
    ``specname`` set, so the function may have any name::

        @implements(hookspecs.raw_tool_check)
        def ask_about_env_files(call: CallInfo, verdict: Verdict) -> Verdict | None:
            ...

    For module-level functions (a plug-in's ``plugin.py``); a method would take ``self``
    as well, which the hookspec does not. Raises ``TypeError`` when ``spec`` is not a raw
    hookspec.
    """
    name = getattr(spec, "__name__", None)
    if not hasattr(spec, f"{PROJECT_NAME}_spec") or globals().get(name or "") is not spec:
        raise TypeError(
            f"implements() takes a hookspec of raw_core.plugins.hookspecs, not {spec!r}"
        )
    marker = hookimpl(specname=name)

    def mark(function: Callable[_P, _R]) -> Callable[_P, _R]:
        return marker(function)

    return mark


# --- registration: what a plug-in ships ------------------------------------------------


@hookspec
def raw_register_tools() -> list[ToolFolder]:  # type: ignore[empty-body]
    """Return the tools this plug-in ships, as a list of :class:`raw_core.ToolFolder`.

    Each folder holds a ``tool.json`` and its entry module; its folder name is the tool's
    name inside the plug-in, so a plug-in named ``acme`` shipping ``tools/grep`` offers
    ``acme/grep``. Folders are loaded only when an agent selects them.

    Example::

        @hookimpl
        def raw_register_tools():
            return [ToolFolder(path=HERE / "tools" / "grep")]
    """


@hookspec
def raw_register_providers() -> list[ProviderRecord]:  # type: ignore[empty-body]
    """Return the model providers this plug-in ships, as a list of
    :class:`raw_core.providers.contract.ProviderRecord` (a name and a factory).

    The factory is called as ``factory(model, api_key=...)`` with the model's
    :class:`raw_core.config.ModelConfig` and its resolved credential (or None), and returns
    a :class:`raw_core.providers.contract.Provider`. Import SDKs inside the factory, not at
    module level, so discovering plug-ins stays fast. Two plug-ins registering one name is an error.

    Example::

        @hookimpl
        def raw_register_providers():
            return [ProviderRecord(name="echo", factory=make_echo_provider)]
    """


@hookspec
def raw_register_tool_sources() -> list[ToolSourceRecord]:  # type: ignore[empty-body]
    """Return the tool sources this plug-in ships, as a list of
    :class:`raw_core.tools.sources.ToolSourceRecord` (a prefix and a factory).

    A source serves every identity whose first segment is its ``prefix``: a new name, or
    ``mcp`` / ``pkg`` (the only reserved prefixes a plug-in may serve). For each session
    that selects one of its identities, raw calls ``factory(context)`` with a
    :class:`raw_core.tools.sources.SourceContext`, awaits the source's ``open()``, resolves the
    identities through ``resolve(identity)``, and awaits ``close()`` when the session ends.
    Two plug-ins serving one prefix, or a prefix that is also a plug-in's tool-folder name,
    are ``plugin_conflict``.

    Example::

        @hookimpl
        def raw_register_tool_sources():
            return [ToolSourceRecord(prefix="mcp", factory=McpSource, section="mcp")]
    """


@hookspec
def raw_register_config_sections() -> list[ConfigSection]:  # type: ignore[empty-body]
    """Return the top-level config keys this plug-in claims, as a list of
    :class:`raw_core.config.ConfigSection` (a name and a validator).

    ``validate(value, field)`` receives the key's JSON value and its path (``$.<name>``),
    and returns the parsed value (kept in ``Config.sections[name]``) or raises
    :class:`raw_core.errors.ConfigInvalid` with a ``field`` below it. Keys raw owns
    (``agents``, ``models``, ``sessions``...) cannot be claimed; two plug-ins claiming one
    key are ``plugin_conflict``.

    Example::

        @hookimpl
        def raw_register_config_sections():
            return [ConfigSection(name="mcp", validate=parse_mcp_section)]
    """


@hookspec
def raw_register_session_backends() -> list[SessionBackendRecord]:  # type: ignore[empty-body]
    """Return the session backends this plug-in ships, as a list of
    :class:`raw_core.sessions.backend.SessionBackendRecord`.

    ``sessions.backend.type`` in the config names one; its other keys are checked by the
    record's ``validate_config(options, "$.sessions.backend")``. ``sqlite`` is raw's own
    and cannot be registered; two plug-ins registering one name are ``plugin_conflict``.

    Example::

        @hookimpl
        def raw_register_session_backends():
            return [SessionBackendRecord(name="postgres", factory=open_postgres,
                                         validate_config=check_postgres_options)]
    """


@hookspec
def raw_register_commands(cli: click.Group) -> None:
    """Add subcommands to the ``raw`` command line (a :class:`click.Group`).

    Example::

        @hookimpl
        def raw_register_commands(cli):
            @cli.command()
            def hello():
                click.echo("hello")
    """


# --- runtime: around each tool call ----------------------------------------------------


@hookspec
def raw_tool_describe(tool: ToolDefinition, description: str) -> str | None:
    """Rewrite the model-facing description of a selected tool; return None to keep it.

    ``tool`` is the :class:`raw_core.tools.registry.ToolDefinition` the model would receive and
    ``description`` its description as the hooks before this one left it. Called once per
    tool when the registry renders what the model receives.
    """


@hookspec
def raw_tool_check(call: CallInfo, verdict: Verdict) -> CheckAnswer:
    """Decide about one call (a PreToolUse check): return a
    :class:`raw_core.tools.calls.Verdict`, an awaitable of one, or None to pass
    (:data:`raw_core.tools.calls.CheckAnswer`).

    ``call`` is the :class:`raw_core.tools.calls.CallInfo` of the call and ``verdict`` the
    verdict it has so far: the policy's, tightened by the check hooks before this one.

    A verdict may only tighten what the policy decided (allow → ask → deny); the reason of
    a deny reaches the model. A hook that raises, times out or answers something that is
    not a verdict fails the call closed (``hook_failed``).
    """


@hookspec
def raw_tool_call(call: CallInfo) -> Middleware | None:
    """Return an async middleware ``(call, call_next) -> result`` for one call
    (:data:`raw_core.tools.calls.Middleware`), or None.

    raw composes the middlewares around the handler, in registration order. A middleware
    may replace or withhold the result; it never changes the arguments.
    """


# --- observers ---------------------------------------------------------------------------


@hookspec
def raw_session_event(event: dict[str, Any]) -> None:
    """Observe one event of the agent loop: a detached copy of its JSON form
    (``{"type": ..., ...}``, as ``LoopEvent.to_dict()`` gives it). Failures are logged,
    not raised: observers fail open.
    """
