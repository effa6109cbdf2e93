"""From a usage pattern to load, hour by hour: the representative month the cost model prices.

A month is 730 hours (``units.HOURS_PER_MONTH``, 8760 / 12, the convention cloud providers bill
monthly prices by). It is built from a representative week (168 hours: the daily profile repeated,
weekends at the night level for ``business-hours``) whose every hour stands for 730 / 168 hours of
the month. Identical hourly loads are merged, so a month is a handful of (load, hours) bins: the
capacity plan then works on arrays of shape (months, bins, candidates) and stays fast.

Traffic mapping: ``requests_per_s`` is the mean over the active hours and ``peak_requests_per_s``
the busiest hour. The profile's shape ``s`` (24 factors, max 1) is raised to the power g that makes
both hold: ``load_h = mean x s_h^g / mean(s^g)`` (``shape_to_load``). Without a peak the shape is
only rescaled to the mean. A shape too flat for the peak (``flat``) gets the peak in its busiest hour
of each day, the other hours scaled so the mean holds: elastic capacity then pays for the peak hours
that fixed capacity is sized for.
"""

from __future__ import annotations

import functools
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from infrafit.errors import InputError, suggest
from infrafit.units import HOURS_PER_DAY, HOURS_PER_MONTH, HOURS_PER_WEEK, MONTHS_PER_YEAR, SECONDS_PER_HOUR

_BUSINESS_START_H, _BUSINESS_END_H = 9, 18  # local working day, 09:00-18:00
_NIGHT_FACTOR = 0.1  # assumption: overnight traffic of an office tool is ~10 % of the working-hours level
_SHOULDER_FACTOR = 0.4  # 07-09 and 18-21: commute and evening use
_DIURNAL_PEAK_H = 14.0  # consumer traffic peaks in the afternoon/evening; trough 12 h later
_DIURNAL_DEPTH = 0.5  # trough = (1 - 0.5) / (1 + 0.5) = 1/3 of peak

PROFILE_NAMES: tuple[str, ...] = ("flat", "business-hours", "diurnal")


def daily_shape(profile: str | Sequence[float]) -> np.ndarray:
    """24 non-negative hourly factors (local time) for a named profile or an explicit list."""
    if not isinstance(profile, str):
        shape = np.asarray(profile, dtype=float)
        if shape.shape != (24,) or not np.all(np.isfinite(shape)) or np.any(shape < 0) or shape.sum() <= 0:
            raise InputError(
                "daily_profile must be 24 non-negative hourly factors, not all zero",
                fix="give 24 numbers, one per hour of the local day, or flat|business-hours|diurnal",
            )
        return shape
    hours = np.arange(24, dtype=float)
    if profile == "flat":
        return np.ones(24)
    if profile == "business-hours":
        shape = np.full(24, _NIGHT_FACTOR)
        shape[7:21] = _SHOULDER_FACTOR
        shape[_BUSINESS_START_H:_BUSINESS_END_H] = 1.0
        return shape
    if profile == "diurnal":
        return 1.0 + _DIURNAL_DEPTH * np.cos(2 * np.pi * (hours - _DIURNAL_PEAK_H) / 24.0)
    raise InputError(
        f"unknown daily_profile {profile!r}{suggest(profile, PROFILE_NAMES)}",
        fix=f"use one of {', '.join(PROFILE_NAMES)} or a list of 24 factors",
    )


def weekly_shape(profile: str | Sequence[float]) -> np.ndarray:
    """168 hourly factors: the daily shape each day; business-hours weekends stay at the night level."""
    day = daily_shape(profile)
    week = np.tile(day, 7)
    if isinstance(profile, str) and profile == "business-hours":
        week[5 * 24 :] = _NIGHT_FACTOR
    return week


def shape_to_load(shape: np.ndarray, mean_rps: float, peak_rps: float | None) -> np.ndarray:
    """``_shape_to_load`` remembered per (shape, mean, peak): a fleet search maps the same week onto the same
    loads for every pool it tries (a fresh array each call, so a caller may modify it)."""
    shape = np.asarray(shape, dtype=float)
    return _shape_to_load_cached(shape.tobytes(), float(mean_rps), None if peak_rps is None else float(peak_rps)).copy()


@functools.lru_cache(maxsize=1024)
def _shape_to_load_cached(shape_bytes: bytes, mean_rps: float, peak_rps: float | None) -> np.ndarray:
    return _shape_to_load(np.frombuffer(shape_bytes, dtype=float), mean_rps, peak_rps)


def _shape_to_load(shape: np.ndarray, mean_rps: float, peak_rps: float | None) -> np.ndarray:
    """Map a shape onto (mean, peak) requests/s: ``load = mean x s^g / mean(s^g)``.

    The exponent g >= 0 is found by bisection so that max/mean equals peak/mean (max(s^g)/mean(s^g)
    rises monotonically with g from 1 at g = 0). Both the mean and the peak then hold exactly and no
    hour goes negative. A shape cannot be peakier than 1 / (share of hours at its maximum); beyond
    that (and for a flat shape) one hour a day carries the peak (``_with_peak_hours``).
    """
    shape = shape / shape.max()
    if peak_rps is None or mean_rps <= 0 or peak_rps <= mean_rps:
        return mean_rps * shape / shape.mean()
    target = peak_rps / mean_rps
    lo, hi = 0.0, 64.0
    for _ in range(60):  # bisection on g; 60 halvings of [0, 64] reach float resolution
        mid = 0.5 * (lo + hi)
        ratio = 1.0 / np.mean(np.where(shape > 0, shape, 0.0) ** mid)
        lo, hi = (mid, hi) if ratio < target else (lo, mid)
    powered = np.where(shape > 0, shape, 0.0) ** lo
    load = mean_rps * powered / powered.mean()
    if load.max() < peak_rps * (1.0 - 1e-6):
        return _with_peak_hours(load, mean_rps, peak_rps)
    return load


def _with_peak_hours(load: np.ndarray, mean_rps: float, peak_rps: float) -> np.ndarray:
    """A shape too flat for the declared peak (``flat``, or a peak beyond ``1 / share of hours at the
    maximum``): the busiest hour of each day that reaches the shape's maximum carries the peak, and the
    other hours keep their shape, scaled down so the mean still holds. The peak is then a real hour of
    the month, which elastic capacity pays for like fixed capacity is sized for it. A peak above what the
    mean allows in those hours (every other hour at 0) is kept aside as before (``declared_peak_rps``)."""
    days = load.reshape(-1, int(HOURS_PER_DAY))
    busiest = days.max(axis=1) >= load.max() * (1.0 - 1e-9)
    by_day = np.zeros(days.shape, bool)
    by_day[np.flatnonzero(busiest), np.argmax(days[busiest], axis=1)] = True
    peak = by_day.ravel()
    rest = mean_rps * load.size - peak_rps * peak.sum()
    if rest < 0 or load[~peak].sum() <= 0:
        return load
    return np.where(peak, peak_rps, load * rest / load[~peak].sum())


@dataclass(frozen=True)
class LoadProfile:
    """A month of load as bins: ``load_rps[k]`` holds for ``hours[k]`` hours; ``active[k]`` False is
    time with no service at all (scale to zero, no minimum replica). ``sum(hours) == 730``.
    ``declared_peak_rps`` is the spec's peak, which fixed capacity is sized for even when the
    profile never reaches it (a flat profile)."""

    load_rps: np.ndarray
    hours: np.ndarray
    active: np.ndarray
    declared_peak_rps: float = 0.0
    #: the week in time order, hour by hour (0 where the service is off): what autoscaling follows, so
    #: what counts scale-ups (``capacity_plan.scaleups_per_month``); None = unknown (no start-up counted)
    week_load_rps: np.ndarray | None = None

    @property
    def peak_rps(self) -> float:
        """Busiest hour of the month, or the declared peak if higher."""
        busiest = float(self.load_rps[self.active].max()) if self.active.any() else 0.0
        return max(busiest, self.declared_peak_rps)

    @property
    def active_hours(self) -> float:
        return float(self.hours[self.active].sum())

    @property
    def requests_per_month(self) -> float:
        return float((self.load_rps * self.hours).sum() * SECONDS_PER_HOUR)

    def scaled(self, factor: float) -> LoadProfile:
        """The same shape with every load multiplied by ``factor`` (growth, sensitivity)."""
        week = None if self.week_load_rps is None else self.week_load_rps * factor
        return LoadProfile(self.load_rps * factor, self.hours, self.active, self.declared_peak_rps * factor, week)


def month_profile(
    mean_rps: float,
    peak_rps: float | None = None,
    profile: str | Sequence[float] = "flat",
    active_hours_per_month: float = HOURS_PER_MONTH,
) -> LoadProfile:
    """The representative month for inference traffic.

    ``active_hours_per_month`` < 730 (pattern ``periodic`` or ``occasional``) keeps the busiest
    hours of the week active, scaled to that many hours, and adds one inactive bin for the rest.
    """
    peak_below_mean = peak_rps is not None and peak_rps < mean_rps
    if mean_rps < 0 or peak_below_mean or not 0 <= active_hours_per_month <= HOURS_PER_MONTH:
        raise InputError(
            f"traffic mean {mean_rps} req/s, peak {peak_rps} req/s, active {active_hours_per_month} h/month "
            "are inconsistent",
            fix="use mean >= 0, peak >= mean, and active hours between 0 and 730 per month",
        )
    load = shape_to_load(weekly_shape(profile), mean_rps, peak_rps)
    week = _week_in_order(load, active_hours_per_month, mean_rps)
    values, counts = np.unique(np.round(load, 9), return_counts=True)
    hours = counts * (HOURS_PER_MONTH / HOURS_PER_WEEK)
    order = np.argsort(-values)  # busiest first: those are the hours a periodic service is on
    values, hours = values[order], hours[order]
    if active_hours_per_month < HOURS_PER_MONTH:
        hours = hours * (active_hours_per_month / HOURS_PER_MONTH)
        values = shape_to_load_mean(values, hours, mean_rps)
        inactive = HOURS_PER_MONTH - active_hours_per_month
        values, hours = np.append(values, 0.0), np.append(hours, inactive)
        active = np.append(np.ones(len(order), bool), False)
    else:
        active = np.ones(len(values), bool)
    return LoadProfile(values, hours, active, float(peak_rps or 0.0), week)


def _week_in_order(load: np.ndarray, active_hours_per_month: float, mean_rps: float) -> np.ndarray:
    """The week's hourly load in time order; a part-time service is on in its busiest hours (as the
    binned month keeps them) at the same mean, off (0) in the rest."""
    if active_hours_per_month >= HOURS_PER_MONTH:
        return load.astype(float)
    n = int(round(active_hours_per_month / HOURS_PER_MONTH * len(load)))
    on = np.zeros(len(load), bool)
    on[np.argsort(-load, kind="stable")[:max(n, 1 if active_hours_per_month > 0 else 0)]] = True
    week = np.where(on, load, 0.0)
    current = float(week[on].mean()) if on.any() else 0.0
    return week * (mean_rps / current) if current > 0 else week


def shape_to_load_mean(values: np.ndarray, hours: np.ndarray, mean_rps: float) -> np.ndarray:
    """Keep the hour-weighted mean over the active bins equal to ``mean_rps`` after reweighting."""
    total = float(hours.sum())
    current = float((values * hours).sum() / total) if total > 0 else 0.0
    return values * (mean_rps / current) if current > 0 else values


def growth_factors(rate_per_month: float, months: int) -> np.ndarray:
    """Compound growth: month m (0-based) carries ``(1 + rate)^m`` of month 0's load."""
    if rate_per_month <= -1 or months < 1:
        raise InputError(
            f"growth {rate_per_month}/month over {months} months is not a valid horizon",
            fix="use a growth rate above -1 (e.g. 0.08 for +8 %/month) and a horizon of at least 1 month",
        )
    return (1.0 + rate_per_month) ** np.arange(months, dtype=float)


def training_hours_per_month(time_to_train_s: np.ndarray | float, runs_per_year: float) -> np.ndarray:
    """Hours per month one configuration trains: runs_per_year x run length / 12."""
    return np.asarray(time_to_train_s, dtype=float) / SECONDS_PER_HOUR * runs_per_year / MONTHS_PER_YEAR


def batch_starts_per_month(active_hours_per_month: float, runs_per_year: float | None) -> float:
    """Cold starts a month of batch work on elastic capacity: the spec's runs (``runs_per_year`` / 12),
    else one window a day when the work runs part of the time, else one start a month (continuous)."""
    if runs_per_year:
        return float(runs_per_year) / MONTHS_PER_YEAR
    if active_hours_per_month < HOURS_PER_MONTH:
        return HOURS_PER_MONTH / HOURS_PER_DAY
    return 1.0


def occasional_active_hours(runs_per_year: float, hours_per_run: float) -> float:
    """Active hours per month of an occasional service: runs x hours each, per month, capped at 730."""
    return min(HOURS_PER_MONTH, runs_per_year * hours_per_run / MONTHS_PER_YEAR)


__all__ = [
    "LoadProfile",
    "PROFILE_NAMES",
    "batch_starts_per_month",
    "daily_shape",
    "growth_factors",
    "month_profile",
    "occasional_active_hours",
    "shape_to_load",
    "training_hours_per_month",
    "weekly_shape",
]
