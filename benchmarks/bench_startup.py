"""Start-up cost of raw's commands and of a front end's imports, beside ``python -c pass``.

Each command runs in fresh processes, the commands in turn (one of each per round), and
each figure is the median over the rounds of the child's CPU time (user + system, the
kernel's own accounting of the finished process: the machine's other work does not count
as it does in wall time). Twice:

* **bytecode cached** — what a user sees from the second run on: Python writes the
  compiled bytecode of every module it imports next to it (``__pycache__``) the first time,
  and reads it afterwards. ``uv sync`` does not compile on install (unless told to with
  ``--compile-bytecode`` or ``UV_COMPILE_BYTECODE=1``), so the very first run after an
  install is the other case.
* **no bytecode cached** — every module compiled from source in every run, the standard
  library's too (an empty ``PYTHONPYCACHEPREFIX`` and ``PYTHONDONTWRITEBYTECODE``): an upper
  bound of the first run after an install (whose standard library is compiled already),
  and what every run costs where the cache cannot be written.

The commands: ``python -c pass``; ``import raw_core``; ``import raw_core.app`` (what a front
end imports first: the session service); ``raw --help``; ``raw tools list --config X`` (a
project with one tool folder and one built-in tool); ``raw sessions list``.

Run: ``uv run python benchmarks/bench_startup.py``.
"""

from __future__ import annotations

import json
import os
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent.parent))  # the repository: benchmarks.*

from benchmarks._common import HANDLER, Target, print_targets

ROUNDS = int(os.environ.get("BENCH_ROUNDS", "15"))


def _cpu_ms(command: list[str], env: dict[str, str], cwd: Path) -> float:
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    subprocess.run(
        command, env=env, cwd=cwd, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, check=True
    )
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    return (after.ru_utime - before.ru_utime + after.ru_stime - before.ru_stime) * 1000


def _project(root: Path) -> Path:
    folder = root / "tools" / "noop"
    folder.mkdir(parents=True)
    manifest = {
        "api_version": 2,
        "id": "noop",
        "version": "1.0.0",
        "name": "noop",
        "description": "Does nothing.",
        "input_schema": {"type": "object", "properties": {"command": {"type": "string"}}},
        "entry": "./tool.py",
    }
    (folder / "tool.json").write_text(json.dumps(manifest))
    (folder / "tool.py").write_text(HANDLER)
    config = root / "raw.json"
    config.write_text(
        json.dumps({"agents": {"a": {"tools": {"use": ["agent/noop", "builtin/read_file"]}}}})
    )
    return config


def commands(config: Path) -> dict[str, list[str]]:
    raw = shutil.which("raw")
    assert raw is not None, "run this with the raw console script installed (uv run ...)"
    python = sys.executable
    return {
        "python -c pass": [python, "-c", "pass"],
        "import raw_core": [python, "-c", "import raw_core"],
        "import raw_core.app (a front end's first import)": [python, "-c", "import raw_core.app"],
        "raw --help": [raw, "--help"],
        "raw tools list --config X": [raw, "tools", "list", "--config", str(config)],
        "raw sessions list": [raw, "sessions", "list"],
    }


def measure(rounds: int = ROUNDS) -> dict[str, dict[str, float]]:
    """Median CPU ms of every command, with bytecode cached and with none."""
    found: dict[str, dict[str, float]] = {}
    with tempfile.TemporaryDirectory() as temp:
        root = Path(temp)
        config = _project(root / "project")
        listed = commands(config)
        base = dict(os.environ, XDG_STATE_HOME=str(root / "state"))
        cached = {k: v for k, v in base.items() if k != "PYTHONDONTWRITEBYTECODE"}
        cached.pop("PYTHONPYCACHEPREFIX", None)
        for command in listed.values():  # the first runs write the bytecode cache
            subprocess.run(command, env=cached, cwd=root, capture_output=True, check=True)
        for label in ("cached", "none cached"):
            times: dict[str, list[float]] = {name: [] for name in listed}
            for _ in range(rounds):
                for name, command in listed.items():
                    env = cached
                    if label == "none cached":
                        prefix = tempfile.mkdtemp(dir=root)  # empty: nothing to read
                        env = dict(base, PYTHONPYCACHEPREFIX=prefix, PYTHONDONTWRITEBYTECODE="1")
                    times[name].append(_cpu_ms(command, env, root))
            found[label] = {name: statistics.median(values) for name, values in times.items()}
    return found


def targets(found: dict[str, dict[str, float]]) -> list[Target]:
    """The start-up targets, with bytecode cached (what a user sees after the first run)."""
    cached = found["cached"]
    return [
        Target(
            item="startup",
            what="a front end's imports (import raw_core.app), CPU",
            figure=cached["import raw_core.app (a front end's first import)"],
            reference=cached["import raw_core"],
            reference_what="import raw_core:",
            limit=3.0,
            unit="ms",
        ),
        Target(
            item="startup",
            what="raw tools list --config X, CPU",
            figure=cached["raw tools list --config X"],
            reference=cached["python -c pass"],
            reference_what="python -c pass:",
            limit=5.0,
            unit="ms",
        ),
    ]


def report(found: dict[str, dict[str, float]]) -> None:
    print(f"CPU ms per process, median of {ROUNDS} rounds")
    print("| command | bytecode cached | no bytecode cached |")
    print("| --- | --- | --- |")
    for name in found["cached"]:
        print(f"| {name} | {found['cached'][name]:.1f} | {found['none cached'][name]:.1f} |")
    print()
    print_targets(targets(found))


def main() -> None:
    report(measure())


if __name__ == "__main__":
    main()
