"""Chart data for the report, computed once from the priced candidates (the renderers only draw)."""

from __future__ import annotations

import numpy as np

UTILISATION_GRID = np.linspace(0.0, 1.0, 21)


def _label(part, i: int, cols: dict[str, np.ndarray]) -> str:
    r = part.ev.rows[i]
    where = f"{cols['provider'][i]} {cols['region'][i]}"
    return f"{r['count']}x {r['accelerator']} {r['precision']} · {cols['mode'][i]} · {where}"


def _columns(part) -> dict[str, np.ndarray]:
    return {c: part.offers[c].to_numpy(dtype=object) for c in ("mode", "provider", "region")}


def front_points(part, idx: np.ndarray, on_front: np.ndarray, limit: int) -> list[dict]:
    """Every front point plus the cheapest others, up to ``limit`` points."""
    front = idx[on_front[idx]]
    rest = idx[~on_front[idx]]
    rest = rest[np.argsort(part.cost.tco_usd[rest])][: max(0, limit - len(front))]
    cols = _columns(part)
    return [{"label": _label(part, int(i), cols), "tco_usd": float(part.cost.tco_usd[i]),
             "metric_value": float(part.ev.metric[i]), "on_front": bool(on_front[i])}
            for i in np.concatenate([front, rest]) if np.isfinite(part.ev.metric[i])]


def _cheapest_per_mode(part, candidates) -> dict[str, int]:
    out: dict[str, int] = {}
    mode = part.offers["mode"].to_numpy(dtype=object)
    for i in candidates:
        m = str(mode[i])
        if m not in out or part.cost.tco_usd[i] < part.cost.tco_usd[out[m]]:
            out[m] = int(i)
    return out


def _hardware(part, i: int) -> tuple[str, int]:
    return part.ev.rows[i]["accelerator"], part.ev.rows[i]["count"]


def _comparable_hardware(part, idx: np.ndarray, best: int) -> list[int]:
    """Candidates on one hardware size offered in the most deployment modes: the chosen option's
    hardware when it is sold in two or more modes, else the size with the most modes (cheapest first)."""
    groups: dict[tuple[str, int], list[int]] = {}
    for i in idx:
        groups.setdefault(_hardware(part, int(i)), []).append(int(i))
    mode = part.offers["mode"].to_numpy(dtype=object)
    modes = {k: len({str(mode[i]) for i in v}) for k, v in groups.items()}
    if modes.get(_hardware(part, best), 0) >= 2:
        return groups[_hardware(part, best)]
    key = max(groups, key=lambda k: (modes[k], -min(part.cost.tco_usd[i] for i in groups[k])))
    return groups[key]


def cumulative_cash(part, i: int) -> np.ndarray:
    """(M,) cumulative cost of candidate ``i`` as cash goes out, ending at its TCO: a purchase is paid in
    the month the servers are bought (not as depreciation) and the resale is credited at the horizon's end;
    what a commitment still owes past the horizon is counted in the last month."""
    from infrafit.cost.modes import additions

    cost = part.cost
    monthly = cost.monthly_total[:, i].copy()
    bought = str(cost.mode[i]) == "on_prem" and np.nan_to_num(part.arrays.purchase_usd[i]) > 0
    if bought:
        monthly -= cost.monthly["compute_usd"][:, i] + cost.monthly["idle_usd"][:, i]
        monthly += additions(cost.demand.fixed_replicas)[:, i] * float(part.arrays.purchase_usd[i])
        monthly[-1] -= float(cost.resale_usd[i]) if cost.resale_usd is not None else 0.0
    else:
        monthly[-1] += float(sum(v[i] for v in cost.beyond.values()))
    return np.cumsum(monthly)


def tco_by_mode(part, idx: np.ndarray, best: int) -> dict[str, list[float]]:
    """Cumulative cost month by month of the best candidate in each deployment mode (any hardware),
    keyed ``mode (hardware)``, as cash goes out and ending at each one's TCO (``cumulative_cash``)."""
    picks = _cheapest_per_mode(part, [int(i) for i in idx])
    return {f"{m} ({part.ev.rows[i]['count']}x {part.ev.rows[i]['accelerator']})":
            [float(x) for x in cumulative_cash(part, i)] for m, i in picks.items()}


def breakeven_data(part, idx: np.ndarray, best: int, workload) -> dict:
    """Monthly cost of one replica vs utilisation per mode (``cost.breakeven.linear_cost``), on one
    hardware size sold in several modes (break-even only compares like with like)."""
    from infrafit.cost.breakeven import linear_cost

    same = _comparable_hardware(part, idx, best)
    picks = _cheapest_per_mode(part, same)
    if len(picks) < 2:
        return {}
    ids = np.array(list(picks.values()), dtype=int)
    h = int(workload.horizon_months)
    a, b = linear_cost(part.arrays.take(ids), horizon_months=h,
                       engineer_usd_per_hour=float(workload.ops.engineer_usd_per_hour))
    acc, count = _hardware(part, int(ids[0]))
    by_mode = {m: [float((a[k] + b[k] * u) / h) for u in UTILISATION_GRID] for k, m in enumerate(picks)}
    return {"utilisation": [float(u) for u in UTILISATION_GRID], "monthly_usd_by_mode": by_mode,
            "hardware": f"{count}x {acc}"}
