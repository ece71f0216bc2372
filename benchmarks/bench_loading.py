"""Load 200 tool folders (schema compilation included), then load them again.

Prints ms per tool for the first load (cold: parse, compile schemas, import modules) and
for the second load with the same loader (warm: schemas and modules cached). Run with
``uv run python benchmarks/bench_loading.py``.
"""

from __future__ import annotations

import json
import tempfile
import time
from pathlib import Path

from raw_core.tools._schema import _compile_cached
from raw_core.tools.loader import ToolLoader

TOOLS = 200


def write_tools(root: Path) -> list[Path]:
    folders = []
    for index in range(TOOLS):
        folder = root / f"tool_{index:03d}"
        folder.mkdir()
        schema = {
            "type": "object",
            "properties": {
                "files": {
                    "type": "array",
                    "maxItems": 16,
                    "items": {
                        "type": "object",
                        "properties": {
                            "path": {"type": "string", "pattern": f"^[a-z/]+{index}$"},
                            "start_line": {"type": "integer", "minimum": 1},
                        },
                        "required": ["path"],
                        "additionalProperties": False,
                    },
                },
            },
            "required": ["files"],
            "additionalProperties": False,
        }
        manifest = {
            "api_version": 2,
            "id": folder.name,
            "version": "1.0.0",
            "name": folder.name,
            "description": f"Tool {index}.",
            "input_schema": schema,
            "entry": "./tool.py",
            "condition_sources": ["arguments"],
        }
        (folder / "tool.json").write_text(json.dumps(manifest))
        (folder / "tool.py").write_text(
            "def validate_args(args):\n    return None\n\n"
            "async def handler(args, context):\n    return {'content': []}\n"
        )
        folders.append(folder)
    return folders


def main() -> None:
    with tempfile.TemporaryDirectory() as tmp:
        folders = write_tools(Path(tmp))
        _compile_cached.cache_clear()
        loader = ToolLoader()
        started = time.perf_counter()
        for folder in folders:
            loader.load(folder)
        cold = time.perf_counter() - started
        started = time.perf_counter()
        for folder in folders:
            loader.load(folder)
        warm = time.perf_counter() - started
        fresh = ToolLoader()
        started = time.perf_counter()
        for folder in folders:
            fresh.load(folder)
        new_loader = time.perf_counter() - started
    print(f"tools: {TOOLS}")
    print(f"first load (cold):                 {cold / TOOLS * 1000:.3f} ms per tool")
    print(f"second load, same loader (warm):   {warm / TOOLS * 1000:.3f} ms per tool")
    print(f"new loader, schema cache warm:     {new_loader / TOOLS * 1000:.3f} ms per tool")


if __name__ == "__main__":
    main()
