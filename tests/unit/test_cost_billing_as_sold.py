"""Billing as sold (issue 12 point 2, batch and training part): elastic capacity is paid per instance
start, rounded up to the provider's increment and at least its minimum, and every start pays the boot,
the image pull and the model load. Realtime serving and fixed modes are unchanged."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

from infrafit.catalog import load_catalog
from infrafit.cost.adapters import offers_from_catalog
from infrafit.cost.capacity_plan import inference_demand, training_demand
from infrafit.cost.factors import billing_rule
from infrafit.cost.modes import billed_hours, elastic_paid_hours
from infrafit.cost.offers import OfferArrays
from infrafit.cost.params import CostParams
from infrafit.cost.tco import price_options
from infrafit.cost.usage import batch_starts_per_month, month_profile
from infrafit.units import HOURS_PER_DAY, HOURS_PER_MONTH, SECONDS_PER_HOUR

ROOT = Path(__file__).resolve().parents[2]
H = 1.0 / SECONDS_PER_HOUR


def test_billed_hours_rounds_up_to_the_increment_and_the_minimum():
    inc = np.array([1 * H, 1 * H, 60 * H, 3600 * H, 0.0])
    minimum = np.array([60 * H, 60 * H, 60 * H, 3600 * H, 0.0])
    run = np.array([10 * H, 61.5 * H, 61 * H, 120 * H, 61.5 * H])
    got = billed_hours(run, inc, minimum) * SECONDS_PER_HOUR
    assert got == pytest.approx([60, 62, 120, 3600, 61.5])


def test_each_provider_gets_its_published_rule_and_unknown_ones_a_stated_stand_in():
    f = load_catalog().cost_factors
    assert billing_rule(f, "AWS", "cloud_on_demand")[0][:2] == (1.0, 60.0)
    assert billing_rule(f, "Lambda", "cloud_on_demand")[0][:2] == (60.0, 60.0)
    assert billing_rule(f, "RunPod", "cloud_on_demand")[0][:2] == (1.0, 1.0)
    (inc, minimum, boot), note = billing_rule(f, "Latitude.sh", "cloud_on_demand")  # hourly, from its docs
    assert (inc, minimum, boot) == (3600.0, 3600.0, 600.0) and "default_elastic" not in note
    (inc, minimum, _), note = billing_rule(f, "DigitalOcean", "cloud_on_demand")  # hourly, one-hour minimum (its docs)
    assert (inc, minimum) == (3600.0, 3600.0) and "default_elastic" not in note
    (inc, minimum, _), note = billing_rule(f, "CoreWeave", "cloud_on_demand")
    assert (inc, minimum) == (3600.0, 3600.0) and "default_elastic" in note
    assert billing_rule({}, "AWS", "cloud_on_demand")[1].startswith("no billing rule")


def test_catalog_offers_carry_billing_and_a_start_up_of_boot_image_and_weights():
    cat = load_catalog()
    rows = cat.offers[cat.offers["id"].str.startswith("aws_p5_48xlarge_us_east_1_cloud_")].reset_index(drop=True)
    load = 140e9  # 70B bf16 weights across the 8 GPUs of one instance
    arrays = offers_from_catalog(cat, rows, load_bytes_per_instance=load)
    p = CostParams()
    host = cat.hosts.set_index("id").loc["aws_p5_48xlarge"]
    # p5's 3.2 Tbit/s is its EFA fabric: weights come from object storage at the 100 Gbit/s ceiling
    rate = min(float(host["network_bits_per_s"]) / 8, p.object_store_bytes_per_s_max)
    assert rate == 12.5e9
    startup_s = 120 + p.image_bytes / p.image_pull_bytes_per_s + load / rate
    assert {"cloud_on_demand", "cloud_spot"} <= set(rows["mode"])  # both elastic modes are checked below
    for i, mode in enumerate(rows["mode"]):
        if mode in ("cloud_on_demand", "cloud_spot"):
            assert arrays.startup_h[i] * SECONDS_PER_HOUR == pytest.approx(startup_s)
            assert arrays.billing_minimum_h[i] * SECONDS_PER_HOUR == pytest.approx(60)
        elif mode == "cloud_capacity_block":  # started per run too, bought in whole days
            assert arrays.startup_h[i] * SECONDS_PER_HOUR == pytest.approx(startup_s)
            assert arrays.billing_increment_h[i] == arrays.billing_minimum_h[i] == HOURS_PER_DAY
        else:  # reserved: held, never started per run
            assert arrays.startup_h[i] == 0 and arrays.billing_increment_h[i] == 0


def _offer(inc_s: float, min_s: float, startup_s: float) -> OfferArrays:
    return OfferArrays.build(["cloud_on_demand"], usd_per_hour=2.0, billing_increment_h=inc_s * H,
                             billing_minimum_h=min_s * H, startup_h=startup_s * H)


def test_a_two_minute_daily_training_job_pays_start_up_and_the_hourly_minimum():
    demand = training_demand(np.array([120.0]), 365, 12, headroom_fraction=0.2)
    starts = 365 / 12
    per_second = price_options(demand, _offer(1, 60, 200), horizon_months=12, engineer_usd_per_hour=0)
    # 30.4 starts a month x (120 s of work + 200 s start-up) x $2/h, over 12 months
    assert per_second.tco_usd[0] == pytest.approx(12 * starts * 320 * H * 2.0)
    hourly = price_options(demand, _offer(3600, 3600, 200), horizon_months=12, engineer_usd_per_hour=0)
    assert hourly.tco_usd[0] == pytest.approx(12 * starts * 1.0 * 2.0)  # every start bills a whole hour
    compute = per_second.breakdown["compute_usd"][0]
    assert compute == pytest.approx(12 * starts * 120 * H * 2.0)  # the work itself; the rest is idle_usd
    fluid = price_options(demand, OfferArrays.build(["cloud_on_demand"], usd_per_hour=2.0), horizon_months=12,
                          engineer_usd_per_hour=0)
    assert fluid.tco_usd[0] == pytest.approx(compute)  # without a billing rule: the old fluid model


def test_batch_windows_start_each_day_with_the_replicas_that_finish_the_window():
    profile = month_profile(10.0, None, "flat", 6 * HOURS_PER_MONTH / HOURS_PER_DAY)  # 6-h nightly window
    starts = batch_starts_per_month(profile.active_hours, None)
    assert starts == pytest.approx(HOURS_PER_MONTH / HOURS_PER_DAY)
    d = inference_demand(profile, np.array([4.0]), np.ones(1), headroom_fraction=0.2, realtime=False,
                         starts_per_month=starts)
    n = d.fixed_replicas[0, 0]
    assert n == 3  # 10 items/s over 6 h at 4 items/s each, with 20 % headroom: ceil(3.0) = 3
    paid = elastic_paid_hours(d, _offer(60, 60, 300))
    per_replica_h = d.busy_replica_hours[0, 0] / (starts * n) + 300 * H
    expected = starts * n * np.ceil(per_replica_h * 60 - 1e-9) / 60
    assert paid[0, 0] == pytest.approx(expected)
    realtime = inference_demand(profile, np.array([4.0]), np.ones(1), headroom_fraction=0.2, realtime=True)
    # realtime is not billed per start but pays each replica the autoscaler starts (test_realtime_scaleup_startup)
    expected_rt = realtime.needed_replica_hours[0, 0] + realtime.scaleups_per_month[0, 0] * 300 * H
    assert elastic_paid_hours(realtime, _offer(60, 60, 300))[0, 0] == pytest.approx(expected_rt)


def test_starts_per_month_follow_the_spec():
    assert batch_starts_per_month(HOURS_PER_MONTH, None) == 1.0
    assert batch_starts_per_month(100.0, 52) == pytest.approx(52 / 12)
    assert batch_starts_per_month(180.0, None) == pytest.approx(HOURS_PER_MONTH / HOURS_PER_DAY)


def test_the_nightly_example_pays_its_starts(tmp_path):
    """End to end: the top on-demand option of the nightly batch example bills more than its busy hours."""
    from typer.testing import CliRunner

    from infrafit.cli import app

    result = CliRunner().invoke(app, ["plan", str(ROOT / "examples" / "nightly-embeddings.yaml"), "--json"])
    assert result.exit_code == 0, result.output
    top = next(o for o in json.loads(result.stdout)["options"] if o["cost"]["deployment"] == "cloud_on_demand")
    assert top["cost"]["breakdown"]["idle_usd"] > 0
    assert top["cost"]["breakdown"]["idle_usd"] < 0.5 * top["cost"]["breakdown"]["compute_usd"]


def test_labour_counts_instances_run_not_replicas():
    """Issue 12 point 4, in part: a replica on two instances is two machines to patch and watch."""
    cat = load_catalog()
    row = cat.offers[cat.offers["id"] == "aws_p5_48xlarge_us_east_1_cloud_on_demand_20250701"]
    rows = row.loc[row.index.repeat(2)].reset_index(drop=True)
    arrays = offers_from_catalog(cat, rows, instances_per_replica=np.array([1, 2]))
    per = arrays.ops_hours_per_replica_month
    assert per[0] > 0 and per[1] == pytest.approx(2 * per[0])
    assert arrays.ops_hours_per_month[0] == arrays.ops_hours_per_month[1]  # the service's fixed part is shared
