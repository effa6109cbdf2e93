"""From load and capacity per replica to replicas: autoscaled hours and fixed, peak-sized fleets.

A *replica* is the unit that serves (or trains): one configuration from the performance model, with
its price per replica. Shapes: M months of the horizon, K load bins of the representative month
(``usage.LoadProfile``), N candidates.

- One sizing rule for every mode: capacity for the load x (1 + headroom). Elastic (cloud on-demand,
  spot) realtime serving runs ``ceil(load_h x (1 + headroom) / capacity)`` replicas each hour (the
  headroom covers the autoscaler's lag: load keeps rising while a new replica boots), at least
  ``min_replicas`` (1 for realtime) while the service is active, none while it is inactive; fixed
  modes hold ``ceil(peak x (1 + headroom) / capacity)``. Paid replica-hours = sum over bins of
  hours x replicas. Batch work and training on elastic capacity start cold ``starts_per_month``
  times (one window a day, or one per run): each start runs the replicas that finish it in its
  window, each billed as sold (``cost.modes.billed_hours``: start-up + work, rounded up to the
  provider's increment, at least its minimum).
- Busy replica-hours = sum of hours x load / capacity: the work actually done. Paid minus busy is
  the idle capacity the breakdown reports.
- Fixed (reserved, dedicated, on-prem): ``ceil(peak x (1 + headroom) / capacity)`` replicas, at
  least one, re-sized each month as traffic grows and never shrunk (hardware bought or contracted
  stays): the month it steps up is the month the fleet runs out of capacity.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from infrafit.cost.usage import LoadProfile
from infrafit.errors import InputError
from infrafit.units import HOURS_PER_MONTH, MONTHS_PER_YEAR, SECONDS_PER_HOUR


@dataclass(frozen=True)
class Demand:
    """What N candidates must provide over M months; arrays are (M, N) unless noted."""

    needed_replica_hours: np.ndarray  # elastic: paid replica-hours each month
    busy_replica_hours: np.ndarray  # work done, in replica-hours at full capacity
    fixed_replicas: np.ndarray  # fixed modes: replicas held each month (integers)
    active_hours: float  # hours a month the service runs (spot's on-demand fallback is held that long)
    realtime: bool
    requests_per_month: np.ndarray  # (M,)
    output_tokens_per_month: np.ndarray  # (M,)
    runs_per_month: float = 0.0  # training runs completed per month
    epochs_per_run: float = 0.0
    starts_per_month: float = 0.0  # batch and training on elastic capacity: cold starts a month (0 = fluid)
    replicas_per_start: np.ndarray | None = None  # (M, N) replicas each start runs (None = 1)
    scaleups_per_month: np.ndarray | None = None  # (M, N) realtime elastic: replicas started a month

    @property
    def months(self) -> int:
        return int(self.needed_replica_hours.shape[0])

    @property
    def candidates(self) -> int:
        return int(self.needed_replica_hours.shape[1])


def _check_capacity(capacity: np.ndarray, what: str) -> np.ndarray:
    capacity = np.atleast_1d(np.asarray(capacity, dtype=float))
    if np.any(~np.isfinite(capacity)) or np.any(capacity <= 0):
        raise InputError(
            f"{what} must be positive and finite for every candidate",
            fix="drop candidates whose performance estimate is zero or undefined before pricing them",
        )
    return capacity


def zone_replicas(need: np.ndarray, zones: int, min_replicas: int = 1) -> np.ndarray:
    """Replicas that serve ``need`` (replicas' worth of load) across ``zones`` and ride through the
    loss of any one: each zone holds ``ceil(need / (zones - 1))``, so ``zones x`` that in all (one zone
    is a plain ``need``); never fewer than ``min_replicas`` nor one per zone. Zero need stays zero."""
    need = np.asarray(need, dtype=float)
    spread = need if zones <= 1 else zones * np.ceil(need / (zones - 1) - 1e-9)
    return np.where(need > 0, np.maximum(spread, float(max(min_replicas, zones))), 0.0)


def fixed_replicas(peak_by_month: np.ndarray, capacity: np.ndarray, headroom_fraction: float,
                   zones: int = 1, min_replicas: int = 1) -> np.ndarray:
    """Step plan (M, N): ceil(peak_m x (1 + headroom) / capacity), >= 1, spread over ``zones``
    (``zone_replicas``), never shrinking."""
    need = np.maximum(np.ceil(np.outer(peak_by_month, 1.0 + headroom_fraction) / capacity[None, :] - 1e-9), 1.0)
    return np.maximum.accumulate(zone_replicas(need, zones, min_replicas), axis=0)


def inference_demand(
    profile: LoadProfile,
    capacity_rps: np.ndarray,
    growth: np.ndarray,
    *,
    headroom_fraction: float,
    realtime: bool = True,
    min_replicas: int = 1,
    output_tokens_per_request: float = 0.0,
    starts_per_month: float = 0.0,
    zones: int = 1,
) -> Demand:
    """Realtime (per-hour ceil, minimum replicas while active, spread over ``zones``) or batch inference
    demand."""
    cap = _check_capacity(capacity_rps, "capacity_rps (requests/s one replica sustains within the SLOs)")
    growth = np.asarray(growth, dtype=float)
    floor = np.where(profile.active, float(min_replicas if realtime else 0), 0.0)
    busy = np.empty((len(growth), len(cap)))
    needed = np.empty_like(busy)
    for m, g in enumerate(growth):  # M iterations over (K, N) blocks keeps memory flat
        per_replica = np.outer(profile.load_rps * g, 1.0 / cap)
        busy[m] = profile.hours @ per_replica
        if realtime:  # the same headroom as fixed modes (for the autoscaler's lag)
            sized = np.ceil(per_replica * (1.0 + headroom_fraction) - 1e-9)
            held = np.where(profile.active[:, None], zone_replicas(np.maximum(sized, 1.0), zones, min_replicas), 0.0)
            needed[m] = profile.hours @ np.maximum(held, floor[:, None])
        else:
            needed[m] = busy[m]
    peak = profile.peak_rps * growth
    scaleups = None
    if realtime:
        fixed = fixed_replicas(peak, cap, headroom_fraction, zones, min_replicas)
        scaleups = scaleups_per_month(profile, cap, growth, headroom_fraction, zones, min_replicas)
    else:  # batch: enough replicas to finish the month's work within the active hours, plus headroom
        hours = max(profile.active_hours, 1e-9)
        fixed = np.maximum.accumulate(np.maximum(np.ceil(busy * (1 + headroom_fraction) / hours - 1e-9), 1), axis=0)
    requests = profile.requests_per_month * growth
    return Demand(needed, busy, fixed, profile.active_hours, realtime, requests, requests * output_tokens_per_request,
                  starts_per_month=0.0 if realtime else float(starts_per_month),
                  replicas_per_start=None if realtime else fixed, scaleups_per_month=scaleups)


def scaleups_per_month(profile: LoadProfile, cap: np.ndarray, growth: np.ndarray, headroom_fraction: float,
                       zones: int = 1, min_replicas: int = 1) -> np.ndarray | None:
    """(M, N) replicas an autoscaler starts each month on elastic capacity: over the week in time order
    (``LoadProfile.week_load_rps``) the hourly replica count ``r_h`` (the same sizing as the paid hours),
    ``sum_h max(0, r_h - r_(h-1))`` per week (cyclic: Monday follows Sunday) x 730 / 168. A flat load
    starts none; a business-hours service starts its replicas every working morning. Computed once per
    distinct capacity (configurations on many offers share it)."""
    week = profile.week_load_rps
    if week is None:
        return None
    uniq, inverse = np.unique(cap, return_inverse=True)
    out = np.empty((len(growth), len(uniq)))
    on = week > 0
    for m, g in enumerate(growth):
        per_replica = np.outer(week * g, 1.0 / uniq)
        sized = np.ceil(per_replica * (1.0 + headroom_fraction) - 1e-9)
        held = np.where(on[:, None], zone_replicas(np.maximum(sized, 1.0), zones, min_replicas), 0.0)
        out[m] = np.maximum(held - np.roll(held, 1, axis=0), 0.0).sum(axis=0) * (HOURS_PER_MONTH / len(week))
    return out[:, inverse]


def training_demand(
    time_to_train_s: np.ndarray,
    runs_per_year: float,
    months: int,
    *,
    headroom_fraction: float,
    epochs_per_run: float = 0.0,
) -> Demand:
    """Training: run length x runs per month hours a month per candidate; a fixed fleet holds
    enough replicas to fit those hours in a month with headroom (at least one).

    Runs per month are runs_per_year / 12, except that a horizon shorter than the interval between
    runs still holds one whole run: a one-off 3-week pre-training run planned over a 2-month horizon
    is paid in full, not as 2/12 of a yearly run."""
    tts = _check_capacity(time_to_train_s, "time_to_train_s")
    runs_in_horizon = max(runs_per_year * months / MONTHS_PER_YEAR, 1.0)
    runs_per_month = runs_in_horizon / months
    hours = tts / SECONDS_PER_HOUR * runs_per_month
    needed = np.broadcast_to(hours, (months, len(tts))).copy()
    fixed = np.maximum(np.ceil(needed * (1 + headroom_fraction) / HOURS_PER_MONTH - 1e-9), 1.0)
    zeros = np.zeros(months)
    return Demand(needed, needed.copy(), fixed, 0.0, False, zeros, zeros,
                  runs_per_month=runs_per_month, epochs_per_run=epochs_per_run, starts_per_month=runs_per_month)


def capacity_events(fixed: np.ndarray, capacity: float, peak_by_month: np.ndarray | None = None) -> list[dict]:
    """For one candidate's fixed fleet (M,): the months it runs out of capacity and what to add."""
    fixed = np.asarray(fixed, dtype=float)
    events = []
    for m in range(1, len(fixed)):
        added = int(round(fixed[m] - fixed[m - 1]))
        if added > 0:
            event = {"month": m, "add_replicas": added, "total_replicas": int(fixed[m]),
                     "capacity_before_rps": float(fixed[m - 1] * capacity)}
            if peak_by_month is not None:
                event["peak_load_rps"] = float(peak_by_month[m])
            events.append(event)
    return events
