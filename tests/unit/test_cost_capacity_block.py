"""Prepaid capacity blocks (issue 14 point 1, AWS EC2 Capacity Blocks for ML): bought per run in whole
days up to 14 days and whole weeks up to 182, at most 64 instances, paid upfront, the last 30 minutes
not runnable; never for a realtime service."""

from __future__ import annotations

import numpy as np
import pytest

from infrafit.catalog import load_catalog
from infrafit.cost.adapters import offers_from_catalog
from infrafit.cost.capacity_plan import inference_demand, training_demand
from infrafit.cost.factors import purchase_limits
from infrafit.cost.modes import billed_hours, block_months, over_purchase_limits
from infrafit.cost.params import CostParams
from infrafit.cost.tco import price_options
from infrafit.cost.usage import month_profile
from infrafit.units import HOURS_PER_DAY, HOURS_PER_MONTH, SECONDS_PER_HOUR

DAY = HOURS_PER_DAY


def _block_rule():
    f = load_catalog().cost_factors
    return purchase_limits(f, "AWS", "cloud_capacity_block")


def test_the_block_rule_is_the_published_one():
    r = _block_rule()
    assert r["billing_long_after_h"] == 14 * DAY and r["billing_long_increment_h"] == 7 * DAY
    assert r["billing_maximum_h"] == 182 * DAY and r["max_instances"] == 64
    assert r["billing_end_margin_h"] == pytest.approx(0.5)
    # elastic capacity has no purchase limit
    plain = purchase_limits(load_catalog().cost_factors, "AWS", "cloud_on_demand")
    assert np.isinf(plain["billing_maximum_h"]) and np.isinf(plain["max_instances"])


@pytest.mark.parametrize(("run_days", "paid_days"), [
    (0.1, 1), (1.0, 2),  # a 24-h run needs the 30 minutes before the end too: 2 days
    (9.5, 10), (13.9, 14), (14.0, 21),  # past 14 days (with the margin): whole weeks
    (15.0, 21), (29.4, 35), (60.0, 63),
])
def test_blocks_round_up_to_days_then_weeks(run_days, paid_days):
    r = _block_rule()
    got = billed_hours(np.array([run_days * DAY]), DAY, DAY, r["billing_long_after_h"],
                       r["billing_long_increment_h"], r["billing_end_margin_h"])[0]
    assert got == pytest.approx(paid_days * DAY)


def _block_offers(cat, instances: int = 1):
    rows = cat.offers[cat.offers["id"] == "aws_p5_48xlarge_us_east_1_cloud_capacity_block_20241201"]
    assert len(rows) == 1 and float(rows["usd_per_hour"].iloc[0]) == 39.33  # AWS pricing page, late 2024
    return offers_from_catalog(cat, rows.reset_index(drop=True), instances_per_replica=instances)


def test_a_training_run_pays_its_whole_block_upfront_and_commits_to_it():
    cat = load_catalog()
    o = _block_offers(cat)
    run_s = 29.4 * DAY * SECONDS_PER_HOUR
    d = training_demand(np.array([run_s]), 1.0, 2, headroom_fraction=0.2)
    cost = price_options(d, o, horizon_months=2, engineer_usd_per_hour=0.0, params=CostParams())
    paid = cost.breakdown["compute_usd"][0] + cost.breakdown["idle_usd"][0]
    # 29.4 days + start-up + the 30-minute margin: 35 days of one p5.48xlarge at $39.33/h
    assert paid == pytest.approx(35 * DAY * 39.33, rel=1e-6)
    assert cost.breakdown["idle_usd"][0] == pytest.approx((35 * DAY - 29.4 * DAY - o.startup_h[0]) * 39.33, rel=1e-3)
    assert block_months(d, o)[0] == pytest.approx(35 * DAY / HOURS_PER_MONTH)
    assert cost.to_json(0)["commitment_months"] == pytest.approx(35 * DAY / HOURS_PER_MONTH)


def test_limits_block_realtime_services_long_runs_and_big_clusters():
    cat = load_catalog()
    o = _block_offers(cat)
    profile = month_profile(10.0, None, "flat", HOURS_PER_MONTH)
    realtime = inference_demand(profile, np.array([5.0]), np.ones(3), headroom_fraction=0.2, realtime=True)
    assert over_purchase_limits(realtime, o)[0]
    cost = price_options(realtime, o, horizon_months=3, engineer_usd_per_hour=0.0)
    assert np.isinf(cost.tco_usd[0])
    long = training_demand(np.array([200 * DAY * SECONDS_PER_HOUR]), 1.0, 12, headroom_fraction=0.2)
    assert over_purchase_limits(long, o)[0]  # past 182 days
    ok = training_demand(np.array([100 * DAY * SECONDS_PER_HOUR]), 1.0, 12, headroom_fraction=0.2)
    assert not over_purchase_limits(ok, o)[0]
    big = _block_offers(cat, instances=65)  # one replica of 65 instances: over the 64 a block holds
    assert over_purchase_limits(ok, big)[0]
    assert not over_purchase_limits(ok, _block_offers(cat, instances=64))[0]
