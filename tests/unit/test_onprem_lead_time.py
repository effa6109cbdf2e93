"""On-prem lead time (issue 12 point 5): a purchase is paid at month 0 but serves only after the weeks
from order to delivery in cost_lead_time.csv; the cloud carries the load until then at the cheapest allowed
on-demand rent of the same accelerator, and the servers draw no power, colocation or maintenance meanwhile."""

from __future__ import annotations

import csv
import json
from importlib import resources
from pathlib import Path

import numpy as np
import pytest
from typer.testing import CliRunner

from infrafit.cli import app
from infrafit.cost.capacity_plan import Demand
from infrafit.cost.modes import lead_share
from infrafit.cost.offers import OfferArrays
from infrafit.cost.tco import price_options
from infrafit.units import HOURS_PER_MONTH

ROOT = Path(__file__).resolve().parents[2]


def _steady(months: int) -> Demand:
    hours = np.full((months, 1), HOURS_PER_MONTH)
    zeros = np.zeros(months)
    return Demand(hours, hours.copy(), np.ones((months, 1)), HOURS_PER_MONTH, True, zeros, zeros)


def _server(lead_months: float, bridge: float = 40.0) -> OfferArrays:
    return OfferArrays.build(["on_prem"], purchase_usd=[313_000], life_years=4, residual_fraction=0.10,
                             accelerators=8, accel_tdp_w=700, host_power_w=2000, usd_per_kwh=0.1, pue=1.3,
                             colocation_usd_per_kw_month=150, maintenance_share_per_year=0.08,
                             lead_months=lead_months, bridge_usd_per_hour=bridge)


def test_the_lead_share_of_each_month():
    share = lead_share(5, _server(2.76))
    assert share[:, 0] == pytest.approx([1.0, 1.0, 0.76, 0.0, 0.0])


def test_until_delivery_the_cloud_carries_the_load_and_the_servers_cost_nothing_to_run():
    waiting, ready = (price_options(_steady(6), _server(lead), horizon_months=6, engineer_usd_per_hour=0)
                      for lead in (2.5, 0.0))
    b_w, b_r = waiting.breakdown, ready.breakdown
    assert b_w["bridge_usd"][0] == pytest.approx(HOURS_PER_MONTH * 2.5 * 40.0)  # 2.5 months at $40/h
    assert b_r["bridge_usd"][0] == 0.0
    for key in ("power_usd", "colocation_usd", "maintenance_usd"):  # 3.5 of 6 months running
        assert b_w[key][0] == pytest.approx(b_r[key][0] * 3.5 / 6)
    assert b_w["resale_loss_usd"][0] == pytest.approx(b_r["resale_loss_usd"][0])  # the calendar ages it
    assert waiting.cash_outlay_usd[0] > 313_000  # bought at month 0, and the bridge paid on top


def test_a_horizon_inside_the_lead_time_rents_the_whole_time_and_still_buys():
    r = price_options(_steady(2), _server(2.76), horizon_months=2, engineer_usd_per_hour=0)
    assert r.breakdown["bridge_usd"][0] == pytest.approx(2 * HOURS_PER_MONTH * 40.0)
    assert r.breakdown["power_usd"][0] == 0.0
    assert r.tco_usd[0] > 2 * HOURS_PER_MONTH * 40.0  # renting alone would have been cheaper


def test_the_lead_time_row_is_sourced_and_servers_wait_twelve_weeks():
    text = resources.files("infrafit.catalog").joinpath("data/cost_lead_time.csv").read_text()
    rows = {r["host_kind"]: r for r in csv.DictReader(text.splitlines())}
    assert float(rows["any"]["lead_weeks"]) == 12 and "Dell" in rows["any"]["notes"] and rows["any"]["source"]
    assert float(rows["edge_device"]["lead_weeks"]) == 0




def _top_onprem(*args: str) -> dict:
    spec = ROOT / "examples" / "chatbot-asia.yaml"
    result = CliRunner().invoke(app, ["plan", str(spec), "--json", "--top", "5", *args])
    assert result.exit_code == 0, result.output
    return next(o for o in json.loads(result.stdout)["options"] if o["deployment"] == "on_prem")


def test_a_plan_prices_the_bridge_on_allowed_cloud_and_says_so():
    o = _top_onprem()
    bridge = o["cost"]["breakdown"]["bridge_usd"]
    assert bridge > 0
    assert any("12 weeks from order to delivery" in r and "bridged by on-demand cloud" in r for r in o["risks"])
    alone = _top_onprem("--set", "deployment.allowed=[on_prem]")  # no cloud allowed: nothing bridges it
    assert alone["cost"]["breakdown"]["bridge_usd"] == 0.0
    assert any("the service starts at delivery" in r for r in alone["risks"])
