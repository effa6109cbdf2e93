"""Pareto fronts and diverse top-N selection over candidate arrays.

Both work on plain numpy arrays so the planner can rank tens of thousands of candidates in
milliseconds. Lower is better on every objective.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np


def pareto_mask(objectives: np.ndarray) -> np.ndarray:
    """Boolean mask of the non-dominated rows of ``objectives`` (n x k, lower is better).

    A row is dominated when another row is no worse on every objective and strictly better on
    one. Sort by the first objective, then sweep: O(n log n) for two objectives, O(n^2) worst case
    beyond. Rows with NaN are never on the front.
    """
    obj = np.asarray(objectives, dtype=float)
    if obj.ndim == 1:
        obj = obj[:, None]
    n = obj.shape[0]
    mask = np.zeros(n, dtype=bool)
    valid = np.all(np.isfinite(obj), axis=1)
    idx = np.flatnonzero(valid)
    if idx.size == 0:
        return mask
    if obj.shape[1] == 2:
        order = idx[np.lexsort((obj[idx, 1], obj[idx, 0]))]
        best_second = np.inf
        for i in order:
            if obj[i, 1] < best_second:
                mask[i] = True
                best_second = obj[i, 1]
        return mask
    sub = obj[idx]
    for j, row in enumerate(sub):
        no_worse = np.all(sub <= row, axis=1)
        strictly = np.any(sub < row, axis=1)
        mask[idx[j]] = not np.any(no_worse & strictly)
    return mask


def diverse_top(order: Sequence[int], keys: Sequence[tuple[str, ...]], n: int) -> list[int]:
    """Pick ``n`` indices from ``order`` (best first) that differ in substance.

    ``keys[i]`` describes candidate i from coarse to fine, e.g. (family, deployment mode,
    provider). The first pass admits one candidate per distinct coarse key, the next pass one per
    distinct (coarse, next) pair, and so on; only when every level is exhausted do near-copies
    fill the remaining places. The best candidate is always first.
    """
    position = {i: pos for pos, i in enumerate(order)}
    chosen: list[int] = []
    taken: set[int] = set()
    depth = max((len(k) for k in keys), default=0)
    for level in range(1, depth + 1):
        seen = {keys[i][:level] for i in chosen}
        for i in order:
            if len(chosen) >= n:
                return sorted(chosen, key=position.__getitem__)
            if i in taken:
                continue
            prefix = keys[i][:level]
            if prefix not in seen:
                chosen.append(i)
                taken.add(i)
                seen.add(prefix)
    for i in order:
        if len(chosen) >= n:
            break
        if i not in taken:
            chosen.append(i)
            taken.add(i)
    return sorted(chosen, key=position.__getitem__)


#: Predicted latencies, times to train or emissions closer than this share are a tie, broken by TCO: replicate
#: measurements of one configuration differ by a median 3.1% (588 TTFT pairs, docs/performance.md), so a
#: smaller predicted gap says nothing about which runs faster.
METRIC_TIE_FRACTION = 0.03


def _cheapest_within_metric_ties(order: np.ndarray, tco: np.ndarray, m: np.ndarray) -> np.ndarray:
    """``order`` (by metric) with each run of candidates within ``METRIC_TIE_FRACTION`` of the run's first
    metric reordered by TCO (a 134.0 ms option bought for $251k no longer ranks above a 134.8 ms one rented
    for $243k)."""
    out: list[int] = []
    run: list[int] = []
    for i in list(order) + [None]:
        if i is not None and run and np.isfinite(m[i]) and m[i] <= (1.0 + METRIC_TIE_FRACTION) * m[run[0]]:
            run.append(int(i))
            continue
        out += sorted(run, key=lambda j: (float(tco[j]), float(m[j])))
        run = [int(i)] if i is not None else []
    return np.asarray(out, dtype=int)


def order_by(objective: str, tco: np.ndarray, metric: np.ndarray) -> np.ndarray:
    """Candidate indices best first for the objective (lower is better on both axes)."""
    m = np.where(np.isfinite(metric), metric, np.inf)
    if objective == "cost":
        return np.lexsort((m, tco))
    if objective in ("latency", "time", "carbon"):  # carbon: ``metric`` is kg CO2e (unknown = inf, last)
        return _cheapest_within_metric_ties(np.lexsort((tco, m)), tco, m)
    score = np.log(tco / np.nanmin(tco)) + np.log(m / np.nanmin(m[np.isfinite(m)] if np.isfinite(m).any() else 1.0))
    return np.lexsort((tco, score))


#: A candidate fills a top-N slot only within these bounds of the best (issue 12, "top-N worth
#: showing"): an option costing more than 5x #1, or holding more than 4x the accelerators the load
#: needs, is not an alternative anyone would pick for that workload.
MAX_TCO_RATIO = 5.0
MAX_ACCELERATOR_RATIO = 4.0


def worth_showing(order: Sequence[int], tco: np.ndarray, accelerators: np.ndarray,
                  chip: np.ndarray) -> tuple[list[int], dict[str, int]]:
    """``order`` (best first) without candidates over ``MAX_TCO_RATIO`` x the best's TCO, or holding over
    ``MAX_ACCELERATOR_RATIO`` x the fewest accelerators of the same chip (``chip[i]``) that carry the
    load (chips compare with their own kind only: one CPU socket is no yardstick for GPUs); and how
    many of each were left out."""
    if not len(order):
        return [], {"over_tco_ratio": 0, "over_accelerator_ratio": 0}
    best = float(tco[order[0]])
    fewest: dict[str, float] = {}
    for i in order:
        fewest[chip[i]] = min(fewest.get(chip[i], np.inf), float(accelerators[i]))
    kept, over_tco, over_acc = [], 0, 0
    for i in order:
        if float(tco[i]) > MAX_TCO_RATIO * best:
            over_tco += 1
        elif float(accelerators[i]) > MAX_ACCELERATOR_RATIO * fewest[chip[i]]:
            over_acc += 1
        else:
            kept.append(int(i))
    return kept, {"over_tco_ratio": over_tco, "over_accelerator_ratio": over_acc}


def hidden_variants(candidates: Sequence[int], chosen: Sequence[int], tco: np.ndarray,
                    family: np.ndarray) -> dict[str, int]:
    """Per family of the chosen options: candidates of that family cheaper than its most expensive
    shown option but not shown (near-copies the diversity rule set aside; ``--all`` shows them)."""
    shown = set(chosen)
    out: dict[str, int] = {}
    for fam in dict.fromkeys(family[i] for i in chosen):
        ceiling = max(float(tco[i]) for i in chosen if family[i] == fam)
        n = sum(1 for i in candidates if i not in shown and family[i] == fam and float(tco[i]) <= ceiling)
        if n:
            out[str(fam)] = n
    return out


#: Costs closer than this share are a tie: prices move by more between two retrievals of the same
#: page, and labour and egress are modelled, not metered (an assumption, documented in docs/planner.md).
COST_TIE_FRACTION = 0.02
#: Deployment simplicity for tie-breaks: fewer moving parts first (a pay-as-you-go VM, then a commitment,
#: then capacity that can be taken away or must be bought and run).
MODE_SIMPLICITY = {"cloud_on_demand": 0, "cloud_reserved_1y": 1, "dedicated_monthly": 1, "cloud_capacity_block": 1,
                   "cloud_reserved_3y": 2,
                   "cloud_spot": 3, "on_prem": 4, "hybrid": 5}


def break_near_ties(order: Sequence[int], tco: np.ndarray, accelerators: np.ndarray, derived: np.ndarray,
                    mode: np.ndarray, unverified: np.ndarray | None = None,
                    metered: np.ndarray | None = None, instances: np.ndarray | None = None) -> list[int]:
    """``order`` (cheapest first) with runs of candidates within ``COST_TIE_FRACTION`` of the run's
    cheapest reordered by fewer accelerators, then verified offers (sold in that region), then sourced
    (not derived) prices, then simpler deployment, then fewer instances per replica (``instances``: four
    TP-8 replicas on four 8-GPU instances before one data-parallel replica spanning the same four, which
    costs the same but scales in steps of four and crosses the network), then the metered cost
    (``CostResult.metered_usd``: the TCO without the modelled engineer time; the TCO when not given); never
    by catalog order. A nightly XGBoost job whose $19.2k of assumed labour ties a $3.58 CPU VM with a
    $3.83 GPU pod ranks the CPU."""
    unverified = np.zeros(len(tco), bool) if unverified is None else unverified
    last = tco if metered is None else metered
    spans = np.ones(len(tco)) if instances is None else np.asarray(instances, dtype=float)
    out: list[int] = []
    run: list[int] = []
    for i in list(order) + [None]:
        if i is not None and run and float(tco[i]) <= (1.0 + COST_TIE_FRACTION) * float(tco[run[0]]):
            run.append(int(i))
            continue
        out += sorted(run, key=lambda j: (float(accelerators[j]), bool(unverified[j]), bool(derived[j]),
                                          MODE_SIMPLICITY.get(str(mode[j]), 9), float(spans[j]), float(last[j]),
                                          float(tco[j])))
        run = [int(i)] if i is not None else []
    return out
