"""raw's loop and dispatch figures at another revision beside this tree's, in one run.

A change that may slow the hot paths is measured against the code before it, on the same
machine at the same time: this script checks the other revision out into a temporary git
worktree, then runs ``bench_loop.py`` and ``bench_dispatch.py`` alternately from both
trees (each tree's own scripts, importing its own ``raw_core``, ``raw_builtin_tools`` and
``raw_providers`` through ``PYTHONPATH``), ``--rounds`` times, and prints for each figure
every round's value, the best of each tree, and the ratio of the bests.

Run: ``uv run --group bench python benchmarks/compare_revisions.py [REVISION] [--rounds N]``
(default revision: ``HEAD~1``). The figures compared: µs per tool call of a 50-step turn
(``bench_loop.py``) and µs per dispatched call with 50 rules and a check hook
(``bench_dispatch.py``).
"""

from __future__ import annotations

import argparse
import os
import re
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]

FIGURES = {
    "loop, µs per tool call (50 steps)": (
        "bench_loop.py",
        re.compile(r"per tool call in a 50-step turn[^\n]*:\n\s+raw\s+([\d.]+) µs"),
    ),
    "dispatch, µs per call (50 rules, 1 hook)": (
        "bench_dispatch.py",
        re.compile(r"raw dispatch, 50 rules \(5 conditional\) \+ 1 check hook: ([\d.]+) µs/call"),
    ),
}


def measure(tree: Path, script: str, pattern: re.Pattern[str]) -> float:
    """Run ``script`` from ``tree`` with that tree's packages first on the path."""
    sources = [tree / name / "src" for name in ("raw_core", "raw_builtin_tools", "raw_providers")]
    environment = {**os.environ, "PYTHONPATH": os.pathsep.join(str(s) for s in sources)}
    result = subprocess.run(
        [sys.executable, str(tree / "benchmarks" / script)],
        capture_output=True,
        text=True,
        cwd=tree,
        env=environment,
        check=False,
    )
    found = pattern.search(result.stdout)
    if result.returncode != 0 or found is None:
        raise SystemExit(f"{script} in {tree} failed:\n{result.stdout}\n{result.stderr}")
    return float(found[1])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("revision", nargs="?", default="HEAD~1")
    parser.add_argument("--rounds", type=int, default=3)
    options = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        old = Path(tmp) / "old"
        subprocess.run(
            ["git", "-C", str(ROOT), "worktree", "add", "--detach", str(old), options.revision],
            check=True,
            capture_output=True,
        )
        try:
            values: dict[str, dict[str, list[float]]] = {
                name: {"old": [], "new": []} for name in FIGURES
            }
            for _ in range(options.rounds):
                for name, (script, pattern) in FIGURES.items():
                    values[name]["old"].append(measure(old, script, pattern))
                    values[name]["new"].append(measure(ROOT, script, pattern))
        finally:
            subprocess.run(
                ["git", "-C", str(ROOT), "worktree", "remove", "--force", str(old)],
                check=False,
                capture_output=True,
            )
    print(f"this tree against {options.revision}, {options.rounds} alternating rounds")
    for name, runs in values.items():
        best_old, best_new = min(runs["old"]), min(runs["new"])
        print(f"{name}:")
        print(f"  {options.revision:<10} {'  '.join(f'{v:8.1f}' for v in runs['old'])}")
        print(f"  {'this tree':<10} {'  '.join(f'{v:8.1f}' for v in runs['new'])}")
        print(f"  best: {best_old:.1f} -> {best_new:.1f} ({best_new / best_old - 1:+.1%})")


if __name__ == "__main__":
    main()
