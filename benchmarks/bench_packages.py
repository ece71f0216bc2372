"""Install a package of 100 tools, and what selecting a ``pkg/`` tool adds over ``local/``.

Prints the time to install the package from a folder, a .tar.gz and a .tar.xz (into an
empty store: unpack with every member checked, check the 100 tool folders without importing
them, hash the tree, store it read-only, write the index), to install it again (a no-op),
and the time to load one agent that selects one tool as ``pkg/<alias>/tools/<export>``
against the same tool as ``local/<folder>`` — the difference is reading the index and
hashing the package's files again before its first tool loads. Run with
``uv run python benchmarks/bench_packages.py``.
"""

from __future__ import annotations

import json
import os
import shutil
import statistics
import tarfile
import tempfile
import time
from pathlib import Path

from raw_core.agent import load_agent
from raw_core.config import load_config
from raw_core.packages import PackageStore, install_package
from raw_core.packages.tree import make_writable
from raw_core.plugins import PluginHost
from raw_core.tools.loader import ToolLoader

TOOLS = 100
RUNS = 5
LOADS = 30


def write_package(root: Path, tools: int) -> Path:
    """A package of ``tools`` tool folders (``tools/tool_000``...)."""
    root.mkdir(parents=True)
    for index in range(tools):
        folder = root / "tools" / f"tool_{index:03d}"
        folder.mkdir(parents=True)
        manifest = {
            "api_version": 2,
            "id": folder.name,
            "version": "1.0.0",
            "name": folder.name,
            "description": f"Tool {index}.",
            "input_schema": {
                "type": "object",
                "properties": {"path": {"type": "string", "maxLength": 4096}},
                "required": ["path"],
                "additionalProperties": False,
            },
            "entry": "./tool.py",
        }
        (folder / "tool.json").write_text(json.dumps(manifest))
        (folder / "tool.py").write_text(
            "def handler(args, context):\n    return {'content': []}\n" + "# padding\n" * 100
        )
    exports = {f"tool_{i:03d}": f"tools/tool_{i:03d}" for i in range(tools)}
    (root / "raw-package.json").write_text(
        json.dumps(
            {
                "api_version": 1,
                "name": "bench",
                "version": "1.0.0",
                "description": "Benchmark tools.",
                "exports": {"tools": exports},
            }
        )
    )
    return root


def clear(store: PackageStore) -> None:
    if store.data_dir.exists():
        for entry in store.root.glob("*"):
            make_writable(entry)
        shutil.rmtree(store.data_dir)


def time_installs(source: Path, config: Path, store: PackageStore) -> tuple[float, float]:
    """Median seconds of a first install (empty store) and of a repeated install."""
    first: list[float] = []
    again: list[float] = []
    for _ in range(RUNS):
        clear(store)
        config.with_name("raw-packages.json").unlink(missing_ok=True)
        started = time.perf_counter()
        install_package(source, config_file=config, store=store)
        first.append(time.perf_counter() - started)
        started = time.perf_counter()
        install_package(source, config_file=config, store=store)
        again.append(time.perf_counter() - started)
    return statistics.median(first), statistics.median(again)


def time_load(config: Path, local_dir: Path) -> float:
    """Median seconds to load the config's agent with a fresh loader (module imported)."""
    loaded = load_config(config)
    host = PluginHost()
    samples = []
    for _ in range(LOADS):
        started = time.perf_counter()
        load_agent(loaded, host=host, loader=ToolLoader(), local_dir=local_dir)
        samples.append(time.perf_counter() - started)
    return statistics.median(samples)


def main() -> None:
    with tempfile.TemporaryDirectory() as tmp:
        base = Path(tmp)
        os.environ["XDG_DATA_HOME"] = str(base / "data")
        store = PackageStore()
        package = write_package(base / "bench", TOOLS)
        small = write_package(base / "small", 1)
        archives = {}
        for suffix, mode in (("tar.gz", "w:gz"), ("tar.xz", "w:xz")):
            archives[suffix] = base / f"bench.{suffix}"
            with tarfile.open(archives[suffix], mode) as archive:  # type: ignore[call-overload]
                archive.add(package, arcname="bench-1.0.0")
        project = base / "project"
        project.mkdir()
        config = project / "raw.json"
        config.write_text("{}")
        print(f"install a package of {TOOLS} tools (median of {RUNS}):")
        for label, source in (("folder", package), *archives.items()):
            first, again = time_installs(source, config, store)
            print(
                f"  from a {label:<7} {first * 1000:8.1f} ms   again (no-op) {again * 1000:6.1f} ms"
            )

        clear(store)
        install_package(package, config_file=config, store=store)
        install_package(small, config_file=config, store=store, alias="small")
        local_dir = base / "local"
        shutil.copytree(package / "tools", local_dir)
        timings = {}
        for label, identity in (
            ("local/tool_000", "local/tool_000"),
            (f"pkg/ of {TOOLS} tools", "pkg/bench/tools/tool_000"),
            ("pkg/ of 1 tool", "pkg/small/tools/tool_000"),
        ):
            config.write_text(json.dumps({"agents": {"a": {"tools": {"use": [identity]}}}}))
            timings[label] = time_load(config, local_dir)
        print(f"load one agent selecting one tool (median of {LOADS}, fresh loader):")
        local = timings["local/tool_000"]
        for label, seconds in timings.items():
            added = "" if label.startswith("local") else f"  (+{(seconds - local) * 1000:.2f} ms)"
            print(f"  {label:<20} {seconds * 1000:7.2f} ms{added}")
        clear(store)


if __name__ == "__main__":
    main()
