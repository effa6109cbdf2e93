"""Several workloads on one fleet: planned apart, then pooled on one committed fleet where that is cheaper.

Each workload is planned on its own (``planner.plan``). Then, for every committed offer (reserved,
dedicated, on-prem) that every workload can run on with one instance per replica, a **pool** is sized:

- **Realtime models share instances within memory.** Each needs ``u`` = peak load x (1 + headroom) /
  capacity per instance (its own evaluation on that instance). The whole part of ``u`` gets instances of
  its own; the fractions are packed first-fit-decreasing onto shared instances, each holding models whose
  fractions add up to at most one and whose weights + KV cache (at their share of the load) fit the
  memory. Time-slicing a GPU between models is taken as additive utilisation (first order; no
  interference penalty is modelled).
- **Batch inference and training fill the idle hours** of the serving fleet (instance-hours held minus
  the serving models' busy hours), when their weights and KV fit beside the largest set resident on an
  instance; what does not fit or is left over gets instances of its own. This assumes batch windows and
  training runs can be scheduled off-peak.
- The pool holds ``max`` of that month by month (never shrinking, at least one instance) and is priced by
  the cost model as one fleet: one set of fixed ops hours, egress on the summed volume, every workload's
  migration, storage as each workload's.

The combined plan is the cheaper of the best pool and the separate plans together, so it is never worse
than planning apart. Within a pool each workload's cost is its share of the pool's busy instance-hours.
MIG and other partition profiles are not in the catalog, so partitioning is not modelled (time-slicing is).
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import Any

import numpy as np

from infrafit.units import HOURS_PER_MONTH, HOURS_PER_WEEK, fmt_usd

POOL_MODES = ("cloud_reserved_1y", "cloud_reserved_3y", "dedicated_monthly", "on_prem")
ELASTIC_MODES = ("cloud_on_demand",)
HOURS_PER_WEEK_BINS = HOURS_PER_WEEK
#: Elastic pools are tried on each workload's cheapest candidates only (each pool sizes 168 hours a month).
ELASTIC_CANDIDATES_PER_WORKLOAD = 8


@dataclass(frozen=True)
class Member:
    """One workload's best candidate on a pool offer."""

    name: str
    part: Any  # search.parts.Part
    j: int
    realtime: bool
    u: np.ndarray  # (M,) instances' worth of peak load (realtime; 0 otherwise)
    u_hourly: np.ndarray  # (M, 168) instances' worth of load each hour of the week (realtime; 0 otherwise)
    fill_hours: np.ndarray  # (M,) instance-hours of batch or training work (0 for realtime)
    busy_hours: np.ndarray  # (M,) instance-hours busy
    weights_bytes: float  # per accelerator
    kv_bytes: float  # per accelerator at its own operating point


def _member(workload, part, mask, offer_id: str) -> Member | None:
    from infrafit.cost.usage import growth_factors
    from infrafit.search.parts import inference_profile, load_bytes_per_accelerator, spot_params

    if part.cost is None:
        return None
    ok = np.flatnonzero(mask & (part.offers["id"].to_numpy() == offer_id)
                        & (part.offers["instances_per_replica"].to_numpy() == 1) & np.isfinite(part.cost.tco_usd))
    if ok.size == 0:
        return None
    j = int(ok[np.argmin(part.cost.tco_usd[ok])])
    d = part.cost.demand
    months = d.fixed_replicas.shape[0]
    headroom = spot_params(workload).headroom_fraction
    busy = np.asarray(d.busy_replica_hours[:, j], dtype=float)
    realtime = part.task == "serve" and bool(d.realtime)
    hourly = np.zeros((months, HOURS_PER_WEEK_BINS))
    if realtime:
        profile, _ = inference_profile(workload)
        growth = growth_factors(workload.growth.traffic_per_month, months)
        cap = float(part.ev.capacity[j])
        u = profile.peak_rps * growth * (1.0 + headroom) / cap
        hourly = np.outer(growth, _week_load(workload)) * (1.0 + headroom) / cap
        fill = np.zeros(months)
    else:
        u, fill = np.zeros(months), busy * (1.0 + headroom)
    weights = float(load_bytes_per_accelerator(part.ev.take(np.array([j])))[0])
    kv = max(float(part.ev.memory_bytes[j]) - weights, 0.0)
    return Member(workload.name, part, j, realtime, u, hourly, fill, busy, weights, kv)


def _week_load(workload) -> np.ndarray:
    """(168,) requests/s each hour of the week (the same shape the cost model bins; ``cost.usage``)."""
    from infrafit.cost.usage import shape_to_load, weekly_shape

    t = workload.inference.traffic
    return shape_to_load(weekly_shape(t.daily_profile), float(t.requests_per_s or 0.0), t.peak_requests_per_s)


def _pack(members: list[Member], loads, memory: float) -> tuple[int, float]:
    """(instances, the most memory resident on one of them) carrying ``loads[i]`` instances' worth of
    load of realtime member i."""
    whole = 0
    top = 0.0
    fractions = []
    for x, load in zip(members, loads, strict=True):
        k = int(np.floor(float(load) + 1e-9))
        whole += k
        if k:
            top = max(top, x.weights_bytes + x.kv_bytes)
        r = float(load) - k
        if r > 1e-9:
            fractions.append((r, x))
    bins: list[list[float]] = []  # [share, memory]
    for r, x in sorted(fractions, key=lambda t: -t[0]):
        need = x.weights_bytes + x.kv_bytes * r
        for b in bins:
            if b[0] + r <= 1.0 + 1e-9 and b[1] + need <= memory:
                b[0] += r
                b[1] += need
                break
        else:
            bins.append([r, need])
    top = max([top] + [b[1] for b in bins])
    return whole + len(bins), top


def _elastic_month(realtime: list[Member], m: int, memory: float) -> tuple[float, float, float]:
    """(instance-hours held, peak instances, most memory on one instance) in month ``m`` of an elastic pool
    that holds each hour of the week what that hour's summed load needs."""
    if not realtime:
        return 0.0, 0.0, 0.0
    loads = np.stack([x.u_hourly[m] for x in realtime], axis=1)  # (168, members)
    distinct, counts = np.unique(np.round(loads, 9), axis=0, return_counts=True)
    held, peak, top = 0.0, 0.0, 0.0
    for row, n in zip(distinct, counts, strict=True):
        inst, mem = _pack(realtime, row, memory) if row.any() else (0, 0.0)
        held += inst * n * HOURS_PER_MONTH / HOURS_PER_WEEK_BINS
        peak, top = max(peak, inst), max(top, mem)
    return held, peak, top


Sized = tuple[np.ndarray, np.ndarray, list[str]]


def size_pool(members: list[Member], memory: float, months: int, elastic: bool = False) -> Sized:
    """((M,) instances the pool holds at its peak, (M,) instance-hours it holds, notes for the why lines).
    A committed pool holds its peak all month and never shrinks; an elastic pool holds each hour what the
    hour needs."""
    realtime = [x for x in members if x.realtime]
    fill = [x for x in members if not x.realtime]
    held = np.zeros(months)
    hours = np.zeros(months)
    filled_hours = 0.0
    for m in range(months):
        if elastic:
            rt_hours, rt, top = _elastic_month(realtime, m, memory)
        else:
            rt, top = _pack(realtime, [x.u[m] for x in realtime], memory) if realtime else (0, 0.0)
            rt_hours = rt * HOURS_PER_MONTH
        idle = rt_hours - sum(float(x.busy_hours[m]) for x in realtime)
        fits = [x for x in fill if x.weights_bytes + x.kv_bytes + top <= memory]
        fit_hours = sum(float(x.fill_hours[m]) for x in fits)
        own_hours = sum(float(x.fill_hours[m]) for x in fill if x not in fits)
        used = min(fit_hours, max(idle, 0.0))
        filled_hours += used
        extra_hours = fit_hours - used + own_hours
        extra = np.ceil(extra_hours / HOURS_PER_MONTH - 1e-9)
        held[m] = max(rt + extra, 1.0)
        hours[m] = rt_hours + extra_hours if elastic else held[m] * HOURS_PER_MONTH
    if not elastic:
        held = np.maximum.accumulate(held)
        hours = held * HOURS_PER_MONTH
    notes = []
    shared = [x.name for x in realtime if np.any(x.u % 1.0 > 1e-9)]
    if len(shared) > 1:
        notes.append(f"{', '.join(shared)} share instances within memory (their fractions of an instance packed "
                     "together)")
    if fill and filled_hours > 0:
        notes.append(f"{', '.join(x.name for x in fill)} run in the serving fleet's idle hours "
                     f"({filled_hours:,.0f} instance-hours over the horizon; assumes off-peak scheduling)")
    return held, hours, notes


def price_pool(members: list[Member], held: np.ndarray, hours: np.ndarray, workloads) -> tuple[float, object]:
    """(TCO, CostResult) of one fleet of ``held`` instances (``hours`` instance-hours) carrying every member."""
    from infrafit.cost.capacity_plan import Demand
    from infrafit.cost.tco import price_options
    from infrafit.cost.workflow import rates
    from infrafit.search.parts import spot_params

    first = members[0]
    arrays = first.part.arrays.take(np.array([first.j]))
    arrays = replace(arrays,
                     migration_engineer_weeks=np.array([np.sum([x.part.arrays.migration_engineer_weeks[x.j]
                                                                for x in members])]),
                     change_engineer_weeks=np.array([np.sum([x.part.arrays.change_engineer_weeks[x.j]
                                                             for x in members])]))
    months = len(held)
    col = held[:, None]
    busy = np.sum([x.busy_hours for x in members], axis=0)[:, None]
    demand = Demand(needed_replica_hours=hours[:, None], busy_replica_hours=busy, fixed_replicas=col,
                    active_hours=HOURS_PER_MONTH, realtime=True,
                    requests_per_month=np.sum([x.part.cost.demand.requests_per_month for x in members], axis=0),
                    output_tokens_per_month=np.sum([x.part.cost.demand.output_tokens_per_month for x in members],
                                                   axis=0))
    w0 = workloads[0]
    cost = price_options(demand, arrays, horizon_months=months,
                         engineer_usd_per_hour=float(w0.ops.engineer_usd_per_hour), params=spot_params(w0),
                         changes=rates(w0.workflow))
    storage = float(np.sum([x.part.cost.breakdown["storage_usd"][x.j] for x in members]))
    return float(cost.tco_usd[0]) + storage, cost


def _pool_ids(parts) -> list[tuple[str, bool]]:
    """(offer id, elastic) to size a pool on: committed offers every part has, and on-demand offers every
    part has among the union of each part's cheapest candidates."""
    committed = elastic = None
    cheap: set[str] = set()
    for part in parts:
        offers = part.offers
        here = set(offers.loc[offers["mode"].isin(POOL_MODES), "id"])
        committed = here if committed is None else committed & here
        od = set(offers.loc[offers["mode"].isin(ELASTIC_MODES), "id"])
        elastic = od if elastic is None else elastic & od
        order = np.argsort(part.cost.tco_usd, kind="stable")
        ids = offers["id"].to_numpy()[order]
        modes = offers["mode"].to_numpy()[order]
        cheap |= set(list(dict.fromkeys(i for i, m in zip(ids, modes, strict=True) if m in ELASTIC_MODES))
                     [:ELASTIC_CANDIDATES_PER_WORKLOAD])
    return [(i, False) for i in sorted(committed or ())] + [(i, True) for i in sorted((elastic or set()) & cheap)]


def best_pool(workloads, prepared: list) -> dict | None:
    """The cheapest pool over the offers every workload can run on (None when there is none)."""
    parts = [next(iter(p.parts.values())) if p.parts else None for p in prepared]
    masks = [next(iter(p.masks.values())) if p.masks else None for p in prepared]
    if any(part is None or part.cost is None for part in parts):
        return None
    best: dict | None = None
    for offer_id, elastic in _pool_ids(parts):
        members = [_member(w, part, mask, offer_id) for w, part, mask in zip(workloads, parts, masks, strict=True)]
        if any(x is None for x in members):
            continue
        ms = [x for x in members if x is not None]
        memory = min(float(x.part.ev.memory_capacity_bytes[x.j]) for x in ms)
        held, hours, notes = size_pool(ms, memory, int(workloads[0].horizon_months), elastic)
        tco, cost = price_pool(ms, held, hours, workloads)
        if np.isfinite(tco) and (best is None or tco < best["tco_usd"]):
            best = {"tco_usd": tco, "members": ms, "held": held, "notes": notes, "cost": cost, "offer_id": offer_id}
    return best


def separate_total(workloads, plans) -> tuple[float, float, list[str]]:
    """(total apart with each platform's fixed operations hours counted once, the plain sum, notes). Two
    workloads planned apart on the same provider and mode run on one platform: its images, autoscaler and
    on-call are shared, so only the first pays the fixed hours (``ops_labour.csv``)."""
    from infrafit.cost.adapters import ops_hours
    from infrafit.search.parts import ops_work

    plain = float(sum(p["options"][0]["cost"]["tco_usd"] for p in plans))
    seen: set[tuple[str, str]] = set()
    shared = 0.0
    for w, p in zip(workloads, plans, strict=True):
        o = p["options"][0]
        key = (o["provider"], o["deployment"])
        if key in seen:
            fixed_h, _ = ops_hours(np.array([o["deployment"]]), bool(o.get("server", {}).get("managed_platform")),
                                   work=ops_work(w, "train" if w.inference is None else "serve"))
            fixed = float(fixed_h[0]) * float(w.ops.engineer_usd_per_hour) * int(w.horizon_months)
            shared += min(fixed, float(o["cost"]["breakdown"].get("ops_labour_usd", 0.0)))
        seen.add(key)
    notes = [f"planned apart, workloads on the same provider and mode share that platform's fixed operations hours "
             f"({fmt_usd(shared)} counted once)"] if shared else []
    return plain - shared, plain, notes


def plan_fleet(fleet, catalog, *, top: int = 3, today=None) -> dict:
    """The fleet plan: each workload's own plan, the best pool, and the combined choice (never worse)."""
    from infrafit.search.planner import plan, prepare

    prepared = [prepare(w, catalog, today=today) for w in fleet.workloads]  # evaluated once: planned, then pooled
    plans = [plan(w, catalog, top=top, today=today, prepared=p).to_dict()
             for w, p in zip(fleet.workloads, prepared, strict=True)]
    separate = [p["options"][0]["cost"]["tco_usd"] if p["options"] else None for p in plans]
    out: dict = {"name": fleet.name, "horizon_months": int(fleet.workloads[0].horizon_months),
                 "workloads": [{"name": w.name, "plan": p} for w, p in zip(fleet.workloads, plans, strict=True)]}
    if any(s is None for s in separate):
        missing = [w.name for w, s in zip(fleet.workloads, separate, strict=True) if s is None]
        out["combined"] = None
        out["excluded"] = [{"what": n, "reason": "no option meets its hard constraints (see its plan)"}
                           for n in missing]
        return out
    total, plain, notes = separate_total(fleet.workloads, plans)
    pool = best_pool(fleet.workloads, prepared)
    out["separate_tco_usd"] = total
    out["separate_sum_usd"] = plain
    out["combined"] = _combined(fleet, plans, pool, total, notes, plain - total)
    return out


def _labour_split(pool, plans, shared: float) -> str:
    """How much of the pool's cost is operations labour, against apart (an assumption: ops_labour.csv)."""
    apart = sum(float(p["options"][0]["cost"]["breakdown"].get("ops_labour_usd", 0.0)) for p in plans) - shared
    pooled = float(pool["cost"].breakdown["ops_labour_usd"][0])
    return (f"of which operations labour {fmt_usd(pooled)} pooled against {fmt_usd(apart)} apart (ops_labour.csv, "
            "an assumption): the rest of the saving is infrastructure")


def _combined(fleet, plans, pool, total: float, notes: list[str], shared: float) -> dict:
    months = int(fleet.workloads[0].horizon_months)
    if pool is None or pool["tco_usd"] >= total:
        why = [f"planned apart: {fmt_usd(total)} over {months} months is the cheapest way to run the fleet", *notes]
        if pool is not None:
            why.append(f"the best shared fleet ({pool['offer_id']}) would cost {fmt_usd(pool['tco_usd'])}")
        else:
            why.append("no committed offer carries every workload with one instance per replica")
        return {"kind": "separate", "tco_usd": total, "saving_usd": 0.0, "why": why,
                "per_workload": [{"name": w.name, "tco_usd": p["options"][0]["cost"]["tco_usd"]}
                                 for w, p in zip(fleet.workloads, plans, strict=True)]}
    ms = pool["members"]
    row = ms[0].part.offers.iloc[ms[0].j]
    busy = np.array([float(x.busy_hours.sum()) for x in ms])
    share = busy / busy.sum() if busy.sum() > 0 else np.full(len(ms), 1.0 / len(ms))
    held = pool["held"]
    saving = total - pool["tco_usd"]
    why = [f"one fleet of {held.max():.0f} x {row['host_id']} ({row['mode']}, {row['provider']}, {row['region']}) "
           f"carries all {len(ms)} workloads for {fmt_usd(pool['tco_usd'])} over {months} months, "
           f"{fmt_usd(saving)} ({saving / total:.0%}) less than planning them apart ({fmt_usd(total)})",
           *pool["notes"], *notes, _labour_split(pool, plans, shared)]
    return {"kind": "shared", "tco_usd": pool["tco_usd"], "saving_usd": saving, "offer_id": pool["offer_id"],
            "accelerator": str(row["accelerator_id"]), "host_id": str(row["host_id"]), "deployment": str(row["mode"]),
            "provider": str(row["provider"]), "region": str(row["region"] or ""),
            "instances_by_month": [float(x) for x in held],
            "breakdown": {k: float(v[0]) for k, v in pool["cost"].breakdown.items()},
            "per_workload": [{"name": x.name, "share": float(s), "tco_usd": float(s * pool["tco_usd"]),
                              "precision": x.part.ev.rows[x.j]["precision"], "stack": x.part.ev.rows[x.j]["stack"]}
                             for x, s in zip(ms, share, strict=True)],
            "why": why}
