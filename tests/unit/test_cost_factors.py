"""Catalog-backed cost factors: offers_from_catalog reads electricity, colocation, egress and storage
from the catalog's cost tables per offer, and names every stand-in it used."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from infrafit.catalog import load_catalog
from infrafit.cost.adapters import offers_from_catalog
from infrafit.cost.capacity_plan import inference_demand
from infrafit.cost.params import CostParams
from infrafit.cost.storage_egress import tiered_cost
from infrafit.cost.tco import price_options
from infrafit.cost.usage import growth_factors, month_profile
from infrafit.units import GB


@pytest.fixture(scope="module")
def catalog():
    return load_catalog()


def _table_value(catalog, table: str, column: str, **match) -> float:
    frame = catalog.cost_factors[table]
    for key, value in match.items():
        frame = frame[frame[key] == value]
    assert len(frame) >= 1, (table, match)
    return float(frame[column].iloc[0])


def _onprem_at(catalog, places: list[tuple[str, str, str]]) -> pd.DataFrame:
    """One H100 on-prem purchase row placed in each (region, city, country) (an in-house site)."""
    offers = catalog.offers
    base = offers[(offers["mode"] == "on_prem") & (offers["accelerator_id"] == "nvidia_h100_sxm")].iloc[[0]]
    rows = pd.concat([base] * len(places), ignore_index=True)
    rows[["region", "city", "country"]] = places
    return rows


def test_electricity_tokyo_vs_us_on_prem(catalog):
    rows = _onprem_at(catalog, [("tokyo", "Tokyo", "JP"), ("us-virginia", "Ashburn", "US")])
    o = offers_from_catalog(catalog, rows)
    virginia = _table_value(catalog, "electricity", "usd_per_kwh", region="us-virginia", sector="commercial")
    default = _table_value(catalog, "electricity", "usd_per_kwh", region="default")
    assert o.usd_per_kwh[1] == virginia
    assert o.usd_per_kwh[0] == default  # no Japanese tariff in the catalog: the default row, flagged
    assert o.usd_per_kwh[0] != o.usd_per_kwh[1]
    assert "no electricity price for tokyo/JP" in o.notes[0]
    assert "electricity" not in o.notes[1]
    assert o.pue[0] == o.pue[1] == _table_value(catalog, "pue", "pue_ratio", id="industry_average")


def test_site_fills_on_prem_rows_without_a_place(catalog):
    rows = _onprem_at(catalog, [("", "", "")])
    texas = offers_from_catalog(catalog, rows, site_region="us-texas", site_country="US",
                                electricity_sector="industrial")
    assert texas.usd_per_kwh[0] == _table_value(catalog, "electricity", "usd_per_kwh", region="us-texas",
                                                sector="industrial")
    nowhere = offers_from_catalog(catalog, rows)
    assert "unspecified site" in nowhere.notes[0]


def test_colocation_now_charged_on_prem(catalog):
    rows = _onprem_at(catalog, [("us-virginia", "Ashburn", "US")])
    o = offers_from_catalog(catalog, rows, params=CostParams(headroom_fraction=0.0))
    rate = _table_value(catalog, "colocation", "usd_per_kw_month", country="US")
    assert o.colocation_usd_per_kw_month[0] == rate > 0
    demand = inference_demand(month_profile(1.0, None, "flat"), np.ones(1), growth_factors(0.0, 12),
                              headroom_fraction=0.0, realtime=False)
    cost = price_options(demand, o, horizon_months=12, engineer_usd_per_hour=0.0,
                         params=CostParams(headroom_fraction=0.0))
    it_kw = (o.accelerators[0] * o.accel_tdp_w[0] + o.host_power_w[0]) / 1000.0
    running = 12 - o.lead_months[0]  # no rent before the server is delivered (cost_lead_time.csv)
    assert 2 < o.lead_months[0] < 3 and cost.breakdown["colocation_usd"][0] == pytest.approx(running * it_kw * rate)
    assert cost.breakdown["maintenance_usd"][0] > 0


def test_aws_egress_tiers_applied(catalog):
    offers = catalog.offers
    rows = offers[(offers["provider"] == "AWS") & (offers["mode"] == "cloud_on_demand")].iloc[[0]]
    o = offers_from_catalog(catalog, rows)
    assert o.notes[0] == ""
    # 60 TB in a month: 100 GB free, 9.9 TB at $0.09, 40 TB at $0.085, 10 TB at $0.07 (cost_egress.csv)
    expected = (10_000 - 100) * 0.09 + 40_000 * 0.085 + 10_000 * 0.07
    got = tiered_cost(np.array([[60_000.0]]), o.egress_tier_upto_gb, o.egress_usd_per_gb)
    assert got[0, 0] == pytest.approx(expected)
    demand = inference_demand(month_profile(1.0, None, "flat"), np.ones(1), growth_factors(0.0, 1),
                              headroom_fraction=0.0, realtime=False,
                              output_tokens_per_request=60_000 * GB / (3600 * 730) / 8.0)
    cost = price_options(demand, o, horizon_months=1, engineer_usd_per_hour=0.0)
    assert cost.breakdown["egress_usd"][0] == pytest.approx(expected, rel=1e-9)


def test_provider_without_rows_gets_the_generic_tier_and_says_so(catalog):
    offers = catalog.offers
    known = set(catalog.cost_factors["egress"]["provider"])
    rows = offers[~offers["provider"].isin(known) & (offers["mode"] == "cloud_on_demand")].iloc[[0]]
    o = offers_from_catalog(catalog, rows)
    assert o.egress_usd_per_gb[0, 0] > 0
    assert "no egress tiers for provider" in o.notes[0]


def test_storage_from_the_provider_and_local_for_owned(catalog):
    offers = catalog.offers
    gcp = offers[(offers["provider"] == "GCP") & (offers["mode"] == "cloud_on_demand")].iloc[[0]]
    rented = offers[offers["mode"] == "dedicated_monthly"].iloc[[0]]
    o = offers_from_catalog(catalog, pd.concat([gcp, rented], ignore_index=True))
    assert o.storage_usd_per_gb_month["hot"][0] == _table_value(catalog, "storage", "usd_per_gb_month",
                                                                provider="GCP", storage_class="object")
    assert o.storage_usd_per_gb_month["hot"][1] == _table_value(catalog, "storage", "usd_per_gb_month",
                                                                storage_class="local_nvme")


def test_dedicated_pays_power_only_when_its_price_excludes_it(catalog):
    offers = catalog.offers
    rows = pd.concat([offers[offers["mode"] == "dedicated_monthly"].iloc[[0]]] * 2, ignore_index=True)
    rows.loc[1, "includes"] = "server rental: hardware, rack space and bandwidth allowance"
    rows.loc[1, ["region", "country"]] = ["us-virginia", "US"]
    o = offers_from_catalog(catalog, rows)
    assert o.usd_per_kwh[0] == 0.0 and o.usd_per_kwh[1] > 0
    demand = inference_demand(month_profile(1.0, None, "flat"), np.ones(2), growth_factors(0.0, 3),
                              headroom_fraction=0.0, realtime=False)
    cost = price_options(demand, o, horizon_months=3, engineer_usd_per_hour=0.0,
                         params=CostParams(headroom_fraction=0.0))
    assert cost.breakdown["power_usd"][0] == 0.0
    assert cost.breakdown["power_usd"][1] > 0
    assert cost.tco_usd[1] > cost.tco_usd[0]
