"""Golden TCO cases: each expected number is written out as the arithmetic a finance team would do.

Prices are illustrative list prices with their origin noted (the catalog holds the maintained ones):
p5.48xlarge (8x H100) on-demand $55.04/h in us-east-1 (SkyPilot catalog v8, AWS); an 8x H100 HGX
server ~$280k (Epoch AI hardware prices, 2023-2025 cluster $250-300k); DGX H100 draws 10.2 kW.
"""

from __future__ import annotations

import numpy as np
import pytest

from infrafit.cost.capacity_plan import inference_demand, training_demand
from infrafit.cost.offers import OfferArrays
from infrafit.cost.params import BREAKDOWN_KEYS, CostParams
from infrafit.cost.storage_egress import storage_needs, tiered_cost
from infrafit.cost.tco import price_options
from infrafit.cost.usage import growth_factors, month_profile

NO_HEADROOM = CostParams(headroom_fraction=0.0)


def _one_replica_flat(months: int, params: CostParams = NO_HEADROOM):
    """Load exactly equal to one replica's capacity, every hour: 1 replica, 100 % busy."""
    profile = month_profile(10.0, None, "flat")
    return inference_demand(profile, np.array([10.0]), growth_factors(0.0, months),
                            headroom_fraction=params.headroom_fraction, output_tokens_per_request=0.0)


def test_on_demand_8xh100_24_months():
    demand = _one_replica_flat(24)
    offers = OfferArrays.build(["cloud_on_demand"], usd_per_hour=55.04)
    result = price_options(demand, offers, horizon_months=24, engineer_usd_per_hour=0.0, params=NO_HEADROOM)
    # 55.04 $/h x 730 h/month x 24 months
    assert result.tco_usd[0] == pytest.approx(55.04 * 730 * 24)  # = 964,300.80
    assert result.breakdown["compute_usd"][0] == pytest.approx(964_300.80)
    assert result.breakdown["idle_usd"][0] == pytest.approx(0.0, abs=1e-6)
    assert set(result.breakdown) == set(BREAKDOWN_KEYS)


def test_on_prem_8xh100_36_months():
    demand = _one_replica_flat(36)
    offers = OfferArrays.build(
        ["on_prem"], purchase_usd=280_000, life_years=4, residual_fraction=0.10,
        accelerators=8, accel_tdp_w=700, host_power_w=4_600, pue=1.3, usd_per_kwh=0.12,
        colocation_usd_per_kw_month=150, maintenance_share_per_year=0.10,
    )
    result = price_options(demand, offers, horizon_months=36, engineer_usd_per_hour=0.0, params=NO_HEADROOM)
    b = {k: v[0] for k, v in result.breakdown.items()}
    depreciation = 280_000 * (1 - 0.10) / (4 * 12)  # 5,250.00 per month
    power = (8 * 700 + 4_600) / 1000 * 1.3 * 0.12 * 730  # 10.2 kW x 1.3 x $0.12 x 730 h = 1,161.58
    colocation = 10.2 * 150  # 1,530.00 on provisioned IT kW
    maintenance = 280_000 * 0.10 / 12  # 2,333.33
    assert b["compute_usd"] == pytest.approx(depreciation * 36)
    assert b["power_usd"] == pytest.approx(power * 36)
    assert b["colocation_usd"] == pytest.approx(colocation * 36)
    assert b["maintenance_usd"] == pytest.approx(maintenance * 36)
    # sold at the end: book value 280,000 - 5,250 x 36 = 91,000, recovered less the 20 % haircut
    assert b["resale_loss_usd"] == pytest.approx(91_000 * 0.20)  # 18,200
    assert result.tco_usd[0] == pytest.approx((5_250 + 1_161.576 + 1_530 + 2_333.3333) * 36 + 18_200, rel=1e-6)
    assert result.cash_outlay_usd[0] == pytest.approx(result.tco_usd[0] + 91_000 * 0.80)  # the purchase is paid
    assert result.to_json(0)["commitment_months"] == 48  # bought outright: its 4-year life


def test_reserved_3y_pays_full_term_on_a_24_month_horizon():
    demand = _one_replica_flat(24)
    offers = OfferArrays.build(["cloud_reserved_3y"], usd_per_hour=24.0, term_months=36)
    result = price_options(demand, offers, horizon_months=24, engineer_usd_per_hour=0.0, params=NO_HEADROOM)
    # 24 $/h x 730 h x 36 months committed; the 12 months after the horizon are idle capacity
    assert result.tco_usd[0] == pytest.approx(24.0 * 730 * 36)
    assert result.beyond["idle_usd"][0] == pytest.approx(24.0 * 730 * 12)


def test_spot_training_interruption_overhead():
    params = CostParams(spot_interruptions_per_hour_default=1 / 24, spot_checkpoint_interval_s=1800,
                        spot_restart_s=600)
    demand = training_demand(np.array([100 * 3600.0]), runs_per_year=12, months=1,
                             headroom_fraction=0.2)  # one 100-hour run a month
    offers = OfferArrays.build(["cloud_spot"], usd_per_hour=20.0)
    result = price_options(demand, offers, horizon_months=1, engineer_usd_per_hour=0.0, params=params)
    x = (1 / 24) * (0.5 / 2 + 10 / 60)  # interruptions/h x (ckpt/2 + restart) = 0.017361
    assert result.breakdown["compute_usd"][0] == pytest.approx(100 * 20.0)
    assert result.breakdown["interruption_overhead_usd"][0] == pytest.approx(100 * 20.0 * x / (1 - x))  # 35.34


def test_dedicated_contract_and_setup_on_short_horizon():
    profile = month_profile(15.0, None, "flat")
    # capacity 10 rps, peak 15 x 1.2 headroom = 18 -> 2 servers
    demand = inference_demand(profile, np.array([10.0]), growth_factors(0.0, 6), headroom_fraction=0.2)
    offers = OfferArrays.build(["dedicated_monthly"], usd_per_month=15_000, term_months=12, setup_usd=2_000)
    result = price_options(demand, offers, horizon_months=6, engineer_usd_per_hour=0.0)
    # 2 servers x $15,000 x 12-month minimum contract + 2 x $2,000 setup
    assert result.tco_usd[0] == pytest.approx(2 * 15_000 * 12 + 2 * 2_000)
    # used share: 15 rps of 20 rps capacity
    assert result.breakdown["compute_usd"][0] == pytest.approx(2 * 15_000 * 6 * 0.75)


def test_egress_tiers_aws_like():
    upto = [[100, 10_240, 51_200, 153_600, np.inf]]
    price = [[0.0, 0.09, 0.085, 0.07, 0.05]]
    cost = tiered_cost(np.array([[60_000.0]]), upto, price)
    # 100 GB free; 10,140 GB x 0.09 = 912.60; 40,960 GB x 0.085 = 3,481.60; 8,800 GB x 0.07 = 616.00
    assert cost[0, 0] == pytest.approx(912.60 + 3_481.60 + 616.00)


def test_storage_ops_migration_and_unit_costs():
    demand = inference_demand(month_profile(10.0, None, "flat"), np.array([10.0]), growth_factors(0.0, 12),
                              headroom_fraction=0.0, output_tokens_per_request=300)
    offers = OfferArrays.build(["cloud_on_demand"], usd_per_hour=10.0, ops_hours_per_month=8,
                               migration_engineer_weeks=2, storage_usd_per_gb_month={"hot": 0.023})
    needs = storage_needs(12, dataset_bytes=0, artifact_bytes=140e9, checkpoint_bytes=0)
    result = price_options(demand, offers, horizon_months=12, engineer_usd_per_hour=100.0, storage=needs,
                           egress_bytes_per_month=np.zeros(12))
    b = {k: v[0] for k, v in result.breakdown.items()}
    assert b["storage_usd"] == pytest.approx(140 * 0.023 * 12)  # 140 GB x $0.023 x 12 months
    assert b["ops_labour_usd"] == pytest.approx(8 * 100 * 12)
    assert b["migration_usd"] == pytest.approx(2 * 40 * 100)  # 2 engineer-weeks x 40 h x $100
    requests = 10.0 * 3600 * 730 * 12  # 315.36 M requests in a year
    units = result.per_unit()
    assert units["usd_per_1k_requests"][0] == pytest.approx(result.tco_usd[0] / requests * 1e3)
    assert units["usd_per_1m_output_tokens"][0] == pytest.approx(result.tco_usd[0] / (requests * 300) * 1e6)
