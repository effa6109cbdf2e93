"""Spot per instance (issue 12 point 6): a synchronous job over N instances is interrupted N times as
often, a multi-host TPU slice counts once, lost work comes from the spec's checkpoint interval, large
allocations carry a capacity risk, and spot is not offered for a deadline it would miss."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from infrafit.catalog import load_catalog
from infrafit.cost.modes import spot_slowdown
from infrafit.cost.offers import OfferArrays
from infrafit.cost.params import CostParams
from infrafit.search.explain import mode_risks
from infrafit.search.parts import spot_params
from infrafit.search.planner import plan
from infrafit.workload.spec import load_spec, parse_spec

ROOT = Path(__file__).resolve().parents[2]


def _arrays(instances):
    return OfferArrays.build(["cloud_spot"] * len(instances), usd_per_hour=1.0, instances=instances,
                             interruptions_per_hour=1.0 / 24.0)


def test_the_hazard_scales_with_instances_and_can_never_finish():
    p = CostParams()  # 30 min checkpoints, 10 min restart: 25 min lost per interruption
    slow = spot_slowdown(_arrays([1.0, 8.0, 128.0]), p)
    x1 = (1 / 24) * (15 + 10) / 60
    assert slow[0] == pytest.approx(1 / (1 - x1))
    assert slow[1] == pytest.approx(1 / (1 - 8 * x1))
    assert np.isinf(slow[2])  # 128 instances: interrupted faster than it progresses


def test_the_specs_checkpoint_interval_sets_the_lost_work():
    text = (ROOT / "examples" / "jax-pretraining.yaml").read_text()
    w = parse_spec(text)
    assert spot_params(w).spot_checkpoint_interval_s == 60 * 60  # checkpoint_every_minutes: 60
    w10 = parse_spec(text.replace("checkpoint_every_minutes: 60", "checkpoint_every_minutes: 10"))
    assert spot_slowdown(_arrays([8.0]), spot_params(w10))[0] < spot_slowdown(_arrays([8.0]), spot_params(w))[0]


def test_a_multi_host_tpu_slice_is_one_interruption_unit():
    from infrafit.cost.adapters import offers_from_catalog

    cat = load_catalog()
    rows = cat.offers[cat.offers["host_id"].isin(["gcp_tpu_v5p_8", "aws_p5_48xlarge"])].head(2).reset_index(drop=True)
    arrays = offers_from_catalog(cat, rows, instances_per_replica=np.array([16, 16]))
    by_host = dict(zip(rows["host_id"], arrays.instances, strict=True))
    assert by_host.get("gcp_tpu_v5p_8", 1.0) == 1.0
    if "aws_p5_48xlarge" in by_host:
        assert by_host["aws_p5_48xlarge"] == 16.0


def test_the_risk_line_counts_interruptions_as_the_cost_does():
    """A multi-host TPU slice is priced as one interruption unit; its risk line said 'a synchronous job over
    32 instances stops about 32 times a day' while the cost charged one a day (d02: an 8B run on 32 v5p
    hosts). It now says the slice is reclaimed as one unit, and a GPU job keeps its per-instance count."""
    slice_risks = mode_risks("cloud_spot", {"replicas": [1.0]}, 0, 1, 1 / 24, False, instances=32.0,
                             preempted_units=1.0)
    line = next(r for r in slice_risks if r.startswith("spot interruption"))
    assert "stops about" not in line and "32 hosts form one slice, reclaimed as one unit" in line
    gpu = mode_risks("cloud_spot", {"replicas": [1.0]}, 0, 1, 1 / 24, False, instances=4.0, preempted_units=4.0)
    assert any("stops about 4.0 times a day" in r for r in gpu)


def test_large_spot_allocations_carry_a_capacity_risk():
    risks = mode_risks("cloud_spot", {"replicas": [2.0]}, 0, 12, 1 / 24, False, instances=8.0)
    assert any(r.startswith("spot capacity: 16 spot instances") for r in risks)
    assert any("stops about 8.0 times a day" in r for r in risks)
    assert not any(r.startswith("spot capacity") for r in mode_risks("cloud_spot", {"replicas": [1.0]}, 0, 12,
                                                                      1 / 24, False, instances=2.0))


def test_spot_is_not_offered_for_a_deadline_it_would_miss():
    cat = load_catalog()
    p = plan(load_spec(ROOT / "examples" / "jax-pretraining.yaml"), cat, top=5, diverse=False)
    for o in p.options:
        if o.deployment == "cloud_spot":
            assert not o.offer_id.startswith("gcp_tpu_v6e_1")  # 128 independent single-chip spot VMs
    reasons = " ".join(e.reason for e in p.excluded) + " ".join(c.reason for c in p.compared)
    assert "Google TPU" in {c.what for c in p.compared} or "spot:" in reasons


def test_published_spot_bands_give_a_per_instance_hazard_and_unknown_ones_the_default():
    import math

    from infrafit.cost.adapters import offers_from_catalog
    from infrafit.cost.factors import spot_hazard

    cat = load_catalog()
    f = cat.cost_factors
    rate, band = spot_hazard(f, "AWS", "aws_p5_48xlarge", "us-east-1")
    # "<5%" of capacity reclaimed in the trailing month, read at the band's upper edge over 730 h
    assert band == "<5%" and rate == pytest.approx(-math.log(0.95) / 730)
    assert rate * 24 < 0.002  # ~1 interruption in 600 instance-days, not the assumed 1 a day
    assert math.isnan(spot_hazard(f, "AWS", "aws_p5_48xlarge", "eu-west-2")[0])  # not published there
    nan, top = spot_hazard(f, "AWS", "aws_g6e_4xlarge", "us-east-1")
    assert top == ">20%" and math.isnan(nan)  # no upper edge: the default applies
    rows = cat.offers[(cat.offers["mode"] == "cloud_spot") & cat.offers["host_id"].isin(
        ["aws_p5_48xlarge", "aws_p4d_24xlarge"]) & (cat.offers["region"] == "us-east-1")].reset_index(drop=True)
    arrays = offers_from_catalog(cat, rows)
    for i, host in enumerate(rows["host_id"]):
        if host == "aws_p5_48xlarge":
            assert arrays.interruptions_per_hour[i] == pytest.approx(rate)
        else:
            assert np.isnan(arrays.interruptions_per_hour[i])
    # the published rate, not the default, decides the slowdown: 2 p5 instances lose ~nothing
    slow = spot_slowdown(arrays, CostParams())
    p5 = int(np.flatnonzero(rows["host_id"] == "aws_p5_48xlarge")[0])
    assert slow[p5] == pytest.approx(1.0, abs=1e-4)


def test_the_risk_line_names_where_the_rate_comes_from():
    line = mode_risks("cloud_spot", {}, 0.0, 2, 7e-5, False, instances=2.0,
                      rate_source="AWS Spot Instance Advisor: <5% of capacity reclaimed a month in us-east-1")[0]
    assert "(AWS Spot Instance Advisor: <5%" in line and "assumed" not in line
    assumed = mode_risks("cloud_spot", {}, 0.0, 2, 1 / 24, False)[0]
    assert "1.0 per instance per day assumed" in assumed


def test_gcp_spot_vms_take_googles_published_daily_preemption_rate():
    """GCP: "the average preemption rate varies between 5% and 15% per day per project, on a seven-day
    average": every GCP spot offer is priced at 15% a day (-ln 0.85 / 24 h), not the assumed one a day;
    a row for the host itself would win over the provider-wide one."""
    import math

    import pandas as pd

    from infrafit.cost.adapters import offers_from_catalog
    from infrafit.cost.factors import spot_hazard

    cat = load_catalog()
    rate, band = spot_hazard(cat.cost_factors, "GCP", "gcp_a3_highgpu_8g", "us-central1")
    assert band == "5-15%/day" and rate == pytest.approx(-math.log(0.85) / 24)
    assert 0.15 < rate * 24 < 0.17  # ~0.16 a day, a sixth of the 1-a-day default
    spot = cat.offers[(cat.offers["mode"] == "cloud_spot") & (cat.offers["provider"] == "GCP")].reset_index(drop=True)
    assert len(spot) > 0
    assert np.allclose(offers_from_catalog(cat, spot).interruptions_per_hour, rate)
    own = dict(cat.cost_factors)
    extra = pd.DataFrame([{"id": "x", "provider": "GCP", "host_id": "gcp_a3_highgpu_8g", "region": "any",
                           "frequency_band": "<5%"}])
    own["spot"] = pd.concat([cat.cost_factors["spot"], extra], ignore_index=True)
    assert spot_hazard(own, "GCP", "gcp_a3_highgpu_8g", "us-central1")[1] == "<5%"
    assert spot_hazard(own, "GCP", "gcp_g2_standard_4", "us-central1")[1] == "5-15%/day"


def test_the_risk_line_names_googles_daily_rate():
    from infrafit.search.option import _spot_rate

    cat = load_catalog()
    row = cat.offers[(cat.offers["mode"] == "cloud_spot") & (cat.offers["provider"] == "GCP")].iloc[0]
    _, source = _spot_rate(cat, row, 0.0068, 1 / 24)
    assert source == "GCP's published preemption rate: 5-15% of VMs a day (seven-day average)"
