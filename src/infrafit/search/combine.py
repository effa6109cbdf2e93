"""Train-and-serve workloads: pair a training candidate with a serving candidate.

Both parts are priced on their own (``search.parts``); pairs add the two TCOs and the artifact
transfer (``cost.hybrid.transfer_usd``: the trained model leaves the training site once per run, on
its egress tiers; free on the same site). A pair on two sites is a ``hybrid`` option and needs
``hybrid`` in ``deployment.allowed``; otherwise both parts must share provider and region. The
budget applies to the pair. Only the cheapest ``PAIR_POOL`` candidates of each part are paired.
"""

from __future__ import annotations

import numpy as np

from infrafit.search.pareto import diverse_top
from infrafit.units import fmt_usd

PAIR_POOL = 60


def _pool(part, n: int) -> np.ndarray:
    ok = np.flatnonzero(np.isfinite(part.cost.tco_usd))
    return ok[np.argsort(part.cost.tco_usd[ok])][:n]


def combined(parts, objective: str, top: int, ctx: dict, failures: dict) -> tuple[list[dict], dict]:
    from infrafit.cost.hybrid import artifact_transfer_bytes, same_site, transfer_usd
    from infrafit.search.assemble import option_json

    train, serve = parts["train"], parts["serve"]
    if train.cost is None or serve.cost is None:
        return [], {}
    w = ctx["workload"]
    ti, si = _pool(train, PAIR_POOL), _pool(serve, PAIR_POOL)
    if ti.size == 0 or si.size == 0:
        return [], {}
    ta, sa = train.arrays.take(ti), serve.arrays.take(si)
    months = int(w.horizon_months)
    arch = w.model_arch()
    artifact = arch.weight_bytes("bf16")
    moved = artifact_transfer_bytes(artifact, float(w.usage.runs_per_year or 1.0), months)
    site = same_site(ta, sa)
    transfer = transfer_usd(moved, ta, site)
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
    order = flat[np.argsort(tco.ravel()[flat], kind="stable")]
    keys = []
    for f in range(tco.size):
        a, b = divmod(f, tco.shape[1])
        keys.append((str(train.offers["family"].iloc[ti[a]]), str(serve.offers["family"].iloc[si[b]]),
                     str(serve.offers["mode"].iloc[si[b]]), bool(site[a, b])))
    chosen = diverse_top(list(order), keys, top)
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
        why = [(f"cheapest pair of {flat.size:,}" if rank == 1 else f"{(total - best) / best:+.0%} vs #1")
               + f": train on {t_opt['count']}x {t_opt['accelerator']} ({t_opt['deployment']}, {t_opt['region']}) "
               f"{fmt_usd(t_opt['cost']['tco_usd'])}, serve on {s_opt['count']}x {s_opt['accelerator']} "
               f"({s_opt['deployment']}, {s_opt['region']}) {fmt_usd(s_opt['cost']['tco_usd'])}, "
               f"artifact transfer {fmt_usd(float(transfer[a, b]))}"]
        # The pair serves as the serving part does and trains as the training part does.
        performance = {**s_opt["performance"], "time_to_train_s": t_opt["performance"].get("time_to_train_s")}
        options.append({**s_opt, "rank": rank, "deployment": cost["deployment"], "cost": cost,
                        "performance": performance,
                        "why": why + s_opt["why"], "risks": list(dict.fromkeys(t_opt["risks"] + s_opt["risks"])),
                        "parts": [t_opt, s_opt],
                        "front_point": {"tco_usd": total, "metric_value": float(serve.ev.metric[si[b]])}})
    return options, {}
