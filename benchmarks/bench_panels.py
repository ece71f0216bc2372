"""The cost of a panel update, in a real turn with a real SQLite session store.

Each step of a 100-step turn calls one async tool that updates one panel once — as a result
block, or through ``await context.panels.update`` — with a 1 KiB or a 64 KiB document
(a ``checklist``), or patches one item of it (the ``patch`` rows: the document is opened
once, then each call replaces one item's status). The same turn with a tool that updates
nothing is the baseline; the figure is the time per step above it: checking the update,
the document against the catalog, storing it as a display-only item, the event and the
front end's ``show_panel`` (a no-op here), and the model's one-line note. The time is the
process's CPU time (``time.process_time``: this machine's other work does not count), the
best of seven rounds.

Run: ``uv run python benchmarks/bench_panels.py``.
"""

from __future__ import annotations

import json
import tempfile
import time
from pathlib import Path
from typing import Any

import anyio

from raw_core.agent import Agent, load_agent
from raw_core.config import load_config
from raw_core.plugins import PluginHost
from raw_core.providers.scripted import Reply, ScriptedProvider
from raw_core.runtime import CallbackFrontEnd, Runtime
from raw_core.sessions.sqlite import SqliteBackend
from raw_core.tools.panel_blocks import document_bytes

STEPS = 100
REPEAT = 7

CODE = """
import json
DOCUMENT = json.loads({document!r})
PATCH = [{{"op": "replace", "path": "/blocks/0/items/0/status", "value": "done"}}]
MODE = {mode!r}
OPENED = []

async def handler(args, context):
    if MODE == "none":
        return {{"content": [{{"type": "text", "text": "ok"}}]}}
    if MODE == "result":
        return {{"content": [{{"type": "panel", "panel": "p", "op": "replace",
                               "document": DOCUMENT}}]}}
    if MODE == "context":
        await context.panels.update("p", {{"op": "replace", "document": DOCUMENT}})
        return {{"content": []}}
    if not OPENED:
        await context.panels.update("p", {{"op": "replace", "document": DOCUMENT}})
        OPENED.append(1)
        return {{"content": []}}
    await context.panels.update("p", {{"op": "patch", "patch": PATCH}})
    return {{"content": []}}
"""


def document(size: int) -> dict[str, Any]:
    """A checklist document of about ``size`` bytes of compact JSON (never more)."""
    items: list[dict[str, str]] = []
    made = {"blocks": [{"type": "checklist", "items": items}]}
    while True:
        items.append({"text": f"task {len(items):05d}: " + "x" * 40, "status": "pending"})
        if document_bytes(made) > size:
            items.pop()
            return made


def make_agent(root: Path, mode: str, doc: dict[str, Any]) -> Agent:
    folder = root / "tools" / "paint"
    folder.mkdir(parents=True, exist_ok=True)
    manifest = {
        "api_version": 2,
        "id": "paint",
        "version": "1.0.0",
        "name": "paint",
        "description": "Updates a panel.",
        "entry": "./tool.py",
        "input_schema": {"type": "object", "properties": {}, "additionalProperties": False},
        "panels": [{"id": "p", "title": "P"}],
    }
    (folder / "tool.json").write_text(json.dumps(manifest))
    (folder / "tool.py").write_text(CODE.format(document=json.dumps(doc), mode=mode))
    (root / "raw.json").write_text(
        json.dumps({"agents": {"a": {"max_steps": STEPS + 1, "tools": {"use": ["agent/paint"]}}}})
    )
    return load_agent(load_config(root / "raw.json"), host=PluginHost())


async def per_step(mode: str, doc: dict[str, Any]) -> float:
    """CPU µs per step of one 100-step turn whose every call updates the panel as ``mode``
    says (creating and opening the session is not timed)."""
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        agent = make_agent(root, mode, doc)
        script = [Reply(tool_calls=(("paint", {}),)) for _ in range(STEPS)]
        model = ScriptedProvider([*script, Reply(text="done")])

        async def show(update: Any) -> None:
            pass

        front_end = CallbackFrontEnd(show_panel=show)
        async with (
            await SqliteBackend.open(root / "state") as backend,
            Runtime(backend).open_session(agent, model, front_end=front_end) as session,
        ):
            start = time.process_time()
            ended = await session.run_turn("go")
            elapsed = time.process_time() - start
        assert ended.reason == "completed", ended
    return elapsed / STEPS * 1e6


MODES = (
    ("result", "replace, as a result block"),
    ("context", "replace, `context.panels.update`"),
    ("patch", "patch of one item, `context.panels.update`"),
)


async def main() -> None:
    """Every variant turn after turn, REPEAT rounds, the best of each: a machine whose
    load drifts slows every variant of a round alike."""
    variants: list[tuple[str, int, dict[str, Any]]] = [("none", 0, document(1024))]
    variants += [(mode, size, document(size)) for size in (1024, 64 * 1024) for mode, _ in MODES]
    best: dict[tuple[str, int], float] = {}
    for _ in range(REPEAT):
        for mode, size, doc in variants:
            took = await per_step(mode, doc)
            best[mode, size] = min(best.get((mode, size), float("inf")), took)
    base = best["none", 0]
    print(f"baseline (a call that updates nothing): {base:.1f} µs per step")
    print("| update | document | µs per step | above the baseline |")
    print("| --- | --- | --- | --- |")
    names = dict(MODES)
    for mode, size, doc in variants[1:]:
        took = best[mode, size]
        label = f"{size // 1024} KiB ({document_bytes(doc):,} B)"
        print(f"| {names[mode]} | {label} | {took:.1f} | {took - base:.1f} |")


if __name__ == "__main__":
    anyio.run(main)
