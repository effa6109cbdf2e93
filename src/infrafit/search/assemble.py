"""Assemble the plan dict: ranked options with why and risks, exclusions, chart data.

The shape is DESIGN.md section 4 (``plan --json``) plus the chart keys the report uses
(``front``, ``front_metric``, ``tco_by_mode``, ``breakeven``, ``evaluated``, ``compared``).
"""

from __future__ import annotations

from datetime import date

import numpy as np

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


def performance_json(part, i: int, workload, catalog) -> dict:
    """The ``estimate --json`` shape of candidate ``i`` from the evaluation's numbers."""
    r, ev, terms = part.ev.rows[i], part.ev, part.ev.terms[i]
    lat = {"ttft_s": None, "tpot_s": None, "e2e_s": None}
    for name, key in (("ttft_p99_s", "ttft_s"), ("tpot_p99_s", "tpot_s"), ("latency_p99_s", "e2e_s"),
                      ("e2e_p99_s", "e2e_s")):
        if name in ev.slo:
            lat[key] = {"p50": _p50(ev, key, i), "p99": float(ev.slo[name][0][i])}
    if part.task == "serve" and lat["ttft_s"] is None and lat["e2e_s"] is None and np.isfinite(ev.metric[i]):
        lat["e2e_s"] = {"p50": _p50(ev, "e2e_s", i), "p99": float(ev.metric[i])}
    shares = {k: v for k, v in terms.items() if k.endswith("_share")}
    step = {k: v for k, v in terms.items() if k.endswith("_s") and k != "throughput_output_tokens_per_s"}
    if step:
        total = sum(step.values()) or 1.0
        shares = {k.removesuffix("_s"): v / total for k, v in step.items()}
    bottleneck = max(shares, key=shares.get) if shares else None
    throughput = {}
    if part.task == "serve":
        throughput["requests_per_s"] = float(ev.capacity[i])
        if "throughput_output_tokens_per_s" in terms:
            throughput["output_tokens_per_s"] = terms["throughput_output_tokens_per_s"]
        else:
            throughput["samples_per_s"] = float(ev.capacity[i])
    else:
        throughput["mfu_fraction"] = terms.get("mfu_fraction")
    return {
        "accelerator": r["accelerator"], "count": r["count"], "precision": r["precision"], "stack": r["stack"],
        "parallelism": {k: r.get(k, 1) for k in ("tp", "pp", "dp", "ep")}, "fits": bool(ev.fits[i]),
        "memory": {"per_accelerator_bytes": float(ev.memory_bytes[i]),
                   "capacity_bytes": float(ev.memory_capacity_bytes[i]), "weights_bytes": None,
                   "kv_cache_bytes": None, "activations_bytes": None, "optimizer_bytes": None},
        "throughput": throughput, "latency": lat,
        "time_to_train_s": float(ev.time_to_train_s[i]) if np.isfinite(ev.time_to_train_s[i]) else None,
        "server": None, "bottleneck": bottleneck,
        "breakdown": {**terms, "time_shares": shares}, "notes": list(r.get("notes", [])),
        "operating_point": r.get("operating_point"),
    }


def _p50(ev, key: str, i: int) -> float | None:
    v = ev.p50.get(key)
    return float(v[i]) if v is not None and np.isfinite(v[i]) else None


def _host_spec(catalog, row):
    """The offer's host as ``perf.server.HostSpec`` (all instances of one replica; cloud vCPUs count
    as cores, the host table's unit), or None for an unknown host."""
    from infrafit.perf.host.server import HostSpec

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


def serving_server(workload, catalog, row, rate: float, count: int, weights_bytes: float) -> dict | None:
    """``perf.server.size_server`` for an LLM replica serving ``rate`` requests/s on the offer's host:
    tokenising every prompt and response on the host CPU (``text_tokenize``), the model weights in
    RAM for loading, the responses over the network."""
    from dataclasses import asdict

    from infrafit.perf.host.server import HostDemand, size_server

    traffic = workload.inference.traffic
    tokens = float(traffic.input_tokens.mean if traffic.input_tokens else 0.0) + \
        float(traffic.output_tokens.mean if traffic.output_tokens else 0.0)
    demand = HostDemand(task="inference", items_per_s=rate, item_kind="none", tokens_per_item=tokens,
                        model_weight_bytes=weights_bytes, accelerators=count)
    acc = catalog.accelerator(row["accelerator_id"])
    return asdict(size_server(demand, None, acc, count, host=_host_spec(catalog, row)))


def estimate_shaped(part, i: int, workload, catalog) -> dict:
    """The option's performance block, describing the option AS PLANNED: ``throughput``, ``latency``
    (p50 and p99) and ``time_to_train_s`` at the operating point the plan sizes and prices
    (``operating_point``); memory breakdown, server sizing, bottleneck and time shares from
    ``perf.estimate.estimate`` for the configuration, whose own throughput and latency (at the load
    it picks by itself) are kept under ``estimate_at_max_rate``. ``at_capacity`` repeats the planned
    figures (an older key, kept). The planner's own block when the estimate fails."""
    from infrafit.perf.estimate import estimate
    from infrafit.perf.types import Config

    own = performance_json(part, i, workload, catalog)
    r = part.ev.rows[i]
    stack = r.get("stack") if r.get("stack") not in (None, "default") else None
    cfg = Config(r["accelerator"], int(r["count"]), r["precision"], stack, tp=int(r.get("tp", 1)),
                 pp=int(r.get("pp", 1)), dp=int(r["dp"]) if r.get("dp") else None, ep=int(r.get("ep", 1)),
                 cp=int(r.get("cp", 1)))
    # The serving part of a train-here-serve-there workload is estimated as inference.
    view = workload.model_copy(update={"task": "inference"}) if part.task == "serve" else workload
    try:
        out = estimate(view, cfg, catalog).to_json()
    except Exception as exc:  # noqa: BLE001 - keep the planner's block, say why
        own["notes"] = [*own["notes"], f"detailed estimate unavailable: {str(exc).split('. To fix')[0]}"]
        return own
    out["estimate_at_max_rate"] = {"throughput": out.get("throughput"), "latency": out.get("latency"),
                                   "time_to_train_s": out.get("time_to_train_s")}
    # Training has one operating point: the estimate's throughput keys stay, the planner's figures win.
    out["throughput"] = own["throughput"] if part.task == "serve" else {**(out.get("throughput") or {}),
                                                                       **own["throughput"]}
    out["latency"] = own["latency"] if part.task == "serve" else out.get("latency")
    out["operating_point"] = own["operating_point"]
    out["at_capacity"] = {"throughput": out["throughput"], "latency": out["latency"],
                          "time_to_train_s": own["time_to_train_s"], "memory_per_accelerator_bytes":
                          own["memory"]["per_accelerator_bytes"]}
    row = part.offers.iloc[i]
    if out.get("server") is None and part.task == "serve" and workload.model_arch().kind == "decoder":
        try:
            out["server"] = serving_server(workload, catalog, row, float(part.ev.capacity[i]), int(r["count"]),
                                           float(out["memory"].get("weights_bytes") or 0.0) * int(r["count"]))
        except Exception as exc:  # noqa: BLE001 - the option stands without host sizing; say why
            out["notes"] = [*out.get("notes", []), f"host sizing unavailable: {str(exc).split('. To fix')[0]}"]
    out.setdefault("breakdown", {})
    if not out["breakdown"].get("time_shares"):
        out["breakdown"]["time_shares"] = own["breakdown"]["time_shares"]
    if own["time_to_train_s"] is not None:  # the headline figure is the one the plan ranked on
        out["time_to_train_s"] = own["time_to_train_s"]
    out["notes"] = list(dict.fromkeys([*out.get("notes", []), *own["notes"]]))
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
