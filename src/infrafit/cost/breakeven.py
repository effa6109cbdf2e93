"""Break-even utilisation between deployment modes, in closed form.

Over a horizon of H months, the cost of holding one replica's worth of work at utilisation u
(the fraction of the 730 h of each month the replica is busy; no growth) is linear in u for every
mode: ``cost_i(u) = a_i + b_i x u``.

- cloud on-demand: a = ops fixed, b = price x 730 x H (+ per-replica ops hours x rate x H)
- cloud spot (batch/training): b = price x 730 x H x 1 / (1 - x), x = interruptions/h x lost h
- reserved: a = price x 730 x term x ceil(H / term), b = 0
- dedicated: a = monthly x max(H, contract) + setup (+ idle power), b = 0 (+ dynamic power) where
  the rent excludes power (USD/kWh > 0)
- on-prem: a = H x (depreciation + maintenance + colocation + idle power) + setup + haircut x book
  value left at the end (sold at the horizon),
  b = H x accelerators x TDP x (1 - idle fraction) x PUE x USD/kWh x 730 / 1000
- plus operations labour, fixed per month (and per replica held, for fixed modes).

Two modes cost the same at ``u* = (a_j - a_i) / (b_i - b_j)``; it is reported when 0 <= u* <= 1,
NaN otherwise (one mode is cheaper at every utilisation).
"""

from __future__ import annotations

from typing import Any

import numpy as np

from infrafit.cost.modes import beyond_horizon_months, book_value_at_horizon
from infrafit.cost.offers import OfferArrays
from infrafit.cost.params import PER_START_MODES, CostParams
from infrafit.units import HOURS_PER_MONTH, MONTHS_PER_YEAR, W_PER_KW


def linear_cost(offers: OfferArrays, *, horizon_months: int, engineer_usd_per_hour: float,
                params: CostParams | None = None) -> tuple[np.ndarray, np.ndarray]:
    """(a, b) of ``cost(u) = a + b u`` over the horizon for one replica of each candidate (N,)."""
    p = params or CostParams()
    o, h, hours = offers, float(horizon_months), HOURS_PER_MONTH * horizon_months
    mode = o.mode
    rate = np.where(np.isnan(o.interruptions_per_hour), p.spot_interruptions_per_hour_default, o.interruptions_per_hour)
    x = rate * p.spot_lost_hours_per_interruption
    spot_factor = np.where(x < 1, 1.0 / (1.0 - np.minimum(x, 0.999999)), np.inf)
    reserved_months = h + beyond_horizon_months(horizon_months, o.term_months, True)[0]
    dedicated_months = h + beyond_horizon_months(horizon_months, o.term_months, False)[0]
    idle = p.accel_idle_power_fraction
    usd_per_kw = o.pue * o.usd_per_kwh * HOURS_PER_MONTH / W_PER_KW  # USD per W held a month
    onprem_a = h * (o.purchase_usd * (1 - o.residual_fraction) / (o.life_years * MONTHS_PER_YEAR)
                    + o.purchase_usd * o.maintenance_share_per_year / MONTHS_PER_YEAR
                    + (o.accelerators * o.accel_tdp_w + o.host_power_w) / W_PER_KW * o.colocation_usd_per_kw_month
                    + (o.accelerators * o.accel_tdp_w * idle + o.host_power_w) * usd_per_kw) + o.setup_usd
    book = book_value_at_horizon(np.ones((horizon_months, len(o))), o, horizon_months)  # one server from month 0
    onprem_a = onprem_a + book * p.onprem_resale_haircut_fraction
    idle_power = h * (o.accelerators * o.accel_tdp_w * idle + o.host_power_w) * usd_per_kw
    onprem_b = h * o.accelerators * o.accel_tdp_w * (1 - idle) * usd_per_kw
    with np.errstate(invalid="ignore"):
        a = np.select(
            [np.isin(mode, ("cloud_on_demand", "cloud_capacity_block")), mode == "cloud_spot",
             np.char.startswith(mode.astype(str), "cloud_reserved"),
             mode == "dedicated_monthly", mode == "on_prem"],
            [0.0, 0.0, o.usd_per_hour * HOURS_PER_MONTH * reserved_months,
             o.usd_per_month * dedicated_months + o.setup_usd + idle_power, onprem_a])
        b = np.select(
            [np.isin(mode, ("cloud_on_demand", "cloud_capacity_block")), mode == "cloud_spot",
             np.isin(mode, ("on_prem", "dedicated_monthly"))],
            [o.usd_per_hour * hours, o.usd_per_hour * hours * spot_factor, onprem_b], 0.0)
    elastic = np.isin(mode, PER_START_MODES)
    labour = engineer_usd_per_hour * h
    a = a + labour * (o.ops_hours_per_month + np.where(elastic, 0.0, o.ops_hours_per_replica_month)) \
        + o.platform_usd_per_month * h
    b = b + labour * np.where(elastic, o.ops_hours_per_replica_month, 0.0)
    return a, b


def breakeven_utilisation(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """(N, N): the utilisation at which candidates i and j cost the same; NaN if not in [0, 1]."""
    a, b = np.asarray(a, dtype=float), np.asarray(b, dtype=float)
    with np.errstate(divide="ignore", invalid="ignore"):
        u = (a[None, :] - a[:, None]) / (b[:, None] - b[None, :])
    return np.where((u >= 0) & (u <= 1), u, np.nan)


def breakeven_table(labels: list[str], offers: OfferArrays, *, horizon_months: int,
                    engineer_usd_per_hour: float, params: CostParams | None = None) -> list[dict]:
    """Every pair with a crossing: which is cheaper below and above the break-even utilisation."""
    a, b = linear_cost(offers, horizon_months=horizon_months, engineer_usd_per_hour=engineer_usd_per_hour,
                       params=params)
    u = breakeven_utilisation(a, b)
    rows: list[dict[str, Any]] = []
    for i in range(len(labels)):
        for j in range(i + 1, len(labels)):
            if np.isnan(u[i, j]):
                cheaper = labels[i] if a[i] + 0.5 * b[i] <= a[j] + 0.5 * b[j] else labels[j]
                rows.append({"a": labels[i], "b": labels[j], "utilisation": None, "cheaper_always": cheaper})
                continue
            below = labels[i] if b[i] > b[j] and a[i] < a[j] else labels[j]
            above = labels[j] if below == labels[i] else labels[i]
            rows.append({"a": labels[i], "b": labels[j], "utilisation": float(u[i, j]),
                         "cheaper_below": below, "cheaper_above": above,
                         "cost_at_breakeven_usd": float(a[i] + b[i] * u[i, j])})
    return rows
