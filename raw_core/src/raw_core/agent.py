"""Resolve one agent of a config into its selected, loaded tools."""

from __future__ import annotations

from pathlib import Path

import attrs

from raw_core.config import AgentConfig, Config
from raw_core.loader import ToolLoader
from raw_core.plugins import PluginHost
from raw_core.registry import Registry, ToolSources, user_tools_dir

__all__ = ["Agent", "load_agent"]


@attrs.frozen(kw_only=True, eq=False)
class Agent:
    """An agent ready for use: its name, its config section and its registry."""

    name: str
    config: AgentConfig
    registry: Registry


def load_agent(
    config: Config,
    name: str | None = None,
    *,
    host: PluginHost,
    loader: ToolLoader | None = None,
    local_dir: Path | None = None,
) -> Agent:
    """Resolve agent ``name`` (see :meth:`Config.resolve_agent`) and load only its tools."""
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
    return Agent(name=agent_name, config=agent_config, registry=registry)
