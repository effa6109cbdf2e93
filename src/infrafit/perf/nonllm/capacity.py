"""Non-LLM serving capacity of many configurations at once: the one path ``plan`` and ``estimate``
share. Samples/s per replica within the latency SLO (realtime) or offline (batch), at the SLO-limited
batch, at lighter batches (``targets``), or at the caller's batch or rate."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from infrafit.perf import operating as op
from infrafit.perf.nonllm.model import BATCH_GRID, default_stack, nonllm_capacity
from infrafit.perf.nonllm.work import sample_work
from infrafit.perf.types import Evaluated, OperatingPoint


def nonllm_rate_grid(arch: Any, accs: Sequence[Any], counts: np.ndarray, precision: str,
                     latency_slo_s: float | None, work_shape: dict[str, Any],
                     batches: Sequence[float] | None = None) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(batch grid, samples/s, p99) of every (accelerator, count) x batch size, one batch size at a
    time (``nonllm_capacity`` restricted to it): 0 rate where the batch misses the SLO or does not fit."""
    grid = np.asarray(BATCH_GRID if batches is None else batches, float)
    rate = np.zeros((len(accs), len(grid)))
    p99 = np.full_like(rate, np.nan)
    for k, b in enumerate(grid):
        cap = nonllm_capacity(arch, accs, counts, precision, batch_sizes=[b], latency_slo_s=latency_slo_s,
                              **work_shape)
        rate[:, k] = cap["samples_per_s"]
        p99[:, k] = cap["p99_s"]
    return grid, rate, p99


def _points(arch: Any, accs: list[Any], counts: np.ndarray, p: str, slo: float | None, work_shape: dict[str, Any],
            targets: tuple[float, ...], point: OperatingPoint | None) -> list[tuple[int, str, float]]:
    """(configuration index, point name, batch) of every operating point to report."""
    cap = nonllm_capacity(arch, accs, counts, p, latency_slo_s=slo, **work_shape)
    batch = np.asarray(cap["batch"], float)
    if point is not None and point.batch is not None:
        return [(i, op.GIVEN, float(point.batch)) for i in range(len(accs))]
    if point is not None and point.requests_per_s is not None:
        grid, g_rate, _ = nonllm_rate_grid(arch, accs, counts, p, slo, work_shape)
        out = []
        for i in range(len(accs)):
            j = op.covering_index(g_rate[i], float(point.requests_per_s))
            out.append((i, op.MAX_RATE, float(batch[i])) if j is None else (i, op.GIVEN, float(grid[j])))
        return out
    out = [(i, op.MAX_RATE, float(batch[i])) for i in range(len(accs))]
    if slo and targets:
        grid, g_rate, _ = nonllm_rate_grid(arch, accs, counts, p, slo, work_shape)
        ri, jj, names = op.point_indices(g_rate, targets)
        out += [(int(i), nm, float(grid[k])) for i, k, nm in zip(ri, jj, names, strict=True) if nm != op.MAX_RATE]
    return out


def _at_batches(arch: Any, accs: list[Any], counts: np.ndarray, p: str, slo: float | None,
                work_shape: dict[str, Any], pts: list[tuple[int, str, float]],
                named: bool) -> tuple[np.ndarray, np.ndarray]:
    """Rate and p99 of every point from its batch size alone, one vectorised call per distinct batch.
    At a caller-named batch outside the SLO the raw (offline) figures are reported."""
    rate, p99 = np.zeros(len(pts)), np.full(len(pts), np.nan)
    idx = np.array([i for i, _, _ in pts], dtype=int)
    bs = np.array([b for _, _, b in pts], float)
    for b in np.unique(bs):
        k = np.flatnonzero(bs == b)
        sub = [accs[i] for i in idx[k]]
        one = nonllm_capacity(arch, sub, counts[idx[k]], p, batch_sizes=[b], latency_slo_s=slo, **work_shape)
        rate[k] = one["samples_per_s"] if slo else one["offline_samples_per_s"]
        p99[k] = one["p99_s"]
        if named and slo:
            raw = nonllm_capacity(arch, sub, counts[idx[k]], p, batch_sizes=[b], **work_shape)
            miss = ~(rate[k] > 0)
            rate[k] = np.where(miss, raw["offline_samples_per_s"], rate[k])
            p99[k] = np.where(miss, raw["p99_s"], p99[k])
    return rate, p99


def evaluate_nonllm(arch: Any, pairs: Sequence[tuple[Any, int]], precisions: tuple[str, ...],
                    latency_slo_s: float | None, realtime: bool, work_shape: dict[str, Any],
                    targets: tuple[float, ...] = (), framework: str | None = None,
                    point: OperatingPoint | None = None, risk: str = "p50") -> Evaluated:
    """Samples/s per replica within the latency SLO (realtime) or offline (batch), at the SLO-limited
    batch, at ``targets`` (fractions of that rate: smaller batches), or at ``point``.

    At ``risk`` ``p90`` a configuration's p99 must be within the SLO at its uncertainty band's p90
    (``perf.bands.slo_factor``): the SLO it is checked against is the limit divided by that ratio, which
    may differ by chip (a chip outside the fit has a wider band).

    Every point's figures come from one batch size alone (``nonllm_rate_grid``), so a configuration
    has the same numbers at the same batch whichever caller asked."""
    if not pairs:
        return Evaluated.empty()
    slo = latency_slo_s if realtime else None
    parts: list[Any] = []
    for group, factor in _by_risk_factor(arch, pairs, risk if slo else "p50"):
        parts += _evaluate_group(arch, group, precisions, None if slo is None else slo / factor, work_shape,
                                 targets, framework, point)
    cfg, fits, rate_a, lat, mem, capb, p50s = zip(*parts, strict=True)
    lat_a = np.asarray(lat, float)
    slo_d = {"latency_p99_s": (lat_a, float(latency_slo_s))} if latency_slo_s and realtime else {}
    return Evaluated(list(cfg), np.asarray(fits), np.asarray(rate_a, float), np.full(len(cfg), np.nan), lat_a,
                     np.asarray(mem, float), np.asarray(capb, float), slo_d, [{} for _ in cfg],
                     {"e2e_s": np.asarray(p50s, float)})


def _by_risk_factor(arch: Any, pairs: Sequence[tuple[Any, int]],
                    risk: str) -> list[tuple[list[tuple[Any, int]], float]]:
    """``pairs`` grouped by what their predicted p99 is multiplied by before the SLO check at ``risk``."""
    from infrafit.perf.bands import slo_factor

    groups: dict[float, list[tuple[Any, int]]] = {}
    for acc, n in pairs:
        f = 1.0 if risk == "p50" else slo_factor("nonllm", "latency_p99_s", str(arch.id), acc.id, risk)
        groups.setdefault(f, []).append((acc, n))
    return [(g, f) for f, g in groups.items()]


def _evaluate_group(arch: Any, pairs: Sequence[tuple[Any, int]], precisions: tuple[str, ...], slo: float | None,
                    work_shape: dict[str, Any], targets: tuple[float, ...], framework: str | None,
                    point: OperatingPoint | None) -> list[Any]:
    """The rows of ``evaluate_nonllm`` for ``pairs`` checked against ``slo`` (already risk-adjusted)."""
    parts = []
    accs = [a for a, _ in pairs]
    counts = np.array([n for _, n in pairs], float)
    for p in precisions:
        work = sample_work(arch, p, **work_shape)
        full = nonllm_capacity(arch, accs, counts, p, latency_slo_s=slo, **work_shape)
        max_rate = full["samples_per_s"] if slo else full["offline_samples_per_s"]
        pts = _points(arch, accs, counts, p, slo, work_shape, targets, point)
        r_at, p99_at = _at_batches(arch, accs, counts, p, slo, work_shape, pts, named=point is not None)
        for k, (i, name, b) in enumerate(pts):
            acc, n = pairs[i]
            r, p99 = float(r_at[k]), float(p99_at[k])
            # p50: half a step of waiting, then the request's own step (perf.nonllm.model.latency_at_rate)
            p50 = 1.5 * b * n / r if r > 0 else float("nan")
            desc = op.describe(name, f"batch {b:g}", r, float(max_rate[i]), "latency_p99_s", p99,
                               float(full["p99_s"][i]), batch=b)
            parts.append(({"accelerator": acc.id, "count": n, "precision": p,
                           "stack": default_stack(acc, arch.kind, framework),
                           "tp": 1, "pp": 1, "dp": n, "ep": 1, "batch": b, "operating_point": desc},
                          bool(full["fits"][i]), r, p99, float(work.weight_bytes + b * work.activation_bytes),
                          float(acc.memory_bytes), p50))
    return parts
