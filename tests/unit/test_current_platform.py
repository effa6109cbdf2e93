"""current: "stay as is" beside the alternatives and a switch plan with payback on each (issue 19 point 3)."""

from __future__ import annotations

import copy
import json

import numpy as np
import pytest

from infrafit.catalog import load_catalog
from infrafit.cli import main
from infrafit.cost.params import CostParams
from infrafit.search.current import payback_month
from infrafit.search.planner import plan
from infrafit.workload.spec import workload_from_data

CHAT = {"name": "chat", "task": "inference", "model": "llama3.1-8b",
        "inference": {"mode": "realtime", "traffic": {"requests_per_s": 10, "input_tokens": 1000, "output_tokens": 250},
                      "slo": {"ttft_p99_s": 1.0, "tpot_p99_s": 0.05}},
        "placement": {"countries": ["US"]}, "deployment": {"allowed": ["cloud"]}, "horizon_months": 24}
TODAY = {"accelerator": "a100-80gb", "count": 8, "provider": "AWS", "mode": "cloud_on_demand", "monthly_usd": 29000}


@pytest.fixture(scope="module")
def catalog():
    return load_catalog()


def _plan(catalog, current=TODAY, **changes):
    data = copy.deepcopy(CHAT) | {"current": current} | changes
    return plan(workload_from_data(data), catalog, top=3).to_dict()


def _stay(out):
    return next(o for o in out["options"] if o["switch"]["kind"] == "stay")


def test_stay_is_an_option_priced_at_todays_bill_and_mode(catalog):
    out = _plan(catalog)
    stay = _stay(out)
    months = CHAT["horizon_months"]
    labour = stay["cost"]["breakdown"]["ops_labour_usd"]
    assert stay["cost"]["breakdown"]["compute_usd"] == pytest.approx(TODAY["monthly_usd"] * months)
    assert stay["cost"]["tco_usd"] == pytest.approx(TODAY["monthly_usd"] * months + labour)
    assert stay["deployment"] == "cloud_on_demand" and stay["provider"] == "AWS" and stay["count"] == 8
    assert stay["accelerator"] == "nvidia_a100_80gb_sxm" and stay["why"][0].startswith("stay as is")
    at = out["options"].index(stay)  # placed before the first option costing more (cost objective)
    assert all(o["cost"]["tco_usd"] <= stay["cost"]["tco_usd"] for o in out["options"][:at])
    assert all(o["cost"]["tco_usd"] > stay["cost"]["tco_usd"] for o in out["options"][at + 1:at + 2])
    assert [o["rank"] for o in out["options"]] == list(range(1, len(out["options"]) + 1))


def test_every_other_option_has_a_switch_plan_whose_numbers_add_up(catalog):
    out = _plan(catalog)
    stay = _stay(out)
    for o in out["options"]:
        if o is stay:
            continue
        s = o["switch"]
        assert s["kind"] == "switch" and s["against"] == "stay"
        assert s["dual_running_months"] >= CostParams().dual_run_validation_months
        assert s["dual_running_usd"] == pytest.approx(TODAY["monthly_usd"] * s["dual_running_months"])
        assert s["saving_usd"] == pytest.approx(stay["cost"]["tco_usd"] - o["cost"]["tco_usd"] - s["dual_running_usd"]
                                                - s["stranded_contract_usd"])
        assert s["payback_month"] is not None and 1 <= s["payback_month"] <= CHAT["horizon_months"]
        assert any(w.startswith("switch from today's 8 x a100-80gb") and f"month {s['payback_month']}" in w
                   for w in o["why"])


def test_a_contract_still_running_is_paid_when_switching(catalog):
    free = _plan(catalog)
    bound = _plan(catalog, TODAY | {"mode": "cloud_reserved_1y", "contract_months_left": 6})
    first = next(o for o in bound["options"] if o["switch"]["kind"] == "switch")
    s = first["switch"]
    assert s["stranded_contract_usd"] == pytest.approx(TODAY["monthly_usd"] * (6 - s["dual_running_months"]))
    same = next(o for o in free["options"] if o["offer_id"] == first["offer_id"])
    assert s["saving_usd"] < same["switch"]["saving_usd"]


def test_payback_month_is_when_switching_stays_ahead():
    stay = np.full(6, 100.0)
    assert payback_month(np.array([250.0, 10, 10, 10, 10, 10]), stay) == 3  # 250 <= 100, 260 <= 200? no; 270 <= 300
    assert payback_month(np.full(6, 50.0), stay) == 1
    assert payback_month(np.full(6, 150.0), stay) is None


def test_a_platform_that_misses_the_slo_is_excluded_and_switches_are_against_its_bill(catalog):
    slo = {"ttft_p99_s": 1.0, "tpot_p99_s": 0.02}
    out = _plan(catalog, {"accelerator": "t4", "count": 1, "provider": "AWS", "monthly_usd": 400},
                inference=CHAT["inference"] | {"slo": slo})
    assert all(o["switch"]["kind"] == "switch" for o in out["options"])
    line = next(e for e in out["excluded"] if e["what"] == "stay as is")
    assert "cannot carry the workload within its SLOs" in line["reason"]
    assert all(o["switch"]["against"] == "today's bill" for o in out["options"])


def test_a_growing_load_adds_replicas_at_todays_price(catalog):
    small = {"accelerator": "a100-80gb", "count": 1, "provider": "AWS", "monthly_usd": 3000}
    out = _plan(catalog, small, growth={"traffic_per_month": 0.2})
    stay = _stay(out)
    bills = [m["compute_usd"] for m in stay["cost"]["monthly"]]
    assert bills[0] >= 3000 and bills[-1] > bills[0] and all(b % 3000 == pytest.approx(0, abs=1e-6) for b in bills)


@pytest.mark.parametrize("current,field", [
    ({"accelerator": "h1000", "count": 8, "monthly_usd": 1}, "current.accelerator"),
    ({"accelerator": "h100", "count": 12, "provider": "AWS", "monthly_usd": 1, "host": "aws_p5_48xlarge"},
     "current.count"),
    ({"accelerator": "h100", "count": 8, "monthly_usd": 0}, "current.monthly_usd"),
])
def test_bad_current_is_refused(tmp_path, capsys, current, field):
    path = tmp_path / "w.yaml"
    path.write_text(json.dumps(CHAT | {"current": current}))
    assert main(["check", str(path)]) == 2
    assert field in capsys.readouterr().err


def test_current_with_training_and_serving_is_refused(tmp_path, capsys):
    data = CHAT | {"task": "fine-tuning", "training": {"method": "lora", "tokens": 1e8}, "current": TODAY,
                   "deployment": {"allowed": ["cloud", "hybrid"]}}
    path = tmp_path / "w.yaml"
    path.write_text(json.dumps(data))
    assert main(["check", str(path)]) == 2
    assert "current" in capsys.readouterr().err


def test_a_cheap_platform_today_is_kept_and_no_switch_pays_back(catalog):
    out = _plan(catalog, {"accelerator": "h100", "count": 1, "provider": "Hyperbolic", "monthly_usd": 500})
    assert out["options"][0]["switch"]["kind"] == "stay"
    for o in out["options"][1:]:
        assert o["switch"]["payback_month"] is None and o["switch"]["saving_usd"] < 0
        assert any("does not pay back within 24 months" in w for w in o["why"])


def test_the_model_saying_todays_fleet_is_too_small_today_is_a_stated_risk(catalog):
    """The team serves today's load on today's fleet. When the model needs more replicas than that in month 1
    (the switch example: 16 A100s as 2 replicas, 5 needed at risk p90), the stay option says so and how to
    check it; when today's fleet carries month 1, it says nothing."""
    big = {"accelerator": "a100-80gb", "count": 8, "provider": "AWS", "monthly_usd": 29000}
    small = {"accelerator": "a100-80gb", "count": 1, "provider": "AWS", "monthly_usd": 3000}
    lines = {}
    for name, cur in (("big", big), ("small", small)):
        stay = _stay(_plan(catalog, cur, inference=CHAT["inference"] | {
            "traffic": {"requests_per_s": 40, "input_tokens": 1000, "output_tokens": 250}}))
        lines[name] = [r for r in stay["risks"] if r.startswith("model vs today")]
        first = stay["cost"]["monthly"][0]["compute_usd"] / cur["monthly_usd"]
        assert bool(lines[name]) == (first > 1.0)  # stated exactly when month 1 needs more than today's fleet
    assert lines["small"] and not lines["big"]
    assert "requests/s per replica" in lines["small"][0] and "--risk p50" in lines["small"][0]


def test_a_fleet_the_team_says_meets_the_slos_is_sized_from_today(catalog):
    """`current.meets_slos: true`: the team serves today's load on today's fleet, so "stay" runs today's replicas in
    month 1 (the model asked 40 requests/s of one A100 to need several) and adds replicas only as the load grows;
    its why says so and the "model vs today" risk is gone. The switch plans are measured against that bill."""
    small = {"accelerator": "a100-80gb", "count": 1, "provider": "AWS", "monthly_usd": 3000}
    load = CHAT["inference"] | {"traffic": {"requests_per_s": 40, "input_tokens": 1000, "output_tokens": 250}}
    model = _stay(_plan(catalog, small, inference=load))
    told = _stay(_plan(catalog, small | {"meets_slos": True}, inference=load))
    assert model["cost"]["monthly"][0]["compute_usd"] > small["monthly_usd"]
    assert told["cost"]["monthly"][0]["compute_usd"] == pytest.approx(small["monthly_usd"])
    assert told["cost"]["tco_usd"] < model["cost"]["tco_usd"]
    line = next(w for w in told["why"] if w.startswith("sized from today's fleet (current.meets_slos)"))
    assert "month 1 runs today's 1 replica(s) of 1" in line
    assert not any(r.startswith("model vs today") for r in told["risks"])
    grown = _stay(_plan(catalog, small | {"meets_slos": True}, inference=load, growth={"traffic_per_month": 0.1}))
    monthly = [m["compute_usd"] for m in grown["cost"]["monthly"]]
    assert monthly[0] == pytest.approx(small["monthly_usd"]) and monthly[-1] > monthly[0]  # grows with the load


def test_stay_replicas_scale_the_models_months_to_todays_fleet():
    from infrafit.search.current import stay_replicas

    model = np.array([5.0, 5.0, 6.0, 10.0])
    assert list(stay_replicas(model, 2, False)) == [5, 5, 6, 10]
    assert list(stay_replicas(model, 2, True)) == [2, 2, 3, 4]
    assert list(stay_replicas(np.array([1.0, 3.0]), 2, True)) == [2, 3]  # the model asks no more than today: as is
