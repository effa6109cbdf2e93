"""Sanity laws on the REAL catalog prices (src/infrafit/catalog/data/offers.csv).

For 8 x H100 over 3 years: at 100 % utilisation on-prem and reserved beat on-demand; at 5 %
utilisation on-demand beats on-prem. The replica is one 8-GPU server (or 8 one-GPU instances);
utilisation is the share of the month that server's work is needed (batch work, priced fluidly),
headroom 0 so that "100 %" means one fully used server. Skips only while the catalog file is absent.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

OFFERS_CSV = Path(__file__).resolve().parents[2] / "src" / "infrafit" / "catalog" / "data" / "offers.csv"
if not OFFERS_CSV.exists():
    pytest.skip("catalog offers.csv not there yet", allow_module_level=True)

from infrafit.catalog import load_catalog  # noqa: E402
from infrafit.cost.adapters import offers_from_catalog  # noqa: E402
from infrafit.cost.capacity_plan import inference_demand  # noqa: E402
from infrafit.cost.params import CostParams  # noqa: E402
from infrafit.cost.tco import price_options  # noqa: E402
from infrafit.cost.usage import growth_factors, month_profile  # noqa: E402

MONTHS = 36
RATE = 100.0  # the spec's default engineer USD/h
PARAMS = CostParams(headroom_fraction=0.0)


@pytest.fixture(scope="module")
def h100():
    catalog = load_catalog()
    offers = catalog.offers
    rows = offers[offers["accelerator_id"] == "nvidia_h100_sxm"].reset_index(drop=True)
    # 8 GPUs per replica: 8-GPU hosts once, 1-GPU instances eight times
    keep = rows["accelerator_count"].isin([1, 8])
    rows = rows[keep].reset_index(drop=True)
    inst = np.where(rows["accelerator_count"] == 8, 1, 8)
    return rows, offers_from_catalog(catalog, rows, instances_per_replica=inst, params=PARAMS)


def _tco(offers, utilisation):
    demand = inference_demand(month_profile(utilisation, None, "flat"), np.ones(len(offers)),
                              growth_factors(0.0, MONTHS), headroom_fraction=0.0, realtime=False)
    return price_options(demand, offers, horizon_months=MONTHS, engineer_usd_per_hour=RATE, params=PARAMS).tco_usd


def test_full_utilisation_on_prem_beats_on_demand(h100):
    rows, offers = h100
    tco = _tco(offers, 1.0)
    on_demand = tco[(rows["mode"] == "cloud_on_demand").to_numpy()]
    on_prem = tco[(rows["mode"] == "on_prem").to_numpy()]
    assert len(on_demand) >= 3 and len(on_prem) >= 3
    assert np.median(on_prem) < np.median(on_demand)
    # the dearest purchase still beats the median hyperscaler on-demand rental (neocloud H100s at
    # ~$1.3-2/GPU-hour in the 2026 data undercut some purchases, which is the market, not a bug)
    hyperscaler = rows["provider"].isin(["AWS", "GCP", "Azure"]).to_numpy()
    assert on_prem.max() < np.median(tco[(rows["mode"] == "cloud_on_demand").to_numpy() & hyperscaler])


def test_full_utilisation_reserved_beats_its_on_demand(h100):
    rows, offers = h100
    tco = _tco(offers, 1.0)
    reserved = rows.index[rows["mode"].str.startswith("cloud_reserved")]
    assert len(reserved) >= 2
    for i in reserved:
        same = rows.index[(rows["mode"] == "cloud_on_demand") & (rows["host_id"] == rows.at[i, "host_id"])
                          & (rows["provider"] == rows.at[i, "provider"]) & (rows["region"] == rows.at[i, "region"])]
        assert len(same) >= 1
        assert tco[i] < tco[same].min(), rows.at[i, "id"]


def test_five_percent_utilisation_on_demand_beats_on_prem(h100):
    rows, offers = h100
    tco = _tco(offers, 0.05)
    on_demand = tco[(rows["mode"] == "cloud_on_demand").to_numpy()]
    on_prem = tco[(rows["mode"] == "on_prem").to_numpy()]
    assert on_demand.max() < on_prem.min()
