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
