"""Every hook a raw plug-in can implement, grouped by phase.

A plug-in is a module (or object) named by an entry point in the ``raw`` group; the entry
point's name is the plug-in's name, and tools it registers get the identity
``<plugin>/<tool>``. Implement hooks with :data:`hookimpl`::

    from raw_core import hookimpl, ToolFolder

    @hookimpl
    def raw_register_tools():
        return [ToolFolder(path=Path(__file__).parent / "tools" / "project_note")]

pluggy calls hooks synchronously. A hook that must wait returns an awaitable (a check
verdict) or an async middleware (a call), and raw awaits it under anyio with a timeout.
Runtime hooks may tighten what raw decided, never loosen it.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import pluggy

if TYPE_CHECKING:
    from raw_core.backend import SessionBackendRecord
    from raw_core.config import ConfigSection
    from raw_core.plugins import ToolFolder
    from raw_core.provider import ProviderRecord
    from raw_core.sources import ToolSourceRecord

__all__ = ["PROJECT_NAME", "hookimpl", "hookspec"]

PROJECT_NAME = "raw"

hookspec = pluggy.HookspecMarker(PROJECT_NAME)
hookimpl = pluggy.HookimplMarker(PROJECT_NAME)


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
    :class:`raw_core.provider.ProviderRecord` (a name and a factory).

    The factory is called as ``factory(model, api_key=...)`` with the model's
    :class:`raw_core.config.ModelConfig` and its resolved credential (or None), and returns a
    :class:`raw_core.provider.Provider`. Import SDKs inside the factory, not at module level,
    so discovering plug-ins stays fast. Two plug-ins registering one name is an error.

    Example::

        @hookimpl
        def raw_register_providers():
            return [ProviderRecord(name="echo", factory=make_echo_provider)]
    """


@hookspec
def raw_register_tool_sources() -> list[ToolSourceRecord]:  # type: ignore[empty-body]
    """Return the tool sources this plug-in ships, as a list of
    :class:`raw_core.sources.ToolSourceRecord` (a prefix and a factory).

    A source serves every identity whose first segment is its ``prefix``: a new name, or
    ``mcp`` / ``pkg`` (the only reserved prefixes a plug-in may serve). For each session
    that selects one of its identities, raw calls ``factory(context)`` with a
    :class:`raw_core.sources.SourceContext`, awaits the source's ``open()``, resolves the
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
    :class:`raw_core.backend.SessionBackendRecord`.

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
def raw_register_commands(cli: Any) -> None:
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
def raw_tool_describe(tool: Any, description: str) -> str | None:
    """Rewrite the model-facing description of a selected tool; return None to keep it.

    Called once per tool when the registry renders what the model receives.
    """


@hookspec
def raw_tool_check(call: Any, verdict: Any) -> Any:
    """Decide about one call (a PreToolUse check): return a verdict, an awaitable of one,
    or None to pass.

    A verdict may only tighten what the policy decided (allow → ask → deny); the reason of
    a deny reaches the model. A hook that raises, times out or answers something that is
    not a verdict fails the call closed (``hook_failed``).
    """


@hookspec
def raw_tool_call(call: Any) -> Any:
    """Return an async middleware ``(call, call_next) -> result`` for one call, or None.

    raw composes the middlewares around the handler, in registration order. A middleware
    may replace or withhold the result; it never changes the arguments.
    """


# --- observers ---------------------------------------------------------------------------


@hookspec
def raw_session_event(event: Any) -> None:
    """Observe one event of the agent loop (a detached copy). Failures are logged, not
    raised: observers fail open.
    """
