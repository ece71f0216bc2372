"""A call's values on the way in and out of the dispatch pipeline: the model's argument
string parsed, validated and frozen (step 2, :func:`parsed_arguments`), and what the
handler returned made the :class:`~raw_core.tools.results.ToolResult` the model reads
(:func:`result_of`)."""

from __future__ import annotations

from typing import Any

from raw_core._json import JsonInputError, loads_strict
from raw_core.errors import InvalidArguments, ToolError
from raw_core.frozen import freeze
from raw_core.sessions.blocks import TextBlock
from raw_core.tools._schema import SchemaValidationError
from raw_core.tools.loader import LoadedTool
from raw_core.tools.results import BatchResult, ToolResult, cap_blocks, normalize_content

__all__ = ["parsed_arguments", "result_of"]


def parsed_arguments(tool: LoadedTool, raw: str, max_bytes: int) -> Any:
    """Step 2: the model's argument string ``raw`` parsed strictly (at most ``max_bytes``),
    validated against the tool's JSON Schema and then its ``validate_args``, and frozen;
    ``invalid_arguments`` naming the field otherwise."""
    try:
        value = loads_strict(raw, max_bytes=max_bytes)
    except JsonInputError as exc:
        raise InvalidArguments(f"the arguments are not valid JSON: {exc}", field="$") from None
    try:
        tool.input_validator.validate(value)
    except SchemaValidationError as exc:
        raise InvalidArguments(f"{exc.path}: {exc.message}", field=exc.path) from None
    # Frozen once: validate_args, the effects, hooks, approval and the handler all
    # read this one value.
    frozen = freeze(value)
    if tool.validate_args is not None:
        try:
            problem = tool.validate_args(frozen)
        except (Exception, SystemExit) as exc:  # sys.exit() in a tool ends the call, not raw
            raise InvalidArguments(
                f"validate_args raised {type(exc).__name__}: {exc}", field="$"
            ) from None
        if problem is not None:
            raise InvalidArguments(str(problem), field="$")
    return frozen


def result_of(returned: Any, effects: Any, room: int) -> ToolResult:
    """What a handler returned (after its middlewares) as the result the model reads: a
    :class:`ToolResult` as it is, a :class:`BatchResult` rendered, anything else
    normalized to blocks; the model's content capped to ``room`` bytes, whichever it was
    (the cap is a hard one)."""
    if isinstance(returned, ToolResult):
        return returned.capped(room)
    if isinstance(returned, BatchResult):
        model_text, full_text, truncated = returned.render(room)
        return ToolResult(
            status="ok",
            content=(TextBlock(text=model_text),),
            full_content=(TextBlock(text=full_text),),
            effects=effects,
            truncated=truncated,
        )
    blocks, is_error = normalize_content(returned)
    capped, truncated = cap_blocks(blocks, room)
    if is_error:
        return ToolResult(
            status="error",
            code=ToolError.code,
            message="the tool reported an error",
            content=capped,
            full_content=blocks,
            effects=effects,
            truncated=truncated,
        )
    return ToolResult(
        status="ok", content=capped, full_content=blocks, effects=effects, truncated=truncated
    )
