"""Realtime scale-up start-up (issue 12 point 2): every replica an autoscaler starts boots, pulls its image
and loads its weights before it serves, and that time is paid on elastic capacity."""

from __future__ import annotations

import numpy as np
import pytest

from infrafit.cost.capacity_plan import inference_demand
from infrafit.cost.modes import elastic_paid_hours
from infrafit.cost.offers import OfferArrays
from infrafit.cost.usage import month_profile
from infrafit.units import HOURS_PER_MONTH

WEEKS_PER_MONTH = HOURS_PER_MONTH / 168


def _demand(profile, cap):
    return inference_demand(profile, np.array([cap]), np.ones(2), headroom_fraction=0.2, realtime=True)


def test_a_flat_load_starts_nothing():
    d = _demand(month_profile(10.0), 3.0)
    assert d.scaleups_per_month is not None and (d.scaleups_per_month == 0).all()


def test_business_hours_start_the_day_replicas_every_working_morning():
    # 9 h of 10 req/s on 5 days, off-peak 10% of it: 1 replica at night, ceil(10 x 1.2 / 3) = 4 by day
    profile = month_profile(10.0, None, "business-hours")
    d = _demand(profile, 3.0)
    week = profile.week_load_rps
    day = int(np.ceil(week.max() * 1.2 / 3.0 - 1e-9))
    night = int(np.ceil(week.min() * 1.2 / 3.0 - 1e-9)) if week.min() > 0 else 0
    assert d.scaleups_per_month[0, 0] == pytest.approx((day - max(night, 1)) * 5 * WEEKS_PER_MONTH, rel=1e-6)


def test_start_up_hours_are_paid_on_elastic_realtime():
    profile = month_profile(10.0, None, "business-hours")
    d = _demand(profile, 3.0)
    o = OfferArrays.build(["cloud_on_demand"], usd_per_hour=[2.0])
    startup_h = 0.25
    from dataclasses import replace
    o = replace(o, startup_h=np.array([startup_h]))
    paid = elastic_paid_hours(d, o)
    assert paid[0, 0] == pytest.approx(d.needed_replica_hours[0, 0] + d.scaleups_per_month[0, 0] * startup_h)


def test_a_part_time_service_starts_its_floor_each_time_it_comes_on():
    profile = month_profile(2.0, None, "flat", active_hours_per_month=HOURS_PER_MONTH / 2)
    d = _demand(profile, 100.0)
    # one replica whenever on; the busiest half of a flat week is one contiguous run: one start a week
    assert d.scaleups_per_month[0, 0] == pytest.approx(1 * WEEKS_PER_MONTH, rel=1e-6)
