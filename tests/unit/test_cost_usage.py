"""Usage -> load profile -> replicas: table-driven checks of the capacity plan."""

from __future__ import annotations

import numpy as np
import pytest

from infrafit.cost.capacity_plan import capacity_events, fixed_replicas, inference_demand, training_demand
from infrafit.cost.usage import daily_shape, growth_factors, month_profile, weekly_shape
from infrafit.errors import InputError


@pytest.mark.parametrize("profile", ["flat", "business-hours", "diurnal", list(range(1, 25))])
@pytest.mark.parametrize("mean, peak", [(20.0, 60.0), (5.0, 6.0), (10.0, None)])
def test_profile_keeps_mean_and_peak_over_730_hours(profile, mean, peak):
    p = month_profile(mean, peak, profile)
    assert p.hours.sum() == pytest.approx(730.0)
    assert (p.load_rps * p.hours).sum() / 730.0 == pytest.approx(mean, rel=1e-6)
    if peak is not None:  # the busiest hour is the peak, whatever the shape (a flat one gets a peak hour a day)
        assert p.load_rps.max() == pytest.approx(peak, rel=1e-4)
    assert p.peak_rps >= (peak or 0.0)
    assert np.all(p.load_rps >= 0)


def test_periodic_usage_has_inactive_hours_without_a_replica():
    p = month_profile(10.0, None, "flat", active_hours_per_month=200)
    assert p.active_hours == pytest.approx(200)
    demand = inference_demand(p, np.array([100.0]), growth_factors(0.0, 1), headroom_fraction=0.2)
    # 0.1 replica busy over 200 h -> at least one replica those 200 h, none for the other 530 h
    assert demand.needed_replica_hours[0, 0] == pytest.approx(200.0)
    assert demand.busy_replica_hours[0, 0] == pytest.approx(200 * 10 / 100)


def test_business_hours_weekends_are_quiet():
    week = weekly_shape("business-hours")
    assert week[:24].max() == 1.0 and week[5 * 24:].max() < 0.5
    with pytest.raises(InputError, match="To fix"):
        daily_shape("bussiness-hours")


def test_every_mode_is_sized_for_the_load_with_the_same_headroom():
    """One sizing rule (issue 12 point 3): elastic modes hold ceil(load_h x 1.2 / capacity) each hour
    (headroom for the autoscaler's lag), fixed ones ceil(peak x 1.2 / capacity); on a flat load they
    hold the same fleet."""
    p = month_profile(25.0, 25.0, "flat")
    cap = np.array([10.0, 25.0, 100.0])
    d = inference_demand(p, cap, growth_factors(0.0, 1), headroom_fraction=0.2)
    # 25 x 1.2 = 30 rps -> ceil(30/10)=3, ceil(30/25)=2, ceil(30/100)=1, for elastic and fixed alike
    assert d.needed_replica_hours[0].tolist() == pytest.approx([3 * 730, 2 * 730, 1 * 730])
    assert d.fixed_replicas[0].tolist() == [3, 2, 1]
    # no headroom: the bare load
    bare = inference_demand(p, cap, growth_factors(0.0, 1), headroom_fraction=0.0)
    assert bare.needed_replica_hours[0].tolist() == pytest.approx([3 * 730, 1 * 730, 1 * 730])


def test_a_peak_on_a_flat_profile_is_paid_by_elastic_capacity_too():
    """A declared peak the shape cannot express (flat) is the busiest hour of each day: 30.4 h a month
    at the peak, the other hours at the rest of the mean. Before, the flat month never reached the
    peak, so elastic modes paid the mean all month (one replica for SDXL at 0.5 req/s mean, 2 at peak)
    while fixed modes were sized for the peak: the ranking came from the sizing rule, not the price."""
    p = month_profile(0.5, 2.0, "flat")
    assert (p.load_rps * p.hours).sum() / 730.0 == pytest.approx(0.5)
    peak_hours = p.hours[np.isclose(p.load_rps, 2.0)].sum()
    assert peak_hours == pytest.approx(730.0 / 24.0)  # one hour a day
    d = inference_demand(p, np.array([0.73]), growth_factors(0.0, 1), headroom_fraction=0.2)
    # peak hours: ceil(2 x 1.2 / 0.73) = 4 replicas, as the fixed fleet; other hours: ceil(0.435 x 1.2 / 0.73) = 1
    assert d.fixed_replicas[0].tolist() == [4]
    assert d.needed_replica_hours[0, 0] == pytest.approx(4 * peak_hours + 1 * (730.0 - peak_hours))
    # a peak the mean cannot carry even with every other hour idle (above 24 x mean) stays aside, as before
    aside = month_profile(1.0, 30.0, "flat")
    assert aside.load_rps.max() == pytest.approx(1.0) and aside.peak_rps == pytest.approx(30.0)


def test_growth_steps_up_fixed_fleet_and_reports_when_capacity_runs_out():
    p = month_profile(10.0, 10.0, "flat")
    g = growth_factors(0.10, 12)
    d = inference_demand(p, np.array([12.0]), g, headroom_fraction=0.0)
    fleet = d.fixed_replicas[:, 0]
    assert np.all(np.diff(fleet) >= 0)
    events = capacity_events(fleet, 12.0, p.peak_rps * g)
    first = events[0]
    # 10 x 1.1^m > 12 first at m = 2 (12.1 rps): a second replica is added that month
    assert first["month"] == 2 and first["add_replicas"] == 1 and first["peak_load_rps"] == pytest.approx(12.1)


def test_fixed_replicas_never_shrink_when_traffic_falls():
    fleet = fixed_replicas(np.array([30.0, 10.0, 5.0]), np.array([10.0]), 0.0)
    assert fleet[:, 0].tolist() == [3, 3, 3]


def test_training_hours_and_fleet():
    d = training_demand(np.array([48 * 3600.0, 2000 * 3600.0]), runs_per_year=6, months=3,
                        headroom_fraction=0.2, epochs_per_run=3)
    # 48 h x 6 runs / 12 = 24 h a month; 2000 h x 0.5 = 1000 h a month -> 2 replicas of 730 h
    assert d.needed_replica_hours[0].tolist() == pytest.approx([24.0, 1000.0])
    assert d.fixed_replicas[0].tolist() == [1, 2]
    assert d.runs_per_month == pytest.approx(0.5)


def test_a_horizon_shorter_than_the_run_interval_still_pays_one_whole_run():
    # one 500 h run a year planned over 2 months: the run is paid in full (500 h), not 2/12 of it
    d = training_demand(np.array([500 * 3600.0]), runs_per_year=1, months=2, headroom_fraction=0.2)
    assert d.needed_replica_hours[:, 0].sum() == pytest.approx(500.0)
    assert d.runs_per_month * 2 == pytest.approx(1.0)
    # a horizon holding more than one run keeps the yearly rate: 2 runs a year over 24 months = 4 runs
    d = training_demand(np.array([10 * 3600.0]), runs_per_year=2, months=24, headroom_fraction=0.2)
    assert d.needed_replica_hours[:, 0].sum() == pytest.approx(40.0)


def test_bad_inputs_raise_input_errors():
    with pytest.raises(InputError, match="To fix"):
        month_profile(10.0, 5.0, "flat")
    with pytest.raises(InputError, match="To fix"):
        inference_demand(month_profile(1.0), np.array([0.0]), growth_factors(0, 1), headroom_fraction=0.2)
    with pytest.raises(InputError, match="To fix"):
        growth_factors(-1.5, 12)


def test_remembered_load_mapping_is_the_computed_one_and_a_caller_cannot_change_it():
    """``shape_to_load`` is remembered per (shape, mean, peak) for fleet searches: the same answer as the
    computation itself, a fresh array each call."""
    from infrafit.cost.usage import _shape_to_load, shape_to_load

    week = weekly_shape("business-hours")
    first = shape_to_load(week, 20.0, 60.0)
    np.testing.assert_array_equal(first, _shape_to_load(week, 20.0, 60.0))
    first[:] = -1.0
    again = shape_to_load(week, 20.0, 60.0)
    assert again is not first and again.min() >= 0 and again.max() == pytest.approx(60.0)
    assert shape_to_load(week, 20.0, 40.0).max() == pytest.approx(40.0)  # another peak is another entry
