"""Golden scenarios (issue 12 point 10, a first set): each a realistic situation, the conclusion an expert
would reach, and the option's cost re-derived by hand from its own offer price. The pilot, 3-year steady
and edge scenarios are in tests/unit/test_cost_onprem_cash.py."""

from __future__ import annotations

from pathlib import Path

import pytest

from infrafit.catalog import load_catalog
from infrafit.search.planner import plan
from infrafit.units import HOURS_PER_DAY, HOURS_PER_MONTH
from infrafit.workload.spec import load_spec, parse_spec
from infrafit.workload.spec_sections import BUSINESS_HOURS_PER_MONTH

EXAMPLES = Path(__file__).resolve().parents[2] / "examples"

LOW_TRAFFIC_CHAT = """
name: low-traffic-chat
task: inference
model: llama3.1-8b
inference:
  mode: realtime
  traffic: {requests_per_s: 0.2, peak_requests_per_s: 1, daily_profile: business-hours,
            input_tokens: {mean: 500, p99: 2000}, output_tokens: {mean: 200, p99: 800}}
  slo: {ttft_p99_s: 2.0, tpot_p99_s: 0.08}
usage: {pattern: business-hours}
placement: {countries: [US]}
deployment: {allowed: [cloud]}
horizon_months: 12
"""


@pytest.fixture(scope="module")
def cat():
    return load_catalog()


def _price(cat, option: dict) -> float:
    return float(cat.offers.set_index("id").loc[option["offer_id"], "usd_per_hour"])


def test_low_traffic_small_model_chat_rents_one_gpu_for_the_working_hours(cat):
    """An 8B model for an internal tool: 0.2 req/s, 1 req/s at peak, office hours only. Expert answer:
    one on-demand GPU with 24-48 GB, up in working hours and off at night and weekends; never a
    reservation or a server held 730 h a month. Cost = hourly price x 10 h x 5 days x 52 / 12 a month."""
    o = plan(parse_spec(LOW_TRAFFIC_CHAT, catalog=cat), cat).to_dict()["options"][0]
    assert o["cost"]["deployment"] == "cloud_on_demand"
    assert o["count"] == 1 and max(o["cost"]["replicas"]) == 1
    assert cat.accelerator(o["accelerator"]).memory_bytes <= 48e9
    b = o["cost"]["breakdown"]
    starts_h = sum(o["cost"]["startup"]["starts_per_month"]) * o["cost"]["startup"]["startup_s"] / 3600
    assert 0 < starts_h < 12 * 22 * 0.5  # one start each working morning, minutes each
    assert b["compute_usd"] + b["idle_usd"] == pytest.approx(
        _price(cat, o) * (BUSINESS_HOURS_PER_MONTH * 12 + starts_h), rel=1e-6)


def test_nightly_batch_rents_per_run_and_pays_each_start(cat):
    """40M BERT-large items a night in a 6-hour window. Expert answer: on-demand capacity started each
    night and released (no reservation, nothing held all day), one instance, paid for the run plus its
    start-up each night: between price x busy hours and price x (busy + 30.4 x 12 x 20 min). Paid per use,
    what decides is the price of the work, not the size of the box: since batch labour no longer carries a
    service's on-call hours (2026-12-02) an 8x A100 bare-metal box at $8.28/h for 43 min a night ($3.0k a
    year) is 6% below one B200 for 69 min; both are one instance."""
    o = plan(load_spec(EXAMPLES / "nightly-embeddings.yaml", catalog=cat), cat).to_dict()["options"][0]
    assert o["cost"]["deployment"] == "cloud_on_demand" and o["count"] <= 8
    assert max(o["cost"]["replicas"]) == 1 and o["server"]["instances_per_replica"] == 1
    b, price = o["cost"]["breakdown"], _price(cat, o)
    busy_h = b["compute_usd"] / price
    starts = HOURS_PER_MONTH / HOURS_PER_DAY * 12
    run = o["performance"]["batch_run"]
    assert busy_h == pytest.approx(run["finish_s"] / 3600 * starts, rel=1e-6)  # 40M items / throughput, nightly
    assert run["finish_s"] < 6 * 3600  # the work fits the window
    assert 0 < b["idle_usd"] <= price * starts * (20 / 60)  # start-up and rounding, at most 20 min a night


def test_monthly_lora_of_a_70b_model_rents_one_node_per_run(cat):
    """A QLoRA fine-tune of a 70B model once a month. Expert answer: one 8-GPU node on demand for the
    few hours of each run; nothing reserved or bought for 12 short runs a year."""
    o = plan(load_spec(EXAMPLES / "lora-finetune-70b.yaml", catalog=cat), cat).to_dict()["options"][0]
    assert o["cost"]["deployment"] == "cloud_on_demand"
    assert o["server"]["instances_per_replica"] == 1 and o["count"] <= 8
    b, price = o["cost"]["breakdown"], _price(cat, o)
    hours_per_run = b["compute_usd"] / price / 12
    assert 0.5 < hours_per_run < 24
    assert b["idle_usd"] < 0.05 * b["compute_usd"]  # start-up is small beside a multi-hour run
    assert o["cost"]["commitment_months"] == 0 and o["cost"]["cash_outlay_usd"] == pytest.approx(
        o["cost"]["tco_usd"])


MONTH_LONG_H100_RUN = """
name: pretrain-8b-h100
task: training
model: llama3.1-8b
framework: pytorch
precision: [bf16]
training: {tokens: 200B, seq_len: 8192, global_batch: 512, deadline_days: 30, checkpoint_every_minutes: 60,
           risk: p50}  # the block arithmetic is of the prediction (29.4 days), not its band
usage: {pattern: occasional, runs_per_year: 1}
placement: {regions: [us-east-1]}
hardware: {accelerators: [nvidia_h100_sxm]}
deployment: {allowed: [cloud], billing: pay_per_use}
horizon_months: 2
"""


def test_a_month_long_run_on_h100s_buys_a_capacity_block_not_on_demand(cat):
    """One 8x H100 instance trains 200B tokens in ~29 days. Expert answer on AWS: a Capacity Block (35 days
    at the block rate, paid upfront) beats on-demand for the same instance; spot on two instances is cheaper
    still if the team accepts the interruptions. The block is paid whole: 35 days x 24 h x $39.33."""
    options = plan(parse_spec(MONTH_LONG_H100_RUN, catalog=cat), cat, diverse=False).to_dict()["options"]
    by_mode: dict[str, dict] = {}
    for o in options:
        by_mode.setdefault(o["cost"]["deployment"], o)
    block, od = by_mode["cloud_capacity_block"], by_mode["cloud_on_demand"]
    assert block["server"]["host_id"] == od["server"]["host_id"] == "aws_p5_48xlarge"
    assert block["cost"]["tco_usd"] < od["cost"]["tco_usd"]
    b = block["cost"]["breakdown"]
    days = block["cost"]["commitment_months"] * HOURS_PER_MONTH / HOURS_PER_DAY
    assert days == pytest.approx(35.0)  # 29.4 days + the 30-minute margin, past 14 days: whole weeks
    assert b["compute_usd"] + b["idle_usd"] == pytest.approx(_price(cat, block) * 35 * HOURS_PER_DAY, rel=1e-6)
    line = next(r for r in block["risks"] if r.startswith("capacity block: a 35-day block"))
    assert "stop 30.0 min before it ends" in line  # cost_billing.csv end_margin_s, not a literal


def test_a_realtime_service_is_never_planned_on_capacity_blocks(cat):
    where = "placement: {regions: [us-east-1, us-east-2]}\nhardware: {accelerators: [nvidia_h100_sxm]}"
    spec = LOW_TRAFFIC_CHAT.replace("placement: {countries: [US]}", where)
    result = plan(parse_spec(spec, catalog=cat), cat).to_dict()
    assert result["options"] and all(o["cost"]["deployment"] != "cloud_capacity_block" for o in result["options"])
