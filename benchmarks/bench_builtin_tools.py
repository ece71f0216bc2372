"""Per-call cost of the core built-in tools, through the whole dispatch pipeline.

* read_file: one call reading 16 files of 100 KB each (2,000 lines of 50 bytes), every line
  shown (the model's share capped at 8192 bytes, the full output kept for the terminal).
* write_file: one call applying a 50-hunk patch to a 3,000-line file (each hunk: three lines
  of context, one removed, one added), written atomically with fsync. The patch and its
  inverse alternate, so every call changes the file.

Arguments arrive as the model's JSON text, so strict parsing, schema validation,
``validate_args``, the effects and the policy all run. Run:
``uv run python benchmarks/bench_builtin_tools.py``.
"""

from __future__ import annotations

import json
import statistics
import tempfile
import time
from pathlib import Path

import anyio

from raw_builtin_tools.toolkit import Hunk, LineKind, Patch, UpdateFile, render_patch
from raw_core.agent import load_agent
from raw_core.config import load_config
from raw_core.dispatch import Dispatcher
from raw_core.plugins import PluginHost
from raw_core.tools.calls import ToolCall

READ_CALLS = 200
PATCH_CALLS = 100
FILES = 16
LINES_PER_FILE = 2000
PATCH_FILE_LINES = 3000
HUNKS = 50


def make_dispatcher(root: Path, work: Path) -> Dispatcher:
    config = root / "raw.json"
    config.write_text(
        json.dumps(
            {"agents": {"bench": {"tools": {"use": ["builtin/read_file", "builtin/write_file"]}}}}
        ),
        encoding="utf-8",
    )
    host = PluginHost()
    host.load_entry_points()
    agent = load_agent(load_config(config), host=host)
    return Dispatcher(agent.registry, agent.policy, host=host, cwd=work)


def patches(lines: list[str]) -> tuple[str, str]:
    """A 50-hunk patch over ``lines`` and its inverse."""
    forward: list[Hunk] = []
    backward: list[Hunk] = []
    step = len(lines) // HUNKS
    for index in range(HUNKS):
        at = index * step + step // 2
        context: list[tuple[LineKind, str]] = [(" ", line) for line in lines[at - 3 : at]]
        old, new = lines[at], lines[at].upper()
        forward.append(Hunk(lines=(*context, ("-", old), ("+", new))))
        backward.append(Hunk(lines=(*context, ("-", new), ("+", old))))
    return (
        render_patch(Patch(operations=(UpdateFile(path="big.py", hunks=tuple(forward)),))),
        render_patch(Patch(operations=(UpdateFile(path="big.py", hunks=tuple(backward)),))),
    )


async def timed(dispatcher: Dispatcher, name: str, arguments: list[str]) -> list[float]:
    samples = []
    for index, text in enumerate(arguments):
        started = time.perf_counter()
        result = await dispatcher.dispatch(ToolCall(id=f"c{index}", name=name, arguments=text))
        samples.append(time.perf_counter() - started)
        assert result.status == "ok", result.text()
    return samples


async def main() -> None:
    with tempfile.TemporaryDirectory() as temp:
        root = Path(temp)
        work = root / "work"
        work.mkdir()
        for index in range(FILES):
            body = "".join(
                f"file {index:02d} line {n:05d} " + "x" * 30 + "\n" for n in range(LINES_PER_FILE)
            )
            (work / f"f{index}.txt").write_text(body, encoding="utf-8")
        lines = [
            f"    value_{n:05d} = compute({n}, 'abc')  # note" for n in range(PATCH_FILE_LINES)
        ]
        (work / "big.py").write_text("\n".join(lines) + "\n", encoding="utf-8")
        dispatcher = make_dispatcher(root, work)

        read_args = json.dumps({"files": [{"path": f"f{i}.txt"} for i in range(FILES)]})
        await timed(dispatcher, "read_file", [read_args] * 5)  # warm up
        reads = await timed(dispatcher, "read_file", [read_args] * READ_CALLS)

        forward, backward = patches(lines)
        texts = [
            json.dumps({"patch": forward if i % 2 == 0 else backward}) for i in range(PATCH_CALLS)
        ]
        writes = await timed(dispatcher, "write_file", texts)
        assert (work / "big.py").read_text(encoding="utf-8") == "\n".join(lines) + "\n"

    size_kb = sum(len(f"file 00 line 00000 {'x' * 30}\n") for _ in range(LINES_PER_FILE)) / 1000
    print(f"read_file, {FILES} files of {size_kb:.0f} KB, {READ_CALLS} calls:")
    print(figures(reads))
    print(f"write_file, {HUNKS}-hunk patch on a {PATCH_FILE_LINES}-line file, {PATCH_CALLS} calls:")
    print(figures(writes))


def figures(samples: list[float]) -> str:
    mean, median = statistics.mean(samples) * 1000, statistics.median(samples) * 1000
    return f"  {mean:.2f} ms per call (median {median:.2f})"


if __name__ == "__main__":
    anyio.run(main)
