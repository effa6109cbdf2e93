"""Assemble the plan dict: ranked options with why and risks, exclusions, chart data.

The shape is DESIGN.md section 4 (``plan --json``) plus the chart keys the report uses
(``front``, ``front_metric``, ``tco_by_mode``, ``breakeven``, ``evaluated``, ``compared``).
"""

from __future__ import annotations

from datetime import date

import numpy as np

from infrafit.search import borders
from infrafit.search import explain as ex
from infrafit.search.combine import combined
from infrafit.search.offers import OWNED_PROVIDER, offer_verified
from infrafit.search.option import option_json
from infrafit.search.pareto import (
    COST_TIE_FRACTION,
    METRIC_TIE_FRACTION,
    break_near_ties,
    diverse_top,
    hidden_variants,
    order_by,
    pareto_mask,
    worth_showing,
)
from infrafit.units import fmt_usd

FRONT_POINTS_MAX = 400


def _metric_name(workload, arch) -> str:
    if workload.inference is None:
        return "time_to_train_s"
    return "ttft_p99_s" if arch.kind == "decoder" else "latency_p99_s"


def _alternatives(part, idx: np.ndarray) -> dict[str, float]:
    modes = part.offers["mode"].to_numpy(dtype=object)[idx]
    tco = part.cost.tco_usd[idx]
    return {m: float(tco[modes == m].min()) for m in sorted(set(modes))}


def _ranking_line(objective: str, n: int, rank: int, tco: float, best_tco: float, metric_name: str,
                  metric: float, horizon: int) -> str:
    lead = {"cost": "cheapest", "latency": "lowest latency", "time": "fastest", "balanced": "best balance",
            "carbon": "lowest emissions"}[objective]
    if rank == 1:
        return (f"{lead} of {n:,} feasible candidates: TCO {fmt_usd(tco)} over {horizon} months; "
                f"{ex.SLO_LABEL.get(metric_name, metric_name)} {ex.fmt_value(metric_name, metric)}")
    return (f"TCO {fmt_usd(tco)} ({(tco - best_tco) / best_tco:+.0%} vs #1); "
            f"{ex.SLO_LABEL.get(metric_name, metric_name)} {ex.fmt_value(metric_name, metric)}")


def _tie_line(part, i: int, cheapest: int) -> str:
    """Why #1 is not the lowest TCO: a near tie broken by what is not noise (``pareto.break_near_ties``)."""
    c, metered = part.offers.iloc[cheapest], part.cost.metered_usd
    return (f"near tie: the lowest TCO is {fmt_usd(float(part.cost.tco_usd[cheapest]))} "
            f"({int(c['accelerator_count'])}x {c['accelerator_id']} {c['mode']} at {c['provider']}), within "
            f"{COST_TIE_FRACTION:.0%}; ranked by fewer accelerators, a verified offer, a sourced price, a simpler "
            f"deployment, then the metered cost without modelled engineer time: {fmt_usd(float(metered[i]))} here "
            f"vs {fmt_usd(float(metered[cheapest]))}")


def _auto_precision_line(part, i: int, idx: np.ndarray) -> str | None:
    """Why #1 runs at its precision when a narrower one on the same offer and engine costs less: under
    ``precision: auto`` a narrower format must save more than ``AUTO_PRECISION_MARGIN`` (``_distinct_offers``).
    A 1x H100 ViT training at bf16 for $1,650 beat the same pod at fp8 for $1,633, and the near-tie line
    credited that to the offers' tie rules."""
    ids = part.offers["id"].to_numpy(dtype=object)
    same = [int(k) for k in idx if ids[k] == ids[i] and part.ev.rows[k]["count"] == part.ev.rows[i]["count"]
            and part.ev.rows[k]["precision"] != part.ev.rows[i]["precision"]]
    cheaper = [k for k in same if float(part.cost.tco_usd[k]) < float(part.cost.tco_usd[i]) - 0.5]
    if not cheaper:
        return None
    k = min(cheaper, key=lambda j: float(part.cost.tco_usd[j]))
    saving = float(part.cost.tco_usd[i] - part.cost.tco_usd[k])
    return (f"precision: auto runs {part.ev.rows[i]['precision']} here; {part.ev.rows[k]['precision']} on the same "
            f"offer costs {fmt_usd(float(part.cost.tco_usd[k]))} ({saving / float(part.cost.tco_usd[i]):.1%} less), "
            f"and a narrower format is chosen only when it saves more than {AUTO_PRECISION_MARGIN:.0%} (its quality "
            "risk is not priced); list the precision to compare it")


def _metric_tie_line(part, i: int, idx: np.ndarray, metric: np.ndarray, objective: str, metric_name: str) -> str | None:
    """Why #1 is not the very lowest latency, time or emissions among the candidates worth showing (``idx``):
    within ``METRIC_TIE_FRACTION`` of it the cheaper one ranks first (``pareto.order_by``); None when #1 is
    the lowest."""
    m = np.where(np.isfinite(metric[idx]), metric[idx], np.inf)
    best = int(idx[int(np.argmin(m))])
    if not np.isfinite(metric[best]) or float(metric[i]) <= float(metric[best]):
        return None
    b = part.offers.iloc[best]
    what = "emissions" if objective == "carbon" else ex.SLO_LABEL.get(metric_name, metric_name)
    fmt = (lambda v: f"{v:,.0f} kg CO2e") if objective == "carbon" else (lambda v: ex.fmt_value(metric_name, v))
    return (f"near tie: the lowest {what} is {fmt(float(metric[best]))} ({int(b['accelerator_count'])}x "
            f"{b['accelerator_id']} {b['mode']} at {b['provider']}, TCO {fmt_usd(float(part.cost.tco_usd[best]))}); "
            f"this one's {fmt(float(metric[i]))} is within {METRIC_TIE_FRACTION:.0%} (about what replicate "
            "measurements of one configuration differ by), so the lower TCO ranks first")


def objective_metric(part, objective: str) -> np.ndarray:
    """What the objective ranks by besides TCO: emissions over the horizon (kg CO2e; NaN where the grid has no
    source) for ``carbon``, the part's latency or time to train otherwise."""
    return part.cost.co2e_kg if objective == "carbon" else part.ev.metric


def carbon_line(part, i: int) -> str:
    """What option ``i`` emits, or why that is not known."""
    e = part.cost.energy_json(i)
    row = part.offers.iloc[i]
    if e["co2e_kg_per_month"] is None:
        where = ", ".join(str(x) for x in (row.get("city"), row.get("country")) if x and x == x) or str(row["region"])
        return (f"emissions not known: no sourced grid carbon intensity for {where} (grid_carbon.csv); "
                f"energy {e['energy_kwh_per_month']:,.0f} kWh/month")
    return (f"emissions {e['co2e_kg_per_month']:,.0f} kg CO2e/month: {e['energy_kwh_per_month']:,.0f} kWh/month at "
            f"{e['grid_co2e_g_per_kwh']:,.0f} g CO2e/kWh (location-based grid mean, grid_carbon.csv)")


def _context(workload, catalog, parts, compat, today) -> dict:
    from infrafit.cost.params import CostParams

    providers: dict[str, set] = {}
    for part in parts.values():
        for a, p in zip(part.offers["accelerator_id"], part.offers["provider"], strict=True):
            providers.setdefault(a, set()).add(p)
    return {"workload": workload, "catalog": catalog, "compat": compat, "today": today or date.today(),
            "providers_by_acc": providers,
            "borders": borders.conditions(catalog.table("place_borders"), borders.user_countries(workload)),
            "interruptions_per_hour": CostParams().spot_interruptions_per_hour_default}


def _single(part, mask, objective: str, top: int, ctx: dict, metric_name: str) -> tuple[list[dict], dict]:
    from infrafit.search.charts import breakeven_data, front_points, tco_by_mode

    idx = np.flatnonzero(mask)
    if idx.size == 0:
        return [], {}
    tco, metric = part.cost.tco_usd[idx], objective_metric(part, objective)[idx]
    order = idx[order_by(objective, tco, metric)]
    if objective == "cost":  # near-equal costs: fewer accelerators, verified offers, sourced prices, simpler
        offers = part.offers
        derived = offers["derived"].astype(bool).to_numpy() if "derived" in offers else np.zeros(len(part), bool)
        order = np.asarray(break_near_ties(order, part.cost.tco_usd, _accelerators_held(part), derived,
                                           offers["mode"].to_numpy(dtype=object), ~offer_verified(offers),
                                           metered=part.cost.metered_usd,
                                           instances=offers["instances_per_replica"].to_numpy()), dtype=int)
    if ctx["workload"].deployment.billing == "prefer_fixed_monthly":
        order = prefer_fixed(order, part.cost.tco_usd, part.offers["mode"].to_numpy(dtype=object))
    owned = (part.offers["provider"] == OWNED_PROVIDER).to_numpy()
    if owned.any():  # deployment.owned: the team's own servers are used first when they carry the load
        order = np.concatenate([order[owned[order]], order[~owned[order]]])
    on_front = np.zeros(len(part), bool)
    on_front[idx] = pareto_mask(np.column_stack([tco, np.where(np.isfinite(metric), metric, np.inf)]))
    fam = part.offers["family"].to_numpy(dtype=object)
    mode = part.offers["mode"].to_numpy(dtype=object)
    prov = part.offers["provider"].to_numpy(dtype=object)
    acc = part.offers["accelerator_id"].to_numpy(dtype=object)
    # a different chip of the same family/mode/provider before the same chip at another count
    keys = [(fam[i], mode[i], prov[i], acc[i]) for i in range(len(part))]
    held = _accelerators_held(part)
    auto = ctx["workload"].precision == "auto"
    native = ctx.get("checkpoint_precision", "") if part.task == "serve" else ""
    ranked = (ctx.get("precision_order") or {}).get(part.task, ())
    candidates, left_out = worth_showing(_distinct_offers(part, order, auto, native, ranked), part.cost.tco_usd,
                                         held, acc)
    chosen = diverse_top(candidates, keys, top) if ctx.get("diverse", True) else candidates[:top]
    alts = _alternatives(part, idx)
    best_tco = float(part.cost.tco_usd[chosen[0]])
    h = int(ctx["workload"].horizon_months)
    options = []
    # the tie is judged among the distinct candidates: a cheaper narrower format on #1's own offer was set aside by
    # precision: auto (``_distinct_offers``), which ``_auto_precision_line`` says, not a near tie
    cheapest = int(min(candidates, key=lambda k: float(part.cost.tco_usd[k])))
    for rank, i in enumerate(chosen, start=1):
        o = option_json(part, i, ctx)
        if rank == 1 and ctx["workload"].deployment.billing == "prefer_fixed_monthly":
            o["why"].append(_billing_line(part, i, cheapest))
        if rank == 1 and owned[i]:
            o["why"].append(_owned_line(part, i, idx, owned))
        o["why"].insert(0, _ranking_line(objective, idx.size, rank, float(part.cost.tco_usd[i]), best_tco,
                                         metric_name, float(part.ev.metric[i]), h))
        if rank == 1 and objective == "cost" and part.cost.tco_usd[i] > part.cost.tco_usd[cheapest] + 0.5:
            if owned[i]:  # _owned_line says what using the owned servers first costs
                o["why"][0] = o["why"][0].replace("cheapest of", "first as hardware you own (deployment.owned), of", 1)
            elif _by_billing(ctx["workload"], str(mode[i]), str(mode[cheapest])):  # _billing_line says what it cost
                lead = "first by the spec's fixed-monthly billing preference, of"
                o["why"][0] = o["why"][0].replace("cheapest of", lead, 1)
            else:
                o["why"][0] = o["why"][0].replace("cheapest of", "first, in a near tie, of", 1)
                o["why"].insert(1, _tie_line(part, i, cheapest))
        if rank == 1 and auto:
            line = _auto_precision_line(part, i, idx)
            if line:
                o["why"].insert(1, line)
        if rank == 1 and objective in ("latency", "time", "carbon"):
            tie = _metric_tie_line(part, i, np.asarray(candidates, dtype=int), objective_metric(part, objective),
                                   objective, metric_name)
            if tie:
                o["why"][0] = o["why"][0].replace(" of ", " (within a near tie) of ", 1)
                o["why"].insert(1, tie)
        vs = ex.versus_line(float(part.cost.tco_usd[i]), str(mode[i]), alts)
        if vs:
            o["why"].append(vs)
        if on_front[i]:
            o["why"].append("on the Pareto front of TCO vs " + ex.SLO_LABEL.get(metric_name, metric_name))
        if objective == "carbon":
            o["why"].insert(1, carbon_line(part, i))
        o["rank"] = rank
        o["front_point"] = {"tco_usd": float(part.cost.tco_usd[i]), "metric_value": float(part.ev.metric[i])}
        options.append(o)
    charts = {"front": front_points(part, idx, on_front, FRONT_POINTS_MAX),
              "tco_by_mode": tco_by_mode(part, idx, chosen[0]),
              "breakeven": breakeven_data(part, idx, chosen[0], ctx["workload"])}
    compared = _compared(part, idx, chosen, fam, best_tco)
    hidden = hidden_variants(candidates, chosen, part.cost.tco_usd, fam) if ctx.get("diverse", True) else {}
    return options, charts | {"compared": compared, "hidden": {"variants": hidden, **left_out}}


def _accelerators_held(part) -> np.ndarray:
    """Accelerators each candidate holds at its busiest month: chips per replica x replicas (serving),
    the chips of the run (training)."""
    count = np.array([float(r["count"]) for r in part.ev.rows])
    replicas = getattr(part.cost.demand, "fixed_replicas", None)
    if part.task == "serve" and replicas is not None and np.size(replicas):
        return count * np.max(np.asarray(replicas, float), axis=0)
    return count


#: Under ``precision: auto`` a narrower format must save more than this share of TCO on the same
#: offer to be chosen over a wider one (its quality risk is not priced; issue 12 point 8).
AUTO_PRECISION_MARGIN = 0.10
#: Bits per weight of each precision, to say which is "higher".
_PRECISION_BITS = {"fp32": 32, "tf32": 19, "bf16": 16, "fp16": 16, "fp8": 8, "int8": 8, "fp4": 4, "int4": 4}


#: ``billing: prefer_fixed_monthly`` ranks a fixed-price option first when it costs at most this share
#: more than the cheapest option (a stated margin: a fixed invoice is worth a little, not a lot).
FIXED_BILLING_MARGIN = 0.10
FIXED_MODES = ("cloud_reserved_1y", "cloud_reserved_3y", "dedicated_monthly", "on_prem")


def prefer_fixed(order: np.ndarray, tco: np.ndarray, mode: np.ndarray) -> np.ndarray:
    """``order`` with the fixed-price candidates within ``FIXED_BILLING_MARGIN`` of the cheapest moved
    to the front (their own order kept), then the rest as they were."""
    best = float(np.min(tco[order])) if len(order) else 0.0
    near = np.array([mode[i] in FIXED_MODES and tco[i] <= (1.0 + FIXED_BILLING_MARGIN) * best for i in order],
                    dtype=bool)
    return np.concatenate([order[near], order[~near]])


def _owned_line(part, i: int, idx: np.ndarray, owned: np.ndarray) -> str:
    """What using the owned servers first costs or saves against the cheapest option that buys or rents."""
    others = idx[~owned[idx]]
    if others.size == 0:
        return "owned hardware used first (deployment.owned): nothing else is feasible"
    j = int(others[np.argmin(part.cost.tco_usd[others])])
    delta = float(part.cost.tco_usd[i] - part.cost.tco_usd[j])
    word = "more" if delta > 0 else "less"
    return (f"owned hardware used first (deployment.owned): it costs {fmt_usd(abs(delta))} {word} over the horizon "
            f"than the cheapest option that buys or rents ({part.offers['provider'].iloc[j]} "
            f"{part.offers['mode'].iloc[j]}, {fmt_usd(float(part.cost.tco_usd[j]))}); power, colocation and "
            "operations are priced, the purchase is sunk")


def _by_billing(workload, mode: str, cheapest_mode: str) -> bool:
    """Whether #1 leads the cheaper option because the spec prefers fixed monthly billing (a fixed mode
    ahead of a pay-per-use one), not because of a near tie."""
    return (workload.deployment.billing == "prefer_fixed_monthly" and mode in FIXED_MODES
            and cheapest_mode not in FIXED_MODES)


def _billing_line(part, i: int, cheapest: int) -> str:
    """What ``billing: prefer_fixed_monthly`` cost (or that it cost nothing) against the cheapest option."""
    mode = str(part.offers["mode"].iloc[i])
    if mode not in FIXED_MODES:
        return (f"billing: no fixed-price option within {FIXED_BILLING_MARGIN:.0%} of the cheapest; "
                "the cheapest pay-per-use option stays first")
    extra = float(part.cost.tco_usd[i] - part.cost.tco_usd[cheapest])
    if i == cheapest or extra <= 0:
        return "billing: prefer_fixed_monthly: this fixed-price option is also the cheapest"
    return (f"billing: prefer_fixed_monthly ranks this fixed-price option ({mode}) first: {fmt_usd(extra)} "
            f"({extra / float(part.cost.tco_usd[cheapest]):.1%}) more than the cheapest "
            f"({part.offers['mode'].iloc[cheapest]}) over the horizon")


def _precision_orders(arch) -> dict[str, tuple[str, ...]]:  # noqa: ANN001 - a ModelArch
    """Per part (``serve``, ``train``), the policy table's order of precisions (precision_policy.csv)."""
    from infrafit.perf import precision_order, serving_kind

    return {"serve": precision_order(serving_kind(arch)), "train": precision_order("training")}


def precision_preference(precision: str, native: str = "", ranked: tuple[str, ...] = ()) -> tuple[int, int, int]:
    """How much ``precision: auto`` prefers serving at ``precision`` (larger first): the checkpoint's own
    format (``native``: gpt-oss-120b's MXFP4, DeepSeek-V3's fp8) first, since its accuracy is the
    publisher's and any other format re-quantizes it (int8 from fp4 weights adds rounding, bf16 only
    doubles the bytes: neither gains accuracy); then the widest; between formats of one width, the policy
    table's order (``ranked``: fp8 before int8 for LLM serving, the stacks' default on chips with fp8 math)."""
    rank = -ranked.index(precision) if precision in ranked else -len(ranked)
    return int(bool(native) and precision == native), _PRECISION_BITS.get(precision, 16), rank


def _distinct_offers(part, order: np.ndarray, auto_precision: bool = False, native: str = "",
                     ranked: tuple[str, ...] = ()) -> list[int]:
    """``order`` with one candidate per (offer, chips per engine): the first by rank, or, under
    ``precision: auto``, the preferred precision (``precision_preference``: the checkpoint's own ``native``
    format, else the widest) within ``AUTO_PRECISION_MARGIN`` of that offer's
    cheapest (the others differ only in precision or stack: near-copies, not alternatives). A replica of
    ``dp`` data-parallel engines that share nothing (no expert parallelism across them) is ``dp`` replicas
    of one engine bought on the same offer, so it groups with the one-engine layout (chip count / dp)."""
    ids = part.offers["id"].to_numpy(dtype=object)
    tco = part.cost.tco_usd
    groups: dict[tuple[str, int, str], list[int]] = {}
    for i in order:
        row = part.ev.rows[i]
        shared = int(row.get("ep", 1) or 1) > 1  # experts sharded over the DP ranks: one engine, not dp
        engine = int(row["count"]) // (1 if shared else max(int(row.get("dp", 1) or 1), 1))
        # an operating point is no near-copy: the latency objective's lighter points (search.operating) cost
        # more than the offer's max-rate point and are what it ranks by, so each stays its own candidate
        point = str((row.get("operating_point") or {}).get("name") or "")
        groups.setdefault((ids[i], engine, point), []).append(int(i))
    pick: dict[tuple[str, int, str], int] = {}
    for key, members in groups.items():
        best = members[0]
        if auto_precision:
            cheapest = min(float(tco[i]) for i in members)
            within = [i for i in members if float(tco[i]) <= (1.0 + AUTO_PRECISION_MARGIN) * cheapest]
            best = max(within, key=lambda i: (*precision_preference(str(part.ev.rows[i]["precision"]), native,
                                                                    ranked), -members.index(i)))
        pick[key] = best
    chosen = set(pick.values())
    return [int(i) for i in order if int(i) in chosen]


def _compared(part, idx, chosen, fam, best_tco) -> list[dict]:
    """Feasible families not in the top-N: their best TCO against #1 (the numbers behind the ranking)."""
    shown = {fam[i] for i in chosen}
    out = []
    for f in sorted(set(fam[idx]) - shown):
        sub = idx[fam[idx] == f]
        j = sub[np.argmin(part.cost.tco_usd[sub])]
        tco = float(part.cost.tco_usd[j])
        out.append({"what": f, "reason": f"feasible but outranked: best {fmt_usd(tco)} TCO "
                                         f"({(tco - best_tco) / best_tco:+.0%} vs #1) on "
                                         f"{part.ev.rows[j]['count']}x {part.ev.rows[j]['accelerator']}, "
                                         f"{part.offers['mode'].iloc[j]}"})
    return out


def build(workload, catalog, arch, parts, masks, compat, excluded, failures, objective, top, *, today=None,
          diverse: bool = True) -> dict:
    """The plan dict. ``options`` is empty when nothing is feasible (the command exits 3)."""
    ctx = _context(workload, catalog, parts, compat, today)
    ctx["diverse"] = diverse
    ctx["checkpoint_precision"] = str(getattr(arch, "default_precision", None) or "")
    ctx["precision_order"] = _precision_orders(arch)
    metric_name = _metric_name(workload, arch)
    if len(parts) == 2:
        options, charts = combined(parts, objective, top, ctx, failures)
    else:
        (part,) = parts.values()
        options, charts = ([], {}) if part.cost is None else _single(part, masks[part.task], objective, top, ctx,
                                                                     metric_name)
    lines = list(excluded)
    for fam, reasons in sorted(failures.items()):
        lines.append({"what": fam, "reason": "; ".join(dict.fromkeys(reasons))})
    option_fams = {o.get("family") for o in options} | {p.get("family") for o in options for p in o.get("parts", [])}
    lines = [e for e in lines if e["what"] not in option_fams or not options]
    dates = [str(d) for p in parts.values() for d in p.offers.get("retrieved_on", [])]
    return {
        "workload": workload.resolved(), "objective": objective,
        "catalog_retrieved_on": f"{min(dates)} to {max(dates)}" if dates else "no prices used",
        "options": options, "excluded": lines, "compared": charts.pop("compared", []),
        "hidden": charts.pop("hidden", {}), "price_age": ex.price_age(options, dates, ctx["today"]),
        "front_metric": metric_name, "evaluated": int(sum(p.evaluated for p in parts.values())), **charts,
    }
