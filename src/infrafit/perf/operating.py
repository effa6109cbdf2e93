"""Operating points: at what load per replica a configuration runs, and so what it delivers.

The SLO-limited point (``MAX_RATE``) is the largest request rate one replica sustains with every
p99 inside its SLO: the cheapest way to meet the SLOs. Lighter points (a fraction of that rate,
``point_indices``'s ``targets``) buy lower latency with more replicas; which ones a plan considers is
the search's policy (``search.operating.targets_for``). Both ``perf.evaluate`` (many configurations)
and ``perf.estimate`` (one) choose points here, so the same configuration at the same point has the
same figures in both.
"""

from __future__ import annotations

from typing import Any

import numpy as np

MAX_RATE = "max_rate"
#: A point named by the caller (``estimate --concurrency/--batch/--requests-per-s``).
GIVEN = "given"


def point_name(target: float) -> str:
    return f"utilisation_{round(target * 100)}"


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


def covering_index(rate: np.ndarray, requests_per_s: float) -> int | None:
    """The lightest grid point (lowest index) of one configuration's SLO-feasible ``rate`` row that
    serves ``requests_per_s``: what a server offered that rate settles at. None when none does."""
    ok = np.flatnonzero(rate >= requests_per_s)
    return int(ok[0]) if ok.size else None


def describe(name: str, at: str, rate: float, max_rate: float, metric_label: str, metric: float,
             metric_at_max: float, **grid: float) -> dict[str, Any]:
    """The ``operating_point`` block: where on its load curve the configuration runs. ``grid`` is the
    load coordinate (``concurrency=`` for continuous batching, ``batch=`` otherwise)."""
    return {"name": name, "at": at, **grid, "requests_per_s": rate, "max_rate_requests_per_s": max_rate,
            "utilisation_fraction": rate / max_rate if max_rate > 0 else None,
            "metric": metric_label, "metric_value": metric, "metric_at_max_rate": metric_at_max}
