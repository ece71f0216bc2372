"""Startup time of the ``raw`` command line, beside ``python -c pass``.

Runs each command 20 times in fresh processes and prints the median wall time in ms.
Run: ``uv run python benchmarks/bench_startup.py``.
"""

from __future__ import annotations

import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time

RUNS = 20


def median_ms(command: list[str], env: dict[str, str]) -> float:
    times = []
    for _ in range(RUNS):
        started = time.perf_counter()
        subprocess.run(
            command, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, check=True
        )
        times.append((time.perf_counter() - started) * 1000)
    return statistics.median(times)


def main() -> None:
    raw = shutil.which("raw")
    assert raw is not None, "run this with the raw console script installed (uv run ...)"
    with tempfile.TemporaryDirectory() as state:
        env = dict(os.environ, XDG_STATE_HOME=state)
        rows = [
            ("python -c pass", [sys.executable, "-c", "pass"]),
            ("raw --help", [raw, "--help"]),
            ("raw sessions list", [raw, "sessions", "list"]),
        ]
        for label, command in rows:
            print(f"{label:<20} {median_ms(command, env):7.1f} ms (median of {RUNS})")


if __name__ == "__main__":
    main()
