"""Chart data for the report, computed once from the priced candidates (the renderers only draw)."""

from __future__ import annotations

import numpy as np

UTILISATION_GRID = np.linspace(0.0, 1.0, 21)


def _label(part, i: int) -> str:
    r = part.ev.rows[i]
    o = part.offers.iloc[i]
    return f"{r['count']}x {r['accelerator']} {r['precision']} · {o['mode']} · {o['provider']} {o['region']}"


def front_points(part, idx: np.ndarray, on_front: np.ndarray, limit: int) -> list[dict]:
    """Every front point plus the cheapest others, up to ``limit`` points."""
    front = idx[on_front[idx]]
    rest = idx[~on_front[idx]]
    rest = rest[np.argsort(part.cost.tco_usd[rest])][: max(0, limit - len(front))]
    return [{"label": _label(part, int(i)), "tco_usd": float(part.cost.tco_usd[i]),
             "metric_value": float(part.ev.metric[i]), "on_front": bool(on_front[i])}
            for i in np.concatenate([front, rest]) if np.isfinite(part.ev.metric[i])]


def _cheapest_by_mode(part, idx: np.ndarray, best: int) -> dict[str, int]:
    """For the chosen option's hardware (accelerator and count), the cheapest candidate per mode."""
    acc, count = part.ev.rows[best]["accelerator"], part.ev.rows[best]["count"]
    same = [i for i in idx if part.ev.rows[i]["accelerator"] == acc and part.ev.rows[i]["count"] == count]
    out: dict[str, int] = {}
    for i in same:
        m = str(part.offers["mode"].iloc[i])
        if m not in out or part.cost.tco_usd[i] < part.cost.tco_usd[out[m]]:
            out[m] = int(i)
    return out


def tco_by_mode(part, idx: np.ndarray, best: int) -> dict[str, list[float]]:
    """Cumulative cost month by month of the chosen hardware in each deployment mode."""
    return {m: [float(x) for x in np.cumsum(part.cost.monthly_total[:, i])]
            for m, i in _cheapest_by_mode(part, idx, best).items()}


def breakeven_data(part, idx: np.ndarray, best: int, workload) -> dict:
    """Monthly cost of one replica vs utilisation per mode (``cost.breakeven.linear_cost``)."""
    from infrafit.cost.breakeven import linear_cost

    picks = _cheapest_by_mode(part, idx, best)
    if len(picks) < 2:
        return {}
    ids = np.array(list(picks.values()), dtype=int)
    h = int(workload.horizon_months)
    a, b = linear_cost(part.arrays.take(ids), horizon_months=h,
                       engineer_usd_per_hour=float(workload.ops.engineer_usd_per_hour))
    by_mode = {m: [float((a[k] + b[k] * u) / h) for u in UTILISATION_GRID] for k, m in enumerate(picks)}
    return {"utilisation": [float(u) for u in UTILISATION_GRID], "monthly_usd_by_mode": by_mode}
