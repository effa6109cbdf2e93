"""One option of a plan: its configuration on its offer, its performance block (``perf.estimate`` at
the planned operating point on the offer's host), its cost, why it ranks where it does, and its risks."""

from __future__ import annotations

import numpy as np
import pandas as pd

from infrafit.cost.factors import norm_name
from infrafit.cost.params import ELASTIC_MODES, PER_START_MODES, CostParams
from infrafit.perf import MAX_RATE
from infrafit.search import borders, network
from infrafit.search import explain as ex
from infrafit.search import operating as op
from infrafit.search.familiar import adoption_risk, adoption_weeks, resolve_familiar
from infrafit.search.offers import OWNED_PROVIDER
from infrafit.search.parts import FABRIC_NAMES, declared_fabric
from infrafit.units import BITS_PER_BYTE, GBIT, M_PER_KM, SECONDS_PER_HOUR, fmt_duration, fmt_usd


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


def host_spec(catalog, row):
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
    host = host_spec(catalog, part.offers.iloc[i])
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


def _host_fed_line(perf: dict) -> str | None:
    """Where the offer's host CPU, not its accelerators, sets the rate (``perf.host_fed_factor``): by how much,
    and the two ways out."""
    factor = float((perf.get("breakdown") or {}).get("host_fed_factor") or 1.0)
    if factor <= 1.0:
        return None
    note = next((n for n in perf.get("notes", []) if n.startswith("host CPU:")), "host CPU binds")
    return (f"{note}; priced at that rate. Decoding on the accelerators (NVIDIA DALI, nvJPEG) or an instance "
            "with more vCPUs per accelerator removes it")


def _lock_in(catalog, stack: str, family: str) -> str | None:
    stacks = catalog.stacks.set_index("id")
    if stack not in stacks.index:
        return None
    fams = str(stacks.loc[stack, "families"]).split(";")
    vendors = {a.vendor for a in catalog.accelerators.values() if a.family in fams}
    if len(vendors) == 1:
        return f"lock-in: the {stack} stack runs only on {next(iter(vendors))} hardware"
    return None


#: Formats whose accuracy depends on the model and the recipe: check before serving them.
_QUANTISED = ("fp8", "int8", "fp4", "int4")


def _replicas_line(peak: float, capacity: float, mode: str) -> str:
    """How many replicas serve the peak, and how they are paid: elastic modes scale with the hourly
    traffic and pay replica-hours (``cost.capacity_plan``); fixed ones hold the peak all month."""
    if mode in ELASTIC_MODES:
        return (f"up to {peak:.0f} replica(s) of {capacity:,.3g} requests/s at the peak; scaled with the hourly "
                "traffic and paid per replica-hour (elastic modes)")
    return f"{peak:.0f} replica(s) of {capacity:,.3g} requests/s held at the peak month (fixed modes)"


def _quality_risk(workload, cfg: dict, native: str = "", task: str = "serve") -> str | None:
    """A 4- or 8-bit option chosen under ``precision: auto`` carries a quality risk: infrafit priced it,
    it did not measure its accuracy. The line names the check that does. Serving a quantized checkpoint at
    its own format (``native``: gpt-oss-120b at fp4) is the publisher's model, not a risk of the plan."""
    prec = str(cfg.get("precision"))
    if workload.precision != "auto" or prec not in _QUANTISED or (native and prec == native):
        return None
    if task == "train":  # a training format's risk is convergence, which no inference check measures
        return (f"quality: {prec} training GEMMs were chosen under precision: auto; how this model converges at "
                f"{prec} is not measured here. Compare the loss of the run's first steps with a bf16 run's "
                "before committing the whole run")
    ref = workload.model
    model = ref.preset or ref.config or "CONFIG.json (the spec's model.architecture written as a config.json)"
    return (f"quality: {prec} was chosen under precision: auto; its accuracy on this model is not measured here. "
            f"Check it before serving: `infrafit check-model {model} --precisions fp32,{prec}` (the format "
            "simulated on the model's own shapes) and an eval on your data")


def _availability_line(workload) -> str | None:
    """What the spec's ``availability`` section added to the replica count (None when not given)."""
    a = workload.availability
    if not a.model_fields_set:
        return None
    share = "the whole need" if a.zones == 2 else f"need / {a.zones - 1}, rounded up"
    zones = (f"spread over {a.zones} zones so that losing one still carries the peak (each zone holds {share})"
             if a.zones > 1 else "")
    floor = f"at least {a.min_replicas} replica(s) while active" if a.min_replicas > 1 else ""
    return "availability: " + "; ".join(x for x in (floor, zones) if x) if floor or zones else None


def _server_p99(perf: dict) -> dict[str, float | None]:
    """The p99s the network adds to, as the server delivers them (from the option's estimate)."""
    lat = perf.get("latency") or {}
    out: dict[str, float | None] = {}
    for key, name in (("ttft_s", "ttft_p99_s"), ("e2e_s", "e2e_p99_s")):
        pct = lat.get(key) or {}
        out[name] = pct.get("p99") if isinstance(pct, dict) else None
    return out


def _network_line(places: dict | None, added: float | None) -> str | None:
    """'network: ...' for the why: the SLO check's added time and the farthest place's round trip."""
    if not places:
        return None
    located = {p: d for p, d in places.items() if d.get("rtt_s") is not None}
    if not located:
        return None
    far, d = max(located.items(), key=lambda kv: kv[1]["rtt_s"])
    kind = "measured" if str(d["source"]).startswith("measured") else "estimated"
    checked = (f"latency SLOs checked at the users: +{fmt_duration(added)} on TTFT and end-to-end"
               if added else "latency SLOs checked at the server (slo.measured_at: server)")
    return (f"network: {checked}; farthest place {far} at {fmt_duration(d['rtt_s'])} round trip ({kind}, "
            f"{d['distance_m'] / M_PER_KM:,.0f} km)")


def option_json(part, i: int, ctx: dict) -> dict:
    """One option of one part, with why and risks."""
    workload, catalog = ctx["workload"], ctx["catalog"]
    row = part.offers.iloc[i]
    cfg = part.ev.rows[i]
    cost = part.cost.to_json(i, capacity=float(part.ev.capacity[i]) if np.isfinite(part.ev.capacity[i]) else 0.0)
    cost["beyond"] = {k: float(v[i]) for k, v in part.cost.beyond.items()}
    cost["startup"] = startup_json(part, i)
    perf = estimate_shaped(part, i, workload, catalog)
    added = part.ev.terms[i].get("network_added_s")
    if part.task == "serve" and workload.placement.users_in:
        perf["network"] = network.detail(row, workload, _server_p99(perf))
    checked = None
    if part.task == "serve" and workload.inference.slo.risk == "p90":  # the figures the SLOs were checked with
        figures = (perf.get("uncertainty") or {}).get("figures") or {}
        checked = {n: float(f["p90"]) + (0.0 if n == "tpot_p99_s" else float(added or 0.0))
                   for n, f in figures.items() if n in part.ev.slo}
    why = [x for x in (ex.binding_constraint(part.ev.slo, i, checked), _network_line(perf.get("network"), added),
                       ex.roofline_line(part.ev.terms[i], perf["bottleneck"]), _host_fed_line(perf),
                       ex.cost_drivers(cost["breakdown"], cost["tco_usd"])) if x]
    if part.task == "serve" and np.isfinite(part.ev.capacity[i]):
        peak = max(cost["replicas"]) if cost["replicas"] else 1
        point = ex.SLO_LABEL.get((cfg.get("operating_point") or {}).get("metric", ""), "p99")
        why.extend(x for x in [op.why_line(cfg.get("operating_point"), point)] if x)
        slo = workload.inference.slo
        why.extend(x for x in [ex.risk_line(perf.get("uncertainty"), {
            "ttft_p99_s": slo.ttft_p99_s, "tpot_p99_s": slo.tpot_p99_s,
            "e2e_p99_s": slo.e2e_p99_s or slo.latency_p99_s, "latency_p99_s": slo.latency_p99_s or slo.e2e_p99_s},
            slo.risk, float(added or 0.0))] if x)
        run = batch_run(workload, float(part.ev.capacity[i]), peak)
        if run:
            perf["batch_run"] = run
            why.append(f"finishes a day's {run['items_per_run']:,.0f} items in {fmt_duration(run['finish_s'])} "
                       f"of the {fmt_duration(run['window_s'])} window on {run['replicas']:.0f} replica(s) of "
                       f"{run['items_per_s_per_replica']:,.3g} items/s; paid for the run, not the window "
                       "(elastic modes)")
        else:
            why.append(_replicas_line(peak, float(part.ev.capacity[i]), str(row["mode"])))
        why.extend(x for x in [_availability_line(workload)] if x)
    why.extend(x for x in [_workflow_line(workload, cost, str(row["family"]), float(part.arrays.term_months[i]),
                                          str(row["mode"]))] if x)
    platform = _managed_platform(catalog, part.offers.iloc[[i]], workload, part.task)
    why.extend(x for x in [_managed_line(workload, catalog, row, platform, cost, part.task)] if x)
    comp = ctx["compat"][row["family"]]
    risks = []
    if comp.support != "first-class":
        risks.append(f"framework support: {comp.support}, not first-class: "
                     f"{comp.reason(workload.framework, tuple(workload.custom_ops))}"
                     f" (migration {fmt_usd(cost['breakdown'].get('migration_usd', 0.0))} priced)")
    familiar = resolve_familiar(workload.ops.familiar_stacks, catalog.stacks)
    adopt = float(adoption_weeks([cfg.get("stack", "default")], familiar, str(workload.framework), catalog.stacks)[0])
    adopt_usd = adopt * CostParams().hours_per_engineer_week * float(workload.ops.engineer_usd_per_hour)
    risks += [x for x in [adoption_risk(str(cfg.get("stack")), familiar, adopt, adopt_usd)] if x]
    risks += ex.price_risks(row.to_dict(), ctx["today"])
    term = float(part.arrays.term_months[i])
    spot_rate, rate_source = _spot_rate(catalog, row, float(part.arrays.interruptions_per_hour[i]),
                                        float(ctx["interruptions_per_hour"]))
    risks += ex.mode_risks(str(row["mode"]), cost, term, int(workload.horizon_months), spot_rate,
                           part.task == "serve" and workload.inference.mode in ("realtime", "mixed", "edge"),
                           instances=float(row["instances_per_replica"]), rate_source=rate_source,
                           block_end_margin_h=float(part.arrays.billing_end_margin_h[i]),
                           lead_months=float(part.arrays.lead_months[i]),
                           preempted_units=float(part.arrays.instances[i]))
    zones = int(workload.availability.zones)
    if zones > 1:  # the catalog lists no zones per region (docs/workload-spec.md, availability)
        risks.append(f"zones: the spread over {zones} zones is priced but not checked: the catalog does not list "
                     f"{row['provider']}'s zones in {row['region'] or 'this location'}; confirm {zones} zones (or "
                     "sites) there, a marketplace listing or a single neocloud site may have one")
    server = _server(catalog, row)
    if int(row["instances_per_replica"]) > 1 and server.get("network_bytes_per_s") is None:
        acc = catalog.accelerator(str(row["accelerator_id"]))
        rate = f"{acc.scaleout_bytes_per_s * BITS_PER_BYTE / GBIT:,.0f} Gb/s per accelerator" \
            if acc.scaleout_bytes_per_s == acc.scaleout_bytes_per_s else "the chip's typical rate"
        risks.append(f"network not stated: one replica spans {int(row['instances_per_replica'])} instances of "
                     f"{row['host_id']} and its traffic between them is modelled at {rate} (a datacenter "
                     "fabric); check the provider's instance network before relying on it")
    fabric = _fabric_of(catalog, str(row["host_id"]))
    if int(row["instances_per_replica"]) > 1 and fabric:
        if str(row["mode"]) == "on_prem":
            risks.append(f"fabric: one replica spans {int(row['instances_per_replica'])} bought servers "
                         f"({row['host_id']}) over their {fabric}; the switches and cables between them are "
                         "not priced: add them to the purchase")
        else:
            risks.append(f"fabric: one replica spans {int(row['instances_per_replica'])} instances of "
                         f"{row['host_id']} over its {fabric}; the instances must share it (one cluster placement "
                         "group or cluster network), or the cross-instance traffic falls back to the ordinary "
                         "network")
    if str(row["provider"]) == OWNED_PROVIDER:  # the team's own servers: no purchase, no lead time
        risks = [r for r in risks if not r.startswith("on-prem: capital outlay")]
        risks.append("owned: the plan assumes these servers are free for this workload; power, colocation and "
                     "operations are priced, no maintenance contract (add one as a catalog overlay if you pay it)")
    if part.task == "serve":
        risks += borders.risks(ctx.get("borders", []), str(row["country"] or ""), str(row["provider"]))
    providers = ctx["providers_by_acc"].get(row["accelerator_id"], set())
    if len(providers) == 1:
        risks.append(f"single vendor: only {row['provider']} offers {row['accelerator_id']} within your constraints")
    lock = _lock_in(catalog, cfg["stack"], row["family"])
    if lock:
        risks.append(lock)
    quality = _quality_risk(workload, cfg, ctx.get("checkpoint_precision", "") if part.task == "serve" else "",
                            part.task)
    if quality:
        risks.append(quality)
    user = bool(row.get("user_row", False))
    if user:
        risks.insert(0, f"price from your catalog overlay ({row.get('origin_file')}:{row.get('origin_line')}), "
                        "not a sourced catalog row")
    availability = "unverified" if str(row.get("availability") or "") == "unverified" else "verified"
    if availability == "unverified":
        risks.insert(0, f"availability unverified: no source confirms {row['provider']} sells the {row['host_id']} "
                        f"SKU in {row['region']} (a price copied from another region, or a listing without a "
                        "location; see the offer's notes). Check the provider's region list before committing "
                        "(--verified-only drops such offers)")
    acc_row = catalog.accelerator(str(row["accelerator_id"]))
    if acc_row.user_row:
        risks.insert(0, f"{acc_row.id}'s figures come from your catalog overlay, not a sourced datasheet row")
    return {
        "accelerator": cfg["accelerator"], "count": int(cfg["count"]), "precision": cfg["precision"],
        "stack": cfg["stack"], "deployment": str(row["mode"]), "provider": str(row["provider"]),
        "region": str(row["region"] or ""), "country": str(row["country"] or ""), "family": row["family"],
        "offer_id": str(row["id"]), "user_row": user or acc_row.user_row, "availability": availability,
        "price_retrieved_on": str(row["retrieved_on"]),
        "server": server | {"managed_platform": platform or None}, "performance": perf, "cost": cost,
        "efficiency": efficiency(part, workload, cost),
        "why": why, "risks": risks,
    }


def _managed_platform(catalog, rows, workload, task: str) -> str:
    """The managed platform the option runs on ("" when self-managed): ``cost.adapters.managed_platforms``."""
    from infrafit.cost.adapters import managed_platforms
    from infrafit.search.parts import ops_work

    on, names, _ = managed_platforms(catalog, rows, bool(workload.deployment.managed_preferred),
                                     ops_work(workload, task))
    return str(names[0]) if bool(on[0]) else ""


def _managed_line(workload, catalog, row, platform: str, cost: dict, task: str) -> str | None:
    """What ``deployment.managed_preferred`` did to this option (None when the spec does not ask)."""
    from infrafit.cost.adapters import managed_instance_rates

    if not workload.deployment.managed_preferred:
        return None
    if platform:
        rate = float(managed_instance_rates(catalog, pd.DataFrame([row]), [platform])[0])
        fee = float(cost["breakdown"].get("platform_usd", 0.0))
        billed = (f"each instance is billed at {platform}'s own rate, {fmt_usd(rate)}/h (the VM's is "
                  f"{fmt_usd(float(row['usd_per_hour']))}/h; cost_managed_instances.csv), " if rate == rate else "")
        return (f"managed: runs on {platform}; {billed}its fee is {fmt_usd(fee)} over the horizon (platform) and "
                "operations are at the managed rate of ops_labour.csv")
    from infrafit.cost.adapters import platform_for, rated_platforms
    from infrafit.search.parts import ops_work

    seller = platform_for(catalog, str(row["provider"]), ops_work(workload, task))
    if seller and (norm_name(str(row["provider"])), seller) in rated_platforms(catalog):
        return (f"managed: {seller} sells no {row['host_id']} in {row['region'] or 'its place'} on "
                f"{row['mode']} at a rate of its own (cost_managed_instances.csv lists the on-demand hosts and "
                "regions it runs), so this offer is operated self-managed; add the platform's rate as an overlay row")
    table = catalog.cost_factors.get("managed")
    listed = "" if table is None or table.empty else "; ".join(
        f"{p}: {n} ({w})" for p, n, w in zip(table["provider"], table["platform"], table["work"], strict=True))
    return (f"managed: the catalog has no managed platform for this work on {row['provider']} {row['mode']} "
            f"{row['host_id']} in {row['region'] or 'its place'} (cost_managed.csv: {listed or 'none'}; a platform "
            "that sells its own instance rate runs only the on-demand hosts and regions of "
            "cost_managed_instances.csv), so it is operated self-managed; add your platform and its fee, or its "
            "instance rate, as an overlay row")


def startup_json(part, i: int) -> dict:
    """What starting capacity costs this option: seconds from launch to serving per instance (boot, image
    pull, weights load; 0 for held capacity) and instance starts each month (an autoscaler's scale-ups
    for realtime, the runs' replicas for batch and training), all paid on elastic capacity."""
    d, arrays = part.cost.demand, part.arrays
    startup_s = float(arrays.startup_h[i]) * SECONDS_PER_HOUR
    if d.realtime:
        starts = d.scaleups_per_month[:, i] if d.scaleups_per_month is not None else np.zeros(d.months)
    else:
        per = d.replicas_per_start[:, i] if d.replicas_per_start is not None else np.ones(d.months)
        starts = d.starts_per_month * per
    elastic = str(part.offers["mode"].iloc[i]) in PER_START_MODES
    return {"startup_s": startup_s if elastic else 0.0,
            "starts_per_month": [float(x) for x in (starts if elastic else np.zeros(d.months))]}


def _spot_rate(catalog, row, published: float, default: float) -> tuple[float, str]:
    """(interruptions per instance-hour priced for this offer, where it comes from: "" = assumed)."""
    if str(row["mode"]) != "cloud_spot" or not np.isfinite(published):
        return default, ""
    from infrafit.cost.factors import spot_hazard

    _, band = spot_hazard(catalog.cost_factors, str(row["provider"]), str(row["host_id"]), str(row["region"]))
    if band.endswith("/day"):
        return published, (f"{row['provider']}'s published preemption rate: {band.removesuffix('/day')} of VMs a "
                           "day (seven-day average)")
    return published, (f"{row['provider']} Spot Instance Advisor: {band} of capacity reclaimed a month in "
                       f"{row['region']}")


def batch_run(workload, items_per_s: float, replicas: float) -> dict | None:
    """A batch job's run: how long the day's items take on the planned replicas (``None`` for traffic
    in requests/s). A batch job is judged by finishing inside its window, not by a request latency."""
    items = getattr(workload.inference.traffic, "items", None)
    if workload.inference.mode != "batch" or items is None or not items_per_s > 0:
        return None
    n = max(float(replicas), 1.0)
    window_s = float(items.window_hours) * SECONDS_PER_HOUR
    finish_s = float(items.per_day) / (items_per_s * n)
    return {"items_per_run": float(items.per_day), "window_s": window_s, "replicas": n,
            "items_per_s_per_replica": items_per_s, "finish_s": finish_s,
            "window_used_fraction": finish_s / window_s}


def _workflow_line(workload, cost: dict, family: str, term_months: float, mode: str) -> str | None:
    """What the model changes of ``workflow:`` add to this option (porting per change, stranded commitment)."""
    from infrafit.cost.workflow import rates

    r = rates(workload.workflow)
    if r is None or r.changes_per_year <= 0:
        return None
    b = cost["breakdown"]
    port, stranded = b.get("model_change_usd", 0.0), b.get("stranded_commitment_usd", 0.0)
    head = f"workflow {workload.workflow.maturity}: {r.changes_per_year:g} model change(s) a year "
    head += (f"add {fmt_usd(port)} of porting on {family}" if port > 0 else
             f"port nothing on {family} (first-class for {workload.framework}: $0)")
    if stranded > 0:
        how = ("servers sold early at the resale haircut" if mode == "on_prem"
               else f"{term_months:g}-month term paid for retired hardware")
        head += (f"; expected stranded commitment {fmt_usd(stranded)} ({how}; "
                 f"{r.new_hardware_share:.0%} of changes need other hardware)")
    elif mode in ("cloud_on_demand", "cloud_spot"):
        head += "; elastic capacity strands nothing"
    return head


def work_done(part, workload) -> tuple[str, float]:
    """(unit, amount over the horizon) of the work an option does: output tokens for a decoder served,
    requests (images, items, utterances) for other serving, training tokens or samples for training."""
    d = part.cost.demand
    if part.task == "train":
        tr = workload.training
        runs = d.runs_per_month * int(workload.horizon_months)
        if tr.tokens:
            return "training_tokens", float(tr.tokens) * runs
        return "training_samples", float(tr.samples or tr.dataset.samples or 0.0) * float(tr.epochs or 1.0) * runs
    tokens = float(d.output_tokens_per_month.sum())
    if tokens > 0:
        return "output_tokens", tokens
    return "requests", float(d.requests_per_month.sum())


def efficiency(part, workload, cost: dict) -> dict:
    """Work per dollar and per kWh, energy and (where the grid's intensity is sourced) emissions."""
    unit, work = work_done(part, workload)
    energy = cost["energy"]
    kwh = (energy["energy_kwh_per_month"] or 0.0) * int(workload.horizon_months)
    return {"work_unit": unit, "work_per_usd": work / cost["tco_usd"] if cost["tco_usd"] > 0 else None,
            "work_per_kwh": work / kwh if kwh > 0 else None, **energy}


def _fabric_of(catalog, host_id: str) -> str:
    """``"EFA fabric (3,200 Gbit/s)"`` for a host that declares one (``hosts.scaleout_fabric``), else ''."""
    fabric = declared_fabric(catalog.hosts, host_id)
    if not fabric:
        return ""
    bits = float(catalog.hosts.loc[catalog.hosts["id"] == host_id, "network_bits_per_s"].iloc[0])
    return f"{FABRIC_NAMES[fabric]} fabric ({bits / GBIT:,.0f} Gbit/s)"
