"""Train-and-serve workloads: pair a training candidate with a serving candidate.

Both parts are priced on their own (``search.parts``); pairs add the two TCOs and the artifact
transfer (``cost.hybrid.transfer_usd``: the trained model leaves the training site once per run, on
its egress tiers, or at the provider's inter-region rate to another of its regions; free on the same
site). A pair on two sites is a ``hybrid`` option and needs ``hybrid`` in ``deployment.allowed``;
otherwise both parts must share provider and region. The budget applies to the pair.

Pairs rank by the planner's objective (``search.pareto.order_by``) on (pair TCO, pair metric), where
the pair metric is the part the objective is about: ``time`` the training part's time to train,
``latency`` the serving part's p99 at its planned operating point, ``balanced`` and ``cost`` (its tie
break) the serving part's p99, as the pair serves as its serving part does. Each part contributes its
``PAIR_POOL`` cheapest candidates plus its ``PAIR_POOL`` best by that part's own objective (training
by time for ``time``; serving by latency or balance for ``latency`` / ``balanced``), so the best pair
under the objective is among those paired unless the budget or placement rules out all of them.
"""

from __future__ import annotations

import numpy as np

from infrafit.search.option import option_json
from infrafit.search.pareto import diverse_top, order_by
from infrafit.units import fmt_usd

PAIR_POOL = 60
#: The part whose metric ranks pairs under each objective.
PAIR_METRIC_PART = {"cost": "serve", "latency": "serve", "time": "train", "balanced": "serve", "carbon": "both"}
#: The ordering each part's own pool takes under the pair objective (cheapest otherwise).
PART_POOL_OBJECTIVE = {("train", "time"): "time", ("serve", "latency"): "latency",
                       ("serve", "balanced"): "balanced", ("train", "carbon"): "carbon", ("serve", "carbon"): "carbon"}
_LEAD = {"cost": "cheapest pair", "latency": "lowest serving p99 pair", "time": "fastest-training pair",
         "balanced": "best-balanced pair", "carbon": "lowest-emission pair"}


def _pool(part, objective: str, n: int) -> np.ndarray:
    """The part's ``n`` cheapest finite candidates, plus its ``n`` best by its pool objective."""

    usable = np.isfinite(part.cost.tco_usd)
    blocked = getattr(part, "blocked", None)  # e.g. spot training past its deadline
    if blocked is not None:
        usable &= ~blocked
    ok = np.flatnonzero(usable)
    chosen = ok[np.argsort(part.cost.tco_usd[ok], kind="stable")][:n]
    own = PART_POOL_OBJECTIVE.get((part.task, objective))
    if own is not None and ok.size:
        metric = part.cost.co2e_kg if own == "carbon" else part.ev.metric
        chosen = np.union1d(chosen, ok[order_by(own, part.cost.tco_usd[ok], metric[ok])][:n])
    return chosen


def _pair_metric(parts, objective: str, ti: np.ndarray, si: np.ndarray) -> np.ndarray:
    """The metric pairs rank by (``PAIR_METRIC_PART``), shaped (train pool, serve pool)."""
    if PAIR_METRIC_PART[objective] == "both":  # emissions of the pair: both parts' (unknown stays unknown)
        return parts["train"].cost.co2e_kg[ti][:, None] + parts["serve"].cost.co2e_kg[si][None, :]
    if PAIR_METRIC_PART[objective] == "train":
        return np.broadcast_to(parts["train"].ev.metric[ti][:, None], (ti.size, si.size))
    return np.broadcast_to(parts["serve"].ev.metric[si][None, :], (ti.size, si.size))


def _metric_text(objective: str, value: float) -> str:
    from infrafit.search.explain import fmt_value

    return f"{float(value):,.0f} kg CO2e" if objective == "carbon" else fmt_value("x_s", float(value))


def combined(parts, objective: str, top: int, ctx: dict, failures: dict) -> tuple[list[dict], dict]:
    from infrafit.cost.hybrid import artifact_transfer_bytes, same_provider, same_site, transfer_usd

    train, serve = parts["train"], parts["serve"]
    if train.cost is None or serve.cost is None:
        return [], {}
    w = ctx["workload"]
    ti, si = _pool(train, objective, PAIR_POOL), _pool(serve, objective, PAIR_POOL)
    if ti.size == 0 or si.size == 0:
        return [], {}
    ta, sa = train.arrays.take(ti), serve.arrays.take(si)
    months = int(w.horizon_months)
    arch = w.model_arch()
    artifact = arch.weight_bytes("bf16")
    moved = artifact_transfer_bytes(artifact, float(w.usage.runs_per_year or 1.0), months)
    site = same_site(ta, sa)
    transfer = transfer_usd(moved, ta, site, same_provider(ta, sa))
    tco = train.cost.tco_usd[ti][:, None] + serve.cost.tco_usd[si][None, :] + transfer
    if "hybrid" not in w.deployment.allowed:
        tco = np.where(site, tco, np.inf)
    monthly = train.cost.peak_monthly_usd[ti][:, None] + serve.cost.peak_monthly_usd[si][None, :]
    if w.budget.monthly_usd:
        tco = np.where(monthly <= float(w.budget.monthly_usd), tco, np.inf)
    if w.budget.total_usd:
        tco = np.where(tco <= float(w.budget.total_usd), tco, np.inf)
    flat = np.flatnonzero(np.isfinite(tco.ravel()))
    if flat.size == 0:
        cheapest = float(np.nanmin(monthly))
        failures.setdefault("train + serve pairs", []).append(
            f"no pair fits the budget or placement: cheapest pair {fmt_usd(cheapest)}/month")
        return [], {}
    metric = _pair_metric(parts, objective, ti, si)
    order = flat[order_by(objective, tco.ravel()[flat], metric.ravel()[flat])]
    t_fam = train.offers["family"].to_numpy(dtype=object)[ti]
    s_fam = serve.offers["family"].to_numpy(dtype=object)[si]
    s_mode = serve.offers["mode"].to_numpy(dtype=object)[si]
    n_s = si.size
    keys = [(str(t_fam[f // n_s]), str(s_fam[f % n_s]), str(s_mode[f % n_s]), str(bool(st)))
            for f, st in enumerate(site.ravel())]
    chosen = diverse_top([int(f) for f in order], keys, top)
    metric_label = {"train": "time to train", "both": "emissions"}.get(PAIR_METRIC_PART[objective], "serving p99")
    best = float(tco.ravel()[chosen[0]])
    options = []
    for rank, f in enumerate(chosen, start=1):
        a, b = divmod(int(f), tco.shape[1])
        t_opt, s_opt = option_json(train, int(ti[a]), ctx), option_json(serve, int(si[b]), ctx)
        t_opt["part"], s_opt["part"] = "train", "serve"
        total = float(tco[a, b])
        hybrid = not bool(site[a, b])
        cost = {"deployment": "hybrid" if hybrid else s_opt["deployment"],
                "monthly_usd": t_opt["cost"]["monthly_usd"] + s_opt["cost"]["monthly_usd"],
                "tco_usd": total, "horizon_months": months, "transfer_usd": float(transfer[a, b]),
                "per_unit": s_opt["cost"]["per_unit"],
                "breakdown": {k: t_opt["cost"]["breakdown"].get(k, 0.0) + s_opt["cost"]["breakdown"].get(k, 0.0)
                              for k in s_opt["cost"]["breakdown"]}}
        cost["breakdown"]["egress_usd"] = cost["breakdown"].get("egress_usd", 0.0) + float(transfer[a, b])
        why = [(f"{_LEAD[objective]} of {flat.size:,}" if rank == 1 else f"{(total - best) / best:+.0%} vs #1")
               + f": train on {t_opt['count']}x {t_opt['accelerator']} ({t_opt['deployment']}, {t_opt['region']}) "
               f"{fmt_usd(t_opt['cost']['tco_usd'])}, serve on {s_opt['count']}x {s_opt['accelerator']} "
               f"({s_opt['deployment']}, {s_opt['region']}) {fmt_usd(s_opt['cost']['tco_usd'])}, "
               f"artifact transfer {fmt_usd(float(transfer[a, b]))}"
               + ("" if objective == "cost" else f"; ranked by {metric_label} {_metric_text(objective, metric[a, b])}")]
        # The pair serves as the serving part does and trains as the training part does.
        performance = {**s_opt["performance"], "time_to_train_s": t_opt["performance"].get("time_to_train_s")}
        options.append({**s_opt, "rank": rank, "deployment": cost["deployment"], "cost": cost,
                        "performance": performance,
                        "why": why + s_opt["why"], "risks": list(dict.fromkeys(t_opt["risks"] + s_opt["risks"])),
                        "parts": [t_opt, s_opt],
                        "front_point": {"tco_usd": total, "metric_value": float(serve.ev.metric[si[b]])}})
    return options, {}
