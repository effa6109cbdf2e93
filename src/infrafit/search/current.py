"""Today's platform (``current:``): "stay as is" beside the alternatives, and a switch plan for each.

**Stay** runs the workload through the planner's own path (``planner.build_part``) on one offer built
from the spec: ``count`` x ``accelerator`` in instances of ``host`` at today's bill (``monthly_usd``, all
in, split per instance), so its performance, SLO check, sizing and energy are those of every other
option. Its fleet never shrinks below what runs today (a team does not hand back capacity by planning);
when the load outgrows it, replicas are added at today's price per replica. Ops labour is that of
today's mode (``ops_labour.csv``). A platform that cannot meet the SLOs is not an option: Excluded says
why, and the switch plans are measured against today's bill alone.

**Switch** (every other option): its TCO (which already prices the migration to its family and stack),
plus ``dual_running_months`` of today's bill while the new platform is ported and validated with the old
one kept as the rollback path (porting weeks / 4.35 + ``CostParams.dual_run_validation_months``), plus what is still
committed on today's platform (``contract_months_left``) after that; the month it pays back is the first
from which the cumulative cost of switching stays at or below staying's.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import date

import numpy as np
import pandas as pd

from infrafit.cost.params import BREAKDOWN_KEYS, CostParams
from infrafit.units import HOURS_PER_MONTH, HOURS_PER_WEEK, fmt_usd

CURRENT_OFFER_ID = "current"
WEEKS_PER_MONTH = HOURS_PER_MONTH / HOURS_PER_WEEK
#: check-model runtime per accelerator vendor/kind (bench.check_model.RUNTIMES).
CHECK_RUNTIME = {"NVIDIA": "onnxruntime-cuda", "AMD": "onnxruntime-rocm", "Google": "xla-tpu", "AWS": "neuron",
                 "Intel": "gaudi"}


@dataclass(frozen=True)
class Stay:
    """The stay option (None when today's platform misses the SLOs), its cost each month, and why not."""

    option: dict | None
    monthly_usd: np.ndarray  # (M,) what staying costs each month
    excluded: dict | None = None


def current_offer(catalog, workload, today: date) -> pd.DataFrame:
    """Today's platform as one offer row, annotated like the catalog's (``search.offers.annotate``)."""
    from infrafit.search.offers import annotate
    from infrafit.workload.names import accelerator_names, current_host, place_country

    cur = workload.current
    acc = accelerator_names(catalog)[cur.accelerator.lower()]
    host = current_host(catalog, acc, cur.count, cur.host, cur.provider)
    per = int(catalog.hosts.set_index("id").at[host, "accelerator_count"])
    region = cur.region or (workload.placement.regions[0] if workload.placement.regions else "")
    country = place_country(region) if region else (workload.placement.countries[0]
                                                    if workload.placement.countries else "")
    row = {"id": CURRENT_OFFER_ID, "provider": cur.provider or "current platform", "region": region, "city": "",
           "country": country or "", "mode": "dedicated_monthly", "host_id": host, "accelerator_id": acc,
           "accelerator_count": per, "usd_per_hour": np.nan, "usd_per_month": float(cur.monthly_usd) * per / cur.count,
           "contract_months": 1.0, "purchase_usd": np.nan, "host_included": True, "confidence": "high",
           "derived": False, "availability": "verified", "user_row": False, "origin_file": "spec", "origin_line": 0,
           "includes": "power, network and storage: today's bill, all in",
           "notes": f"current: {cur.count} x {acc} in {cur.count // per} x {host}, {fmt_usd(float(cur.monthly_usd))}"
                    "/month", "source": "the workload spec (current)", "retrieved_on": today.isoformat()}
    return annotate(pd.DataFrame([row]), catalog)


def _bill(part, i: int, workload, catalog) -> tuple[np.ndarray, np.ndarray]:
    """(M,) today's bill scaled to the replicas needed (never fewer than today's), and (M,) ops labour
    of today's mode, for candidate ``i``."""
    from infrafit.cost.adapters import managed_platforms, ops_hours

    cur = workload.current
    chips = int(part.ev.rows[i]["count"])
    today_replicas = max(cur.count // chips, 1)
    replicas = np.maximum(stay_replicas(part.cost.demand.fixed_replicas[:, i], today_replicas, cur.meets_slos),
                          today_replicas)
    bill = float(cur.monthly_usd) * replicas / today_replicas
    from infrafit.search.parts import ops_work

    # today's platform is operated as a candidate would be: managed only on its provider's managed platform
    # (whose fee is in today's bill already)
    on_platform, _, _ = managed_platforms(catalog, part.offers.iloc[[i]], bool(workload.deployment.managed_preferred),
                                          ops_work(workload, part.task))
    fixed_h, per_h = ops_hours(np.array([cur.mode]), on_platform, work=ops_work(workload, part.task))
    instances = replicas * float(part.offers["instances_per_replica"].iloc[i])
    labour = (float(fixed_h[0]) + float(per_h[0]) * instances) * float(workload.ops.engineer_usd_per_hour)
    return bill, labour


def stay_replicas(model: np.ndarray, today: int, meets_slos: bool) -> np.ndarray:
    """(M,) replicas staying holds each month: the model's (``model``: the planner's sizing of today's chips), or,
    when the team states that today's fleet meets the SLOs (``current.meets_slos``) and the model asks more in
    month 1, the model's months scaled so that month 1 is today's fleet: the load is served today, so only its
    growth adds replicas (rounded up). Never fewer than today's (a team does not hand back capacity by planning)."""
    model = np.asarray(model, dtype=float)
    first = float(model[0]) if model.size else 0.0
    if meets_slos and first > today:
        model = np.ceil(model * today / first - 1e-9)
    return np.maximum(model, today)


def stay(workload, arch, catalog, objective: str, today: date, build_part) -> Stay:
    """The "stay as is" option on today's platform (see the module docstring); ``build_part`` is the
    planner's (``planner.build_part``), passed in so this module does not import the planner."""
    from infrafit.search.assemble import _context
    from infrafit.search.compat import family_compat
    from infrafit.search.option import option_json

    cur = workload.current
    offers = current_offer(catalog, workload, today)
    family = str(offers["family"].iloc[0])
    framework = cur.framework or workload.framework
    compat = family_compat(catalog, framework, [family], tuple(workload.custom_ops),
                           bool(workload.dynamic_shapes))
    months = int(workload.horizon_months)
    flat = np.full(months, float(cur.monthly_usd))
    if not compat[family].allowed:
        return Stay(None, flat, {"what": "stay as is", "reason": compat[family].reason(framework, ())})
    task = "serve" if workload.inference is not None else "train"
    part = build_part(workload, arch, catalog, offers, compat, task, objective)
    ok = _fleet_rows(part, cur.count)
    if not ok and cur.meets_slos and task == "serve" and workload.inference.slo.risk == "p90":
        # the team says today's fleet meets the SLOs: check it at the prediction, not the band's p90
        at_p50 = workload.model_copy(update={"inference": workload.inference.model_copy(update={
            "slo": workload.inference.slo.model_copy(update={"risk": "p50"})})})
        part = build_part(at_p50, arch, catalog, offers, compat, task, objective)
        ok = _fleet_rows(part, cur.count)
    if not ok:
        lines = "; ".join(x for v in part.failures.values() for x in v) or "no configuration fits the fleet"
        told = (" (current.meets_slos says it does; the model disagrees even at its prediction: import a load test "
                "of today's fleet, `infrafit bench import`, and calibrate)") if cur.meets_slos else ""
        return Stay(None, flat, {"what": "stay as is", "reason": f"today's {cur.count} x {cur.accelerator} cannot "
                                 f"carry the workload within its SLOs{told}: {lines}"})
    costs = {i: _bill(part, i, workload, catalog) for i in ok}
    best = min(ok, key=lambda i: float(costs[i][0].sum() + costs[i][1].sum()))
    bill, labour = costs[best]
    option = option_json(part, best, _context(workload, catalog, {task: part}, compat, today))
    return Stay(_stay_option(option, part, best, bill, labour, workload), bill + labour)


def _fleet_rows(part, count: int) -> list[int]:
    """Candidates that run on today's fleet: priced, and a whole number of replicas of today's chips."""
    if part.cost is None:
        return []
    return [i for i in range(len(part)) if np.isfinite(part.cost.tco_usd[i])
            and int(part.ev.rows[i]["count"]) <= count and count % int(part.ev.rows[i]["count"]) == 0]


def _stay_option(o: dict, part, i: int, bill: np.ndarray, labour: np.ndarray, workload) -> dict:
    """The planner's option on today's platform, re-priced at today's bill and today's mode."""
    from infrafit.search.option import efficiency

    cur = workload.current
    months = len(bill)
    tco = float(bill.sum() + labour.sum())
    breakdown = {k: 0.0 for k in BREAKDOWN_KEYS} | {"compute_usd": float(bill.sum()),
                                                    "ops_labour_usd": float(labour.sum())}
    per_unit = {k: (v * tco / o["cost"]["tco_usd"] if v is not None and o["cost"]["tco_usd"] > 0 else None)
                for k, v in o["cost"]["per_unit"].items()}
    cost = {**o["cost"], "deployment": cur.mode, "monthly_usd": float(bill[0] + labour[0]),
            "peak_monthly_usd": float((bill + labour).max()), "tco_usd": tco, "cash_outlay_usd": tco,
            "commitment_months": float(cur.contract_months_left), "per_unit": per_unit, "breakdown": breakdown,
            "beyond": {k: 0.0 for k in BREAKDOWN_KEYS}, "capacity_events": [],
            "monthly": [{k: 0.0 for k in BREAKDOWN_KEYS} | {"compute_usd": float(bill[m]),
                                                            "ops_labour_usd": float(labour[m]), "month": m}
                        for m in range(months)]}
    grown = float(bill.max()) > float(cur.monthly_usd) * (1 + 1e-9)
    why = [f"stay as is: today's {cur.count} x {o['accelerator']} ({cur.mode}"
           f"{', ' + cur.provider if cur.provider else ''}) at {fmt_usd(float(cur.monthly_usd))}/month (current."
           f"monthly_usd, all in) + ops labour {fmt_usd(float(labour[0]))}/month; TCO {fmt_usd(tco)} over {months} "
           "months" + (f"; the load outgrows it, so replicas are added at today's price (peak "
                       f"{fmt_usd(float(bill.max()))}/month)" if grown else "; carries the load within the SLOs")]
    why += [w for w in o["why"] if not w.startswith("cost drivers")]
    risks = [r for r in o["risks"] if not r.startswith(("commitment", "price ", "single vendor"))]
    if cur.meets_slos:
        why += [x for x in [_sized_from_today(part, i, workload, bill)] if x]
    else:
        risks += [x for x in [_undersized_today(part, i, workload)] if x]
    metric = float(part.ev.metric[i])
    out = {**o, "deployment": cur.mode, "provider": cur.provider or "current platform", "cost": cost,
           "front_point": {"tco_usd": tco, "metric_value": metric},
           "why": why, "risks": risks, "switch": {"kind": "stay", "monthly_usd": [float(x) for x in bill + labour]}}
    out["efficiency"] = efficiency(part, workload, cost)
    return out


def _month_one(part, i: int, workload) -> tuple[int, int, int]:
    """(chips per replica, replicas today, replicas the model asks in month 1) of stay candidate ``i``."""
    chips = int(part.ev.rows[i]["count"])
    return chips, max(workload.current.count // chips, 1), int(np.ceil(float(part.cost.demand.fixed_replicas[0, i])))


def _sized_from_today(part, i: int, workload, bill: np.ndarray) -> str | None:
    """Why line of a stay option sized from today's fleet (``current.meets_slos``) where the model asks more."""
    cur = workload.current
    chips, today, first = _month_one(part, i, workload)
    if first <= today:
        return None
    peak = int(round(float(bill.max()) / float(cur.monthly_usd) * today))
    return (f"sized from today's fleet (current.meets_slos): month 1 runs today's {today} replica(s) of {chips}, where "
            f"the model asks {first}; later months add replicas only as the load grows (peak {peak})")


def _undersized_today(part, i: int, workload) -> str | None:
    """A risk line when the model says today's fleet is already too small for today's load (more replicas in
    month 1 than the ``current`` fleet holds): the team serves that load today, so either it misses the SLOs
    now or the model is pessimistic for this platform (often a chip outside the fit, whose band is wide at
    ``risk: p90``). None when today's fleet carries month 1."""
    cur = workload.current
    chips, today, first = _month_one(part, i, workload)
    if first <= today:
        return None
    rate = float(part.ev.capacity[i])
    risk = workload.inference.slo.risk if workload.inference is not None else "p50"
    where = "the p90 of its uncertainty band" if risk == "p90" else "the prediction"
    return (f"model vs today: the model gives today's {cur.count} x {cur.accelerator} {rate:,.3g} requests/s per "
            f"replica of {chips} within the SLOs (checked at {where}), so month 1 needs {first} replicas where you run "
            f"{today}. If today's fleet meets the SLOs, the model is pessimistic here and staying costs less than "
            "shown: measure it (a load test, `infrafit bench import`) or compare at `--risk p50`")


def _monthly_total(option: dict) -> np.ndarray:
    return np.array([sum(float(m.get(k, 0.0)) for k in BREAKDOWN_KEYS) for m in option["cost"]["monthly"]])


def payback_month(switch_monthly: np.ndarray, stay_monthly: np.ndarray) -> int | None:
    """The first month (1-based) from which switching has cost no more than staying, cumulatively, to the
    horizon's end; None when it never does within the horizon."""
    ahead = np.cumsum(stay_monthly) - np.cumsum(switch_monthly) >= -1e-6
    if not ahead[-1]:
        return None
    behind = np.flatnonzero(~ahead)
    return 1 if behind.size == 0 else int(behind[-1]) + 2


def switch_plan(option: dict, stay_: Stay, workload, catalog) -> tuple[dict, str, str | None]:
    """(switch dict, why line, risk line or None) of moving from today's platform to ``option``."""
    cur = workload.current
    months = int(workload.horizon_months)
    rate = float(workload.ops.engineer_usd_per_hour)
    migration = float(option["cost"]["breakdown"].get("migration_usd", 0.0))
    p = CostParams()
    weeks = migration / (p.hours_per_engineer_week * rate) if rate > 0 else 0.0
    dual_months = min(weeks / WEEKS_PER_MONTH + p.dual_run_validation_months, float(months))
    month = np.arange(months, dtype=float)
    today = float(cur.monthly_usd)
    dual = today * np.clip(dual_months - month, 0.0, 1.0)
    # months still committed on today's platform are paid anyway; the dual-running ones are counted once
    committed = np.maximum(today * np.clip(float(cur.contract_months_left) - month, 0.0, 1.0) - dual, 0.0)
    tco = float(option["cost"]["tco_usd"])
    own = _monthly_total(option) if option["cost"].get("monthly") else np.full(months, tco / months)
    switching = own + dual + committed
    beyond = tco - float(own.sum())
    saving = float(stay_.monthly_usd.sum()) - float(switching.sum()) - beyond
    back = payback_month(switching, stay_.monthly_usd) if saving >= 0 else None
    out = {"kind": "switch", "migration_usd": migration, "migration_engineer_weeks": weeks,
           "dual_running_months": dual_months, "dual_running_usd": float(dual.sum()),
           "stranded_contract_usd": float(committed.sum()), "payback_month": back, "saving_usd": saving,
           "against": "stay" if stay_.option is not None else "today's bill"}
    head = (f"switch from today's {cur.count} x {cur.accelerator}: migration {fmt_usd(migration)}, "
            f"{dual_months:.1f} month(s) of dual running {fmt_usd(float(dual.sum()))} (the old platform kept as the "
            "rollback path)")
    if cur.contract_months_left:
        head += f", still committed there {fmt_usd(float(committed.sum()))}"
    tail = (f"; pays back in month {back}, saves {fmt_usd(saving)} over {months} months" if back is not None else
            f"; does not pay back within {months} months ({fmt_usd(-saving)} more than staying)")
    return out, head + tail, _check_risk(option, catalog, workload)


def _check_risk(option: dict, catalog, workload) -> str | None:
    """The migration checks to run before moving to another family."""
    cur = workload.current
    if cur.framework and cur.framework != workload.framework:
        return (f"today's code is {cur.framework} and the options run {workload.framework}: that rewrite is not "
                "priced (frameworks.csv prices porting one framework between families); add it to your estimate")
    new = catalog.accelerator(option["accelerator"])
    old = catalog.accelerator(cur.accelerator)
    if new.family == old.family and option["precision"] in ("bf16", "fp16", "fp32"):
        return None
    runtime = CHECK_RUNTIME.get(new.vendor, "onnxruntime-cpu") if new.kind != "cpu" else "onnxruntime-cpu"
    return (f"before switching from {old.family} to {new.family} ({option['precision']}): run `infrafit check-model "
            f"{workload.model.preset or 'MODEL'} --targets {runtime}` for precision and "
            "operator coverage, then a small benchmark on the new hardware (`infrafit bench`)")


def add_current(out: dict, workload, arch, catalog, objective: str, today: date, build_part) -> dict:
    """The plan dict with "stay as is" among its options (by TCO under the cost objective, else last) and a
    switch plan on every other option. Stay is always shown: it is the yardstick, whatever it costs."""
    s = stay(workload, arch, catalog, objective, today, build_part)
    for o in out["options"]:
        switch, why, risk = switch_plan(o, s, workload, catalog)
        o["switch"] = switch
        o["why"].append(why)
        if risk:
            o["risks"].append(risk)
    options = list(out["options"])
    if s.option is not None:
        at = len(options)
        if objective == "cost":
            at = next((k for k, o in enumerate(options) if o["cost"]["tco_usd"] > s.option["cost"]["tco_usd"]), at)
        options.insert(at, s.option)
    else:
        out["excluded"] = [s.excluded, *out["excluded"]]
    for rank, o in enumerate(options, start=1):
        o["rank"] = rank
    out["options"] = options
    return out
