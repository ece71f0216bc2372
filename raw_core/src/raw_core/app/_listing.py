"""What :meth:`raw_core.app.App.list_tools` answers: an agent's tools as its model
receives them."""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING

import attrs

if TYPE_CHECKING:
    from raw_core.tools.registry import ToolDefinition

__all__ = ["ToolListing"]


@attrs.frozen(kw_only=True)
class ToolListing:
    """An agent's tools as its model receives them: ``definitions`` in ``tools.use``
    order (exposed ones only), ``hidden`` the selected tools an unconditional deny hides
    (identity -> the rule's index) and ``hidden_by`` whose rules those are (identity ->
    ``agent`` or a floor's layer), ``selected`` how many tools the agent selects."""

    agent: str
    selected: int
    definitions: tuple[ToolDefinition, ...]
    hidden: Mapping[str, int]
    hidden_by: Mapping[str, str] = attrs.field(factory=dict)
