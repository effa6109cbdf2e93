"""Timing with warm-up and adaptive repetition until the median is known well enough.

The stopping rule uses a distribution-free confidence interval of the median: with ``n`` sorted
samples, the ranks ``n/2 +- z*sqrt(n)/2`` bound the median at ~95% for z = 1.96 (the normal
approximation to the binomial order-statistic interval; Conover, *Practical Nonparametric
Statistics*, 3rd ed., section 3.2). Repetition stops when that interval's half-width is below
``rel_ci`` of the median, or when the time budget or the repetition cap is reached.
"""

from __future__ import annotations

import math
import time
from collections.abc import Callable
from dataclasses import dataclass

import numpy as np

Z_95 = 1.96


@dataclass(frozen=True)
class Timing:
    """Per-repetition wall times (seconds) and their summary."""

    samples_s: tuple[float, ...]
    warmup: int

    @property
    def n(self) -> int:
        return len(self.samples_s)

    def percentile(self, q: float) -> float:
        return float(np.percentile(np.asarray(self.samples_s), q))

    @property
    def p50_s(self) -> float:
        return self.percentile(50)

    @property
    def p99_s(self) -> float:
        return self.percentile(99)

    @property
    def p10_s(self) -> float:
        return self.percentile(10)

    @property
    def p90_s(self) -> float:
        return self.percentile(90)

    @property
    def iqr_s(self) -> float:
        return self.percentile(75) - self.percentile(25)

    @property
    def median_ci_rel(self) -> float:
        return median_ci_rel(self.samples_s)

    def summary(self) -> dict[str, float]:
        return {"p10_s": self.p10_s, "p50_s": self.p50_s, "p90_s": self.p90_s, "p99_s": self.p99_s,
                "iqr_s": self.iqr_s, "median_ci_rel": self.median_ci_rel, "repetitions": self.n}


def median_ci_rel(samples: tuple[float, ...] | list[float]) -> float:
    """Half-width of the ~95% order-statistic CI of the median, relative to the median (inf if n < 3)."""
    n = len(samples)
    if n < 3:
        return math.inf
    ordered = sorted(samples)
    half = Z_95 * math.sqrt(n) / 2.0
    lo = max(0, int(math.floor(n / 2.0 - half)))
    hi = min(n - 1, int(math.ceil(n / 2.0 + half)) - 1)
    median = float(np.median(ordered))
    if median <= 0:
        return math.inf
    return (ordered[hi] - ordered[lo]) / 2.0 / median


def time_repeated(
    fn: Callable[[], object],
    *,
    sync: Callable[[], None] | None = None,
    warmup: int = 2,
    min_reps: int = 5,
    max_reps: int = 200,
    budget_s: float = 5.0,
    rel_ci: float = 0.02,
    clock: Callable[[], float] = time.perf_counter,
) -> Timing:
    """Run ``fn`` ``warmup`` times untimed, then time it until the median's CI is tight.

    ``sync`` (e.g. ``torch.cuda.synchronize``) runs before each clock read so asynchronous device
    work is inside the timed region.
    """
    for _ in range(warmup):
        fn()
    if sync:
        sync()
    samples: list[float] = []
    start_all = clock()
    while len(samples) < max_reps:
        t0 = clock()
        fn()
        if sync:
            sync()
        samples.append(clock() - t0)
        if len(samples) >= min_reps and (
            median_ci_rel(samples) <= rel_ci or clock() - start_all >= budget_s
        ):
            break
    return Timing(samples_s=tuple(samples), warmup=warmup)
