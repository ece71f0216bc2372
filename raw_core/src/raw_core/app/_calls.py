"""What a lone call through the session service needs beside the dispatcher: the front
end's answer as an approval callback, and the result as the model would receive it."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import attrs

from raw_core.errors import RawError
from raw_core.runtime.frontend import FrontEnd
from raw_core.sessions.backend import ApprovalAnswer
from raw_core.sessions.blocks import ContentBlock, TextBlock, VarPlaceholder

if TYPE_CHECKING:
    from raw_core.agent import Agent
    from raw_core.tools.results import ToolResult

__all__ = ["approval_of", "with_values"]


def with_values(result: ToolResult, agent: Agent) -> ToolResult:
    """``result`` with each variable placeholder replaced by the variable's value (or a
    note saying why it is not available), in both its model and its full content."""

    def fill(blocks: tuple[ContentBlock, ...]) -> tuple[ContentBlock, ...]:
        filled: list[ContentBlock] = []
        for block in blocks:
            if not isinstance(block, VarPlaceholder):
                filled.append(block)
                continue
            try:
                value = agent.vars.read(block.name)
            except RawError as exc:
                value = f"[the value of {block.name} is not available: {exc.code}]"
            filled.append(TextBlock(text=value))
        return tuple(filled)

    if not any(isinstance(block, VarPlaceholder) for block in result.full_content):
        return result
    return attrs.evolve(
        result, content=fill(result.content), full_content=fill(result.full_content)
    )


def approval_of(front_end: FrontEnd) -> Any:
    """A lone call's approval callback: the front end, when it can ask."""
    if not front_end.can_approve:
        return None

    async def approve(request: Any) -> bool:
        answer = await front_end.approve(request)
        return answer.approved if isinstance(answer, ApprovalAnswer) else answer is True

    return approve
