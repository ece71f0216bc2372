"""What tools keep for a session's length (``context.resources``): made on first use by
key, closed newest first when the session ends (a failing close does not stop the others),
and refused once closed."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from raw_core import App, Reply, ScriptedProvider, SessionResources
from raw_core.plugins import PluginHost

# A tool that keeps one object per session, which counts its calls and, when the session
# closes it, writes the count to the file the arguments name.
KEEPER = """
class Counter:
    def __init__(self, path):
        self.path = path
        self.calls = 0

    async def aclose(self):
        with open(self.path, "w") as handle:
            handle.write(str(self.calls))


def handler(args, context):
    counter = context.resources.get("agent/keeper", lambda: Counter(args["path"]))
    counter.calls += 1
    return {"content": [{"type": "text", "text": f"call {counter.calls}"}]}
"""


def _project(root: Path) -> Path:
    folder = root / "tools" / "keeper"
    folder.mkdir(parents=True)
    schema = {
        "type": "object",
        "properties": {"path": {"type": "string"}},
        "required": ["path"],
        "additionalProperties": False,
    }
    manifest = {
        "api_version": 2,
        "id": "keeper",
        "version": "1.0.0",
        "name": "keeper",
        "description": "Keeps a counter for the session.",
        "input_schema": schema,
        "condition_sources": ["arguments"],
        "entry": "./tool.py",
    }
    (folder / "tool.json").write_text(json.dumps(manifest))
    (folder / "tool.py").write_text(KEEPER)
    config = root / "raw.json"
    config.write_text(json.dumps({"agents": {"a": {"tools": {"use": ["agent/keeper"]}}}}))
    return config


@pytest.mark.anyio
@pytest.mark.parametrize("anyio_backend", ["asyncio"])
async def test_a_value_lives_across_turns_and_is_closed_when_the_session_ends(
    tmp_path: Path, anyio_backend: str
) -> None:
    closed = tmp_path / "closed"
    call = ("keeper", {"path": str(closed)})
    model = ScriptedProvider(
        [Reply(tool_calls=(call,)), Reply(text="one"), Reply(tool_calls=(call,)), Reply(text="two")]
    )
    async with App.open(
        _project(tmp_path), host=PluginHost(), store_dir=tmp_path / "s", provider=model
    ) as app:
        async with app.open_session() as session:
            await session.run_turn("first")
            await session.run_turn("second")
            assert not closed.exists()  # alive between turns
        assert closed.read_text() == "2"  # one object for both turns, closed at the end
        closed.unlink()
        result = await app.call_tool("agent/keeper", {"path": str(closed)})
        assert result.status == "ok"
        assert closed.read_text() == "1"  # a lone call is its own runtime


@pytest.mark.anyio
@pytest.mark.parametrize("anyio_backend", ["asyncio"])
async def test_values_close_newest_first_and_a_failure_does_not_stop_the_rest(
    anyio_backend: str,
) -> None:
    order: list[str] = []

    class Sync:
        def __init__(self, name: str) -> None:
            self.name = name

        def close(self) -> None:
            order.append(self.name)
            if self.name == "b":
                raise OSError("cannot close b")

    resources = SessionResources()
    first = resources.get("a", lambda: Sync("a"))
    assert resources.get("a", lambda: Sync("other")) is first
    resources.get("b", lambda: Sync("b"))
    resources.get("c", lambda: Sync("c"))
    await resources.aclose()
    await resources.aclose()  # idempotent
    assert order == ["c", "b", "a"]
    assert resources.closed
    with pytest.raises(RuntimeError, match="closed"):
        resources.get("d", lambda: Sync("d"))
