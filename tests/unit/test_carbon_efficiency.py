"""Work per dollar and per kWh, energy, emissions and --objective carbon (issue 19 point 5)."""

from __future__ import annotations

import math

import numpy as np
import pandas as pd
import pytest

from infrafit.catalog import load_catalog
from infrafit.cost.capacity_plan import Demand
from infrafit.cost.carbon import energy_kwh, facility_pue, grid_intensity
from infrafit.cost.offers import OfferArrays
from infrafit.cost.params import CostParams
from infrafit.search.pareto import METRIC_TIE_FRACTION
from infrafit.search.planner import plan
from infrafit.units import HOURS_PER_MONTH
from infrafit.workload.spec import workload_from_data

CHAT = {"name": "chat", "task": "inference", "model": "llama3.1-8b",
        "inference": {"mode": "realtime", "traffic": {"requests_per_s": 10, "input_tokens": 800, "output_tokens": 200},
                      "slo": {"ttft_p99_s": 1.0, "tpot_p99_s": 0.05}},
        "deployment": {"allowed": ["cloud"]}, "horizon_months": 12}


@pytest.fixture(scope="module")
def catalog():
    return load_catalog()


def test_grid_intensity_city_then_single_grid_country_else_missing(catalog):
    got = grid_intensity(catalog, pd.Series(["Tokyo", "Osaka", "Mantsala", "", "Des Moines", "Nowhere"]),
                         pd.Series(["JP", "JP", "FI", "FI", "US", "JP"]))
    table = catalog.table("grid_carbon")
    tokyo = float(table.loc[(table["city"] == "Tokyo"), "co2e_g_per_kwh"].iloc[0])
    osaka = float(table.loc[(table["city"] == "Osaka"), "co2e_g_per_kwh"].iloc[0])
    finland = float(table.loc[(table["country"] == "FI") & (table["city"] == ""), "co2e_g_per_kwh"].iloc[0])
    assert got[0] == tokyo and got[1] == osaka and tokyo != osaka  # Japan has distinct grids: city rows
    assert got[2] == got[3] == finland  # one national grid: any Finnish site
    assert math.isnan(got[4]) and math.isnan(got[5])  # US and Japan have no country row: never guessed


def test_facility_pue_by_provider_class_or_site(catalog):
    pue = facility_pue(catalog, pd.Series(["AWS", "Lambda", "purchase"]), np.array([False, False, True]),
                       np.array([1.0, 1.0, 1.42]))
    f = catalog.cost_factors["pue"].set_index("id")["pue_ratio"]
    assert pue[0] == f["hyperscale"] and pue[1] == f["industry_average"] and pue[2] == 1.42


def _demand(busy, fixed, needed):
    m = np.array([[busy]]), np.array([[fixed]]), np.array([[needed]])
    return Demand(busy_replica_hours=m[0], fixed_replicas=m[1], needed_replica_hours=m[2],
                  active_hours=np.array([HOURS_PER_MONTH]), requests_per_month=np.array([1.0]),
                  output_tokens_per_month=np.array([1.0]), realtime=True)


@pytest.mark.parametrize("mode,held", [("on_prem", 2.0), ("cloud_on_demand", 1.5)])
def test_energy_is_held_hardware_at_its_utilisation_times_pue(mode, held):
    p = CostParams()
    d = _demand(busy=HOURS_PER_MONTH * 0.75, fixed=2.0, needed=HOURS_PER_MONTH * 1.5)
    o = OfferArrays.build(np.array([mode]), accelerators=8.0, accel_tdp_w=700.0, host_power_w=2000.0,
                          carbon_pue=1.3)
    util = 0.75 / held
    watts = 8 * 700 * (p.accel_idle_power_fraction + (1 - p.accel_idle_power_fraction) * util) + 2000
    assert energy_kwh(d, o, p)[0, 0] == pytest.approx(held * HOURS_PER_MONTH * watts * 1.3 / 1e3)


def test_every_option_reports_work_per_dollar_and_per_kwh(catalog):
    out = plan(workload_from_data(CHAT), catalog, top=5, diverse=False).to_dict()
    for o in out["options"]:
        e = o["efficiency"]
        tokens = CHAT["inference"]["traffic"]["output_tokens"]  # per request
        assert e["work_unit"] == "output_tokens"
        work = e["work_per_usd"] * o["cost"]["tco_usd"]
        assert work == pytest.approx(10 * tokens * 3600 * HOURS_PER_MONTH * 12, rel=0.02)
        assert e["work_per_kwh"] == pytest.approx(work / (e["energy_kwh_per_month"] * 12))
        if e["grid_co2e_g_per_kwh"] is None:
            assert e["co2e_kg_per_month"] is None  # missing stays missing
        else:
            assert e["co2e_kg_per_month"] == pytest.approx(e["energy_kwh_per_month"] * e["grid_co2e_g_per_kwh"] / 1e3)


def test_objective_carbon_ranks_by_emissions_known_first(catalog):
    spec = workload_from_data(CHAT | {"placement": {"countries": ["US", "FI", "FR", "JP"]}})
    out = plan(spec, catalog, top=6, diverse=False, objective="carbon").to_dict()
    kg = [o["efficiency"]["co2e_kg_per_month"] for o in out["options"]]
    known = [k for k in kg if k is not None]
    # emissions within METRIC_TIE_FRACTION (3%) of each other are a tie broken by TCO
    assert known and all(b * (1.0 + METRIC_TIE_FRACTION) >= a for a, b in zip(known, known[1:], strict=False))
    tco = [o["cost"]["tco_usd"] for o in out["options"]][:len(known)]
    # an option ranked above a lower emitter is never the dearer of the two (the tie is broken by TCO)
    assert all(tco[i] <= tco[j] for i in range(len(known)) for j in range(i + 1, len(known)) if known[j] < known[i])
    assert kg[:len(known)] == known  # unknown emissions rank after every known one
    assert "lowest emissions" in out["options"][0]["why"][0]
    assert any("kg CO2e/month" in w for w in out["options"][0]["why"])
    cheapest = plan(spec, catalog, top=1).to_dict()["options"][0]
    assert out["options"][0]["efficiency"]["co2e_kg_per_month"] <= (
        cheapest["efficiency"]["co2e_kg_per_month"] or math.inf)
