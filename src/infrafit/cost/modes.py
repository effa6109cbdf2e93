"""Compute-side cost of each deployment mode, vectorized over N candidates and M months.

Every function returns ``(monthly, beyond)``: ``monthly`` maps breakdown keys to (M, N) arrays of
what is paid within the horizon, ``beyond`` maps keys to (N,) arrays of commitments that must be
paid after the horizon ends (a finance team pays the whole reserved term or contract, used or not).
Paid capacity is split into ``compute_usd`` (the share the load used, busy / paid replica-hours)
and ``idle_usd`` (the rest). Formulas and sources: docs/cost.md.
"""

from __future__ import annotations

import numpy as np

from infrafit.cost.capacity_plan import Demand
from infrafit.cost.offers import OfferArrays
from infrafit.cost.params import PER_START_MODES, CostParams
from infrafit.units import HOURS_PER_MONTH, MONTHS_PER_YEAR, SECONDS_PER_HOUR, W_PER_KW

Arrays = dict[str, np.ndarray]


def _split_used_idle(paid: np.ndarray, used_share: np.ndarray) -> Arrays:
    share = np.clip(np.nan_to_num(used_share, nan=0.0), 0.0, 1.0)
    return {"compute_usd": paid * share, "idle_usd": paid * (1.0 - share)}


def _share(busy: np.ndarray, paid_hours: np.ndarray) -> np.ndarray:
    with np.errstate(divide="ignore", invalid="ignore"):
        return np.where(paid_hours > 0, busy / paid_hours, 0.0)


def additions(fixed: np.ndarray) -> np.ndarray:
    """Replicas added each month (M, N); month 0 adds the initial fleet."""
    return np.diff(fixed, axis=0, prepend=0.0)


def beyond_horizon_months(horizon_months: int, term_months: np.ndarray, whole_terms: bool) -> np.ndarray:
    """(M, N): months still owed after the horizon for a commitment started at month m.

    Reserved capacity is bought in whole terms: ceil(remaining / term) x term months are paid.
    A dedicated contract has a minimum term and then runs month to month: max(term, remaining).
    """
    start = np.arange(horizon_months, dtype=float)[:, None]
    remaining = horizon_months - start
    term = np.asarray(term_months, dtype=float)[None, :]
    if whole_terms:
        paid = np.where(term > 0, np.ceil(remaining / np.where(term > 0, term, 1.0) - 1e-9) * term, remaining)
    else:
        paid = np.maximum(term, remaining)
    return paid - remaining


def billed_hours(run_h: np.ndarray, increment_h: np.ndarray, minimum_h: np.ndarray,
                 long_after_h: np.ndarray | float = 0.0, long_increment_h: np.ndarray | float = 0.0,
                 end_margin_h: np.ndarray | float = 0.0) -> np.ndarray:
    """Hours billed for one instance start that runs ``run_h``: rounded up to a multiple of the
    increment (none when it is 0), at least the minimum. Prepaid blocks (AWS Capacity Blocks) also
    pay ``end_margin_h`` they cannot run (instances are terminated before the block ends) and, past
    ``long_after_h`` (14 days), round up to ``long_increment_h`` (7 days) instead."""
    run = run_h + end_margin_h
    long = (np.asarray(long_after_h) > 0) & (run > long_after_h) & (np.asarray(long_increment_h) > 0)
    inc = np.where(long, long_increment_h, increment_h)
    with np.errstate(divide="ignore", invalid="ignore"):
        rounded = np.where(inc > 0, np.ceil(run / np.where(inc > 0, inc, 1.0) - 1e-9) * inc, run)
    return np.maximum(rounded, minimum_h)


def elastic_paid_hours(d: Demand, o: OfferArrays) -> np.ndarray:
    """(M, N) replica-hours paid on elastic capacity. Realtime: the autoscaled hours plus each started
    replica's start-up (boot, image pull, weights load: ``startup_h``) before it serves. Batch and training
    (``starts_per_month`` > 0): starts x replicas per start x billed(work per replica + start-up)."""
    if d.realtime or d.starts_per_month <= 0:
        if d.realtime and d.scaleups_per_month is not None:  # every replica started boots and loads first
            return d.needed_replica_hours + d.scaleups_per_month * o.startup_h[None, :]
        return d.needed_replica_hours
    n = np.ones_like(d.busy_replica_hours) if d.replicas_per_start is None else d.replicas_per_start
    run = d.busy_replica_hours / (d.starts_per_month * n) + o.startup_h[None, :]
    paid = d.starts_per_month * n * billed_hours(run, o.billing_increment_h[None, :], o.billing_minimum_h[None, :],
                                                 o.billing_long_after_h[None, :], o.billing_long_increment_h[None, :],
                                                 o.billing_end_margin_h[None, :])
    return np.where(d.busy_replica_hours > 0, paid, 0.0)


def run_hours_per_start(d: Demand, o: OfferArrays) -> np.ndarray:
    """(M, N) hours one start runs (work per replica + start-up); 0 for fluid or realtime demand."""
    if d.realtime or d.starts_per_month <= 0:
        return np.zeros_like(d.busy_replica_hours)
    n = np.ones_like(d.busy_replica_hours) if d.replicas_per_start is None else d.replicas_per_start
    return np.where(d.busy_replica_hours > 0, d.busy_replica_hours / (d.starts_per_month * n) + o.startup_h[None, :],
                    0.0)


def over_purchase_limits(d: Demand, o: OfferArrays) -> np.ndarray:
    """(N,) candidates one purchase cannot hold: a prepaid block is bought per run, so a realtime service
    never fits one, and a run longer than the longest block (182 days) or on more instances than one
    block holds (64) is not sold as one. Elastic capacity has no limits (inf)."""
    limited = np.isfinite(o.billing_maximum_h) | np.isfinite(o.max_instances)
    if d.realtime:
        return limited
    n = np.ones_like(d.busy_replica_hours) if d.replicas_per_start is None else d.replicas_per_start
    instances = (n * o.instances[None, :]).max(axis=0)
    longest = (run_hours_per_start(d, o) + o.billing_end_margin_h[None, :]).max(axis=0)
    return limited & ((instances > o.max_instances) | (longest > o.billing_maximum_h))


def block_months(d: Demand, o: OfferArrays) -> np.ndarray:
    """(N,) months the longest prepaid block of a run commits to (its billed length / 730 h)."""
    run = run_hours_per_start(d, o)
    billed = billed_hours(run, o.billing_increment_h[None, :], o.billing_minimum_h[None, :],
                          o.billing_long_after_h[None, :], o.billing_long_increment_h[None, :],
                          o.billing_end_margin_h[None, :])
    return np.where(run > 0, billed, 0.0).max(axis=0) / HOURS_PER_MONTH


def capacity_block(d: Demand, o: OfferArrays, p: CostParams) -> tuple[Arrays, Arrays]:
    """Prepaid blocks (AWS EC2 Capacity Blocks for ML): each run buys a block of its instances for its
    length rounded up as sold (``billed_hours``: whole days to 14 days, then weeks, plus the 30 minutes
    before the end when the instances are stopped), paid upfront whether used or not. Not offered for
    realtime services or past the purchase limits (``over_purchase_limits``: infinite cost)."""
    paid_hours = elastic_paid_hours(d, o)
    paid = np.where(over_purchase_limits(d, o)[None, :], np.inf, paid_hours * o.usd_per_hour)
    return _split_used_idle(paid, _share(d.busy_replica_hours, paid_hours)), {}


def on_demand(d: Demand, o: OfferArrays, p: CostParams) -> tuple[Arrays, Arrays]:
    """Pay for the replica-hours the load needs each hour (autoscaled, instance granularity); batch and
    training pay each start as billed (``elastic_paid_hours``)."""
    needed = elastic_paid_hours(d, o)
    return _split_used_idle(needed * o.usd_per_hour, _share(d.busy_replica_hours, needed)), {}


def spot(d: Demand, o: OfferArrays, p: CostParams) -> tuple[Arrays, Arrays]:
    """Spot capacity with interruptions.

    Batch and training: runtime T = work / (1 - x), x = interruptions/hour per instance x instances
    per replica x (checkpoint interval / 2 + restart); the extra T - work is ``interruption_overhead_usd``; x >= 1 never
    finishes (infinite cost). Realtime: ``spot_realtime_floor_replicas`` stay on on-demand at
    ``fallback_usd_per_hour`` while the service is active, and the hours lost to restarts
    (spot hours x interruptions/hour x restart) are served by on-demand too. Without an on-demand
    fallback price realtime spot is not allowed (infinite cost).
    """
    rate = np.where(np.isnan(o.interruptions_per_hour), p.spot_interruptions_per_hour_default,
                    o.interruptions_per_hour)
    needed = elastic_paid_hours(d, o)
    if not d.realtime:
        extra = spot_slowdown(o, p) - 1.0
        out = _split_used_idle(needed * o.usd_per_hour, _share(d.busy_replica_hours, needed))
        out["interruption_overhead_usd"] = needed * extra * o.usd_per_hour
        return out, {}
    fallback = np.where(np.isnan(o.fallback_usd_per_hour), np.inf, o.fallback_usd_per_hour)
    floor = np.minimum(d.active_hours * p.spot_realtime_floor_replicas, needed)
    spot_hours = needed - floor
    paid = spot_hours * o.usd_per_hour + floor * fallback
    out = _split_used_idle(paid, _share(d.busy_replica_hours, needed))
    restart_h = p.spot_restart_s / SECONDS_PER_HOUR
    out["interruption_overhead_usd"] = spot_hours * rate * restart_h * fallback
    return out, {}


def spot_slowdown(o: OfferArrays, p: CostParams) -> np.ndarray:
    """(N,) runtime / work of a synchronous job on spot: ``1 / (1 - x)`` with ``x`` = interruptions per
    hour per instance x instances that fail independently x hours lost per interruption (half the
    checkpoint interval plus the restart); infinite when ``x >= 1`` (the job never finishes). A job
    over N instances stops whenever any one is reclaimed; a multi-host TPU slice is one unit."""
    rate = np.where(np.isnan(o.interruptions_per_hour), p.spot_interruptions_per_hour_default,
                    o.interruptions_per_hour) * o.instances
    x = rate * p.spot_lost_hours_per_interruption
    with np.errstate(divide="ignore"):
        return np.where(x < 1, 1.0 / (1.0 - np.minimum(x, 0.999999)), np.inf)


def reserved(d: Demand, o: OfferArrays, p: CostParams, horizon_months: int) -> tuple[Arrays, Arrays]:
    """Reserved capacity: the fixed fleet x effective hourly price x 730 h, used or not; each
    reservation is paid for whole terms, so the part of a term past the horizon is idle cost."""
    paid_hours = d.fixed_replicas * HOURS_PER_MONTH
    paid = paid_hours * o.usd_per_hour
    out = _split_used_idle(paid, _share(d.busy_replica_hours, paid_hours))
    tail = additions(d.fixed_replicas) * beyond_horizon_months(horizon_months, o.term_months, True)
    return out, {"idle_usd": tail.sum(axis=0) * HOURS_PER_MONTH * o.usd_per_hour}


def dedicated(d: Demand, o: OfferArrays, p: CostParams, horizon_months: int) -> tuple[Arrays, Arrays]:
    """Dedicated servers: monthly rent for the fixed fleet, setup fee per server when added,
    and the minimum contract paid in full even past the horizon. A rental whose price excludes
    power carries a USD/kWh (0 otherwise) and pays it as on-prem does."""
    paid = d.fixed_replicas * o.usd_per_month
    out = _split_used_idle(paid, _share(d.busy_replica_hours, d.fixed_replicas * HOURS_PER_MONTH))
    added = additions(d.fixed_replicas)
    out["setup_usd"] = added * o.setup_usd
    out["power_usd"] = onprem_power_kw(d, o, p) * HOURS_PER_MONTH * o.usd_per_kwh
    tail = added * beyond_horizon_months(horizon_months, o.term_months, False)
    return out, {"idle_usd": tail.sum(axis=0) * o.usd_per_month}


def onprem_power_kw(d: Demand, o: OfferArrays, p: CostParams) -> np.ndarray:
    """(M, N) facility power: n x (accelerators x TDP x (idle + (1 - idle) x utilisation)
    + host power) x PUE, in kW."""
    util = np.clip(_share(d.busy_replica_hours, d.fixed_replicas * HOURS_PER_MONTH), 0.0, 1.0)
    idle = p.accel_idle_power_fraction
    accel_w = o.accelerators * o.accel_tdp_w * (idle + (1.0 - idle) * util)
    return d.fixed_replicas * (accel_w + o.host_power_w) * o.pue / W_PER_KW


def _book_share(age_months: np.ndarray, o: OfferArrays, at_end: bool) -> np.ndarray:
    """Share of its purchase a server ``age_months`` old (``(..., N)``) is worth on the books: straight-line
    ``1 - (1 - residual) x age / life``. A server past its life was replaced, as the depreciation charges
    assume, so its age restarts: at the end of a month it reaches its life it is the old server, at the
    residual (``at_end``); at the start of the next it is the new one, at the full price."""
    life_m = o.life_years * MONTHS_PER_YEAR
    eps = 1e-9 if at_end else 0.0
    with np.errstate(invalid="ignore", divide="ignore"):
        age = np.where(life_m > 0, age_months - np.floor((age_months - eps) / life_m) * life_m, age_months)
        share = 1.0 - (1.0 - o.residual_fraction) * np.clip(age / life_m, 0.0, 1.0)
    return np.nan_to_num(share)


def book_value_at_horizon(fixed: np.ndarray, o: OfferArrays, horizon_months: int) -> np.ndarray:
    """(N,) book value left at the horizon's end of every server bought (``additions`` of the fleet):
    purchase x ``_book_share`` of its age then."""
    age = (horizon_months - np.arange(horizon_months, dtype=float))[:, None] * np.ones(len(o))[None, :]
    return (additions(fixed) * _book_share(age, o, at_end=True) * o.purchase_usd[None, :]).sum(axis=0)


def on_prem(d: Demand, o: OfferArrays, p: CostParams) -> tuple[Arrays, Arrays]:
    """Owned servers: straight-line depreciation of purchase x (1 - residual) over the life,
    power x PUE x USD/kWh x 730 h, colocation on provisioned IT kW, maintenance as a yearly
    share of the purchase, installation as setup. At the horizon's end the servers are sold: the
    book value left is recovered less ``onprem_resale_haircut_fraction`` (``resale_loss_usd``), so the
    horizon pays purchase - resale, as cash does; a short pilot never buys for its depreciation alone."""
    depreciation = o.purchase_usd * (1.0 - o.residual_fraction) / (o.life_years * MONTHS_PER_YEAR)
    paid = d.fixed_replicas * depreciation
    out = _split_used_idle(paid, _share(d.busy_replica_hours, d.fixed_replicas * HOURS_PER_MONTH))
    waiting = lead_share(d.months, o)
    live = 1.0 - waiting
    out["power_usd"] = onprem_power_kw(d, o, p) * HOURS_PER_MONTH * o.usd_per_kwh * live
    provisioned_kw = (o.accelerators * o.accel_tdp_w + o.host_power_w) / W_PER_KW
    out["colocation_usd"] = d.fixed_replicas * provisioned_kw * o.colocation_usd_per_kw_month * live
    out["maintenance_usd"] = (d.fixed_replicas * o.purchase_usd * o.maintenance_share_per_year / MONTHS_PER_YEAR
                              * live)
    out["bridge_usd"] = d.needed_replica_hours * waiting * np.nan_to_num(o.bridge_usd_per_hour)
    out["setup_usd"] = additions(d.fixed_replicas) * o.setup_usd
    loss = book_value_at_horizon(d.fixed_replicas, o, d.months) * p.onprem_resale_haircut_fraction
    if p.capital_rate_per_year > 0:
        out["capital_usd"] = book_value_by_month(d.fixed_replicas, o) * p.capital_rate_per_year / MONTHS_PER_YEAR
    return out, {"resale_loss_usd": loss}


def lead_share(months: int, o: OfferArrays) -> np.ndarray:
    """(M, N) share of each month before bought servers serve (``o.lead_months`` from the order at month 0;
    growth is ordered that far ahead, so only the first fleet waits). The load of those hours runs on
    the cloud at ``o.bridge_usd_per_hour`` (``bridge_usd``); the servers draw no power or colocation and
    their warranty has not started. Depreciation and resale follow the calendar: a server's market value
    falls while it is in transit as after."""
    m = np.arange(months, dtype=float)[:, None]
    return np.clip(np.nan_to_num(o.lead_months)[None, :] - m, 0.0, 1.0)


def book_value_by_month(fixed: np.ndarray, o: OfferArrays) -> np.ndarray:
    """(M, N) book value at the start of each month of the servers held: each bought at its month (the
    fleet's ``additions``) and worth ``_book_share`` of its purchase. Owned servers (purchase 0) hold none."""
    added = additions(fixed)
    months = np.arange(added.shape[0], dtype=float)
    age = (months[:, None] - months[None, :])[:, :, None] * np.ones(len(o))  # (month, bought, N)
    share = np.where(age >= 0, _book_share(age, o, at_end=False), 0.0)
    return np.einsum("mbn,bn->mn", share, added) * np.nan_to_num(o.purchase_usd)[None, :]


def replicas_held(d: Demand, o: OfferArrays) -> np.ndarray:
    """(M, N) average replicas held: needed hours / 730 for elastic modes, the fleet otherwise."""
    elastic = np.isin(o.mode, PER_START_MODES)
    return np.where(elastic[None, :], elastic_paid_hours(d, o) / HOURS_PER_MONTH, d.fixed_replicas)


def compute_side(d: Demand, o: OfferArrays, p: CostParams, horizon_months: int) -> tuple[Arrays, Arrays]:
    """Dispatch every candidate to its mode's formula; keys a mode does not use are zero."""
    shape = d.needed_replica_hours.shape
    monthly: Arrays = {}
    beyond: Arrays = {}
    for modes, fn in (
        (("cloud_on_demand",), lambda: on_demand(d, o, p)),
        (("cloud_spot",), lambda: spot(d, o, p)),
        (("cloud_capacity_block",), lambda: capacity_block(d, o, p)),
        (("cloud_reserved_1y", "cloud_reserved_3y"), lambda: reserved(d, o, p, horizon_months)),
        (("dedicated_monthly",), lambda: dedicated(d, o, p, horizon_months)),
        (("on_prem",), lambda: on_prem(d, o, p)),
    ):
        mask = np.isin(o.mode, modes)
        if not mask.any():
            continue
        with np.errstate(invalid="ignore", divide="ignore"):
            part_m, part_b = fn()
        for key, value in part_m.items():
            monthly.setdefault(key, np.zeros(shape))
            monthly[key] = np.where(mask[None, :], np.broadcast_to(value, shape), monthly[key])
        for key, value in part_b.items():
            beyond.setdefault(key, np.zeros(shape[1]))
            beyond[key] = np.where(mask, value, beyond[key])
    return monthly, beyond
