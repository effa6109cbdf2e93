"""Wall time of ``infrafit plan`` on every example, start-up included (one subprocess per run).

Usage: ``.venv/bin/python benchmarks/plan_speed.py [--repeat 3]``. Prints the best and median wall
time and the best CPU time (user + system of the child) per example; the target is under 1.5 s wall
each on the 2-core development machine. On a shared machine the wall time includes waiting for a
core, so the CPU time is the figure to compare between runs.
"""

from __future__ import annotations

import argparse
import resource
import statistics
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def _child_cpu_s() -> float:
    r = resource.getrusage(resource.RUSAGE_CHILDREN)
    return r.ru_utime + r.ru_stime


def time_plan(spec: Path) -> tuple[float, float, int]:
    """(wall s, CPU s, exit code) of one ``infrafit plan SPEC --json`` subprocess."""
    cpu0, start = _child_cpu_s(), time.perf_counter()
    proc = subprocess.run([sys.executable, "-m", "infrafit", "plan", str(spec), "--json"], cwd=ROOT,
                          stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, check=False)
    return time.perf_counter() - start, _child_cpu_s() - cpu0, proc.returncode


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args()
    print(f"{'example':32s} {'best_s':>7s} {'median_s':>9s} {'cpu_s':>6s} exit")
    for spec in sorted((ROOT / "examples").glob("*.yaml")):
        runs = [time_plan(spec) for _ in range(args.repeat)]
        walls = [w for w, _, _ in runs]
        cpu = min(c for _, c, _ in runs)
        print(f"{spec.stem:32s} {min(walls):7.2f} {statistics.median(walls):9.2f} {cpu:6.2f} {runs[-1][2]}")


if __name__ == "__main__":
    main()
