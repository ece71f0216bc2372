"""Every problem loading one agent would meet, for ``raw config validate``.

A session loads its agent with :func:`~raw_core.agent.open_agent`, which stops at the first
problem: a turn cannot start anyway. A check wants them all, so :func:`agent_problems`
resolves each ``tools.use`` entry and reads each ``skills.use`` entry on its own, and goes on
past the ones that fail; the rules, each floor and the command hooks, which bind to the
tools, are checked once every tool loaded, each on its own.
"""

from __future__ import annotations

from pathlib import Path

import attrs

from raw_core.agent._agent import Agent, _agent, _bind_hooks, _bind_rules, opened_sources
from raw_core.agent.skills import find_skills
from raw_core.config import AgentConfig, Config
from raw_core.errors import RawError
from raw_core.plugins import PluginHost
from raw_core.policy import Policy, bind_floors
from raw_core.tools.loader import ToolLoader
from raw_core.tools.registry import Registry, ToolSelection
from raw_core.tools.sources import SessionSources

__all__ = ["agent_problems"]


async def agent_problems(
    config: Config,
    name: str,
    *,
    host: PluginHost,
    loader: ToolLoader | None = None,
    local_dir: Path | None = None,
) -> tuple[Agent | None, tuple[RawError, ...]]:
    """Load agent ``name`` as :func:`~raw_core.agent.open_agent` does and return every
    problem that meets: one per failing ``tools.use`` entry and per failing ``skills.use``
    entry (each with its ``field``), then, when its tools all loaded, its rules' (each
    rule's listed in the error's ``context["problems"]``), each floor's and its command
    hooks'. The agent comes back when there was none; its tool sources
    are closed by then, so it is for reading what was loaded (its tools' warnings), not
    for running."""
    agent_name, agent_config = config.resolve_agent(name)
    problems: list[RawError] = []
    loaded: Agent | None = None
    try:
        async with opened_sources(config, host, loader, local_dir) as sources:
            loaded = await _load(config, agent_name, agent_config, sources, problems)
    except RawError as exc:  # closing the sources failed
        problems.append(exc)
    return (loaded if not problems else None), tuple(problems)


async def _load(
    config: Config,
    agent_name: str,
    agent_config: AgentConfig,
    sources: SessionSources,
    problems: list[RawError],
) -> Agent | None:
    """Each step of loading the agent through ``sources``, its problems added to
    ``problems``; the agent when there was none."""
    selection = ToolSelection(field=f"$.agents.{agent_name}.tools.use")
    for index, text in enumerate(agent_config.tools.use):
        try:
            identity = selection.identity(index, text)
            with selection.at(index, text):
                tool = await sources.resolve(identity)
            selection.add(index, tool)
        except RawError as exc:
            problems.append(exc)
    tools_failed = len(problems)
    skills = f"$.agents.{agent_name}.skills.use"
    for index, skill in enumerate(agent_config.skills.use):
        try:
            find_skills([skill], config.skills.paths, base_dir=config.directory, field=skills)
        except RawError as exc:
            exc.context["field"] = f"{skills}[{index}]"
            problems.append(exc)
    if tools_failed:
        return None
    # The rules, floors and hooks bind to the tools: checked once all loaded (the skills,
    # already checked one by one, are left out when one failed).
    use = agent_config.skills.use if not problems else ()
    bound = attrs.evolve(agent_config, skills=attrs.evolve(agent_config.skills, use=use))
    registry = selection.registry()
    before = len(problems)
    problems += _binding_problems(config, agent_name, bound, registry)
    if len(problems) != before:
        return None
    try:
        agent = _agent(config, agent_name, bound, registry)
    except RawError as exc:
        problems.append(exc)
        return None
    return agent if not problems else None


def _binding_problems(
    config: Config, agent_name: str, agent_config: AgentConfig, registry: Registry
) -> list[RawError]:
    """The agent's rules, each floor and its command hooks bound to its tools, each on its
    own: one problem of each does not hide the others'. (Each floor is bound against the
    agent's rules, or against none when those failed.)"""
    problems: list[RawError] = []
    try:
        rules = _bind_rules(agent_name, agent_config, registry)
    except RawError as exc:
        problems.append(exc)
        rules = Policy.bind((), registry.tools)
    for floor in config.floors:
        try:
            bind_floors(rules, [floor], registry.tools)
        except RawError as exc:
            problems.append(exc)
    try:
        _bind_hooks(config, agent_name, agent_config, registry)
    except RawError as exc:
        problems.append(exc)
    return problems
