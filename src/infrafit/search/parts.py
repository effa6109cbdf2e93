"""One part of a plan (training, or serving): configurations x offers, hard constraints, prices.

``evaluate_part`` turns the kept offer rows into candidate configurations (accelerator x count,
counts being the offer's instance size times 1, 2, 4, ... instances per replica), evaluates them
(``perf.evaluate``), joins each feasible configuration with every offer of its instance shape,
and prices all pairs at once with ``cost.tco.price_options``. What failed, per family, is kept with
its numbers for the exclusion lines.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import numpy as np
import pandas as pd

from infrafit import units
from infrafit.perf import Evaluated

#: Instances per replica tried for inference (a replica spans at most 4 instances) and training.
INFERENCE_INSTANCE_MULTIPLES = (1, 2, 4)
TRAINING_INSTANCE_MULTIPLES = (1, 2, 4, 8, 16, 32, 64, 128)
MAX_TRAINING_CHIPS = 4096


@dataclass
class Part:
    """Priced candidates of one part: ``offers`` (rows joined with their configuration), the
    evaluation ``ev`` aligned with the rows, the ``cost`` result, and failure notes by family."""

    task: str  # "serve" or "train"
    offers: pd.DataFrame
    ev: Evaluated
    arrays: Any  # cost.offers.OfferArrays
    cost: Any  # cost.tco.CostResult
    failures: dict[str, list[str]] = field(default_factory=dict)
    evaluated: int = 0
    blocked: np.ndarray | None = None  # candidates a hard rule rules out after pricing (spot past a deadline)

    def __len__(self) -> int:
        return len(self.offers)


def _pairs(offers: pd.DataFrame, catalog, multiples) -> list[tuple[Any, int, int]]:
    shapes = offers[["accelerator_id", "accelerator_count"]].drop_duplicates()
    out = set()
    for acc_id, count in shapes.itertuples(index=False):
        for k in multiples:
            if count * k <= MAX_TRAINING_CHIPS:
                out.add((acc_id, int(count), int(k)))
    return [(catalog.accelerators[a], c, k) for a, c, k in sorted(out)]


def _stacks_for(catalog, task: str, portable: bool = False):
    """The serving stacks to try on an accelerator: its default first, then up to two more of
    stacks.csv. With ``portable`` (``deployment.portability_required``) only stacks that run on more
    than one vendor's hardware (vLLM, not TensorRT-LLM)."""
    vendor_of = {a.family: a.vendor for a in catalog.accelerators.values()}
    rows = []
    for r in catalog.stacks.itertuples():
        if "inference" not in str(r.tasks):
            continue
        fams = str(r.families).split(";")
        if portable and len({vendor_of.get(f) for f in fams if f in vendor_of}) < 2:
            continue
        rows.append((r.id, fams))

    def pick(acc) -> list[str]:
        from infrafit.perf import default_stack

        found = [sid for sid, fams in rows if acc.family in fams]
        first = default_stack(acc)
        if portable:
            return found[:3]
        return [first] + [s for s in found if s != first][:2] if found else [first]

    return pick


def evaluate_configs(workload, arch, catalog, offers: pd.DataFrame, task: str,
                     multiples, targets: tuple[float, ...] = ()) -> tuple[Evaluated, dict[str, str]]:
    """Evaluate every distinct (accelerator, chips per replica) the offers can build (``perf.evaluate``);
    serving also at the lighter operating points ``targets`` (``search.operating``)."""
    from infrafit.perf import evaluate

    built = _pairs(offers, catalog, multiples)
    chips = sorted({(acc.id, c * k) for acc, c, k in built})
    pairs = [(catalog.accelerators[a], n) for a, n in chips]
    # The smallest TP span that builds each chip count bounds its TP group (join_offers keeps only
    # offers whose instance, or fabric across instances, holds the group).
    spans = spanning_hosts(catalog)
    per_instance: dict[tuple[str, int], int] = {}
    for acc, c, k in built:
        key = (acc.id, c * k)
        reach = tp_reach(acc, c, acc.id in spans)
        per_instance[key] = min(per_instance.get(key, reach), reach)
    stacks = _stacks_for(catalog, task, workload.deployment.portability_required)
    return evaluate(workload, task, pairs, stacks_for=stacks, targets=targets,
                    instance_chips=per_instance if task == "train" else None,
                    host_items_per_s=_host_feeds(workload, arch, catalog, offers, built) if task == "train" else None)


def _host_feeds(workload, arch, catalog, offers: pd.DataFrame, built) -> dict[tuple[str, int], float]:
    """Per (accelerator, chips) the offers build, the most samples/s the roomiest host among them feeds
    (``perf.host_fed_factor``'s rate: vCPUs x instances, less the runtime's, over the host work per sample); 0
    for a count that spans instances of hosts with no declared fabric, which no training run joins
    (``join_offers``), so the count search does not stop on it."""
    from infrafit.perf import core_s_per_item, host_item_rate

    per_item = core_s_per_item(workload, arch)
    hosts = catalog.hosts
    vcpus = pd.to_numeric(hosts.set_index("id")["vcpu_count"], errors="coerce")
    # per (chip, chips per instance): the roomiest host alone, and the roomiest whose instances a run may span
    alone: dict[tuple[str, int], float] = {}
    spanned: dict[tuple[str, int], float] = {}
    for acc_id, count, host in offers[["accelerator_id", "accelerator_count", "host_id"]].itertuples(index=False):
        v = float(vcpus.get(host, np.nan))
        v = v if np.isfinite(v) else np.inf
        key = (str(acc_id), int(count))
        alone[key] = max(alone.get(key, -1.0), v)
        if declared_fabric(hosts, host):
            spanned[key] = max(spanned.get(key, -1.0), v)
    out: dict[tuple[str, int], float] = {}
    for acc, c, k in built:
        per = alone.get((acc.id, c), 0.0) if k == 1 else spanned.get((acc.id, c), 0.0)  # no fabric: no run
        rate = float(host_item_rate(per_item, max(per, 0.0) * k, c * k)) if acc.kind != "cpu" else np.inf
        out[(acc.id, c * k)] = max(out.get((acc.id, c * k), 0.0), rate)
    return out


def spanning_hosts(catalog) -> set[str]:
    """Accelerator ids with a host whose scale-up fabric joins instances (``fabric_spans_instances``)."""
    hosts = catalog.hosts
    if "fabric_spans_instances" not in hosts:
        return set()
    return set(hosts.loc[hosts["fabric_spans_instances"].astype(bool), "accelerator_id"])


def tp_reach(acc, per_instance: int, spans: bool) -> int:
    """The largest TP group an offer of ``per_instance`` accelerators can hold: the instance, or, on a
    host whose fabric joins instances (TPU slices), the chip's scale-up domain."""
    return max(per_instance, int(acc.scaleup_domain_size or 1)) if spans else per_instance


def join_offers(offers: pd.DataFrame, ev: Evaluated, multiples, catalog=None,
                moe: bool = False, training: bool = False) -> tuple[pd.DataFrame, np.ndarray]:
    """Every (offer, configuration) whose chips = offer count x k and whose collective group fits in one
    instance of the offer (the instance is the unit bought: a group over two VMs would run its
    collectives over the network, which the layout is not priced for); over several instances the groups
    must tile each instance (TP2 groups on 3-GPU instances would put one group across two of them);
    returns rows and config index.
    The group is the tensor-parallel group, and for a mixture of experts the whole replica: its experts
    are sharded over every attention-data-parallel rank (``perf.llm.engine``: max(ep, adp) expert
    ranks), so each decode step is an all-to-all across all of them. A dense model's pipeline stages
    (``perf.llm.capacity.pipeline_degrees``) may sit on separate instances only over a declared RDMA
    fabric (``_host_fabric``), each stage's TP group inside one instance. A ``training`` run is one
    replica whose gradient all-reduce (and pipeline sends) cross every instance it spans, priced at the
    chip's scale-out rate (``Accelerator.peer_link``): it spans instances only over such a fabric too (or
    a host whose scale-up fabric joins instances, the TPU slices)."""
    by_shape: dict[tuple[str, int], list[int]] = {}
    for i, r in enumerate(ev.rows):
        by_shape.setdefault((r["accelerator"], int(r["count"])), []).append(i)
    take_rows, take_cfg, inst = [], [], []
    acc = offers["accelerator_id"].to_numpy()
    cnt = offers["accelerator_count"].to_numpy(dtype=int)
    tp_only = np.array([int(r.get("tp", 1)) for r in ev.rows], dtype=int)
    stages = np.array([1 if moe else int(r.get("pp", 1)) for r in ev.rows], dtype=int)
    tp = np.array([int(r.get("tp", 1)) * (int(r.get("pp", 1)) * int(r.get("dp", 1)) if moe and "dp" in r else 1)
                   for r in ev.rows], dtype=int)
    spans = _host_spans(offers, catalog)
    fabric = _host_fabric(offers, catalog)
    reach = np.array([tp_reach(catalog.accelerators[a], int(c), bool(s)) if catalog is not None else int(c)
                      for a, c, s in zip(acc, cnt, spans, strict=True)], dtype=int)
    for j in range(len(offers)):
        for k in multiples:
            for i in by_shape.get((acc[j], int(cnt[j]) * k), ()):
                # a group beyond the instance needs a fabric across instances: the scale-up one (TPU
                # slices), or for a MoE's all-to-all a declared RDMA fabric, while its TP part stays inside
                over_rdma = fabric[j] and k > 1 and tp_only[i] <= int(cnt[j])
                if tp[i] > reach[j] and not over_rdma:
                    continue
                if k > 1 and not spans[j] and int(cnt[j]) % tp_only[i]:  # TP groups would straddle instances
                    continue
                if training and k > 1 and not (fabric[j] or spans[j]):
                    continue  # no declared network that carries the priced gradient traffic between them
                # a dense model's pipeline past one instance sends its activations over the network:
                # only where the host declares a fabric that carries the priced rate (or a spanning one)
                if stages[i] > 1 and tp_only[i] * stages[i] > int(cnt[j]) and not (fabric[j] or spans[j]):
                    continue
                take_rows.append(j)
                take_cfg.append(i)
                inst.append(k)
    rows = offers.iloc[take_rows].reset_index(drop=True)
    rows["instances_per_replica"] = np.asarray(inst, dtype=int)
    return rows, np.asarray(take_cfg, dtype=int)


#: Display names of ``hosts.scaleout_fabric`` values.
FABRIC_NAMES = {"efa": "EFA", "infiniband": "InfiniBand", "rdma": "RDMA (RoCE)"}


def declared_fabric(hosts: pd.DataFrame, host_id: str) -> str:
    """The RDMA fabric a host row declares between its instances (``hosts.scaleout_fabric``), '' if none."""
    if "scaleout_fabric" not in hosts:
        return ""
    row = hosts.loc[hosts["id"] == host_id, "scaleout_fabric"]
    name = row.iloc[0] if not row.empty else None
    return name if isinstance(name, str) else ""


def _host_fabric(offers: pd.DataFrame, catalog) -> np.ndarray:
    """Per offer row: does its host declare an RDMA fabric between instances (``declared_fabric``: EFA,
    InfiniBand, RoCE) that carries at least the per-chip scale-out rate the estimate priced the
    cross-instance all-to-alls at (``accelerators.scaleout_bytes_per_s``; ``network_bits_per_s`` / 8 /
    chips per instance)? p5.48xlarge: 3,200 Gbit/s EFA = 50 GB/s per H100, as priced; p4d's 400 Gbit/s
    is 6.25 GB/s per A100 against 25 priced, so a replica does not span p4d instances."""
    if catalog is None:
        return np.zeros(len(offers), bool)
    hosts = catalog.hosts
    by_id = hosts.set_index("id")
    fabric = dict(zip(hosts["id"], hosts["scaleout_fabric"], strict=True)) if "scaleout_fabric" in hosts else {}

    def carries(h: str, a: str) -> bool:
        name = fabric.get(h)
        if not (isinstance(name, str) and name):  # as ``declared_fabric``, from one dict instead of a scan per host
            return False
        bytes_per_s = float(by_id.at[h, "network_bits_per_s"]) / units.BITS_PER_BYTE
        per_chip = bytes_per_s / float(by_id.at[h, "accelerator_count"])
        priced = catalog.accelerators[a].scaleout_bytes_per_s
        # equal rates pass (3,200 Gbit/s over 8 GPUs is exactly the 50 GB/s priced): float rounding only
        return bool(np.isfinite(per_chip) and np.isfinite(priced) and per_chip >= priced * (1 - 1e-9))

    pairs = list(zip(offers["host_id"], offers["accelerator_id"], strict=True))
    known = {pair: carries(*pair) for pair in set(pairs)}  # once per (host, chip), not per offer row
    return np.asarray([known[pair] for pair in pairs], dtype=bool)


def joins_instances(offers: pd.DataFrame, catalog) -> np.ndarray:
    """Per offer row: may one replica's collective or pipeline group span several of its instances (a
    declared RDMA fabric carrying the priced rate, ``_host_fabric``, or a scale-up fabric across
    instances, ``_host_spans``)?"""
    return _host_fabric(offers, catalog) | _host_spans(offers, catalog)


def _host_spans(offers: pd.DataFrame, catalog) -> np.ndarray:
    """Per offer row: does its host's scale-up fabric join instances (``fabric_spans_instances``)?"""
    if catalog is None or "fabric_spans_instances" not in catalog.hosts:
        return np.zeros(len(offers), bool)
    by_host = dict(zip(catalog.hosts["id"], catalog.hosts["fabric_spans_instances"].astype(bool), strict=True))
    return np.array([bool(by_host.get(h, False)) for h in offers["host_id"]], dtype=bool)


def batch_starts(workload, profile) -> float:
    """Cold starts a month of batch inference on elastic capacity (``cost.usage.batch_starts_per_month``)."""
    from infrafit.cost.usage import batch_starts_per_month

    return batch_starts_per_month(profile.active_hours, workload.usage.runs_per_year)


def load_bytes_per_accelerator(ev: Evaluated) -> np.ndarray:
    """(rows,) weights each accelerator loads before it serves or trains: the estimate's own
    ``weights_bytes`` (LLM, training) or ``weight_bytes`` (other models), else its memory in use."""
    out = np.asarray(ev.memory_bytes, dtype=float).copy()
    for i, t in enumerate(ev.terms):
        w = t.get("weights_bytes", t.get("weight_bytes"))
        if w is not None and np.isfinite(w):
            out[i] = float(w)
    return out


def inference_profile(workload):
    """(LoadProfile, output tokens per request): requests/s traffic, or items per day in a window."""
    from infrafit.cost.adapters import workload_profile
    from infrafit.cost.usage import month_profile

    traffic = workload.inference.traffic
    out_tokens = float(traffic.output_tokens.mean) if traffic.output_tokens else 0.0
    if traffic.requests_per_s:
        return workload_profile(workload), out_tokens
    items = traffic.items
    mean = float(items.per_day) / (float(items.window_hours) * units.SECONDS_PER_HOUR)
    days = units.HOURS_PER_MONTH / units.HOURS_PER_DAY
    hours = float(workload.usage.active_hours_per_month or float(items.window_hours) * days)
    return month_profile(mean, None, "flat", min(hours, units.HOURS_PER_MONTH)), out_tokens


def ops_work(workload, task: str) -> str:
    """The ops_labour.csv ``work`` a part pays: ``batch`` for scheduled batch inference (unattended between
    runs), ``any`` for services and training runs (watched while they run)."""
    inf = workload.inference
    return "batch" if task == "serve" and inf is not None and inf.mode == "batch" else "any"


def on_prem_site(workload) -> tuple[str, str]:
    """(region, country) where region-less on-prem hardware would stand: the first ``on-prem*`` region
    in the placement, else the first allowed region; the first allowed country (electricity and
    colocation prices of that place, ``cost.adapters.offers_from_catalog``)."""
    pl = workload.placement
    regions, countries = tuple(pl.regions), tuple(pl.countries)
    site = next((r for r in regions if r.startswith("on-prem")), regions[0] if regions else "")
    return site, countries[0] if countries else ""


def spot_params(workload):
    """Cost parameters with the spec's own checkpoint interval (the work a spot interruption loses is
    half of it on average: ``training.checkpoint_every_minutes``; the default otherwise) and cost of
    capital (``budget.capital_rate_per_year``)."""
    from dataclasses import replace

    from infrafit.cost.params import CostParams

    base = replace(CostParams(), capital_rate_per_year=float(workload.budget.capital_rate_per_year))
    tr = workload.training
    if tr is None or not tr.checkpoint_every_minutes:
        return base
    return replace(base, spot_checkpoint_interval_s=float(tr.checkpoint_every_minutes) * units.SECONDS_PER_MINUTE)


def price_part(workload, catalog, rows: pd.DataFrame, ev: Evaluated, task: str, migration_weeks: np.ndarray,
               change_weeks: np.ndarray | None = None):
    """OfferArrays and CostResult of every candidate row (capacity or time to train from ``ev``);
    ``change_weeks`` (porting repaid at every model change, ``workflow:``) defaults to none."""
    from dataclasses import replace

    from infrafit.cost.adapters import offers_from_catalog
    from infrafit.cost.capacity_plan import inference_demand, training_demand
    from infrafit.cost.storage_egress import storage_needs
    from infrafit.cost.tco import price_options
    from infrafit.cost.usage import growth_factors

    p = spot_params(workload)
    months = int(workload.horizon_months)
    site_region, site_country = on_prem_site(workload)
    # Price each distinct (offer, instances per replica) once, then expand to every configuration on it:
    # the catalog lookups behind an offer's cost factors do not depend on the configuration.
    load = load_bytes_per_accelerator(ev) * rows["accelerator_count"].to_numpy(dtype=float)  # per instance
    key = pd.MultiIndex.from_arrays([rows["id"].to_numpy(), rows["instances_per_replica"].to_numpy(),
                                     np.asarray(migration_weeks, float), np.round(load, -6)])
    codes, uniques = pd.factorize(key)
    first = np.full(len(uniques), -1)
    first[codes[::-1]] = np.arange(len(codes))[::-1]
    distinct = rows.iloc[first].reset_index(drop=True)
    arrays = offers_from_catalog(catalog, distinct,
                                 instances_per_replica=distinct["instances_per_replica"].to_numpy(),
                                 managed=bool(workload.deployment.managed_preferred), params=p,
                                 migration_engineer_weeks=np.asarray(migration_weeks, float)[first],
                                 load_bytes_per_instance=load[first],
                                 site_region=site_region, site_country=site_country,
                                 work=ops_work(workload, task)).take(codes)
    if change_weeks is not None:
        arrays = replace(arrays, change_engineer_weeks=np.asarray(change_weeks, dtype=float))
    dataset = 0.0
    if task == "train":
        tr = workload.training
        demand = training_demand(ev.time_to_train_s, float(workload.usage.runs_per_year or 1.0), months,
                                 headroom_fraction=p.headroom_fraction, epochs_per_run=float(tr.epochs or 0.0))
        dataset = float(tr.dataset.size_bytes or 0.0)
        growth = float(workload.growth.data_per_month)
    else:
        profile, out_tokens = inference_profile(workload)
        inf = workload.inference
        demand = inference_demand(profile, ev.capacity, growth_factors(workload.growth.traffic_per_month, months),
                                  headroom_fraction=p.headroom_fraction,
                                  realtime=inf.mode in ("realtime", "mixed", "edge"),
                                  output_tokens_per_request=out_tokens,
                                  starts_per_month=batch_starts(workload, profile),
                                  min_replicas=int(workload.availability.min_replicas),
                                  zones=int(workload.availability.zones))
        growth = float(workload.growth.data_per_month)
    storage = storage_needs(months, dataset_bytes=dataset, data_growth_per_month=growth) if dataset else None
    from infrafit.cost.workflow import rates

    cost = price_options(demand, arrays, horizon_months=months,
                         engineer_usd_per_hour=float(workload.ops.engineer_usd_per_hour), storage=storage, params=p,
                         changes=rates(workload.workflow))
    return arrays, cost
