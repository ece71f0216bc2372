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

Then the floor of ``raw tools list --config X`` (bytecode cached, in the same rounds): what
the libraries it stands on cost before raw does anything, each stage a ``python -c``
program that does what the one before did and one thing more (click; the entry-point scan;
asyncio, anyio and one event loop; attrs, cattrs and pluggy; fastjsonschema, RE2 and
jsonpatch), so that the differences of the medians add up; and, inside an instrumented run
of the command, the CPU spent building attrs classes, generating and compiling schema
validators, and compiling RE2 patterns. What is left is raw's own: importing its modules
and the plug-ins', reading the config, loading the tools.

Run: ``uv run python benchmarks/bench_startup.py``.

To see what a change did, ``--against DIR [DIR ...]`` measures the commands instead with
each DIR (a source tree of raw, e.g. ``git archive REV | tar -x -C DIR``) first on
``PYTHONPATH``, beside this tree, in the same rounds (bytecode cached), and says whether
each command printed the same with every tree.
"""

from __future__ import annotations

import argparse
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


_EVENT_LOOP = "import anyio\nasync def _nothing():\n    pass\nanyio.run(_nothing)\n"
FLOOR: tuple[tuple[str, str], ...] = (
    ("python itself (`python -c pass`)", "pass\n"),
    ("click", "import click\n"),
    (
        "the entry-point scan (`importlib.metadata`, group `raw`)",
        "import importlib.metadata\nimportlib.metadata.entry_points(group='raw')\n",
    ),
    ("asyncio, anyio and one event loop", _EVENT_LOOP),
    ("attrs, cattrs and pluggy (imports)", "import attrs, cattrs, pluggy\n"),
    ("fastjsonschema, RE2 and jsonpatch (imports)", "import fastjsonschema, re2, jsonpatch\n"),
)
"""The floor's stages, in the order the command reaches them: each program runs every
snippet up to its own."""

INSTRUMENTED = """
import json, sys, time
import attr._make, re2._re2
spent = {"attrs": 0.0, "schemas": 0.0, "re2": 0.0}
inside = []
def timed(key, function):
    def wrapper(*args, **kwargs):
        if inside:  # counted once, by the outermost
            return function(*args, **kwargs)
        inside.append(key)
        started = time.process_time()
        try:
            return function(*args, **kwargs)
        finally:
            spent[key] += time.process_time() - started
            inside.pop()
    return wrapper
builder = attr._make._ClassBuilder
builder.__init__ = timed("attrs", builder.__init__)
builder.build_class = timed("attrs", builder.build_class)
import raw_core._re2, raw_core.tools._schema as schema
re2._re2.RE2 = timed("re2", re2._re2.RE2)
schema._compile_cached = timed("schemas", schema._compile_cached)
from raw_core.cli import main
sys.argv = ["raw", *sys.argv[1:]]
try:
    main()
finally:
    sys.stderr.write("SPENT " + json.dumps(spent) + "\\n")
"""
"""``raw ARGS`` with the CPU of attrs building classes, of the schema compiler (generating
and compiling a validator, the RE2 patterns of its schema included) and of RE2 compiling
the other patterns, each summed once (its wrappers cost little; attrs' decorators do a
little more than the two steps timed, so that figure is a lower bound)."""


def _floor_commands() -> dict[str, list[str]]:
    programs: dict[str, list[str]] = {}
    code = ""
    for label, snippet in FLOOR:
        code += snippet
        programs[label] = [sys.executable, "-c", code]
    return programs


def _time_inside(command: list[str], env: dict[str, str], cwd: Path) -> dict[str, float]:
    """The ms the instrumented run spent in attrs, the schema compiler and RE2."""
    run = subprocess.run(command, env=env, cwd=cwd, capture_output=True, check=True)
    line = [x for x in run.stderr.decode().splitlines() if x.startswith("SPENT ")][-1]
    spent: dict[str, float] = json.loads(line.removeprefix("SPENT "))
    return {f"inside: {key}": seconds * 1000 for key, seconds in spent.items()}


def report_floor(floor: dict[str, float]) -> None:
    """The floor table: each part's CPU ms and its share of the whole command."""
    whole = floor["raw tools list --config X"]
    rows: list[tuple[str, float]] = []
    before = 0.0
    for label, _ in FLOOR:
        rows.append((label, floor[label] - before))
        before = floor[label]
    parts = (
        ("attrs building classes (raw's and its libraries'), in the run", "inside: attrs"),
        ("fastjsonschema generating and compiling the schemas' validators", "inside: schemas"),
        ("RE2 compiling the other patterns", "inside: re2"),
    )
    for label, key in parts:
        rows.append((label, floor[key]))
    rows.append(("raw's own: its modules and the plug-ins', the config, the tools", 0.0))
    rows[-1] = (rows[-1][0], whole - sum(ms for _, ms in rows))
    print("The floor of raw tools list --config X (bytecode cached, the same rounds)")
    print("| part | CPU ms | share |")
    print("| --- | --- | --- |")
    for label, ms in rows:
        print(f"| {label} | {ms:.1f} | {ms / whole:.0%} |")
    print(f"| the whole command | {whole:.1f} | 100% |")


def measure(rounds: int = ROUNDS) -> dict[str, dict[str, float]]:
    """Median CPU ms of every command, with bytecode cached and with none; and the floor
    (``"floor"``): each cumulative stage, and the ms spent inside the instrumented run,
    measured in the rounds of the cached commands."""
    found: dict[str, dict[str, float]] = {}
    with tempfile.TemporaryDirectory() as temp:
        root = Path(temp)
        config = _project(root / "project")
        listed = commands(config)
        stages = _floor_commands()
        instrumented = [sys.executable, "-c", INSTRUMENTED, "tools", "list", "--config"]
        instrumented.append(str(config))
        base = dict(os.environ, XDG_STATE_HOME=str(root / "state"))
        cached = {k: v for k, v in base.items() if k != "PYTHONDONTWRITEBYTECODE"}
        cached.pop("PYTHONPYCACHEPREFIX", None)
        for command in [*listed.values(), *stages.values()]:  # the bytecode cache written
            subprocess.run(command, env=cached, cwd=root, capture_output=True, check=True)
        floor: dict[str, list[float]] = {}
        for label in ("cached", "none cached"):
            times: dict[str, list[float]] = {name: [] for name in listed}
            for _ in range(rounds):
                for name, command in listed.items():
                    env = cached
                    if label == "none cached":
                        prefix = tempfile.mkdtemp(dir=root)  # empty: nothing to read
                        env = dict(base, PYTHONPYCACHEPREFIX=prefix, PYTHONDONTWRITEBYTECODE="1")
                    times[name].append(_cpu_ms(command, env, root))
                if label == "cached":
                    for name, command in stages.items():
                        floor.setdefault(name, []).append(_cpu_ms(command, cached, root))
                    for name, ms in _time_inside(instrumented, cached, root).items():
                        floor.setdefault(name, []).append(ms)
            found[label] = {name: statistics.median(values) for name, values in times.items()}
        found["floor"] = {name: statistics.median(values) for name, values in floor.items()}
        found["floor"]["raw tools list --config X"] = found["cached"]["raw tools list --config X"]
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
    report_floor(found["floor"])
    print()
    print_targets(targets(found))


PACKAGES = (
    "raw_core",
    "raw_builtin_tools",
    "raw_providers",
    "raw_store_postgres",
    "raw_mcp",
    "raw_acp",
    "raw_dashboard",
)
"""The distributions of a source tree, each under ``<tree>/<name>/src``."""


def compare(trees: list[Path], rounds: int = ROUNDS) -> None:
    """Print each command's median CPU ms (bytecode cached) with each of ``trees`` first on
    ``PYTHONPATH`` and with this tree, one of each per round, and whether each command's
    output was the same with every tree."""
    with tempfile.TemporaryDirectory() as temp:
        root = Path(temp)
        listed = commands(_project(root / "project"))
        base = {
            k: v
            for k, v in os.environ.items()
            if k not in ("PYTHONDONTWRITEBYTECODE", "PYTHONPYCACHEPREFIX", "PYTHONPATH")
        }
        base["XDG_STATE_HOME"] = str(root / "state")
        envs = {"this tree": base}
        for tree in trees:
            path = os.pathsep.join(str(tree.resolve() / name / "src") for name in PACKAGES)
            envs[str(tree)] = dict(base, PYTHONPATH=path)
        same: dict[str, bool] = {}
        for name, command in listed.items():  # the bytecode cache written; outputs compared
            outputs = set()
            for env in envs.values():
                run = subprocess.run(command, env=env, cwd=root, capture_output=True, check=True)
                outputs.add(run.stdout)
            same[name] = len(outputs) == 1
        times: dict[tuple[str, str], list[float]] = {}
        for _ in range(rounds):
            for name, command in listed.items():
                for label, env in envs.items():
                    times.setdefault((label, name), []).append(_cpu_ms(command, env, root))
    print(f"CPU ms per process, median of {rounds} rounds, bytecode cached")
    print("| command | " + " | ".join(envs) + " | same output |")
    print("| --- |" + " --- |" * (len(envs) + 1))
    for name in listed:
        medians = [statistics.median(times[(label, name)]) for label in envs]
        row = " | ".join(f"{ms:.1f}" for ms in medians)
        print(f"| {name} | {row} | {'yes' if same[name] else 'NO'} |")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--against", nargs="+", type=Path, metavar="DIR", default=[])
    options = parser.parse_args()
    if options.against:
        compare(options.against)
    else:
        report(measure())


if __name__ == "__main__":
    main()
