"""Adapters: a parsed workload spec and catalog rows become the cost core's arrays."""

from __future__ import annotations

import numpy as np
import pytest

from infrafit.cost.adapters import ops_hours, workload_demand, workload_profile
from infrafit.workload.spec import parse_spec

SPEC = """
name: bot
task: inference
model: llama3.1-70b
inference:
  mode: realtime
  traffic: {requests_per_s: 20, peak_requests_per_s: 60, input_tokens: 1500, output_tokens: 300, daily_profile: diurnal}
growth: {traffic_per_month: 0.08}
horizon_months: 24
"""


def test_workload_to_profile_and_demand():
    w = parse_spec(SPEC)
    p = workload_profile(w)
    assert p.peak_rps == pytest.approx(60.0)
    assert (p.load_rps * p.hours).sum() / 730 == pytest.approx(20.0)
    d = workload_demand(w, capacity_rps=np.array([5.0, 25.0]))
    # month 0: 60 x 1.2 / 5 = 14.4 -> 15 and 72 / 25 -> 3; month 23: 60 x 1.08^23 x 1.2 / 5 -> 85
    assert d.fixed_replicas[0].tolist() == [15, 3]
    assert d.fixed_replicas[-1, 0] == np.ceil(60 * 1.08**23 * 1.2 / 5)
    assert d.output_tokens_per_month[0] == pytest.approx(20 * 3600 * 730 * 300)


def test_ops_hours_prefers_managed_rows_when_asked():
    modes = np.array(["cloud_on_demand", "on_prem"], dtype=object)
    managed_fixed, _ = ops_hours(modes, managed=True)
    self_fixed, _ = ops_hours(modes, managed=False)
    assert managed_fixed[0] < self_fixed[0]
    assert managed_fixed[1] == self_fixed[1]  # on-prem has no managed row: self-managed hours
