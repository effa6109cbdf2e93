"""Break-even, sensitivity, hybrid and spot realtime fallback, checked against the full engine."""

from __future__ import annotations

import numpy as np
import pytest

from infrafit.cost.breakeven import breakeven_table, breakeven_utilisation, linear_cost
from infrafit.cost.capacity_plan import inference_demand, training_demand
from infrafit.cost.hybrid import artifact_transfer_bytes, hybrid_pairs
from infrafit.cost.offers import OfferArrays
from infrafit.cost.params import CostParams
from infrafit.cost.sensitivity import inference_evaluator, sensitivity
from infrafit.cost.tco import price_options
from infrafit.cost.usage import growth_factors, month_profile

P0 = CostParams(headroom_fraction=0.0)
H = 36


def _modes_offers():
    modes = ["cloud_on_demand", "cloud_spot", "cloud_reserved_1y", "cloud_reserved_3y", "dedicated_monthly", "on_prem"]
    return modes, OfferArrays.build(
        modes, usd_per_hour=[55.0, 25.0, 38.0, 24.0, np.nan, np.nan], usd_per_month=[np.nan] * 4 + [18_000, np.nan],
        term_months=[0, 0, 12, 36, 12, 0], purchase_usd=[np.nan] * 5 + [280_000], life_years=4,
        residual_fraction=0.1, accelerators=8, accel_tdp_w=700, host_power_w=4_600, pue=1.3, usd_per_kwh=0.1,
        colocation_usd_per_kw_month=150, maintenance_share_per_year=0.1, setup_usd=[0, 0, 0, 0, 1_000, 5_000],
        ops_hours_per_month=[4, 4, 4, 4, 16, 40], ops_hours_per_replica_month=[1, 1, 1, 1, 4, 8])


def _engine_tco(offers, u):
    """Batch work of u replicas (fluid), one fixed replica: the setting the linear model describes."""
    p = month_profile(u * 10.0, None, "flat")
    d = inference_demand(p, np.full(len(offers), 10.0), growth_factors(0.0, H), headroom_fraction=0.0,
                         realtime=False)
    return price_options(d, offers, horizon_months=H, engineer_usd_per_hour=90.0, params=P0).tco_usd


@pytest.mark.parametrize("u", [0.05, 0.4, 1.0])
def test_linear_model_matches_engine(u):
    _, offers = _modes_offers()
    a, b = linear_cost(offers, horizon_months=H, engineer_usd_per_hour=90.0, params=P0)
    assert a + b * u == pytest.approx(_engine_tco(offers, u), rel=1e-9)


def test_breakeven_is_where_engine_costs_meet():
    modes, offers = _modes_offers()
    a, b = linear_cost(offers, horizon_months=H, engineer_usd_per_hour=90.0, params=P0)
    u = breakeven_utilisation(a, b)
    i, j = modes.index("cloud_on_demand"), modes.index("on_prem")
    assert 0 < u[i, j] < 1 and u[i, j] == pytest.approx(u[j, i])
    tco = _engine_tco(offers, u[i, j])
    assert tco[i] == pytest.approx(tco[j], rel=1e-9)
    rows = breakeven_table(modes, offers, horizon_months=H, engineer_usd_per_hour=90.0, params=P0)
    row = next(r for r in rows if {r["a"], r["b"]} == {"cloud_on_demand", "on_prem"})
    assert row["cheaper_below"] == "cloud_on_demand" and row["cheaper_above"] == "on_prem"
    assert len(rows) == 15


def test_spot_realtime_needs_on_demand_fallback():
    d = inference_demand(month_profile(5.0, None, "flat"), np.array([10.0, 10.0]), growth_factors(0.0, 1),
                         headroom_fraction=0.2)
    offers = OfferArrays.build(["cloud_spot", "cloud_spot"], usd_per_hour=20.0, fallback_usd_per_hour=[np.nan, 50.0])
    r = price_options(d, offers, horizon_months=1, engineer_usd_per_hour=0.0)
    assert not r.feasible[0]
    # one replica needed every hour = the floor -> all 730 h at the on-demand fallback price
    assert r.tco_usd[1] == pytest.approx(730 * 50.0)


def test_sensitivity_flips_winner_with_utilisation():
    modes, offers = _modes_offers()
    evaluate = inference_evaluator(month_profile(2.0, None, "flat"), np.full(6, 10.0), offers,
                                   growth_per_month=0.0, horizon_months=H, engineer_usd_per_hour=90.0,
                                   params=P0, realtime=False)
    out = sensitivity(evaluate, modes)
    base_tco = np.array(out["base"]["tco_usd"])
    assert out["base"]["winner"] == modes[int(np.argmin(base_tco))]
    up = out["drivers"]["cloud_price"]["+30%"]["tco_usd"]
    assert up[0] > base_tco[0] and up[5] == pytest.approx(base_tco[5])
    assert set(out["drivers"]) == {"cloud_price", "owned_price", "utilisation", "growth"}


def test_hybrid_train_in_cloud_serve_dedicated_prices_transfer():
    train_offers = OfferArrays.build(["cloud_on_demand"], usd_per_hour=55.0, egress_usd_per_gb=0.09,
                                     provider="aws", region="us-east-1")
    serve_offers = OfferArrays.build(["dedicated_monthly", "cloud_on_demand"], usd_per_month=15_000,
                                     usd_per_hour=55.0, provider=["hk-host", "aws"], region=["hk", "us-east-1"])
    train = price_options(training_demand(np.array([100 * 3600.0]), 12, 12, headroom_fraction=0.2), train_offers,
                          horizon_months=12, engineer_usd_per_hour=0.0)
    serve_d = inference_demand(month_profile(5.0), np.array([10.0, 10.0]), growth_factors(0, 12), headroom_fraction=0.2)
    serve = price_options(serve_d, serve_offers, horizon_months=12, engineer_usd_per_hour=0.0)
    moved = artifact_transfer_bytes(140e9, 12, 12)  # a 140 GB model shipped after each monthly run
    h = hybrid_pairs(train, train_offers, serve, serve_offers, transfer_bytes_per_month=moved)
    assert h.transfer_usd[0, 0] == pytest.approx(140 * 0.09 * 12)
    assert h.transfer_usd[0, 1] == 0.0  # same provider and region
    assert h.tco_usd[0, 0] == pytest.approx(train.tco_usd[0] + serve.tco_usd[0] + 140 * 0.09 * 12)
    assert h.to_json(0, 0)["breakdown"]["egress_usd"] == pytest.approx(140 * 0.09 * 12)


def test_another_region_of_the_same_provider_pays_the_inter_region_rate_not_internet_egress():
    train_offers = OfferArrays.build(["cloud_on_demand"], usd_per_hour=55.0, egress_usd_per_gb=0.09,
                                     interregion_usd_per_gb=0.02, provider="AWS", region="us-east-1")
    serve_offers = OfferArrays.build(["cloud_on_demand"] * 3, usd_per_hour=55.0, provider=["AWS", "AWS", "GCP"],
                                     region=["eu-west-1", "us-east-1", "us-central1"])
    train = price_options(training_demand(np.array([100 * 3600.0]), 12, 12, headroom_fraction=0.2), train_offers,
                          horizon_months=12, engineer_usd_per_hour=0.0)
    serve_d = inference_demand(month_profile(5.0), np.array([10.0] * 3), growth_factors(0, 12), headroom_fraction=0.2)
    serve = price_options(serve_d, serve_offers, horizon_months=12, engineer_usd_per_hour=0.0)
    moved = artifact_transfer_bytes(140e9, 12, 12)
    h = hybrid_pairs(train, train_offers, serve, serve_offers, transfer_bytes_per_month=moved)
    assert h.transfer_usd[0, 0] == pytest.approx(140 * 0.02 * 12)  # AWS to AWS, another region
    assert h.transfer_usd[0, 1] == 0.0  # the same region
    assert h.transfer_usd[0, 2] == pytest.approx(140 * 0.09 * 12)  # to another provider: internet egress


def test_the_catalog_carries_sourced_inter_region_rates():
    from infrafit.catalog import load_catalog
    from infrafit.cost.adapters import interregion_prices

    cat = load_catalog()
    got = interregion_prices(cat.cost_factors, np.array(["AWS", "Azure", "GCP"], dtype=object))
    assert got[0] == pytest.approx(0.02) and got[1] == pytest.approx(0.02)
    # GCP sells inter-region transfer per GiB: $0.02 / 1.073741824 GB within North America
    assert got[2] == pytest.approx(0.02 / 1.073741824, rel=1e-4)
    table = cat.cost_factors["interregion"]
    assert table["source"].str.len().min() > 20 and set(table["confidence"]) <= {"low", "medium", "high"}


def test_many_candidates_price_in_one_vectorized_call():
    rng = np.random.default_rng(0)
    n = 6_000
    modes = np.array(_modes_offers()[0] * (n // 6), dtype=object)
    offers = OfferArrays.build(modes, usd_per_hour=rng.uniform(1, 60, n), usd_per_month=rng.uniform(1e3, 3e4, n),
                               purchase_usd=rng.uniform(5e4, 4e5, n), term_months=12, life_years=4,
                               fallback_usd_per_hour=60.0, accelerators=8, accel_tdp_w=700, usd_per_kwh=0.1)
    d = inference_demand(month_profile(20, 60, "diurnal"), rng.uniform(1, 40, n), growth_factors(0.05, 36),
                         headroom_fraction=0.2, output_tokens_per_request=300)
    r = price_options(d, offers, horizon_months=36, engineer_usd_per_hour=100)
    assert r.tco_usd.shape == (n,) and np.all(np.isfinite(r.tco_usd)) and np.all(r.tco_usd > 0)
    total = sum(r.breakdown.values())
    assert np.allclose(total, r.tco_usd)
