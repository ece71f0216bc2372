"""Run the whole benchmark set, one script after the other, and print a summary table of
every target and whether it holds.

Each script runs in a process of its own with this interpreter, its figures printed as it
goes; the scripts that carry targets hand them over (``_common.print_targets``), and the
summary at the end lists them all, each a ratio of two figures measured in the same run.
A script that cannot run here (PostgreSQL or an MCP server missing, the ``bench`` group not
installed) is listed with its exit status and the run goes on.

Run: ``uv run --group bench python benchmarks/run_all.py`` (``--only NAME ...`` runs some:
``--only dispatch loop``; ``--quick`` runs only the scripts with targets).
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent.parent))  # the repository: benchmarks.*

from benchmarks._common import TABLE_HEAD, TARGETS_FILE, Target

HERE = Path(__file__).parent
WITH_TARGETS = ("dispatch", "hooks", "loop", "policy", "resume", "startup")
OTHERS = tuple(
    sorted(
        path.stem.removeprefix("bench_")
        for path in HERE.glob("bench_*.py")
        if path.stem.removeprefix("bench_") not in WITH_TARGETS
    )
)
"""Every other script of the set (a new ``bench_*.py`` joins it by being there)."""


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--only", nargs="+", metavar="NAME", help="bench_NAME.py scripts")
    parser.add_argument("--quick", action="store_true", help="only the scripts with targets")
    options = parser.parse_args()
    names = options.only or [*WITH_TARGETS, *(() if options.quick else OTHERS)]
    statuses: list[tuple[str, int, float]] = []
    with tempfile.TemporaryDirectory() as temp:
        handed = Path(temp) / "targets.jsonl"
        handed.touch()
        env = dict(os.environ, **{TARGETS_FILE: str(handed)})
        for name in names:
            script = HERE / f"bench_{name}.py"
            print(f"\n## bench_{name}.py\n", flush=True)
            started = time.perf_counter()
            code = subprocess.run([sys.executable, str(script)], env=env, check=False).returncode
            statuses.append((name, code, time.perf_counter() - started))
        targets = [Target(**json.loads(line)) for line in handed.read_text().splitlines()]
    print("\n## Summary\n")
    print("| script | exit status | seconds |")
    print("| --- | --- | --- |")
    for name, code, seconds in statuses:
        print(f"| bench_{name}.py | {code} | {seconds:.0f} |")
    print()
    print(TABLE_HEAD)
    for target in targets:  # in the order of the scripts
        print(target.row())
    held = sum(target.holds for target in targets)
    print(f"\n{held} of {len(targets)} targets hold.")


if __name__ == "__main__":
    main()
