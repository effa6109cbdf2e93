"""workflow: model changes repay porting on not-first-class hardware and strand commitments (issue 19 point 1)."""

from __future__ import annotations

import copy
import math

import numpy as np
import pytest

from infrafit.catalog import load_catalog
from infrafit.cost.capacity_plan import Demand
from infrafit.cost.migration import migration_weeks
from infrafit.cost.offers import OfferArrays
from infrafit.cost.params import CostParams
from infrafit.cost.workflow import ChangeRates, _waste_probability, maturity_table, porting_usd, rates, stranded_usd
from infrafit.search.planner import plan
from infrafit.units import HOURS_PER_MONTH
from infrafit.workload.spec import workload_from_data
from infrafit.workload.spec_sections import Workflow

CHAT = {"name": "chat", "task": "inference", "model": "llama3.1-8b", "framework": "pytorch",
        "inference": {"mode": "realtime", "traffic": {"requests_per_s": 10, "input_tokens": 1000, "output_tokens": 250},
                      "slo": {"ttft_p99_s": 1.0, "tpot_p99_s": 0.05}},
        "placement": {"countries": ["US"]}, "deployment": {"allowed": ["cloud"]}, "horizon_months": 24}


def test_rates_default_to_the_maturity_row_and_take_the_spec_values():
    table = maturity_table()
    r = rates(Workflow(maturity="exploring"))
    assert r.changes_per_year == table.loc["exploring", "changes_per_year_count"]
    assert r.new_hardware_share == table.loc["exploring", "new_hardware_fraction"]
    mine = rates(Workflow(maturity="exploring", model_changes_per_year=3, new_hardware_share=0.1))
    assert (mine.changes_per_year, mine.new_hardware_share) == (3, 0.1)
    assert rates(None) is None
    assert rates(Workflow()).changes_per_year == 0  # stable


def test_porting_is_weeks_per_change_times_changes_at_the_engineer_rate():
    o = OfferArrays.build(np.array(["cloud_on_demand", "cloud_on_demand"]), change_engineer_weeks=[0.0, 2.0])
    out = porting_usd(o, ChangeRates(6, 0.5), months=3, hours_per_week=40, engineer_usd_per_hour=100)
    assert out.shape == (3, 2)
    assert np.allclose(out[:, 0], 0.0) and np.allclose(out[:, 1], 2 * 6 / 12 * 40 * 100)


def test_a_reserved_month_is_wasted_when_the_change_came_inside_its_term():
    lam = 0.1
    p = _waste_probability(np.array([12.0]), lam, 24, whole_terms=True)[:, 0]
    assert p[0] == 0 and p[12] == 0  # a term's first month: nothing retired yet inside it
    assert p[5] == pytest.approx(1 - math.exp(-lam * 5))
    assert p[17] == pytest.approx(math.exp(-lam * 12) - math.exp(-lam * 17))


def test_a_dedicated_contract_binds_only_its_minimum_term():
    p = _waste_probability(np.array([6.0]), 0.2, 12, whole_terms=False)[:, 0]
    assert p[3] == pytest.approx(1 - math.exp(-0.6)) and np.all(p[6:] == 0)


def _demand(months, fixed):
    z = np.zeros((months, 1))
    return Demand(busy_replica_hours=z + HOURS_PER_MONTH, fixed_replicas=z + fixed,
                  needed_replica_hours=z + HOURS_PER_MONTH,
                  active_hours=np.full(months, HOURS_PER_MONTH), requests_per_month=np.ones(months),
                  output_tokens_per_month=np.ones(months), realtime=True)


@pytest.mark.parametrize("mode", ["cloud_on_demand", "cloud_spot"])
def test_elastic_capacity_strands_nothing(mode):
    o = OfferArrays.build(np.array([mode]))
    paid = {"compute_usd": np.full((12, 1), 1000.0)}
    assert not stranded_usd(paid, _demand(12, 1), o, CostParams(), ChangeRates(12, 1)).any()


def test_a_purchase_loses_the_haircut_on_its_book_value_when_sold_early():
    p = CostParams()
    o = OfferArrays.build(np.array(["on_prem"]), purchase_usd=100_000.0, life_years=5.0, residual_fraction=0.1)
    out = stranded_usd({}, _demand(12, 1), o, p, ChangeRates(12, 1.0))[:, 0]
    lam = 1.0
    book0 = 1.0
    assert out[0] == pytest.approx((1 - math.exp(-lam)) * p.onprem_resale_haircut_fraction * 100_000 * book0)
    assert out.sum() < p.onprem_resale_haircut_fraction * 100_000  # never more than one haircut on the fleet


def test_exploring_prices_porting_only_off_first_class_hardware():
    catalog = load_catalog()
    data = copy.deepcopy(CHAT) | {"workflow": {"maturity": "exploring"},
                                  "hardware": {"families": ["AMD Instinct", "Google TPU"]}}
    out = plan(workload_from_data(data), catalog, top=40, diverse=False).to_dict()
    r = rates(Workflow(maturity="exploring"))
    for o in out["options"]:
        port = o["cost"]["breakdown"]["model_change_usd"]
        vendor = catalog.accelerator(o["accelerator"]).vendor
        if vendor == "NVIDIA":
            assert port == 0 and any("port nothing" in w for w in o["why"])
        else:
            weeks = migration_weeks(catalog, "pytorch", catalog.accelerator(o["accelerator"]).family, [], False)[0]
            assert port == pytest.approx(weeks * r.changes_per_year * 2 * 40 * 100)  # 2 years at $100/h
            if port:
                assert any(f"add ${port:,.0f} of porting" in w for w in o["why"])
    assert any(o["cost"]["breakdown"]["model_change_usd"] > 0 for o in out["options"])


def test_more_changes_never_make_a_commitment_cheaper():
    catalog = load_catalog()
    tcos = []
    for changes in (0, 2, 8):
        data = copy.deepcopy(CHAT) | {"workflow": {"maturity": "evolving", "model_changes_per_year": changes},
                                      "deployment": {"allowed": ["on_prem"]}}
        out = plan(workload_from_data(data), catalog, top=1).to_dict()
        tcos.append(out["options"][0]["cost"]["tco_usd"])
        stranded = out["options"][0]["cost"]["breakdown"]["stranded_commitment_usd"]
        assert (stranded > 0) == (changes > 0)
    assert tcos == sorted(tcos)
