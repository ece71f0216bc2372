"""What :meth:`raw_core.app.App.list_tools` answers, and makes with :func:`tool_listing`:
an agent's tools as its model receives them."""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING

import attrs

if TYPE_CHECKING:
    from raw_core.agent import Agent
    from raw_core.plugins import PluginHost
    from raw_core.tools.registry import ToolDefinition

__all__ = ["ToolListing", "tool_listing", "tool_warnings"]


@attrs.frozen(kw_only=True)
class ToolListing:
    """An agent's tools as its model receives them: ``definitions`` in ``tools.use``
    order (exposed ones only), ``hidden`` the selected tools an unconditional deny hides
    (identity -> the rule's index) and ``hidden_by`` whose rules those are (identity ->
    ``agent`` or a floor's layer), ``selected`` how many tools the agent selects, and
    ``warnings`` what loading its tools warned about (identity -> the warnings, such as
    an unknown panel icon read as ``panel``)."""

    agent: str
    selected: int
    definitions: tuple[ToolDefinition, ...]
    hidden: Mapping[str, int]
    hidden_by: Mapping[str, str] = attrs.field(factory=dict)
    warnings: Mapping[str, tuple[str, ...]] = attrs.field(factory=dict)


def tool_listing(loaded: Agent, host: PluginHost) -> ToolListing:
    """Agent ``loaded``'s tools as its model receives them (descriptions rewritten by
    ``host``'s plug-ins, as in a turn), and the selected tools an unconditional deny
    hides."""
    from raw_core.plugins.hooks import model_definitions

    return ToolListing(
        agent=loaded.name,
        selected=len(loaded.registry),
        definitions=tuple(model_definitions(loaded, host)),
        hidden=dict(loaded.policy.hidden),
        hidden_by={
            identity: loaded.policy.hidden_layer(identity) or "agent"
            for identity in loaded.policy.hidden
        },
        warnings=tool_warnings(loaded),
    )


def tool_warnings(loaded: Agent) -> dict[str, tuple[str, ...]]:
    """What loading agent ``loaded``'s tools warned about, by identity (tools with none
    left out)."""
    return {tool.identity: tool.warnings for tool in loaded.registry.tools if tool.warnings}
