"""Expert-checked scenarios over the 2026 market data (issue 12 point 10, continued). Each test states the
conclusion an infrastructure engineer would reach by hand and redoes the arithmetic from the option's own
offer price: the instance rented, how many, for how long, at what price, and that nothing cheaper that
meets the constraints was missed."""

from __future__ import annotations

import json

import pytest
from typer.testing import CliRunner

from infrafit.catalog import load_catalog
from infrafit.cli import app
from infrafit.units import HOURS_PER_MONTH

CHAT = """\
name: {name}
task: inference
model: {model}
precision: [fp8, bf16]
inference:
  mode: realtime
  traffic:
    requests_per_s: {rps}
    input_tokens: {{mean: {isl}, p99: {isl99}}}
    output_tokens: {{mean: {osl}, p99: {osl99}}}
  slo: {{ttft_p99_s: {ttft}, tpot_p99_s: {tpot}}}
usage: {{pattern: continuous}}
placement: {{countries: {countries}}}
deployment: {{allowed: [cloud]}}
horizon_months: {months}
"""


def _plan(tmp_path, text: str, *extra: str) -> dict:
    spec = tmp_path / "s.yaml"
    spec.write_text(text)
    result = CliRunner().invoke(app, ["plan", str(spec), "--json", *extra])
    assert result.exit_code == 0, result.output
    return json.loads(result.stdout)


def _offer(offer_id: str) -> dict:
    return load_catalog().offers.set_index("id").loc[offer_id].to_dict()


def _compute_and_idle(option: dict) -> float:
    b = option["cost"]["breakdown"]
    return b.get("compute_usd", 0.0) + b.get("idle_usd", 0.0)


def test_an_eu_resident_8b_chat_rents_one_h100_in_finland(tmp_path):
    """30 req/s of an 8B model, data in DE/FR/NL/FI, 3 years, cloud only: one H100 serves it (fp8, ~36
    req/s with the 20 % headroom), and the cheapest EU H100 is DataCrunch's in Finland via Prime Intellect
    at $1.97/h. Held continuously: 1.97 x 730 h x 36 months = $51.8k, plus operations. Spot H100s are
    cheaper by the hour but a realtime service pays an on-demand fallback and interruptions.

    Since the per-sequence step cost (2026-12-01 fit) an H100 at 512 in flight is TPOT-bound near the 50 ms
    SLO (41.8 req/s), and one Verda VM with 2x RTX 6000 Ada in Finland (43 req/s, one replica per GPU) is
    7 % cheaper over the three years: #1 is one box in Finland either way, and it is never dearer than the
    cheapest H100 option.

    Since the one-hop all-reduce refit (2026-12-02: vLLM's per-sequence cost 29.9 -> 47.2 us) a single H100
    sustains ~34 req/s within the 50 ms TPOT, under the 36 req/s the 20 % headroom asks, so the H100
    options hold two GPUs (one 2x H100 VM in Finland, $176k): the 2x RTX 6000 Ada box stays first, now by a
    wider margin. Checked by hand: an 8B fp8 model on one H100 at ~34 req/s (~8.5k output tokens/s) is in
    the range vLLM's published H100 runs show; 48 GB cards at $0.8/GPU-h carry it for less."""
    d = _plan(tmp_path, CHAT.format(name="eu-chat", model="llama3.1-8b", rps=30, isl=600, isl99=2000, osl=250,
                                    osl99=800, ttft=1.0, tpot=0.05, countries="[DE, FR, NL, FI]", months=36),
              "--all", "--top", "30")
    assert all(o["country"] in ("DE", "FR", "NL", "FI") for o in d["options"])
    top = d["options"][0]
    assert max(top["cost"]["replicas"]) == 1 and top["server"]["instances_per_replica"] == 1
    assert _offer(top["offer_id"])["country"] == "FI"
    assert _compute_and_idle(top) == pytest.approx(_offer(top["offer_id"])["usd_per_hour"] * HOURS_PER_MONTH * 36,
                                                   rel=1e-6)
    h100 = [o for o in d["options"] if o["accelerator"] == "nvidia_h100_sxm"]
    first_h100 = next(o for o in h100 if o["deployment"] == "cloud_on_demand")
    offer = _offer(first_h100["offer_id"])
    assert offer["country"] == "FI" and first_h100["count"] <= 2
    held = max(first_h100["cost"]["replicas"]) * first_h100["server"]["instances_per_replica"]
    assert _compute_and_idle(first_h100) == pytest.approx(offer["usd_per_hour"] * HOURS_PER_MONTH * 36 * held,
                                                          rel=1e-6)
    assert top["cost"]["tco_usd"] <= first_h100["cost"]["tco_usd"]
    # no cheaper way to hold the same H100s on demand in the allowed countries was passed over
    per_gpu = offer["usd_per_hour"] / offer["accelerator_count"]
    cheaper = [o for o in h100 if o["deployment"] == "cloud_on_demand"
               and _offer(o["offer_id"])["usd_per_hour"] / _offer(o["offer_id"])["accelerator_count"] < per_gpu
               and o["cost"]["tco_usd"] < first_h100["cost"]["tco_usd"]]
    assert not cheaper
    # spot H100s are cheaper by the hour (Verda $0.80) but realtime serving keeps an on-demand fallback
    # and pays interruptions, so over three years they cost more than #1
    spot = [o for o in h100 if o["deployment"] == "cloud_spot"]
    assert spot and all(o["cost"]["tco_usd"] > top["cost"]["tco_usd"] for o in spot)


@pytest.mark.filterwarnings("error::RuntimeWarning")
def test_a_small_classifier_rents_the_cheapest_single_card_and_nothing_bigger(tmp_path):
    """BERT-large at 5 req/s under 200 ms p99: one small accelerator idles at ~1 % load; the cheapest
    hourly card that meets the latency wins (a community RTX 4090 at $0.34/h: $2,978 a year), never a
    multi-GPU box; a CPU slice and a T4 are within a few percent (their why lines say so)."""
    text = """\
name: ticket-classifier
task: inference
model: bert-large-uncased
framework: pytorch
inference:
  mode: realtime
  traffic: {requests_per_s: 5, input_tokens: 128}
  slo: {latency_p99_s: 200ms}
usage: {pattern: continuous}
placement: {countries: [US]}
deployment: {allowed: [cloud]}
horizon_months: 12
"""
    d = _plan(tmp_path, text, "--top", "5")
    top = d["options"][0]
    offer = _offer(top["offer_id"])
    assert top["count"] == 1 and max(top["cost"]["replicas"]) == 1
    assert _compute_and_idle(top) == pytest.approx(offer["usd_per_hour"] * HOURS_PER_MONTH * 12, rel=1e-6)
    assert all(o["count"] == 1 for o in d["options"])
    assert top["performance"]["latency"]["e2e_s"]["p99"] <= 0.2


def test_405b_fp8_fills_one_eight_gpu_instance_with_its_tensor_parallel_group(tmp_path):
    """405B at fp8 (~405 GB of weights) needs 8 x 180 GB B200s or 8 x 141 GB H200s (or 8 x 80 GB H100s at
    the edge of their memory); each replica is one 8-GPU instance (TP inside it, never TP across
    instances), all below Nebius' 8x B200 on demand ($44/h).

    Checked by hand (2026-12-07, after the SLO-limited point is placed between concurrency grid columns):
    an 8x H200 at TP 8 holds 30 requests in flight within the 3 s TTFT p99 at the band's p90 (2.94 s), 2.0
    requests/s; 6 requests/s with the 20 % headroom is three replicas. Nebius sells 8x H200 spot in
    us-central1 at $11.6/h; a realtime service keeps an on-demand fallback, so its compute and idle cost
    ($449k) sits between the spot price alone ($305k) and on-demand, and its TCO ($488k) is 20 % under the
    best on-demand option (four 8x H100 at Prime Intellect, $587k, when the grid held the H200 at 28 in
    flight and 1.92 requests/s: four replicas)."""
    d = _plan(tmp_path, CHAT.format(name="chat-405b", model="llama3.1-405b", rps=5, isl=1500, isl99=6000, osl=400,
                                    osl99=1500, ttft=3.0, tpot=0.08, countries="[US]", months=12))
    top = d["options"][0]
    offer = _offer(top["offer_id"])
    par = top["performance"]["parallelism"]
    assert top["count"] == 8 and offer["accelerator_count"] == 8 and top["server"]["instances_per_replica"] == 1
    assert par["tp"] * par["pp"] <= offer["accelerator_count"]
    assert offer["usd_per_hour"] < 44.0  # below Nebius' 8x B200
    replicas = max(top["cost"]["replicas"])
    assert top["accelerator"] == "nvidia_h200_sxm" and offer["mode"] == "cloud_spot" and replicas == 3
    assert top["performance"]["operating_point"]["concurrency"] == 30
    held = offer["usd_per_hour"] * HOURS_PER_MONTH * 12 * replicas
    # the on-demand fallback is priced on top of the spot hours, and it still undercuts every on-demand option
    on_demand = [o for o in d["options"] if _offer(o["offer_id"])["mode"] == "cloud_on_demand"]
    assert held < _compute_and_idle(top) < min(_compute_and_idle(o) for o in on_demand)
    assert top["cost"]["tco_usd"] < min(o["cost"]["tco_usd"] for o in on_demand)
    for o in on_demand:  # an on-demand option pays exactly its hours
        assert _compute_and_idle(o) == pytest.approx(
            _offer(o["offer_id"])["usd_per_hour"] * HOURS_PER_MONTH * 12 * max(o["cost"]["replicas"]), rel=1e-6)


AZURE = """\
name: azure-steady
task: inference
model: llama3.1-8b
precision: [fp8, bf16]
inference:
  mode: realtime
  traffic:
    requests_per_s: 10
    daily_profile: {profile}
    input_tokens: {{mean: 800, p99: 2000}}
    output_tokens: {{mean: 200, p99: 600}}
  slo: {{ttft_p99_s: 1.0, tpot_p99_s: 0.05}}
usage: {{pattern: {pattern}}}
placement: {{regions: [eastus], countries: [US]}}
deployment: {{allowed: [cloud]}}
horizon_months: 36
"""


def test_a_steady_three_year_load_in_one_azure_region_reserves_for_three_years(tmp_path):
    """24/7 for 36 months on Azure eastus: one NC40ads H100 v5 carries 10 req/s. Reserved for 3 years at
    $4.31/h it costs 4.31 x 730 x 36 = $113.3k, against $152.7k for three 1-year terms ($5.81/h) and
    $183.4k on demand ($6.98/h): the 3-year reservation ranks first and the same instance's 1-year and
    on-demand follow in that order (an A100 80GB PCIe reserved for 3 years, 7% dearer, may sit between)."""
    d = _plan(tmp_path, AZURE.format(profile="flat", pattern="continuous"), "--all", "--top", "6")
    first = d["options"][0]
    same = [o for o in d["options"] if o["server"]["host_id"] == first["server"]["host_id"]]
    assert [o["deployment"] for o in same[:3]] == ["cloud_reserved_3y", "cloud_reserved_1y", "cloud_on_demand"]
    assert first["accelerator"] == "nvidia_h100_nvl" and max(first["cost"]["replicas"]) == 1
    for o in same[:3]:
        price = _offer(o["offer_id"])["usd_per_hour"]
        assert _compute_and_idle(o) == pytest.approx(price * HOURS_PER_MONTH * 36, rel=1e-6)


def test_business_hours_on_azure_rent_on_demand_for_the_hours_used(tmp_path):
    """The same service used 9 h a working day (216.7 h a month): on demand it pays 6.98 x 216.7 x 36 =
    $54.4k, less than half of any reservation (which pays all 730 h), so on-demand ranks first and
    every reservation shown costs more."""
    d = _plan(tmp_path, AZURE.format(profile="business-hours", pattern="business-hours"), "--all", "--top", "4")
    top = d["options"][0]
    assert top["deployment"] == "cloud_on_demand" and d["workload"]["usage"]["active_hours_per_month"] == \
        pytest.approx(216.67, abs=0.01)
    price = _offer(top["offer_id"])["usd_per_hour"]
    # plus each working morning's start-up (boot, image pull, weights load) of the replica it starts
    starts_h = sum(top["cost"]["startup"]["starts_per_month"]) * top["cost"]["startup"]["startup_s"] / 3600
    assert 0 < starts_h < 36 * 22 * 0.5  # ~22 starts a month, minutes each
    assert _compute_and_idle(top) == pytest.approx(price * (216.6667 * 36 + starts_h), rel=1e-4)
    # a reservation pays all 730 h a month: shown only as a dearer alternative (since DP near-copies of the
    # same offer are merged, 2026-12-01, reservations can reach the top four), at more than twice the compute
    reserved = [o for o in d["options"] if o["deployment"].startswith("cloud_reserved")]
    assert all(_compute_and_idle(o) > 2 * _compute_and_idle(top) and o["cost"]["tco_usd"] > top["cost"]["tco_usd"]
               for o in reserved)


def test_a_large_moe_keeps_each_replica_inside_one_instance(tmp_path):
    """DeepSeek-V3 (671B, fp8: ~671 GB of weights) at 4 req/s: its experts are sharded over every rank of
    a replica, so each decode step is an all-to-all across the whole replica. That must run on one
    instance's scale-up links: an 8-GPU box with >= 96 GB per chip (8x Gaudi 2, H200, B200, MI300X),
    never 12 H100s over four 3-GPU VMs (which the planner offered before this rule, at $164k a year).
    A TPU slice whose fabric spans its hosts is the one multi-instance replica allowed."""
    text = CHAT.format(name="deepseek-v3", model="deepseek-v3", rps=4, isl=1500, isl99=6000, osl=400, osl99=1500,
                       ttft=3.0, tpot=0.08, countries="[US]", months=12).replace("[fp8, bf16]", "[fp8]")
    d = _plan(tmp_path, text, "--all", "--top", "20")
    hosts = load_catalog().hosts.set_index("id")
    for o in d["options"]:
        host = hosts.loc[o["server"]["host_id"]]
        if not bool(host["fabric_spans_instances"]):
            assert o["server"]["instances_per_replica"] == 1, o["offer_id"]
            assert o["count"] <= int(host["accelerator_count"])
        assert o["count"] * _memory_gb(o["accelerator"]) >= 671  # the weights fit the replica
    assert not any(o["provider"] == "Hyperbolic" for o in d["options"])


def _memory_gb(accelerator: str) -> float:
    return load_catalog().accelerator(accelerator).memory_bytes / 1e9


BUDGET = """\
name: budget-70b
task: inference
model: llama3.1-70b
precision: [bf16, fp8]
inference:
  mode: realtime
  traffic:
    requests_per_s: 20
    input_tokens: {{mean: 1000, p99: 4000}}
    output_tokens: {{mean: 300, p99: 1000}}
  slo: {{ttft_p99_s: 2.0, tpot_p99_s: 0.06, risk: p50}}  # hand-checked at the prediction itself
usage: {{pattern: continuous}}
placement: {{countries: [US]}}
deployment: {{allowed: [cloud]}}
budget: {{monthly_usd: {budget}{labour}}}
horizon_months: 12
"""


def test_a_tight_budget_holds_the_infrastructure_and_says_so(tmp_path, capsys):
    """A 70B chat at 20 req/s needs 4 replicas of 2x H100; the cheapest are Hyperbolic's at $2.58/h:
    4 x 2.58 x 730 = $7,534 a month of infrastructure, plus ~$2,400 of modelled operations. A $8,000
    budget holds the infrastructure (labour is shown apart); $7,000 cannot be met (exit 3, naming the
    budget); with include_labour, $8,000 cannot either."""
    from infrafit.cli import main

    ok = _plan(tmp_path, BUDGET.format(budget=8000, labour=""))
    top = ok["options"][0]
    offer = _offer(top["offer_id"])
    infra = _compute_and_idle(top) / 12
    assert infra == pytest.approx(offer["usd_per_hour"] * HOURS_PER_MONTH * max(top["cost"]["replicas"]), rel=1e-6)
    assert infra <= 8000 < infra + top["cost"]["breakdown"]["ops_labour_usd"] / 12
    for budget, labour in ((7000, ""), (8000, ", include_labour: true")):
        spec = tmp_path / f"b{budget}.yaml"
        spec.write_text(BUDGET.format(budget=budget, labour=labour))
        assert main(["plan", str(spec)]) == 3
        assert "budget" in capsys.readouterr().err


WEEKLY = """\
name: weekly-lora-8b
task: fine-tuning
model: llama3.1-8b
framework: pytorch
precision: [bf16]
training:
  method: lora
  tokens: 100M
  seq_len: 4096
  global_batch: 64
  deadline_days: 1
  checkpoint_every_minutes: 30
usage: {pattern: periodic, runs_per_year: 52}
placement: {countries: [US]}
deployment: {allowed: [cloud]}
horizon_months: 12
"""


def test_a_weekly_lora_rents_one_gpu_per_run_and_pays_only_the_runs(tmp_path):
    """100M tokens of LoRA on an 8B model every week: one GPU finishes a run in a few hours, so each
    run rents one on-demand GPU and gives it back. Compute = price x run hours x 52 (start-up and billing
    rounding are the small idle line); a month-long commitment would pay ~730 h for ~14 h of work."""
    d = _plan(tmp_path, WEEKLY, "--top", "3")
    for o in d["options"]:
        assert o["deployment"] in ("cloud_on_demand", "cloud_spot") and o["count"] == 1
    top = d["options"][0]
    price = _offer(top["offer_id"])["usd_per_hour"]
    hours = top["performance"]["time_to_train_s"] / 3600
    assert top["cost"]["breakdown"]["compute_usd"] == pytest.approx(price * hours * 52, rel=0.02)
    assert top["cost"]["breakdown"].get("idle_usd", 0) < 0.1 * top["cost"]["breakdown"]["compute_usd"]
    assert hours < 24  # inside the 1-day deadline


def test_a_brazilian_resident_chat_reserves_l4s_in_sao_paulo_for_the_year(tmp_path):
    """3 req/s of an 8B chat whose data must stay in Brazil (LGPD), 12 months, cloud only. The only GPUs
    sold in Brazil in the catalog are AWS sa-east-1's (g4dn, g5, g6, p4d, p5 at about 1.7x Virginia's
    price). An 8B fp8 model fits one L4 (24 GB); the traffic is steady for the whole horizon, so the 1-yr
    reservation (no upfront, $0.89/h against $1.37/h on demand) is the cheapest way to hold it. Three
    g6.xlarge: an L4 is not in the fit, so at the p90 of its band a replica carries ~1.3 req/s within the
    1 s TTFT p99 (3,000-token p99 prompts: 48 TFLOP, ~0.22 s at 90% of the L4's 242 TFLOP/s fp8; the rest
    is queueing and the band), and 3 req/s with the 1.2 headroom needs 2.8 of them. Checked by hand:
    3 x 0.89057 x 730 h x 12 = $23.4k of compute, and the same three on demand cost the on-demand/reserved
    price ratio more. (Four before the 2026-12-03 refit, whose TTFT band is narrower.)"""
    d = _plan(tmp_path, CHAT.format(name="br-chat", model="llama3.1-8b", rps=3, isl=800, isl99=3000, osl=250,
                                    osl99=800, ttft=1.0, tpot=0.05, countries="[BR]", months=12),
              "--all", "--top", "30")
    assert d["options"] and all(o["country"] == "BR" for o in d["options"])
    top = d["options"][0]
    offer = _offer(top["offer_id"])
    assert (top["provider"], top["region"], top["deployment"]) == ("AWS", "sa-east-1", "cloud_reserved_1y")
    assert top["server"]["host_id"] == "aws_g6_xlarge" and top["accelerator"] == "nvidia_l4"
    replicas = max(top["cost"]["replicas"])
    assert 1 <= replicas <= 6
    assert _compute_and_idle(top) == pytest.approx(replicas * offer["usd_per_hour"] * HOURS_PER_MONTH * 12,
                                                   rel=1e-6)
    same = [o for o in d["options"] if o["server"]["host_id"] == "aws_g6_xlarge"
            and o["deployment"] == "cloud_on_demand" and o["precision"] == top["precision"]]
    assert same and max(same[0]["cost"]["replicas"]) == replicas
    on_demand = _offer(same[0]["offer_id"])["usd_per_hour"]
    assert _compute_and_idle(same[0]) == pytest.approx(_compute_and_idle(top) * on_demand / offer["usd_per_hour"],
                                                       rel=1e-6)
