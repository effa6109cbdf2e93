"""Right-sizing advice from an observed load: re-plan the hardware for what the workload really used.

CPU: the p95 of busy cores plus headroom gives the cores a host needs. GPU: the observed busy
fraction times the current accelerator's peak gives the compute the load needs; with the memory it
used, the catalog's cheaper accelerators that still carry it (with headroom) are named with their
price relative to the current one.
"""

from __future__ import annotations

import math
from typing import Any

from infrafit.monitor.classify import Summary
from infrafit.units import fmt_bytes

#: Keep 30% spare capacity over the observed p95 so bursts do not queue (the planner's default headroom).
HEADROOM = 0.3


def _cores(n: float) -> str:
    return "core" if n == 1 else "cores"


def cpu_advice(summary: Summary, cores: int) -> list[str]:
    need = max(1, math.ceil(summary.cpu_busy_cores_p95 * (1 + HEADROOM)))
    if summary.samples == 0:
        return []
    if need < cores:
        return [f"CPU: p95 {summary.cpu_busy_cores_p95:.1f} of {cores} {_cores(cores)} busy: "
                f"{need} {_cores(need)} (with {HEADROOM:.0%} headroom) would carry this load"]
    if summary.dominant == "cpu":
        return [f"CPU-bound: p95 {summary.cpu_busy_cores_p95:.1f} cores busy; more or faster cores "
                "(or parallelising the hot loop) would shorten it"]
    return []


def gpu_advice(summary: Summary, current: Any, candidates: list[tuple[Any, float]], current_usd: float | None,
               precision: str = "bf16") -> list[str]:
    """``current`` and each candidate are catalog Accelerators; candidates carry their USD per hour."""
    if summary.gpu_util_mean is None or current is None:
        return []
    need_flops = summary.gpu_util_mean * current.peak(precision) * (1 + HEADROOM)
    need_mem = (summary.gpu_mem_peak_bytes or 0.0) * (1 + HEADROOM)
    fits = [(acc, usd) for acc, usd in candidates
            if acc.peak(precision) >= need_flops and acc.memory_bytes >= need_mem and acc.id != current.id]
    if not fits or not current_usd:
        return [f"GPU busy {summary.gpu_util_mean:.0%}, peak memory {fmt_bytes(summary.gpu_mem_peak_bytes or 0)}"]
    acc, usd = min(fits, key=lambda x: x[1])
    if usd >= current_usd:
        return [f"GPU busy {summary.gpu_util_mean:.0%}: {current.name} is already the cheapest fit"]
    return [f"GPU busy {summary.gpu_util_mean:.0%}: a {acc.name} would carry this load "
            f"at {usd / current_usd:.0%} of the cost"]
