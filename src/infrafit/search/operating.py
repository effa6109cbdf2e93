"""Operating points: at what load per replica the plan runs (and so sizes and prices) a configuration.

The SLO-limited point (``max_rate``) is the largest request rate one replica sustains with every p99
inside its SLO. It is the cheapest way to meet the SLOs, and the only point the ``cost`` and
``time`` objectives plan. Its p99 sits close to the SLO by construction, so ranking configurations
by latency there finds little: every one is near the limit.

Latency grows with load (queueing ahead of prefill, larger decode or inference batches), so lower
latency is bought with more replicas, each running lighter. The ``latency`` and ``balanced``
objectives therefore also plan every configuration at ``UTILISATION_TARGETS`` of its SLO-limited
rate: the busiest grid point (requests in flight for continuous batching, batch size for other
models) whose rate is at most that fraction of the SLO-limited rate. The cost model then sizes the
replicas for the traffic at that point's rate and prices them like any other candidate.

Why 50 % and 25 %: in an M/M/1 queue the mean wait is rho / (1 - rho) service times
(Kleinrock, Queueing Systems vol. 1, 1975, eq. 3.24): 9 at 90 % load, 1 at 50 %, 1/3 at 25 %. Below
25 % the wait is a small part of the latency, which is then the work itself, and further replicas
buy little; the grid is coarse (powers of two), so two targets give two distinct points on most
configurations.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from infrafit.units import fmt_duration

UTILISATION_TARGETS = (0.5, 0.25)
MAX_RATE = "max_rate"


def point_name(target: float) -> str:
    return f"utilisation_{round(target * 100)}"


def targets_for(objective: str) -> tuple[float, ...]:
    """Lower operating points the objective considers (none for cost and time)."""
    return UTILISATION_TARGETS if objective in ("latency", "balanced") else ()


def point_indices(rate: np.ndarray, targets: tuple[float, ...]) -> tuple[np.ndarray, np.ndarray, list[str]]:
    """Operating points over a (configurations x grid) array of SLO-feasible rates (0 = infeasible).

    Returns (configuration index, grid index, point name) per point: every configuration at its
    SLO-limited point (grid index 0 when nothing is feasible, for the failure reasons), then, for
    each target, each feasible configuration at the busiest grid point whose rate is at most
    ``target`` x its SLO-limited rate, when that point is a new one."""
    best = rate.max(axis=1)
    j_max = np.where(best > 0, np.argmax(rate, axis=1), 0)
    rows, cols, names = [np.arange(len(rate))], [j_max], [MAX_RATE] * len(rate)
    taken = {(i, int(j)) for i, j in enumerate(j_max)}
    for u in targets:
        ok = (rate > 0) & (rate <= u * best[:, None])
        j = np.argmax(np.where(ok, rate, -1.0), axis=1)
        keep = [i for i in np.flatnonzero(ok.any(axis=1)) if (int(i), int(j[i])) not in taken]
        taken |= {(int(i), int(j[i])) for i in keep}
        rows.append(np.asarray(keep, dtype=int))
        cols.append(j[keep].astype(int))
        names += [point_name(u)] * len(keep)
    return np.concatenate(rows).astype(int), np.concatenate(cols).astype(int), names


def describe(name: str, at: str, rate: float, max_rate: float, metric_label: str, metric: float,
             metric_at_max: float) -> dict[str, Any]:
    """The ``operating_point`` block of an option: where on its load curve the plan runs it."""
    return {"name": name, "at": at, "requests_per_s": rate, "max_rate_requests_per_s": max_rate,
            "utilisation_fraction": rate / max_rate if max_rate > 0 else None,
            "metric": metric_label, "metric_value": metric, "metric_at_max_rate": metric_at_max}


def why_line(point: dict[str, Any] | None, label: str) -> str | None:
    """'operating point: 16 requests in flight, 2.4 requests/s per replica (47% of the 5.08 the SLOs
    allow); TTFT p99 612 ms against 988 ms at the SLO-limited load'."""
    if not point:
        return None
    rate, top = point["requests_per_s"], point["max_rate_requests_per_s"]
    if point["name"] == MAX_RATE:
        return (f"operating point: the largest load within the SLOs, {point['at']}, {rate:,.3g} requests/s "
                "per replica (replicas sized for the traffic at that rate)")
    return (f"operating point: {point['at']}, {rate:,.3g} requests/s per replica "
            f"({point['utilisation_fraction']:.0%} of the {top:,.3g} the SLOs allow; more replicas, each "
            f"lighter): {label} {fmt_duration(point['metric_value'])} against "
            f"{fmt_duration(point['metric_at_max_rate'])} at the SLO-limited load")


def nonllm_rate_grid(arch, accs, counts: np.ndarray, precision: str, latency_slo_s: float,
                     work_shape: dict) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(batch grid, samples/s, p99) of every (accelerator, count) x batch size within the SLO, from
    ``perf.nonllm.nonllm_capacity`` restricted to one batch size at a time (0 rate where the batch
    misses the SLO or does not fit)."""
    from infrafit.perf.nonllm.model import BATCH_GRID, nonllm_capacity

    rate = np.zeros((len(accs), len(BATCH_GRID)))
    p99 = np.full_like(rate, np.nan)
    for k, b in enumerate(BATCH_GRID):
        cap = nonllm_capacity(arch, accs, counts, precision, batch_sizes=[b], latency_slo_s=latency_slo_s,
                              **work_shape)
        rate[:, k] = cap["samples_per_s"]
        p99[:, k] = cap["p99_s"]
    return np.asarray(BATCH_GRID, float), rate, p99
