"""Sampler overhead: CPU seconds the monitor spends per sample, as a share of one core at 1 Hz.

Run: .venv/bin/python benchmarks/monitor_overhead.py   (records nothing; prints the figure)
"""

from __future__ import annotations

import os
import subprocess
import sys
import time

from infrafit.monitor.classify import classify
from infrafit.monitor.sampler import Sampler
from infrafit.units import MS


def main(n: int = 200) -> None:
    child = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(120)"])
    try:
        sampler = Sampler(child.pid)
        t0 = time.process_time()
        for _ in range(n):
            classify(sampler.sample())
        cpu_per_sample_s = (time.process_time() - t0) / n
    finally:
        child.kill()
    print(f"CPU per sample: {cpu_per_sample_s / MS:.3f} ms; at 1 Hz that is "
          f"{cpu_per_sample_s:.2%} of one core (target < 2%); pid {os.getpid()}")


if __name__ == "__main__":
    main()
