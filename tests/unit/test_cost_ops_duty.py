"""Fixed ops hours follow activity on elastic capacity (issue 12 point 4): a job run 4 times a year on
on-demand VMs pays its fixed operations hours in 4 months' worth, not 12; held hardware pays every month."""

from __future__ import annotations

import numpy as np
import pytest

from infrafit.cost.capacity_plan import training_demand
from infrafit.cost.offers import OfferArrays
from infrafit.cost.tco import price_options

RATE = 100.0  # USD per engineer hour
FIXED_H = 16.0


def _labour(runs_per_year: float, mode: str) -> float:
    demand = training_demand(np.array([24 * 3600.0]), runs_per_year, 12, headroom_fraction=0.2)
    offers = OfferArrays.build([mode], usd_per_hour=[10.0], usd_per_month=[7300.0], term_months=[12.0],
                               ops_hours_per_month=FIXED_H, ops_hours_per_replica_month=0.0)
    return float(price_options(demand, offers, horizon_months=12, engineer_usd_per_hour=RATE)
                 .breakdown["ops_labour_usd"][0])


def test_an_occasional_job_on_elastic_capacity_pays_fixed_hours_per_run():
    assert _labour(4, "cloud_on_demand") == pytest.approx(4 * FIXED_H * RATE)  # 4 runs: 4 months' worth
    assert _labour(12, "cloud_on_demand") == pytest.approx(12 * FIXED_H * RATE)  # monthly: every month
    assert _labour(52, "cloud_spot") == pytest.approx(12 * FIXED_H * RATE)  # weekly: capped at every month


def test_held_capacity_pays_fixed_hours_every_month():
    assert _labour(4, "dedicated_monthly") == pytest.approx(12 * FIXED_H * RATE)
