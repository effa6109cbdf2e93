"""Monotonic laws (hypothesis): a higher price or more usage never lowers a cost; more headroom
never lowers a fixed-capacity cost."""

from __future__ import annotations

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from infrafit.cost.capacity_plan import inference_demand
from infrafit.cost.offers import OfferArrays
from infrafit.cost.params import MODES, CostParams
from infrafit.cost.tco import price_options
from infrafit.cost.usage import growth_factors, month_profile

MONTHS = 6
#: the modes a realtime service can run on (a prepaid capacity block is bought per run: not for serving)
SERVING_MODES = tuple(m for m in MODES if m != "cloud_capacity_block")


def _offers():
    return OfferArrays.build(
        list(SERVING_MODES), usd_per_hour=[40.0, 15.0, 28.0, 20.0, np.nan, np.nan], fallback_usd_per_hour=40.0,
        usd_per_month=[np.nan] * 4 + [16_000, np.nan], purchase_usd=[np.nan] * 5 + [280_000],
        term_months=[0, 0, 12, 36, 12, 0], life_years=4, residual_fraction=0.1, accelerators=8, accel_tdp_w=700,
        host_power_w=4_600, pue=1.4, usd_per_kwh=0.1, colocation_usd_per_kw_month=120,
        maintenance_share_per_year=0.1, ops_hours_per_month=10, ops_hours_per_replica_month=2,
        egress_usd_per_gb=0.09, setup_usd=500)


def _tco(mean, peak_ratio, growth, profile, offers, params=CostParams()):
    d = inference_demand(month_profile(mean, mean * peak_ratio, profile), np.full(len(offers), 7.0),
                         growth_factors(growth, MONTHS), headroom_fraction=params.headroom_fraction,
                         output_tokens_per_request=250)
    return price_options(d, offers, horizon_months=MONTHS, engineer_usd_per_hour=90.0, params=params).tco_usd


traffic = st.tuples(st.floats(0.1, 80), st.floats(1.0, 3.0), st.floats(0.0, 0.2),
                    st.sampled_from(["flat", "business-hours", "diurnal"]))


@settings(max_examples=40, deadline=None)
@given(traffic, st.floats(1.0, 2.0))
def test_higher_prices_never_lower_cost(t, factor):
    offers = _offers()
    base = _tco(*t, offers)
    dearer = _tco(*t, offers.scaled_prices(factor))
    assert np.all(dearer >= base - 1e-6 * np.abs(base))


@settings(max_examples=40, deadline=None)
@given(traffic, st.floats(1.0, 3.0))
def test_more_usage_never_lowers_cost(t, factor):
    mean, peak_ratio, growth, profile = t
    offers = _offers()
    base = _tco(mean, peak_ratio, growth, profile, offers)
    busier = _tco(mean * factor, peak_ratio, growth, profile, offers)
    assert np.all(busier >= base - 1e-6 * np.abs(base))


@settings(max_examples=40, deadline=None)
@given(traffic, st.floats(0.0, 0.5), st.floats(0.0, 0.5))
def test_more_headroom_never_lowers_fixed_cost(t, h1, extra):
    offers = _offers()
    low = _tco(*t, offers, CostParams(headroom_fraction=h1))
    high = _tco(*t, offers, CostParams(headroom_fraction=h1 + extra))
    fixed = np.isin(offers.mode, ("cloud_reserved_1y", "cloud_reserved_3y", "dedicated_monthly", "on_prem"))
    assert np.all(high[fixed] >= low[fixed] - 1e-6 * low[fixed])
