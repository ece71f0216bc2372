"""The peers' agent loops, driven by fair fakes, for the benchmarks that compare with them.

A turn of ``steps`` steps, each step one model response asking for ``calls`` calls of an
async no-op tool, then a final text answer. pydantic-ai runs with its ``FunctionModel``
over an ``async def`` function that reports usage (a plain ``def`` is run in a worker
thread, and a response without usage takes a slower path: neither is how a real model
drives it); the OpenAI Agents SDK with a fake ``Model`` (tracing off). Each figure is the
best of ``repeat`` turns after one warm-up turn, in seconds per turn on ``clock`` (wall
time by default). Peers keep nothing on disk.

Needs the ``bench`` dependency group (``uv run --group bench ...``).
"""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import Any


def available() -> str | None:
    """None when both peers can be imported, else why not."""
    try:
        import agents  # noqa: F401
        import pydantic_ai  # noqa: F401
    except ImportError as exc:
        return f"the peers are not installed ({exc.name}): run with `uv run --group bench`"
    return None


async def pydantic_ai_turn(
    steps: int, calls: int = 1, repeat: int = 3, clock: Callable[[], float] = time.perf_counter
) -> float:
    """Seconds for one pydantic-ai turn of ``steps`` steps of ``calls`` calls each."""
    from pydantic_ai import Agent
    from pydantic_ai.messages import ModelMessage, ModelResponse, TextPart, ToolCallPart
    from pydantic_ai.models.function import AgentInfo, FunctionModel
    from pydantic_ai.usage import RequestUsage, UsageLimits

    state = {"step": 0}

    async def model(messages: list[ModelMessage], info: AgentInfo) -> ModelResponse:
        state["step"] += 1
        step = state["step"]
        usage = RequestUsage(input_tokens=10 * step, output_tokens=5)
        if step <= steps:
            parts: list[Any] = [
                ToolCallPart("noop", {"command": "ls"}, tool_call_id=f"c{step}_{index}")
                for index in range(calls)
            ]
            return ModelResponse(parts=parts, usage=usage, model_name="fake")
        return ModelResponse(parts=[TextPart("done")], usage=usage, model_name="fake")

    agent = Agent(FunctionModel(model))
    limits = UsageLimits(request_limit=steps + 5, tool_calls_limit=steps * calls + 5)

    @agent.tool_plain
    async def noop(command: str) -> str:
        return "ok"

    best = float("inf")
    for run in range(repeat + 1):  # the first run warms up
        state["step"] = 0
        started = clock()
        await agent.run("go", usage_limits=limits)
        if run:
            best = min(best, clock() - started)
    return best


async def openai_agents_turn(
    steps: int, calls: int = 1, repeat: int = 3, clock: Callable[[], float] = time.perf_counter
) -> float:
    """Seconds for one OpenAI Agents SDK turn of ``steps`` steps of ``calls`` calls each."""
    from agents import Agent, ModelSettings, Runner, function_tool, set_tracing_disabled
    from agents.items import ModelResponse
    from agents.models.interface import Model
    from agents.usage import Usage
    from openai.types.responses import (
        ResponseFunctionToolCall,
        ResponseOutputMessage,
        ResponseOutputText,
    )

    set_tracing_disabled(True)
    state = {"step": 0}

    class FakeModel(Model):
        async def get_response(self, *args: Any, **kwargs: Any) -> ModelResponse:
            state["step"] += 1
            step = state["step"]
            usage = Usage(requests=1, input_tokens=10 * step, output_tokens=5, total_tokens=15)
            output: list[Any]
            if step <= steps:
                output = [
                    ResponseFunctionToolCall(
                        type="function_call",
                        call_id=f"c{step}_{index}",
                        name="noop",
                        arguments='{"command": "ls"}',
                        id=f"fc{step}_{index}",
                        status="completed",
                    )
                    for index in range(calls)
                ]
            else:
                text = ResponseOutputText(type="output_text", text="done", annotations=[])
                output = [
                    ResponseOutputMessage(
                        type="message",
                        id="m",
                        role="assistant",
                        status="completed",
                        content=[text],
                    )
                ]
            return ModelResponse(output=output, usage=usage, response_id=None)

        def stream_response(self, *args: Any, **kwargs: Any) -> Any:
            raise NotImplementedError

    @function_tool
    async def noop(command: str) -> str:
        return "ok"

    agent = Agent(
        name="bench",
        model=FakeModel(),
        tools=[noop],
        model_settings=ModelSettings(parallel_tool_calls=True),
    )
    best = float("inf")
    for run in range(repeat + 1):  # the first run warms up
        state["step"] = 0
        started = clock()
        await Runner.run(agent, "go", max_turns=steps + 5)
        if run:
            best = min(best, clock() - started)
    return best


PEERS = {"pydantic-ai": pydantic_ai_turn, "OpenAI Agents SDK": openai_agents_turn}
