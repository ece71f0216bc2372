"""Resolve one agent of a config into its selected tools, bound policy, command hooks,
skills and variables — and nothing the agent does not select.

:func:`open_agent` is the session's way: an async context manager that opens the tool
sources the agent's ``tools.use`` names, resolves the identities through them, and closes
the sources when the block ends. :func:`load_agent` is the synchronous way for commands
that run no turn: it loads through the sources' synchronous path, so a prefix served only
by an async source (an MCP server, say) is ``tool_source_unavailable`` there.
"""

from __future__ import annotations

import os
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import TYPE_CHECKING

import anyio
import attrs
from anyio.abc import TaskGroup

from raw_core.agent.skills import SkillService, find_skills
from raw_core.agent.variables import VarCache, VarService
from raw_core.config import AgentConfig, Config
from raw_core.hooks import HookSet, credential_names, load_hooks
from raw_core.plugins import PluginHost
from raw_core.policy import FlooredPolicy, Policy, bind_floors
from raw_core.tools.loader import ToolLoader
from raw_core.tools.registry import Registry, ToolDefinition, user_tools_dir
from raw_core.tools.sources import SessionSources, ToolSource

if TYPE_CHECKING:
    from raw_core.dispatch import Dispatcher
    from raw_core.tools.calls import ApprovalCallback, SkillReader
    from raw_core.tools.interactions import InteractionCallback
    from raw_core.tools.panels import PanelBoard
    from raw_core.tools.resources import SessionResources

__all__ = ["Agent", "load_agent", "open_agent"]


def _bind_policy(agent: Agent) -> Policy | FlooredPolicy:
    return _bind_rules(agent.name, agent.config, agent.registry)


@attrs.frozen(kw_only=True, eq=False)
class Agent:
    """An agent ready for use: its name, its config section, its registry, its policy and
    its command hooks.

    ``policy`` is the agent's ``tools.rules`` bound to its selected tools, composed with the
    config's floors (:mod:`raw_core.policy.floors`) when it has any; when not given it is
    bound on construction (without floors), so an :class:`Agent` never holds rules that
    were not checked.
    ``hooks`` are the command hooks ``hooks.use`` selects, subscribed to its tools.
    """

    name: str
    config: AgentConfig
    registry: Registry
    policy: Policy | FlooredPolicy = attrs.field(
        default=attrs.Factory(_bind_policy, takes_self=True)
    )
    skills: SkillService = attrs.field(factory=lambda: SkillService([]))
    vars: VarService = attrs.field(factory=lambda: VarService({}, ()))
    hooks: HookSet = attrs.field(factory=HookSet.empty)

    def dispatcher(
        self,
        *,
        host: PluginHost | None,
        approval: ApprovalCallback | None = None,
        cwd: str | os.PathLike[str] | None = None,
        max_output_bytes: int | None = None,
        skills: SkillReader | None = None,
        hook_events: bool = True,
        session_id: str | None = None,
        panels: PanelBoard | None = None,
        resources: SessionResources | None = None,
        interactions: InteractionCallback | None = None,
    ) -> Dispatcher:
        """The agent's dispatcher: its tools, rules, command hooks, variables, skills,
        result cap and handler time limit, as its config says. This is the one place raw
        maps an agent onto a dispatcher, so a turn, ``raw tools call`` and ``raw policy
        explain`` cannot differ. ``max_output_bytes`` overrides the agent's cap; ``skills``
        is the session's view of the agent's skills (a fresh one by default);
        ``session_id`` is the session the hooks' payloads name; ``panels`` the session's
        panel board (one of the dispatcher's own by default); ``resources`` what its tools
        keep for the session's length (the caller closes it); ``interactions`` answers the
        tools' questions (none: ``interaction_unavailable``)."""
        # Imported here: what only lists an agent's tools or hooks never imports the
        # dispatch pipeline.
        from raw_core.dispatch import Dispatcher

        return Dispatcher(
            self.registry,
            self.policy,
            host=host,
            approval=approval,
            cwd=cwd,
            max_output_bytes=max_output_bytes or self.config.max_output_bytes,
            handler_timeout=self.config.handler_timeout_ms / 1000,
            vars=self.vars,
            skills=skills if skills is not None else self.skills.for_session(),
            hook_events=hook_events,
            hooks=self.hooks,
            session_id=session_id,
            panels=panels,
            resources=resources,
            interactions=interactions,
        )

    def definitions(self) -> list[ToolDefinition]:
        """What the model receives: the exposed tools, in ``tools.use`` order.

        A tool whose last matching rule is an unconditional deny is left out.
        """
        return [d for d in self.registry.definitions() if self.policy.is_exposed(d.identity)]


def load_agent(
    config: Config,
    name: str | None = None,
    *,
    host: PluginHost,
    loader: ToolLoader | None = None,
    local_dir: Path | None = None,
    var_cache: VarCache | None = None,
) -> Agent:
    """Resolve agent ``name`` (see :meth:`Config.resolve_agent`), load only its tools, bind
    its rules to them, and read only its skills. Variables are not read here: their values
    are read when first needed.

    Tools load through each source's synchronous ``load`` (folder sources have one); an
    identity whose source is async only is ``tool_source_unavailable`` — use
    :func:`open_agent` (or the app) for those. ``local_dir`` replaces the user's tools
    directory (``local/``). ``var_cache`` holds the values of the runtime the agent runs
    in (an agent cache of its own without one): a runtime passes the same one to every
    agent it loads, so a value is read once for all its sessions and calls.

    A rule whose predicate cannot be bound to a tool its glob matches is a
    ``config_invalid`` naming the rule (``field`` ``$.agents.<name>.tools.rules[<i>]...``,
    ``rule``) and the tool (``tool``); so is a hook's ``when`` (``field``
    ``$.agents.<name>.hooks.use[<i>]``, ``hook``, ``tool``). A selected hook folder that
    is missing or broken is ``hook_not_found`` or ``hook_invalid``.
    """
    agent_name, agent_config = config.resolve_agent(name)
    sources = _sources(config, host, loader, local_dir)
    registry = Registry.select(
        agent_config.tools.use, load=sources.load, field=f"$.agents.{agent_name}.tools.use"
    )
    return _agent(config, agent_name, agent_config, registry, var_cache)


@asynccontextmanager
async def open_agent(
    config: Config,
    name: str | None = None,
    *,
    host: PluginHost,
    loader: ToolLoader | None = None,
    local_dir: Path | None = None,
    var_cache: VarCache | None = None,
) -> AsyncIterator[Agent]:
    """``async with open_agent(config, host=host) as agent:`` — the agent with its tool
    sources open for the block.

    Only the sources of the prefixes ``tools.use`` names are built and opened, each just
    before its first identity is resolved; the selection checks, the policy, skills and
    variables (read through ``var_cache``) are those of :func:`load_agent`. When the block
    ends — normally, with an error, or cancelled, also when loading failed — every opened
    source is closed (last opened first, shielded from cancellation); a close failure
    never hides the error that ended the block (it is logged and added to that error's
    notes).
    """
    agent_name, agent_config = config.resolve_agent(name)
    async with opened_sources(config, host, loader, local_dir) as sources:
        registry = await Registry.aselect(
            agent_config.tools.use,
            resolve=sources.resolve,
            field=f"$.agents.{agent_name}.tools.use",
        )
        yield _agent(config, agent_name, agent_config, registry, var_cache)


def _sources(
    config: Config,
    host: PluginHost,
    loader: ToolLoader | None,
    local_dir: Path | None,
    tasks: TaskGroup | None = None,
) -> SessionSources:
    return SessionSources(
        config,
        host=host,
        loader=loader or ToolLoader(),
        local_dir=local_dir if local_dir is not None else user_tools_dir(),
        tasks=tasks,
        own={"pkg": _package_source},
    )


def _package_source(config: Config, loader: ToolLoader) -> ToolSource:
    """raw's ``pkg/`` source for ``config``; the package modules are imported only when an
    agent selects a ``pkg/`` tool."""
    from raw_core.packages.source import PackageSource

    return PackageSource.for_config(config, loader)


@asynccontextmanager
async def opened_sources(
    config: Config, host: PluginHost, loader: ToolLoader | None, local_dir: Path | None
) -> AsyncIterator[SessionSources]:
    """The agent's tool sources for the block, closed when it ends (with what ended it).

    Their background tasks (an MCP connection's reader) run in a group that spans the
    block; what ends the block is re-raised after the group, never as a group, and a
    failure to close the sources after a block that ended well is raised then."""
    failure: BaseException | None = None
    async with anyio.create_task_group() as tasks:
        sources = _sources(config, host, loader, local_dir, tasks)
        try:
            yield sources
        except BaseException as exc:
            await sources.aclose(exc)
            failure = exc
        else:
            try:
                await sources.aclose()
            except BaseException as exc:
                failure = exc
        finally:
            tasks.cancel_scope.cancel()
    if failure is not None:
        raise failure


def _agent(
    config: Config,
    agent_name: str,
    agent_config: AgentConfig,
    registry: Registry,
    var_cache: VarCache | None = None,
) -> Agent:
    """Bind the agent's rules and command hooks to its tools and read its skills (not its
    variables)."""
    directory = config.directory
    policy = bind_floors(
        _bind_rules(agent_name, agent_config, registry), config.floors, registry.tools
    )
    hooks = _bind_hooks(config, agent_name, agent_config, registry)
    skills = find_skills(
        agent_config.skills.use,
        config.skills.paths,
        base_dir=directory,
        field=f"$.agents.{agent_name}.skills.use",
    )
    variables = VarService(config.vars, agent_config.vars.use, base_dir=directory, cache=var_cache)
    return Agent(
        name=agent_name,
        config=agent_config,
        registry=registry,
        policy=policy,
        skills=SkillService(skills),
        vars=variables,
        hooks=hooks,
    )


def _bind_rules(agent_name: str, agent_config: AgentConfig, registry: Registry) -> Policy:
    """The agent's own rules bound to its tools (``config_invalid`` listing each rule's
    problem)."""
    return Policy.bind(
        agent_config.tools.rules, registry.tools, field=f"$.agents.{agent_name}.tools.rules"
    )


def _bind_hooks(
    config: Config, agent_name: str, agent_config: AgentConfig, registry: Registry
) -> HookSet:
    """The agent's command hooks, loaded and bound to its tools (none: the empty set)."""
    if not agent_config.hooks.use:
        return HookSet.empty()
    field = f"$.agents.{agent_name}.hooks.use"
    return HookSet.bind(
        load_hooks(agent_config.hooks.use, config_dir=config.directory, field=field),
        registry.tools,
        field=field,
        timeout_cap_ms=agent_config.hooks.timeout_ms,
        withheld_env=credential_names(config),
    )
