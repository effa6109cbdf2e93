"""Wall time of ``infrafit plan`` on every example, start-up included (one subprocess per run).

Usage: ``.venv/bin/python benchmarks/plan_speed.py [--repeat 3]``. Prints the best and median wall
time per example; the target is under 1.5 s each on the 2-core development machine.
"""

from __future__ import annotations

import argparse
import statistics
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def time_plan(spec: Path) -> tuple[float, int]:
    start = time.perf_counter()
    proc = subprocess.run([sys.executable, "-m", "infrafit", "plan", str(spec), "--json"], cwd=ROOT,
                          stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, check=False)
    return time.perf_counter() - start, proc.returncode


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args()
    print(f"{'example':32s} {'best_s':>7s} {'median_s':>9s} exit")
    for spec in sorted((ROOT / "examples").glob("*.yaml")):
        runs = [time_plan(spec) for _ in range(args.repeat)]
        walls = [w for w, _ in runs]
        print(f"{spec.stem:32s} {min(walls):7.2f} {statistics.median(walls):9.2f} {runs[-1][1]}")


if __name__ == "__main__":
    main()
