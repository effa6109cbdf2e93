"""Run every speed benchmark in this folder (`make bench`); each prints its own figures."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
SCRIPTS = ("catalog_load.py", "estimate_speed.py", "plan_speed.py", "plan_vs_estimate.py", "plan_scaling.py",
           "monitor_overhead.py")


def main() -> int:
    failed = 0
    for name in SCRIPTS:
        print(f"== {name}", flush=True)
        failed += subprocess.call([sys.executable, str(HERE / name)]) != 0
    return 1 if failed else 0


if __name__ == "__main__":
    raise SystemExit(main())
