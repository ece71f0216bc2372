"""Per-call cost of raw's dispatch pipeline, beside two peers' per-call overhead.

raw: one async no-op tool, 50 rules (5 conditional), one check hook, arguments as the
model's JSON text — every step of the pipeline runs. Peers: the same trivial tool called
once per step through pydantic-ai's agent loop (driven by its ``FunctionModel``) and the
OpenAI Agents SDK's ``Runner`` (driven by a fake ``Model``), tracing off; their per-call
figure is a run of N sequential tool-call steps divided by N.

Run: ``uv run --group bench python benchmarks/bench_dispatch.py``.
"""

from __future__ import annotations

import json
import tempfile
import time
from pathlib import Path
from typing import Any

import anyio

from raw_core import hookimpl
from raw_core.agent import load_agent
from raw_core.config import load_config
from raw_core.dispatch import Dispatcher
from raw_core.plugins import PluginHost
from raw_core.tools.calls import CallInfo, ToolCall, Verdict

CALLS = 20000
PEER_STEPS = (20, 200)

SCHEMA = {
    "type": "object",
    "properties": {
        "commands": {
            "type": "array",
            "maxItems": 16,
            "items": {
                "type": "object",
                "properties": {"command": {"type": "string"}},
                "required": ["command"],
                "additionalProperties": False,
            },
        }
    },
    "required": ["commands"],
    "additionalProperties": False,
}


def rules() -> list[dict[str, Any]]:
    found: list[dict[str, Any]] = []
    for index in range(45):
        found.append({"match": f"other/tool_{index}", "effect": "deny"})
    for index in range(5):
        found.append(
            {
                "match": "agent/noop",
                "effect": "ask",
                "when": {
                    "source": "arguments",
                    "any": "commands[*].command",
                    "regex": f"(^|[;&|])\\s*(sudo\\s+)?forbidden_{index}(\\s|$)",
                },
            }
        )
    return found


class CheckHook:
    @hookimpl
    def raw_tool_check(self, call: CallInfo, verdict: Verdict) -> Verdict | None:
        return None


async def bench_raw(root: Path) -> float:
    folder = root / "tools" / "noop"
    folder.mkdir(parents=True)
    (folder / "tool.json").write_text(
        json.dumps(
            {
                "api_version": 2,
                "id": "noop",
                "version": "1.0.0",
                "name": "noop",
                "description": "Does nothing.",
                "input_schema": SCHEMA,
                "entry": "./tool.py",
                "condition_sources": ["arguments"],
            }
        )
    )
    (folder / "tool.py").write_text(
        "RESULT = {'content': [{'type': 'text', 'text': 'ok'}]}\n"
        "async def handler(args, context):\n    return RESULT\n"
    )
    (root / "raw.json").write_text(
        json.dumps({"agents": {"a": {"tools": {"use": ["agent/noop"], "rules": rules()}}}})
    )
    agent = load_agent(load_config(root / "raw.json"), host=PluginHost())
    host = PluginHost()
    host.register(CheckHook(), name="check")
    dispatcher = Dispatcher(agent.registry, agent.policy, host=host)
    call = ToolCall(
        id="c",
        name="noop",
        arguments='{"commands": [{"command": "ls -la"}, {"command": "git status"}]}',
    )
    for _ in range(500):
        result = await dispatcher.dispatch(call)
    assert result.status == "ok", result.text()
    started = time.perf_counter()
    for _ in range(CALLS):
        await dispatcher.dispatch(call)
    return (time.perf_counter() - started) / CALLS


async def bench_pydantic_ai(steps: int, repeat: int = 3) -> float:
    """Seconds per tool call: the best of ``repeat`` runs of ``steps`` calls, after a
    warm-up run."""
    from pydantic_ai import Agent
    from pydantic_ai.messages import ModelMessage, ModelResponse, TextPart, ToolCallPart
    from pydantic_ai.models.function import AgentInfo, FunctionModel
    from pydantic_ai.usage import UsageLimits

    state = {"step": 0}

    def model(messages: list[ModelMessage], info: AgentInfo) -> ModelResponse:
        state["step"] += 1
        if state["step"] <= steps:
            return ModelResponse(
                parts=[ToolCallPart("noop", {"command": "ls"}, tool_call_id=f"c{state['step']}")]
            )
        return ModelResponse(parts=[TextPart("done")])

    agent = Agent(FunctionModel(model))
    limits = UsageLimits(request_limit=steps + 5)

    @agent.tool_plain
    async def noop(command: str) -> str:
        return "ok"

    best = float("inf")
    for run in range(repeat + 1):  # the first run warms up
        state["step"] = 0
        started = time.perf_counter()
        await agent.run("go", usage_limits=limits)
        if run:
            best = min(best, time.perf_counter() - started)
    return best / steps


async def bench_openai_agents(steps: int, repeat: int = 3) -> float:
    """Seconds per tool call: the best of ``repeat`` runs of ``steps`` calls, after a
    warm-up run."""
    from agents import Agent, Runner, function_tool, set_tracing_disabled
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
            if step <= steps:
                item: Any = ResponseFunctionToolCall(
                    type="function_call",
                    call_id=f"c{step}",
                    name="noop",
                    arguments='{"command": "ls"}',
                    id=f"fc{step}",
                    status="completed",
                )
            else:
                item = ResponseOutputMessage(
                    type="message",
                    id="m",
                    role="assistant",
                    status="completed",
                    content=[ResponseOutputText(type="output_text", text="done", annotations=[])],
                )
            return ModelResponse(output=[item], usage=Usage(), response_id=None)

        def stream_response(self, *args: Any, **kwargs: Any) -> Any:
            raise NotImplementedError

    @function_tool
    async def noop(command: str) -> str:
        return "ok"

    agent = Agent(name="bench", model=FakeModel(), tools=[noop])
    best = float("inf")
    for run in range(repeat + 1):  # the first run warms up
        state["step"] = 0
        started = time.perf_counter()
        await Runner.run(agent, "go", max_turns=steps + 5)
        if run:
            best = min(best, time.perf_counter() - started)
    return best / steps


async def main() -> None:
    with tempfile.TemporaryDirectory() as tmp:
        ours = await bench_raw(Path(tmp))
    print(f"raw dispatch, 50 rules (5 conditional) + 1 check hook: {ours * 1e6:.1f} µs/call")
    for steps in PEER_STEPS:
        peers = {
            "pydantic-ai (FunctionModel)": await bench_pydantic_ai(steps),
            "OpenAI Agents SDK (fake Model)": await bench_openai_agents(steps),
        }
        for name, seconds in peers.items():
            print(
                f"{name}, {steps} sequential calls: {seconds * 1e6:.1f} µs/call"
                f" (raw is 1/{seconds / ours:.0f} of it)"
            )


if __name__ == "__main__":
    anyio.run(main)
