"""Preferences that used to be parsed and ignored now act (issue 13 point 3): hardware filters with
reasons, portability_required, and billing: prefer_fixed_monthly (a stated 10% margin)."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from infrafit.catalog import load_catalog
from infrafit.errors import ProblemsError
from infrafit.search.assemble import FIXED_BILLING_MARGIN, prefer_fixed
from infrafit.search.planner import plan
from infrafit.workload.spec import load_spec, parse_spec

ROOT = Path(__file__).resolve().parents[2]

BASE = """
name: prefs
task: inference
model: llama3.1-8b
inference:
  mode: realtime
  traffic: {{requests_per_s: 1, input_tokens: 200, output_tokens: 100}}
  slo: {{ttft_p99_s: 2.0, tpot_p99_s: 0.2}}
{extra}
"""


@pytest.fixture(scope="module")
def cat():
    return load_catalog()


def _plan(cat, extra: str, top: int = 8):
    return plan(parse_spec(BASE.format(extra=extra), catalog=cat), cat, top=top)


def test_hardware_filters_keep_only_what_they_name_and_say_why(cat):
    p = _plan(cat, "hardware: {vendors: [NVIDIA], exclude: [h100, NVIDIA Blackwell]}")
    assert p.options
    for o in p.options:
        acc = cat.accelerator(o.accelerator)
        assert acc.vendor == "NVIDIA" and acc.id != "nvidia_h100_sxm" and acc.family != "NVIDIA Blackwell"
    reasons = {e.what: e.reason for e in p.excluded}
    assert "removed by hardware.vendors" in reasons["Google TPU"]
    assert "removed by hardware.exclude" in reasons["NVIDIA Blackwell"]


def test_hardware_names_are_checked(cat):
    with pytest.raises(ProblemsError, match="did you mean 'NVIDIA'"):
        parse_spec(BASE.format(extra="hardware: {vendors: [nvidai]}"), catalog=cat)
    with pytest.raises(ProblemsError, match="is not an accelerator"):
        parse_spec(BASE.format(extra="hardware: {accelerators: [h1000]}"), catalog=cat)


def test_portability_keeps_second_sourced_hardware_on_multi_vendor_stacks(cat):
    p = _plan(cat, "deployment: {portability_required: true}")
    assert p.options
    sellers = cat.offers.groupby("accelerator_id")["provider"].nunique()
    market = set(cat.offers.loc[cat.offers["mode"].isin(["on_prem", "dedicated_monthly"]), "accelerator_id"])
    assert all(sellers[o.accelerator] >= 2 or o.accelerator in market for o in p.options)
    assert all(o.stack != "tensorrt-llm" for o in p.options)
    reasons = {e.what: e.reason for e in p.excluded}
    assert "portability_required" in reasons["Google TPU"] and "portability_required" in reasons[
        "AWS Trainium/Inferentia"]


def test_prefer_fixed_moves_fixed_options_within_the_margin_first():
    tco = np.array([100.0, 104.0, 108.0, 130.0])
    mode = np.array(["cloud_on_demand", "cloud_spot", "cloud_reserved_1y", "on_prem"], dtype=object)
    order = np.array([0, 1, 2, 3])
    assert prefer_fixed(order, tco, mode).tolist() == [2, 0, 1, 3]  # reserved at +8% first; on-prem +30% not
    assert FIXED_BILLING_MARGIN == pytest.approx(0.10)


def test_the_plan_says_what_the_billing_preference_cost(cat):
    p = _plan(cat, "deployment: {billing: prefer_fixed_monthly}")
    assert any(w.startswith("billing:") for w in p.options[0].why)


def test_hardware_bought_at_a_market_rate_counts_as_second_sourced():
    """A device bought outright (one ``purchase`` row, e.g. a Jetson) is owned, not locked to one cloud."""
    from infrafit.search.offers import filter_offers

    cat = load_catalog()
    w = load_spec(ROOT / "examples" / "edge-vision.yaml")
    assert w.deployment.portability_required
    kept = filter_offers(cat, w, tuple(w.deployment.allowed), w.placement.regions, w.placement.countries).kept
    assert "nvidia_jetson_orin_nano_super" in set(kept["accelerator_id"])


def test_pay_per_use_keeps_commitments_out_unless_asked(cat):
    said = _plan(cat, "placement: {countries: [US]}\ndeployment: {billing: pay_per_use}\nhorizon_months: 36")
    assert said.options and all(o.deployment in ("cloud_on_demand", "cloud_spot") for o in said.options)
    assert any(e.what == "commitments" and "pay_per_use keeps out" in e.reason for e in said.excluded)
    asked = _plan(cat, "placement: {countries: [US]}\n"
                       "deployment: {billing: pay_per_use, allowed: [cloud, on_prem]}\nhorizon_months: 36", top=20)
    modes = {o.deployment for o in asked.options}
    assert modes and not modes & {"cloud_reserved_1y", "cloud_reserved_3y", "dedicated_monthly"}
    bought = _plan(cat, "placement: {countries: [US]}\n"
                        "deployment: {billing: pay_per_use, allowed: [on_prem]}\nhorizon_months: 36", top=3)
    assert bought.options and all(o.deployment == "on_prem" for o in bought.options)  # listed, so it competes
    default = _plan(cat, "placement: {countries: [US]}\nhorizon_months: 36", top=20)
    assert {o.deployment for o in default.options} - {"cloud_on_demand", "cloud_spot"}  # nothing said: all compete
