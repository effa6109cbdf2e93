"""Assemble the plan dict: ranked options with why and risks, exclusions, chart data.

The shape is DESIGN.md section 4 (``plan --json``) plus the chart keys the report uses
(``front``, ``front_metric``, ``tco_by_mode``, ``breakeven``, ``evaluated``, ``compared``).
"""

from __future__ import annotations

from datetime import date

import numpy as np

from infrafit.perf import MAX_RATE
from infrafit.search import explain as ex
from infrafit.search import operating as op
from infrafit.search.pareto import diverse_top, pareto_mask
from infrafit.units import fmt_usd

FRONT_POINTS_MAX = 400


def _metric_name(workload, arch) -> str:
    if workload.inference is None:
        return "time_to_train_s"
    return "ttft_p99_s" if arch.kind == "decoder" else "latency_p99_s"


def _server(catalog, row) -> dict:
    hosts = catalog.hosts.set_index("id")
    k = int(row["instances_per_replica"])
    out = {"host_id": row["host_id"], "instances_per_replica": k}
    if row["host_id"] in hosts.index:
        h = hosts.loc[row["host_id"]]
        out |= {"cpu_cores": float(h["vcpu_count"]) * k if h["vcpu_count"] == h["vcpu_count"] else None,
                "ram_bytes": float(h["ram_bytes"]) * k if h["ram_bytes"] == h["ram_bytes"] else None,
                "nvme_bytes": float(h["nvme_bytes"]) * k if h["nvme_bytes"] == h["nvme_bytes"] else None,
                "network_bytes_per_s": float(h["network_bits_per_s"]) / 8 * k
                if h["network_bits_per_s"] == h["network_bits_per_s"] else None}
    return out


def _host_spec(catalog, row):
    """The offer's host as a ``perf.HostSpec`` (all instances of one replica; cloud vCPUs count as
    cores, the host table's unit), or None for an unknown host."""
    from infrafit.perf import HostSpec

    hosts = catalog.hosts.set_index("id")
    if row["host_id"] not in hosts.index:
        return None
    h, k = hosts.loc[row["host_id"]], float(row["instances_per_replica"])

    def val(col: str, scale: float = 1.0) -> float | None:
        v = h[col]
        return float(v) * scale * k if v == v and v != "" else None

    return HostSpec(cpu_cores=val("vcpu_count"), ram_bytes=val("ram_bytes"), nvme_bytes=val("nvme_bytes"),
                    nvme_read_bytes_per_s=val("nvme_read_bytes_per_s"),
                    network_bytes_per_s=val("network_bits_per_s", 1 / 8))


def option_config(r: dict):
    """The ``perf.Config`` and ``perf.OperatingPoint`` of an evaluated row: what ``infrafit estimate``
    takes (``--accelerator --count --precision --stack --tp --pp --ep --concurrency | --batch``) to
    reproduce the option's figures."""
    from infrafit.perf import Config, OperatingPoint

    stack = r.get("stack") if r.get("stack") not in (None, "default") else None
    cfg = Config(r["accelerator"], int(r["count"]), r["precision"], stack, tp=int(r.get("tp", 1)),
                 pp=int(r.get("pp", 1)), dp=int(r["dp"]) if r.get("dp") else None, ep=int(r.get("ep", 1)),
                 cp=int(r.get("cp", 1)))
    point = r.get("operating_point") or {}
    return cfg, OperatingPoint(concurrency=point.get("concurrency"), batch=point.get("batch"))


def estimate_shaped(part, i: int, workload, catalog) -> dict:
    """The option's performance block: ``perf.estimate`` of its configuration at the operating point
    the plan sized and priced, on the offer's host. The same evaluator ranked it, so these are the
    figures the ranking used (``tests/cli/test_plan_equals_estimate.py`` holds them equal)."""
    from infrafit.perf import estimate

    r = part.ev.rows[i]
    cfg, point = option_config(r)
    # The serving part of a train-here-serve-there workload is estimated as inference.
    view = workload.model_copy(update={"task": "inference"}) if part.task == "serve" else workload
    host = _host_spec(catalog, part.offers.iloc[i])
    serve = part.task == "serve"
    out = estimate(view, cfg, catalog, point=point if serve else None, host=host).to_json()
    planned = r.get("operating_point")
    if serve and planned:  # the plan's name for the point (max_rate, utilisation_50, ...), same figures
        out["operating_point"] = {**out["operating_point"], "name": planned["name"]}
    out["notes"] = list(dict.fromkeys([*out.get("notes", []), *r.get("notes", [])]))
    at_max = out
    if serve and planned and planned["name"] != MAX_RATE:
        at_max = estimate(view, cfg, catalog, host=host).to_json()
    out["estimate_at_max_rate"] = {k: at_max.get(k) for k in ("throughput", "latency", "time_to_train_s")}
    out["at_capacity"] = {"throughput": out["throughput"], "latency": out["latency"],
                          "time_to_train_s": out["time_to_train_s"],
                          "memory_per_accelerator_bytes": out["memory"]["per_accelerator_bytes"]}
    return out


def _lock_in(catalog, stack: str, family: str) -> str | None:
    stacks = catalog.stacks.set_index("id")
    if stack not in stacks.index:
        return None
    fams = str(stacks.loc[stack, "families"]).split(";")
    vendors = {a.vendor for a in catalog.accelerators.values() if a.family in fams}
    if len(vendors) == 1:
        return f"lock-in: the {stack} stack runs only on {next(iter(vendors))} hardware"
    return None


def option_json(part, i: int, ctx: dict) -> dict:
    """One option of one part, with why and risks."""
    workload, catalog = ctx["workload"], ctx["catalog"]
    row = part.offers.iloc[i]
    cfg = part.ev.rows[i]
    cost = part.cost.to_json(i, capacity=float(part.ev.capacity[i]) if np.isfinite(part.ev.capacity[i]) else 0.0)
    cost["beyond"] = {k: float(v[i]) for k, v in part.cost.beyond.items()}
    perf = estimate_shaped(part, i, workload, catalog)
    why = [x for x in (ex.binding_constraint(part.ev.slo, i), ex.roofline_line(part.ev.terms[i], perf["bottleneck"]),
                       ex.cost_drivers(cost["breakdown"], cost["tco_usd"])) if x]
    if part.task == "serve" and np.isfinite(part.ev.capacity[i]):
        peak = max(cost["replicas"]) if cost["replicas"] else 1
        point = ex.SLO_LABEL.get((cfg.get("operating_point") or {}).get("metric", ""), "p99")
        why.extend(x for x in [op.why_line(cfg.get("operating_point"), point)] if x)
        why.append(f"{peak:.0f} replica(s) of {part.ev.capacity[i]:,.3g} requests/s held at the peak month "
                   "(fixed modes)")
    comp = ctx["compat"][row["family"]]
    risks = []
    if comp.support != "first-class":
        risks.append(f"{comp.support} framework support: {comp.reason(workload.framework, tuple(workload.custom_ops))}"
                     f" (migration {fmt_usd(cost['breakdown'].get('migration_usd', 0.0))} priced)")
    risks += ex.price_risks(row.to_dict(), ctx["today"])
    term = float(part.arrays.term_months[i])
    risks += ex.mode_risks(str(row["mode"]), cost, term, int(workload.horizon_months),
                           float(ctx["interruptions_per_hour"]), part.task == "serve" and
                           workload.inference.mode in ("realtime", "mixed", "edge"))
    providers = ctx["providers_by_acc"].get(row["accelerator_id"], set())
    if len(providers) == 1:
        risks.append(f"single vendor: only {row['provider']} offers {row['accelerator_id']} within your constraints")
    lock = _lock_in(catalog, cfg["stack"], row["family"])
    if lock:
        risks.append(lock)
    return {
        "accelerator": cfg["accelerator"], "count": int(cfg["count"]), "precision": cfg["precision"],
        "stack": cfg["stack"], "deployment": str(row["mode"]), "provider": str(row["provider"]),
        "region": str(row["region"] or ""), "country": str(row["country"] or ""), "family": row["family"],
        "offer_id": str(row["id"]), "price_retrieved_on": str(row["retrieved_on"]),
        "server": _server(catalog, row), "performance": perf, "cost": cost, "why": why, "risks": risks,
    }


def _alternatives(part, idx: np.ndarray) -> dict[str, float]:
    modes = part.offers["mode"].to_numpy(dtype=object)[idx]
    tco = part.cost.tco_usd[idx]
    return {m: float(tco[modes == m].min()) for m in sorted(set(modes))}


def _ranking_line(objective: str, n: int, rank: int, tco: float, best_tco: float, metric_name: str,
                  metric: float, horizon: int) -> str:
    lead = {"cost": "cheapest", "latency": "lowest latency", "time": "fastest", "balanced": "best balance"}[objective]
    if rank == 1:
        return (f"{lead} of {n:,} feasible candidates: TCO {fmt_usd(tco)} over {horizon} months; "
                f"{ex.SLO_LABEL.get(metric_name, metric_name)} {ex.fmt_value(metric_name, metric)}")
    return (f"TCO {fmt_usd(tco)} ({(tco - best_tco) / best_tco:+.0%} vs #1); "
            f"{ex.SLO_LABEL.get(metric_name, metric_name)} {ex.fmt_value(metric_name, metric)}")


def _context(workload, catalog, parts, compat, today) -> dict:
    from infrafit.cost.params import CostParams

    providers: dict[str, set] = {}
    for part in parts.values():
        for a, p in zip(part.offers["accelerator_id"], part.offers["provider"], strict=True):
            providers.setdefault(a, set()).add(p)
    return {"workload": workload, "catalog": catalog, "compat": compat, "today": today or date.today(),
            "providers_by_acc": providers,
            "interruptions_per_hour": CostParams().spot_interruptions_per_hour_default}


def _single(part, mask, objective: str, top: int, ctx: dict, metric_name: str) -> tuple[list[dict], dict]:
    from infrafit.search.charts import breakeven_data, front_points, tco_by_mode
    from infrafit.search.planner import order_by

    idx = np.flatnonzero(mask)
    if idx.size == 0:
        return [], {}
    tco, metric = part.cost.tco_usd[idx], part.ev.metric[idx]
    order = idx[order_by(objective, tco, metric)]
    on_front = np.zeros(len(part), bool)
    on_front[idx] = pareto_mask(np.column_stack([tco, np.where(np.isfinite(metric), metric, np.inf)]))
    fam = part.offers["family"].to_numpy(dtype=object)
    mode = part.offers["mode"].to_numpy(dtype=object)
    prov = part.offers["provider"].to_numpy(dtype=object)
    acc = part.offers["accelerator_id"].to_numpy(dtype=object)
    # a different chip of the same family/mode/provider before the same chip at another count
    keys = [(fam[i], mode[i], prov[i], acc[i]) for i in range(len(part))]
    chosen = diverse_top(_distinct_offers(part, order), keys, top)
    alts = _alternatives(part, idx)
    best_tco = float(part.cost.tco_usd[chosen[0]])
    h = int(ctx["workload"].horizon_months)
    options = []
    for rank, i in enumerate(chosen, start=1):
        o = option_json(part, i, ctx)
        o["why"].insert(0, _ranking_line(objective, idx.size, rank, float(part.cost.tco_usd[i]), best_tco,
                                         metric_name, float(part.ev.metric[i]), h))
        vs = ex.versus_line(float(part.cost.tco_usd[i]), str(mode[i]), alts)
        if vs:
            o["why"].append(vs)
        if on_front[i]:
            o["why"].append("on the Pareto front of TCO vs " + ex.SLO_LABEL.get(metric_name, metric_name))
        o["rank"] = rank
        o["front_point"] = {"tco_usd": float(part.cost.tco_usd[i]), "metric_value": float(part.ev.metric[i])}
        options.append(o)
    charts = {"front": front_points(part, idx, on_front, FRONT_POINTS_MAX),
              "tco_by_mode": tco_by_mode(part, idx, chosen[0]),
              "breakeven": breakeven_data(part, idx, chosen[0], ctx["workload"])}
    compared = _compared(part, idx, chosen, fam, best_tco)
    return options, charts | {"compared": compared}


def _distinct_offers(part, order: np.ndarray) -> list[int]:
    """``order`` without the later candidates that rent the same offer with the same chip count (they
    differ only in precision or stack: near-copies, not alternatives)."""
    ids = part.offers["id"].to_numpy(dtype=object)
    seen: set[tuple[str, int]] = set()
    out = []
    for i in order:
        key = (ids[i], int(part.ev.rows[i]["count"]))
        if key not in seen:
            seen.add(key)
            out.append(int(i))
    return out


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


def build(workload, catalog, arch, parts, masks, compat, excluded, failures, objective, top, *, today=None) -> dict:
    """The plan dict. ``options`` is empty when nothing is feasible (the command exits 3)."""
    ctx = _context(workload, catalog, parts, compat, today)
    metric_name = _metric_name(workload, arch)
    if len(parts) == 2:
        from infrafit.search.combine import combined

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
        "front_metric": metric_name, "evaluated": int(sum(p.evaluated for p in parts.values())), **charts,
    }
