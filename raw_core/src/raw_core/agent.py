"""Resolve one agent of a config into its selected tools, bound policy, skills and
variables — and nothing the agent does not select."""

from __future__ import annotations

from pathlib import Path

import attrs

from raw_core.config import AgentConfig, Config
from raw_core.loader import LoadedTool, ToolLoader
from raw_core.plugins import PluginHost
from raw_core.policy import Policy
from raw_core.registry import Registry, ToolDefinition, ToolSources, user_tools_dir
from raw_core.skills import SkillService, find_skills
from raw_core.variables import VarService

__all__ = ["Agent", "load_agent"]


def _bind_policy(agent: Agent) -> Policy:
    return Policy.bind(
        agent.config.tools.rules,
        agent.registry.tools,
        field=f"$.agents.{agent.name}.tools.rules",
    )


@attrs.frozen(kw_only=True, eq=False)
class Agent:
    """An agent ready for use: its name, its config section, its registry and its policy.

    ``policy`` is the agent's ``tools.rules`` bound to its selected tools; when not given it
    is bound on construction, so an :class:`Agent` never holds rules that were not checked.
    """

    name: str
    config: AgentConfig
    registry: Registry
    policy: Policy = attrs.field(default=attrs.Factory(_bind_policy, takes_self=True))
    skills: SkillService = attrs.field(factory=lambda: SkillService([]))
    vars: VarService = attrs.field(factory=lambda: VarService({}, ()))

    def definitions(self) -> list[ToolDefinition]:
        """What the model receives: the exposed tools, in ``tools.use`` order.

        A tool whose last matching rule is an unconditional deny is left out.
        """
        return [d for d in self.registry.definitions() if self.policy.is_exposed(d.identity)]

    def exposed_tool(self, name: str) -> LoadedTool:
        """Dispatch step 1: the selected, exposed tool with model-facing ``name``.

        Raises ``tool_unknown`` when no selected tool has that name and
        ``tool_not_exposed`` when an unconditional deny hides it.
        """
        tool = self.registry.by_name(name)
        self.policy.check_exposed(tool.identity)
        return tool


def load_agent(
    config: Config,
    name: str | None = None,
    *,
    host: PluginHost,
    loader: ToolLoader | None = None,
    local_dir: Path | None = None,
) -> Agent:
    """Resolve agent ``name`` (see :meth:`Config.resolve_agent`), load only its tools, bind
    its rules to them, and read only its skills. Variables are not read here: their values
    are read when first needed.

    A rule whose predicate cannot be bound to a tool its glob matches is a
    ``config_invalid`` naming the rule (``field`` ``$.agents.<name>.tools.rules[<i>]...``,
    ``rule``) and the tool (``tool``).
    """
    agent_name, agent_config = config.resolve_agent(name)
    directory = config.directory
    sources = ToolSources(
        host=host,
        local_dir=local_dir if local_dir is not None else user_tools_dir(),
        agent_dir=directory / "tools" if directory is not None else None,
    )
    registry = Registry.select(
        agent_config.tools.use,
        sources=sources,
        loader=loader,
        field=f"$.agents.{agent_name}.tools.use",
    )
    policy = Policy.bind(
        agent_config.tools.rules, registry.tools, field=f"$.agents.{agent_name}.tools.rules"
    )
    skills = find_skills(
        agent_config.skills.use,
        config.skills.paths,
        base_dir=directory,
        field=f"$.agents.{agent_name}.skills.use",
    )
    variables = VarService(config.vars, agent_config.vars.use, base_dir=directory)
    return Agent(
        name=agent_name,
        config=agent_config,
        registry=registry,
        policy=policy,
        skills=SkillService(skills),
        vars=variables,
    )
