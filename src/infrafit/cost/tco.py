"""Total cost of ownership of N candidates over the horizon: the planner's entry point.

``price_options(demand, offers, ...)`` adds to each mode's compute-side cost (``cost.modes``) the
costs every mode has: storage, egress of responses to users, operations labour (engineer hours per
month by mode x the user's rate) and one-time migration (engineer-weeks x 40 h x rate, month 0).
Everything is numpy over (months, candidates); thousands of candidates price in milliseconds.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import cached_property, reduce

import numpy as np

from infrafit.cost.capacity_plan import Demand, capacity_events
from infrafit.cost.carbon import energy_kwh
from infrafit.cost.modes import block_months, book_value_at_horizon, compute_side, replicas_held
from infrafit.cost.offers import OfferArrays
from infrafit.cost.params import BREAKDOWN_KEYS, MODELLED_COST_KEYS, PER_START_MODES, CostParams
from infrafit.cost.storage_egress import StorageNeeds, response_bytes, storage_usd, tiered_cost
from infrafit.cost.workflow import porting_usd, stranded_usd
from infrafit.errors import InputError
from infrafit.units import G_PER_KG, GB, MONTHS_PER_YEAR, PER_MILLION, PER_THOUSAND

ONE_TIME_KEYS = ("migration_usd", "setup_usd")


def _add_in_order(arrays: list[np.ndarray]) -> np.ndarray:
    """Element-wise sum, left to right (the same rounding as ``sum``; numpy's pairwise sum differs in
    the last bits, which would reorder near-ties)."""
    return np.asarray(reduce(np.add, arrays))


@dataclass(frozen=True, eq=False)
class CostResult:
    """Costs of N candidates over M months. ``monthly[key]`` is (M, N); ``beyond[key]`` (N,) is what
    is owed after the horizon (rest of a reserved term or contract); ``breakdown[key]`` (N,) sums
    both, and ``tco_usd`` is the sum of the breakdown."""

    mode: np.ndarray
    horizon_months: int
    monthly: dict[str, np.ndarray]
    beyond: dict[str, np.ndarray]
    demand: Demand
    resale_usd: np.ndarray | None = None  # (N,) on-prem: what the servers sell for at the horizon's end
    commitment_months: np.ndarray | None = None  # (N,) months committed at purchase or signature
    energy_kwh: np.ndarray | None = None  # (M, N) facility energy each month (cost.carbon)
    grid_co2e_g_per_kwh: np.ndarray | None = None  # (N,) the grid's intensity; NaN = no source

    @cached_property
    def cash_outlay_usd(self) -> np.ndarray:
        """(N,) cash paid out, commitments after the horizon included, before any resale: the TCO plus
        what selling owned servers at the end brings back."""
        return self.tco_usd + (0.0 if self.resale_usd is None else self.resale_usd)

    @cached_property
    def breakdown(self) -> dict[str, np.ndarray]:
        return {k: self.monthly[k].sum(axis=0) + self.beyond[k] for k in BREAKDOWN_KEYS}

    @cached_property
    def metered_usd(self) -> np.ndarray:
        """(N,) the TCO without the modelled engineer time (``MODELLED_COST_KEYS``): what invoices would say."""
        return self.tco_usd - sum(self.breakdown[k] for k in MODELLED_COST_KEYS)

    @cached_property
    def monthly_total(self) -> np.ndarray:
        """(M, N) everything paid in each month, one-time items included."""
        return _add_in_order([self.monthly[k] for k in BREAKDOWN_KEYS])

    @cached_property
    def recurring_monthly(self) -> np.ndarray:
        """(M, N) each month without one-time items (setup fees, migration)."""
        return _add_in_order([self.monthly[k] for k in BREAKDOWN_KEYS if k not in ONE_TIME_KEYS])

    @cached_property
    def tco_usd(self) -> np.ndarray:
        return self.monthly_total.sum(axis=0) + sum(self.beyond[k] for k in BREAKDOWN_KEYS)

    @cached_property
    def monthly_usd(self) -> np.ndarray:
        """First month's recurring cost (what the first invoice looks like)."""
        return self.recurring_monthly[0]

    @cached_property
    def peak_monthly_usd(self) -> np.ndarray:
        """Largest recurring month over the horizon (the one to hold against a monthly budget)."""
        return self.recurring_monthly.max(axis=0)

    @cached_property
    def co2e_kg(self) -> np.ndarray:
        """(N,) emissions over the horizon, kg CO2e (location-based); NaN where the grid has no source."""
        if self.energy_kwh is None or self.grid_co2e_g_per_kwh is None:
            return np.full(self.tco_usd.shape, np.nan)
        return self.energy_kwh.sum(axis=0) * self.grid_co2e_g_per_kwh / G_PER_KG

    @cached_property
    def feasible(self) -> np.ndarray:
        return np.isfinite(self.tco_usd)

    def per_unit(self) -> dict[str, np.ndarray]:
        """USD per 1M output tokens, per 1k requests, per training run, per epoch (NaN when the
        workload has none of that unit)."""
        d, tco = self.demand, self.tco_usd
        tokens = float(d.output_tokens_per_month.sum())
        requests = float(d.requests_per_month.sum())
        runs = d.runs_per_month * self.horizon_months
        with np.errstate(divide="ignore", invalid="ignore"):
            per_run = tco / runs if runs > 0 else np.full_like(tco, np.nan)
            return {
                "usd_per_1m_output_tokens": tco / tokens * PER_MILLION if tokens > 0 else np.full_like(tco, np.nan),
                "usd_per_1k_requests": tco / requests * PER_THOUSAND if requests > 0 else np.full_like(tco, np.nan),
                "usd_per_training_run": per_run,
                "usd_per_epoch": per_run / d.epochs_per_run if d.epochs_per_run > 0 else np.full_like(tco, np.nan),
            }

    def to_json(self, i: int, capacity: float | None = None) -> dict:
        """The ``cost`` object of one option in ``plan --json`` (DESIGN.md section 4)."""
        units = self.per_unit()
        monthly = [{k: float(self.monthly[k][m, i]) for k in BREAKDOWN_KEYS} | {"month": m}
                   for m in range(self.horizon_months)]
        return {
            "deployment": str(self.mode[i]),
            "monthly_usd": float(self.monthly_usd[i]),
            "peak_monthly_usd": float(self.peak_monthly_usd[i]),
            "tco_usd": float(self.tco_usd[i]),
            "cash_outlay_usd": float(self.cash_outlay_usd[i]),
            "commitment_months": float(self.commitment_months[i]) if self.commitment_months is not None else 0.0,
            "horizon_months": self.horizon_months,
            "per_unit": {k: _num(v[i]) for k, v in units.items()},
            "breakdown": {k: float(v[i]) for k, v in self.breakdown.items()},
            "monthly": monthly,
            "energy": self.energy_json(i),
            "replicas": [float(r) for r in self.demand.fixed_replicas[:, i]],
            "capacity_events": capacity_events(self.demand.fixed_replicas[:, i], capacity or 0.0)
            if str(self.mode[i]) not in PER_START_MODES else [],
        }


    def energy_json(self, i: int) -> dict:
        """Energy and emissions of candidate ``i``: per month on average over the horizon."""
        if self.energy_kwh is None:
            return {"energy_kwh_per_month": None, "grid_co2e_g_per_kwh": None, "co2e_kg_per_month": None}
        months = max(self.horizon_months, 1)
        grid = float(self.grid_co2e_g_per_kwh[i]) if self.grid_co2e_g_per_kwh is not None else float("nan")
        return {"energy_kwh_per_month": float(self.energy_kwh[:, i].sum()) / months,
                "grid_co2e_g_per_kwh": _num(grid), "co2e_kg_per_month": _num(float(self.co2e_kg[i]) / months)}


def _num(x: float) -> float | None:
    return float(x) if np.isfinite(x) else None


def ops_duty(demand: Demand, offers: OfferArrays) -> np.ndarray:
    """(N,) share of months that pay the fixed ops hours. Elastic capacity that starts less than once a
    month (training 4 times a year) pays them per start: a month with a run has its images refreshed,
    the run watched and the capacity released, a month without one has nothing running to operate.
    Fixed modes (reserved, dedicated, on-prem) hold hardware every month and pay every month."""
    elastic = np.isin(offers.mode, PER_START_MODES)
    starts = float(demand.starts_per_month)
    return np.where(elastic & (starts > 0), min(1.0, starts), 1.0)


def price_options(
    demand: Demand,
    offers: OfferArrays,
    *,
    horizon_months: int,
    engineer_usd_per_hour: float,
    storage: StorageNeeds | None = None,
    egress_bytes_per_month: np.ndarray | None = None,
    params: CostParams | None = None,
    changes=None,
) -> CostResult:
    """Price N candidates (``demand`` and ``offers`` both of length N) over the horizon.

    ``egress_bytes_per_month`` (M,) defaults to the responses sent to users: output tokens x
    ``params.bytes_per_output_token``. Egress is priced on each candidate's tiers; storage on its
    USD/GB-month by tier. ``changes`` (``cost.workflow.ChangeRates``) prices model changes: porting
    repaid per change and commitments stranded by changes that need other hardware.
    """
    p = params or CostParams()
    if demand.months != horizon_months or demand.candidates != len(offers):
        raise InputError(
            f"demand covers {demand.months} months x {demand.candidates} candidates, offers "
            f"{len(offers)} candidates over {horizon_months} months",
            fix="build the demand with the same horizon and the same candidate order as the offers",
        )
    if engineer_usd_per_hour < 0:
        raise InputError("engineer_usd_per_hour is negative", fix="give the loaded hourly cost of an engineer")
    monthly, beyond = compute_side(demand, offers, p, horizon_months)
    shape = demand.needed_replica_hours.shape
    if egress_bytes_per_month is None:
        egress_bytes_per_month = response_bytes(demand.output_tokens_per_month, p.bytes_per_output_token)
    gb = np.broadcast_to(np.asarray(egress_bytes_per_month, dtype=float)[:, None] / GB, shape)
    monthly["egress_usd"] = tiered_cost(gb, offers.egress_tier_upto_gb, offers.egress_usd_per_gb)
    if storage is not None:
        monthly["storage_usd"] = np.broadcast_to(
            storage_usd(storage, offers.storage_usd_per_gb_month, shape[1]), shape).copy()
    held = replicas_held(demand, offers)
    duty = ops_duty(demand, offers)
    ops_hours = offers.ops_hours_per_month * duty + offers.ops_hours_per_replica_month * held
    monthly["ops_labour_usd"] = ops_hours * engineer_usd_per_hour
    monthly["platform_usd"] = np.broadcast_to(offers.platform_usd_per_month * duty, shape).copy()
    migration = np.zeros(shape)
    migration[0] = offers.migration_engineer_weeks * p.hours_per_engineer_week * engineer_usd_per_hour
    monthly["migration_usd"] = migration
    if changes is not None:
        monthly["model_change_usd"] = porting_usd(offers, changes, shape[0], p.hours_per_engineer_week,
                                                  engineer_usd_per_hour)
        monthly["stranded_commitment_usd"] = stranded_usd(monthly, demand, offers, p, changes)
    for key in BREAKDOWN_KEYS:
        monthly.setdefault(key, np.zeros(shape))
        beyond.setdefault(key, np.zeros(shape[1]))
    owned = offers.mode == "on_prem"
    book = np.where(owned, book_value_at_horizon(demand.fixed_replicas, offers, horizon_months), 0.0)
    resale = book * (1.0 - p.onprem_resale_haircut_fraction)
    elastic = np.isin(offers.mode, PER_START_MODES)
    # a purchase commits for the server's life; servers already owned (purchase 0: sunk) commit to nothing new
    bought = owned & (np.nan_to_num(offers.purchase_usd) > 0)
    commitment = np.where(elastic | (owned & ~bought), 0.0,
                          np.where(owned, offers.life_years * MONTHS_PER_YEAR, offers.term_months))
    commitment = np.where(offers.mode == "cloud_capacity_block", block_months(demand, offers), commitment)
    return CostResult(offers.mode, horizon_months, monthly, beyond, demand, resale, np.nan_to_num(commitment),
                      energy_kwh(demand, offers, p), offers.grid_co2e_g_per_kwh)
