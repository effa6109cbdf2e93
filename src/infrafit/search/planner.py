"""The planner: workload + catalog -> ranked, explained options (the ``plan --json`` dict).

1. Offers pruned by deployment modes, excluded providers and residency (``search.offers``), then
   families by framework / custom-op support (``search.compat``).
2. Each part (serve, train, or both) evaluates its configurations and prices configuration x offer
   pairs (``search.parts``); memory fit, SLOs and the deadline prune configurations before pricing,
   the budget prunes priced candidates after.
3. Rank by the objective, mark the Pareto front on (TCO, latency or time to train), pick a diverse
   top-N (``search.pareto``); a workload with training and serving combines the two parts (a hybrid
   option when the sites differ and the spec allows it).
4. Explain (``search.explain``) and assemble the dict (``search.assemble``).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np
import pandas as pd

from infrafit.errors import InputError
from infrafit.perf import DEADLINE_P90_KEY, MODEL_ERROR_PREFIX, RISK_FACTOR_PREFIX, Evaluated
from infrafit.search import assemble, network
from infrafit.search.compat import family_compat
from infrafit.search.explain import SLO_LABEL
from infrafit.search.familiar import adoption_weeks, resolve_familiar
from infrafit.search.offers import families_without_offers, filter_offers, prune_dominated, residency_mask
from infrafit.search.operating import targets_for
from infrafit.search.parts import (
    INFERENCE_INSTANCE_MULTIPLES,
    TRAINING_INSTANCE_MULTIPLES,
    Part,
    evaluate_configs,
    join_offers,
    price_part,
)
from infrafit.search.types import Plan
from infrafit.units import fmt_bytes, fmt_duration
from infrafit.workload.spec_types import MIN_LATENCY_S

OBJECTIVES = ("cost", "latency", "time", "balanced", "carbon")
#: Less server time than this under a latency target is no budget (the spec's own latency floor).
MIN_SERVER_BUDGET_S = MIN_LATENCY_S


def _point(row: dict) -> str | None:
    return (row.get("operating_point") or {}).get("name")


def _best_per_config(ev, keys=("accelerator", "count", "precision")):
    """Keep the row with the largest capacity (or shortest training) per configuration key and
    operating point (``search.operating``)."""
    score = np.where(np.isfinite(ev.capacity), ev.capacity, -ev.time_to_train_s)
    score = np.where(np.isnan(score), -np.inf, score)
    best: dict[tuple, int] = {}
    for i, r in enumerate(ev.rows):
        k = (*(r[x] for x in keys), _point(r))
        if k not in best or score[i] > score[best[k]]:
            best[k] = i
    return np.array(sorted(best.values()), dtype=int)


def _deadline_check(ev) -> tuple[np.ndarray, float]:
    """The time compared with the training deadline (the prediction, or its band's p90 at risk p90:
    ``perf.training.capacity.deadline_slo``) and the deadline; no deadline is an infinite one."""
    for key in ("time_to_train_s", DEADLINE_P90_KEY):
        if key in ev.slo:
            return ev.slo[key]
    return ev.time_to_train_s, float("inf")


def _slo_ok(ev, task: str) -> np.ndarray:
    if task == "train":
        at_risk, lim = _deadline_check(ev)
        return np.isfinite(ev.time_to_train_s) & (at_risk <= lim)
    return ev.capacity > 0


def _family_failures(ev, task: str, fam_of: dict[str, str], failures: dict[str, list[str]]) -> None:
    """For each family with no config passing memory + SLO: the number that stopped it."""
    from infrafit.search.explain import family_fail_line

    ok = ev.fits & _slo_ok(ev, task)
    fams = np.array([fam_of[r["accelerator"]] for r in ev.rows], dtype=object)
    for fam in sorted(set(fams)):
        idx = np.flatnonzero(fams == fam)
        if ok[idx].any():
            continue
        fit = idx[ev.fits[idx]]
        if fit.size == 0:
            i = idx[np.argmin(ev.memory_bytes[idx] / ev.memory_capacity_bytes[idx])]
            r = ev.rows[i]
            failures.setdefault(fam, []).append(
                f"does not fit: {fmt_bytes(ev.memory_bytes[i])} needed per chip at best on {r['count']}x "
                f"{r['accelerator']} ({r['precision']}), {fmt_bytes(ev.memory_capacity_bytes[i])} usable")
            continue
        worst = np.zeros(len(fit))
        names = [(n, v, lim) for n, (v, lim) in ev.slo.items() if lim and np.isfinite(lim)]
        for n, v, lim in names:  # a figure not computed (NaN) is no candidate for the best: as bad as infinite
            worst = np.maximum(worst, np.nan_to_num(v[fit] * _risk_factor(ev, fit, n) / lim, nan=np.inf))
        i = fit[int(np.argmin(worst))]
        r = ev.rows[i]
        n, v, lim = (max(names, key=lambda t: np.nan_to_num(t[1][i] * _risk_factor(ev, [i], t[0])[0] / t[2],
                                                            nan=np.inf)) if names
                     else ("capacity", ev.capacity, 0.0))
        factor = float(_risk_factor(ev, [i], n)[0]) if names else 1.0
        failures.setdefault(fam, []).append(family_fail_line(
            task, n, float(v[i]), float(lim), f"{r['count']}x {r['accelerator']}, {r['precision']}",
            checked=float(v[i]) * factor if factor != 1.0 and np.isfinite(v[i]) else None))


def _risk_factor(ev, idx, name: str) -> np.ndarray:
    """What the rows' predicted ``name`` was multiplied by before the SLO check (their band's ratio at the
    spec's risk, ``perf.llm.capacity.RISK_FACTOR_PREFIX``); 1 where none was applied."""
    return np.array([float((ev.terms[k] if k < len(ev.terms) else {}).get(RISK_FACTOR_PREFIX + name, 1.0))
                     for k in idx])


def build_part(workload, arch, catalog, offers, compat, task: str, objective: str = "cost") -> Part:
    """Evaluate, prune and price one part over ``offers`` (serving at the objective's operating points).
    With the users' network in play (``search.network``), offers are grouped by the time their network
    adds and each group is evaluated against the server budget that leaves (SLO - network)."""
    multiples = TRAINING_INSTANCE_MULTIPLES if task == "train" else INFERENCE_INSTANCE_MULTIPLES
    fam_of = {a.id: a.family for a in catalog.accelerators.values()}
    by_bin: list[dict[str, list[str]]] = []
    rows_list, ev_list, n_eval = [], [], 0
    for net_s, idx in _network_groups(workload, offers, task):
        group = offers.iloc[idx].reset_index(drop=True)
        failures_b: dict[str, list[str]] = {}
        by_bin.append(failures_b)
        if np.isnan(net_s):
            _unlocated_failure(group, failures_b)
            continue
        budget = workload if net_s == 0 else _server_budget(workload, net_s)
        if budget is None:
            _network_failure(workload, group, net_s, failures_b)
            continue
        rows_b, ev_b, n_b = _evaluate_and_join(budget, arch, catalog, group, task, multiples, objective, fam_of,
                                               failures_b)
        if net_s:
            ev_b = _at_the_user(ev_b, net_s, workload)
        rows_list.append(rows_b)
        ev_list.append(ev_b)
        n_eval += n_b
    failures = _nearest_failures(by_bin)
    ev = Evaluated.concat(ev_list)
    rows = pd.concat(rows_list, ignore_index=True) if rows_list else offers.iloc[:0]
    if len(rows) == 0:
        return Part(task, rows, ev, None, None, failures, n_eval)
    ev, host_blocked = _host_fed(workload, arch, catalog, rows, ev, task, fam_of, failures)
    porting = np.array([compat[f].porting_weeks for f in rows["family"]], dtype=float)
    weeks = porting + adoption_weeks([r.get("stack", "default") for r in ev.rows],
                                   resolve_familiar(workload.ops.familiar_stacks, catalog.stacks),
                                   str(workload.framework), catalog.stacks)
    arrays, cost = price_part(workload, catalog, rows, ev, task, weeks, change_weeks=porting)
    blocked = host_blocked
    if task == "train" and workload.training.deadline_s:
        blocked = blocked | _spot_deadline(workload, rows, ev, arrays, fam_of, failures)
    if "owned_instances" in rows:
        blocked |= _beyond_owned(rows, cost, fam_of, failures)
    blocked |= _purchase_limits(rows, cost, arrays, fam_of, failures)
    return Part(task, rows, ev, arrays, cost, failures, n_eval * max(1, len(rows) // max(len(ev), 1)), blocked)


def _host_fed(workload, arch, catalog, rows, ev: Evaluated, task: str, fam_of, failures):
    """Each joined row slowed to what its offer's host CPU feeds (``perf.host_fed_factor``: JPEG or audio decode
    and tokenisation against the instance's vCPUs), so the replicas and the time priced are the host's, as
    ``perf.estimate`` on that host reports them; and which training rows that pushes past the deadline (they
    are blocked, and a family that loses every row says so)."""
    from infrafit.perf import host_fed_factor

    if len(rows) == 0:
        return ev, np.zeros(0, bool)
    hosts = catalog.hosts.set_index("id")
    vcpus = pd.to_numeric(hosts["vcpu_count"], errors="coerce").reindex(rows["host_id"]).to_numpy(dtype=float)
    cores = vcpus * rows["instances_per_replica"].to_numpy(dtype=float)
    count = np.array([float(r["count"]) for r in ev.rows])
    kind = np.array([catalog.accelerators[r["accelerator"]].kind for r in ev.rows], dtype=object)
    training = task == "train"
    if training:
        rate = float(workload.training.total_samples) / np.where(ev.time_to_train_s > 0, ev.time_to_train_s, np.inf)
    else:
        rate = ev.capacity
    factor = host_fed_factor(workload, arch, rate, cores, count, kind)
    blocked = ~np.isfinite(factor)  # the runtime threads alone take every vCPU: nothing is fed
    if not np.any(factor > 1.0):
        return ev, blocked
    factor = np.where(blocked, 1.0, factor)
    if training:
        slo = {k: (v * factor, lim) for k, (v, lim) in ev.slo.items()}
        ev = Evaluated(ev.rows, ev.fits, ev.capacity, ev.time_to_train_s * factor, ev.metric * factor,
                       ev.memory_bytes, ev.memory_capacity_bytes, slo, ev.terms, ev.p50)
        at_risk, lim = _deadline_check(ev)
        blocked |= (factor > 1.0) & (at_risk > lim)
        fams = rows["family"].to_numpy(dtype=object)
        for fam in sorted(set(fams[blocked]) - set(fams[~blocked])):
            i = int(np.flatnonzero(fams == fam)[np.argmin(at_risk[fams == fam])])
            failures.setdefault(fam, []).append(
                f"host CPU: {rows['host_id'].iloc[i]}'s {cores[i]:,.0f} vCPUs feed the input pipeline "
                f"{factor[i]:.1f}x slower than {int(count[i])}x {ev.rows[i]['accelerator']} train; "
                f"{fmt_duration(float(at_risk[i]))} > {fmt_duration(float(lim))} deadline. To fix: decode on the "
                "accelerators (NVIDIA DALI), list a host with more vCPUs per accelerator, or set training.global_batch "
                "for more chips (the count search stops at the smallest that meets the deadline at the "
                "accelerators' rate)")
    else:
        ev = Evaluated(ev.rows, ev.fits, ev.capacity / factor, ev.time_to_train_s, ev.metric, ev.memory_bytes,
                       ev.memory_capacity_bytes, ev.slo, ev.terms, ev.p50)
    return ev, blocked


def _evaluate_and_join(workload, arch, catalog, offers, task, multiples, objective, fam_of, failures):
    """Evaluate the configurations ``offers`` can build, keep those that fit and meet the SLOs (best per
    configuration and operating point), and join them to the offers: (rows, ev, configurations evaluated)."""
    ev, pruned = evaluate_configs(workload, arch, catalog, offers, task, multiples, targets_for(objective))
    for key, why in pruned.items():
        if key.startswith(MODEL_ERROR_PREFIX):
            failures.setdefault(fam_of[key.removeprefix(MODEL_ERROR_PREFIX)], []).append(
                f"{key.removeprefix(MODEL_ERROR_PREFIX)}: {why}")
            continue
        acc_id = key
        if not any(r["accelerator"] == acc_id for r in ev.rows):
            failures.setdefault(fam_of[acc_id], []).append(f"{acc_id}: {why} > "
                                                           f"{workload.training.deadline_days:g}-day deadline")
    _family_failures(ev, task, fam_of, failures)
    n_eval = len(ev)
    keep = np.flatnonzero(ev.fits & _slo_ok(ev, task))
    ev = ev.take(keep)
    ev = ev.take(_best_per_config(ev))
    moe_serving = task == "serve" and bool(getattr(arch, "is_moe", False))  # training shards its own way
    rows, cfg = join_offers(offers, ev, multiples, catalog, moe=moe_serving, training=task == "train")
    if task == "train":
        _unjoined_training(ev, rows, offers, fam_of, failures)
    return rows, ev.take(cfg), n_eval


def _unjoined_training(ev, rows, offers, fam_of, failures: dict[str, list[str]]) -> None:
    """Chips whose every run that trains in time needs more accelerators than one instance of its offers
    holds, on hosts that declare no fabric between instances (``search.parts.join_offers``): the exclusion
    says so, with the smallest such run."""
    joined = set(rows["accelerator_id"]) if len(rows) else set()
    counts: dict[str, list[int]] = {}
    for r in ev.rows:
        if r["accelerator"] not in joined:
            counts.setdefault(r["accelerator"], []).append(int(r["count"]))
    for acc_id, runs in sorted(counts.items()):
        mine = offers[offers["accelerator_id"] == acc_id]
        n, largest = min(runs), int(mine["accelerator_count"].max()) if not mine.empty else 0
        if mine.empty or n <= largest:  # a run that fits one instance was dropped for another reason
            continue
        failures.setdefault(fam_of[acc_id], []).append(
            f"{acc_id}: the smallest run in time takes {n} chips, more than one instance holds ({largest}), and "
            "no offer's host declares a network between its instances that carries the gradient all-reduce "
            "(hosts.scaleout_fabric)")


def _network_groups(workload, offers, task: str) -> list[tuple[float, np.ndarray]]:
    """(added network seconds, offer indices) groups, nearest first; one group of 0 s when the plan does
    not measure at the users."""
    if task != "serve" or not network.applies(workload) or offers.empty:
        return [(0.0, np.arange(len(offers)))]
    binned = network.bins(network.added_seconds(offers, workload))
    groups = [(float(b), np.flatnonzero(binned == b)) for b in np.unique(binned[np.isfinite(binned)])]
    unlocated = np.flatnonzero(np.isnan(binned))
    return groups + ([(float("nan"), unlocated)] if unlocated.size else [])


def _unlocated_failure(offers, failures: dict[str, list[str]]) -> None:
    """Offers whose place is unknown (an on-prem purchase with no site country): their latency at the users
    cannot be checked, so they are not planned as if the network took no time."""
    for fam, rows in offers.groupby("family"):
        on_prem = bool((rows["mode"] == "on_prem").all())
        fix = ("set placement.countries (where the servers would be), or serve at measured_at: server" if on_prem
               else "ask the provider where the region is, or set inference.slo.measured_at: server")
        where = "on-prem offer(s) with no site" if on_prem else \
            f"offers in regions with no known place ({', '.join(sorted(set(map(str, rows['region']))))})"
        failures.setdefault(str(fam), []).append(
            f"location unknown: {len(rows)} {where}, so the latency at the users (placement.users_in) cannot be "
            f"checked. To fix: {fix}")


def _server_budget(workload, net_s: float):
    """The workload with each latency SLO the network adds to reduced by ``net_s`` (None when the network
    alone uses a whole target)."""
    inf = workload.inference
    slo = inf.slo
    update = {k: getattr(slo, k) - net_s for k in network.NETWORK_SLOS if getattr(slo, k)}
    if any(v < MIN_SERVER_BUDGET_S for v in update.values()):
        return None
    if not update:
        return workload
    return workload.model_copy(update={"inference": inf.model_copy(update={"slo": slo.model_copy(update=update)})})


def _network_failure(workload, offers, net_s: float, failures: dict[str, list[str]]) -> None:
    slo = workload.inference.slo
    name, limit = next((k, getattr(slo, k)) for k in network.NETWORK_SLOS if getattr(slo, k))
    for fam, rows in offers.groupby("family"):
        row = rows.iloc[0]
        far = network.farthest(row, workload)
        who = f"users in {far[0]} are {fmt_duration(far[1])} away from {row['region']}" if far else \
            f"{fmt_duration(net_s)} of network to {row['region']}"
        failures.setdefault(str(fam), []).append(
            f"the network alone: {who} ({fmt_duration(net_s)} per request), which leaves no server time within "
            f"the {SLO_LABEL.get(name, name)} SLO of {fmt_duration(limit)} at the users (set "
            "inference.slo.measured_at: server if the target is the server's)")


def _at_the_user(ev, net_s: float, workload):
    """Latency figures as the users see them: + ``net_s`` on the SLOs the network adds to, against the
    spec's own limits; the added time is kept in each row's terms (``network_added_s``)."""
    slo = workload.inference.slo
    for k in network.NETWORK_SLOS:
        if k in ev.slo:
            limit = getattr(slo, k)
            ev.slo[k] = (ev.slo[k][0] + net_s, float(limit) if limit else float("nan"))
    for t in ev.terms:
        t["network_added_s"] = net_s
    return ev


def _nearest_failures(by_bin: list[dict[str, list[str]]]) -> dict[str, list[str]]:
    """Each family's failure lines from the nearest group it appeared in (the farther groups fail for the
    same reason, or for the network)."""
    out: dict[str, list[str]] = {}
    for failures in by_bin:
        for fam, lines in failures.items():
            out.setdefault(fam, lines)
    return out


def _spot_deadline(workload, rows, ev, arrays, fam_of, failures: dict[str, list[str]]) -> np.ndarray:
    """Spot is not offered for a deadline it would miss in expectation: a training run's expected
    time on spot (time to train x ``cost.modes.spot_slowdown``) must meet the deadline. Returns the
    candidates that miss it (blocked like an infeasible price); the reason goes to their family's
    exclusion line."""
    from infrafit.cost.modes import spot_slowdown
    from infrafit.search.parts import spot_params
    from infrafit.units import SECONDS_PER_DAY

    spot = rows["mode"].to_numpy(dtype=object) == "cloud_spot"
    if not spot.any():
        return np.zeros(len(rows), bool)
    expected = _deadline_check(ev)[0] * spot_slowdown(arrays, spot_params(workload))
    late = spot & (expected > float(workload.training.deadline_s))
    for fam in sorted({fam_of[a] for a in rows.loc[late, "accelerator_id"]}):
        i = next(j for j in np.flatnonzero(late) if fam_of[rows["accelerator_id"].iloc[j]] == fam)
        at = "" if workload.training.risk == "p50" else " at the p90 of the time-to-train band"
        when = "never (interrupted faster than it checkpoints)" if not np.isfinite(expected[i]) else \
            f"in {expected[i] / SECONDS_PER_DAY:,.1f} days expected{at}"
        failures.setdefault(fam, []).append(
            f"spot: {rows['instances_per_replica'].iloc[i]} instance(s) of {rows['id'].iloc[i]} finish {when}, "
            f"past the {workload.training.deadline_days:g}-day deadline")
    return late


def _purchase_limits(rows, cost, arrays, fam_of, failures: dict[str, list[str]]) -> np.ndarray:
    """Prepaid-block candidates one purchase cannot hold (``cost.modes.over_purchase_limits``: a realtime
    service, a run past the longest block, more instances than a block holds): blocked, with the limit,
    once per family."""
    from infrafit.cost.modes import over_purchase_limits, run_hours_per_start
    from infrafit.units import HOURS_PER_DAY

    d = cost.demand
    over = over_purchase_limits(d, arrays)
    said: set[str] = set()
    for i in np.flatnonzero(over):
        fam = fam_of[rows["accelerator_id"].iloc[i]]
        if fam in said:
            continue
        said.add(fam)
        longest_days = arrays.billing_maximum_h[i] / HOURS_PER_DAY
        if d.realtime:
            why = (f"capacity block: {rows['id'].iloc[i]} is bought per run (at most {longest_days:.0f} days, paid "
                   "upfront); a realtime service is not planned on blocks")
        else:
            per_start = d.replicas_per_start[:, i].max() if d.replicas_per_start is not None else 1.0
            days = run_hours_per_start(d, arrays)[:, i].max() / HOURS_PER_DAY
            need = per_start * arrays.instances[i]
            why = (f"capacity block: one purchase holds at most {arrays.max_instances[i]:.0f} instances for "
                   f"{longest_days:.0f} days; this run needs {need:.0f} for {days:,.1f} days")
        failures.setdefault(fam, []).append(why)
    return over


def _beyond_owned(rows, cost, fam_of, failures: dict[str, list[str]]) -> np.ndarray:
    """Owned-hardware candidates that need more servers than the team has (peak month's replicas x
    instances per replica > ``owned_instances``): blocked, with how many are missing. Mixing owned and
    rented capacity in one option is not modelled."""
    owned = rows["owned_instances"].to_numpy(dtype=float)
    is_owned = np.isfinite(owned)
    if not is_owned.any():
        return np.zeros(len(rows), bool)
    peak = cost.demand.fixed_replicas.max(axis=0) * rows["instances_per_replica"].to_numpy(dtype=float)
    over = is_owned & (peak > owned + 1e-9)
    for i in np.flatnonzero(over)[:1]:
        fam = fam_of[rows["accelerator_id"].iloc[i]]
        failures.setdefault(fam, []).append(
            f"owned: the load needs {peak[i]:.0f} x {rows['host_id'].iloc[i]} at its peak, you own "
            f"{owned[i]:.0f} (an option mixing owned and rented servers is not modelled)")
    return over


def budget_mask(workload, part: Part, fam_of_rows, failures: dict[str, list[str]]) -> np.ndarray:
    """Candidates within the monthly (busiest recurring month) and total (TCO) budgets. The budget
    holds the infrastructure; the modelled ops labour counts only with ``budget.include_labour``.
    An exclusion line says which part broke the budget."""
    from infrafit.units import fmt_usd

    ok = np.isfinite(part.cost.tco_usd)
    b = workload.budget
    labour_m = np.asarray(part.cost.monthly.get("ops_labour_usd", np.zeros_like(part.cost.recurring_monthly)))
    labour_total = part.cost.breakdown.get("ops_labour_usd", np.zeros_like(part.cost.tco_usd))
    with_labour = bool(b.include_labour)
    monthly = part.cost.recurring_monthly if with_labour else part.cost.recurring_monthly - labour_m
    peak = monthly.max(axis=0)
    peak_labour = labour_m[np.argmax(monthly, axis=0), np.arange(monthly.shape[1])]
    total = part.cost.tco_usd if with_labour else part.cost.tco_usd - labour_total
    checks = []
    if b.monthly_usd:
        checks.append((peak, peak_labour, float(b.monthly_usd), "/month at the busiest month", "monthly budget"))
    if b.total_usd:
        checks.append((total, labour_total, float(b.total_usd), " over the horizon", "total budget"))
    for values, labour, limit, unit, name in checks:
        within = values <= limit
        for fam in sorted(set(fam_of_rows[ok])):
            idx = np.flatnonzero((fam_of_rows == fam) & ok)
            if idx.size and not within[idx].any():
                j = idx[np.argmin(values[idx])]
                what = "with ops labour" if with_labour else "infrastructure"
                aside = (f" (of which labour {fmt_usd(float(labour[j]))})" if with_labour else
                         f" (+ {fmt_usd(float(labour[j]))} modelled labour not counted; budget.include_labour: true "
                         "counts it)")
                failures.setdefault(fam, []).append(f"cheapest {what} {fmt_usd(float(values[j]))}{unit}{aside} > "
                                                    f"{fmt_usd(limit)} {name}")
        ok &= within
    return ok


def _no_offers(workload, objective: str, kinds: tuple[str, ...], excluded: list[dict]) -> Plan:
    """The plan when the hard filters leave no offer at all: no options (the command exits 3) and a
    first exclusion line naming the constraints that emptied the catalog."""
    pl, dep = workload.placement, workload.deployment
    said = [f"deployment.allowed {list(dep.allowed)}"]
    if not kinds:
        said[0] += (" (hybrid only combines a training part and a serving part on two sites; "
                    "add cloud, dedicated or on_prem)")
    if pl.regions or pl.countries:
        said.append(f"placement regions {list(pl.regions)} / countries {list(pl.countries)}")
    if dep.exclude_providers:
        said.append(f"deployment.exclude_providers {list(dep.exclude_providers)}")
    if dep.require:
        said.append(f"deployment.require {list(dep.require)}")
    head = {"what": "every offer", "reason": "no offer in the catalog is left after " + " and ".join(said)}
    return Plan.from_dict({"workload": workload.resolved(), "objective": objective, "catalog_retrieved_on": "",
                           "options": [], "excluded": [head, *excluded]})


@dataclass
class Prepared:
    """The planner's work before ranking: the priced parts, the candidates each may show (``masks``), and
    what was excluded and why (``plan`` ranks and explains them; ``search.fleet`` pools them)."""

    arch: Any
    parts: dict[str, Part]
    masks: dict[str, np.ndarray]
    compat: dict
    excluded: list[dict]
    failures: dict[str, list[str]]
    kinds: tuple[str, ...]
    pruned_offers: int = 0
    empty: bool = False


def prepare(workload, catalog, *, objective: str = "cost", today=None, verified_only: bool = False,
            max_price_age_days: int | None = None) -> Prepared:
    """Offers filtered, families checked, every part evaluated and priced, budgets applied."""
    arch = workload.model_arch()
    resolve_familiar(workload.ops.familiar_stacks, catalog.stacks)  # unknown names: exit 2 before any work
    pl = workload.placement
    kinds = tuple(k for k in workload.deployment.allowed if k != "hybrid")
    filt = filter_offers(catalog, workload, kinds, pl.regions, pl.countries, verified_only=verified_only,
                         max_price_age_days=max_price_age_days, today=today)
    excluded = list(filt.excluded)
    offered = set(catalog.offers["accelerator_id"].map(lambda a: catalog.accelerators[a].family))
    excluded += families_without_offers(catalog, offered)
    compat = family_compat(catalog, workload.framework, sorted(set(filt.kept["family"])),
                           tuple(workload.custom_ops), bool(getattr(workload, "dynamic_shapes", False)))
    for fam, c in compat.items():
        if not c.allowed:
            excluded.append({"what": fam, "reason": c.reason(workload.framework, tuple(workload.custom_ops))})
    kept = filt.kept[filt.kept["family"].map(lambda f: compat[f].allowed)].reset_index(drop=True)
    kept, pruned_offers = prune_dominated(kept)
    if kept.empty:
        return Prepared(arch, {}, {}, compat, excluded, {}, kinds, pruned_offers, empty=True)
    parts: dict[str, Part] = {}
    failures: dict[str, list[str]] = {}
    if workload.is_training:
        train_offers = kept
        if pl.training_regions:
            train_offers = kept[residency_mask(kept, pl.training_regions, pl.countries)].reset_index(drop=True)
        parts["train"] = build_part(workload, arch, catalog, train_offers, compat, "train")
    if workload.inference is not None:
        parts["serve"] = build_part(workload, arch, catalog, kept, compat, "serve", objective)
    masks = {}
    for name, part in parts.items():
        for fam, lines in part.failures.items():
            failures.setdefault(fam, []).extend(f"{name}: {x}" if len(parts) > 1 else x for x in lines)
        if part.cost is not None:
            fams = part.offers["family"].to_numpy(dtype=object)
            masks[name] = budget_mask(workload, part, fams, failures) if len(parts) == 1 else \
                np.isfinite(part.cost.tco_usd)
            if part.blocked is not None:
                masks[name] &= ~part.blocked
    return Prepared(arch, parts, masks, compat, excluded, failures, kinds, pruned_offers)


def plan(workload, catalog, *, objective: str = "cost", top: int = 5, today=None, diverse: bool = True,
         verified_only: bool = False, max_price_age_days: int | None = None,
         prepared: Prepared | None = None) -> Plan:
    """The whole plan, typed (``Plan.to_dict()`` is the ``plan --json`` shape); no options when nothing
    meets the hard constraints (the command then exits 3). ``prepared``: this workload's ``prepare`` with
    the same arguments, already run (a fleet plans and pools the same evaluated parts); nothing here
    changes it."""
    if objective not in OBJECTIVES:
        raise InputError(f"unknown objective {objective!r}", fix=f"use one of {', '.join(OBJECTIVES)}")
    if top < 1:
        raise InputError(f"--top {top} must be at least 1", fix="ask for 1 or more options")
    if max_price_age_days is not None and max_price_age_days < 0:
        raise InputError(f"--max-price-age-days {max_price_age_days} is negative",
                         fix="give a number of days, e.g. --max-price-age-days 365")
    prep = prepared if prepared is not None else prepare(
        workload, catalog, objective=objective, today=today, verified_only=verified_only,
        max_price_age_days=max_price_age_days)
    if prep.empty:
        return _no_offers(workload, objective, prep.kinds, prep.excluded)
    out = assemble.build(workload, catalog, prep.arch, prep.parts, prep.masks, prep.compat, prep.excluded,
                         prep.failures, objective, top, today=today, diverse=diverse)
    out["pruned_offers"] = prep.pruned_offers
    if workload.current is not None:
        from datetime import date

        from infrafit.search.current import add_current

        out = add_current(out, workload, prep.arch, catalog, objective, today or date.today(), build_part)
    return Plan.from_dict(out)
