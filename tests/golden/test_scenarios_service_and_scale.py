"""Expert-checked scenarios, third set (issue 12 point 10): Whisper, SDXL, embeddings, image moderation, a
small MoE, nightly LLM summaries, a tiny daily job, a fine-tune with a deadline and a big spot pre-training
run. Each test states the conclusion an infrastructure engineer would reach by hand and redoes the
arithmetic from the option's own offer price: the instance rented, how many, for how long, at what price,
and that no shown option is cheaper beyond the 2% near-tie band."""

from __future__ import annotations

from pathlib import Path

import pytest

from infrafit.catalog import load_catalog
from infrafit.cost.params import CostParams
from infrafit.search.pareto import COST_TIE_FRACTION
from infrafit.search.planner import plan
from infrafit.units import HOURS_PER_DAY, HOURS_PER_MONTH, SECONDS_PER_HOUR
from infrafit.workload.spec import load_spec, parse_spec

EXAMPLES = Path(__file__).resolve().parents[2] / "examples"
HOURS_PER_YEAR = HOURS_PER_MONTH * 12
NIGHTS_PER_YEAR = HOURS_PER_MONTH / HOURS_PER_DAY * 12  # 30.4 starts a month


@pytest.fixture(scope="module")
def cat():
    return load_catalog()


def _plan(cat, text: str) -> list[dict]:
    return plan(parse_spec(text, catalog=cat), cat).to_dict()["options"]


def _price(cat, option: dict) -> float:
    return float(cat.offers.set_index("id").loc[option["offer_id"], "usd_per_hour"])


def _held(option: dict) -> float:
    b = option["cost"]["breakdown"]
    return b["compute_usd"] + b["idle_usd"]


def _nothing_cheaper_shown(options: list[dict]) -> None:
    top = options[0]["cost"]["tco_usd"]
    assert all(o["cost"]["tco_usd"] >= (1 - COST_TIE_FRACTION) * top for o in options[1:])


def _memory_gb(cat, option: dict) -> float:
    return cat.accelerator(option["accelerator"]).memory_bytes / 1e9


WHISPER = """
name: call-transcription
task: inference
model: whisper-large-v3
framework: pytorch
precision: [fp16]
inference: {mode: batch, traffic: {items: {per_day: 80000, window_hours: 8}}}
usage: {pattern: periodic}
placement: {countries: [US]}
deployment: {allowed: [cloud]}
horizon_months: 12
"""


def test_nightly_whisper_rents_one_cheap_gpu_for_an_hour_or_two(cat):
    """667 hours of calls a night (80,000 30-s windows). Whisper large-v3 batched decodes over its 246 MB
    cross-attention cache per window, so a 24-48 GB card runs ~10-30 windows/s: one GPU for 1-3 hours a
    night on demand, released after. Cost = price x run hours x 30.4 nights x 12; labour is the batch row's
    4 h a month, not a service's on-call."""
    options = _plan(cat, WHISPER)
    o = options[0]
    assert o["deployment"] in ("cloud_on_demand", "cloud_spot") and o["count"] == 1
    assert 16 <= _memory_gb(cat, o) <= 96
    run = o["performance"]["batch_run"]
    assert 0.5 * SECONDS_PER_HOUR < run["finish_s"] < 4 * SECONDS_PER_HOUR
    b = o["cost"]["breakdown"]
    assert b["compute_usd"] == pytest.approx(_price(cat, o) * run["finish_s"] / SECONDS_PER_HOUR * NIGHTS_PER_YEAR,
                                             rel=1e-6)
    assert b["idle_usd"] <= _price(cat, o) * NIGHTS_PER_YEAR * 20 / 60  # start-up: at most 20 min a night
    assert b["ops_labour_usd"] < 6 * 100 * 12  # batch hours: 4 h + a few instance-hours' care a month
    _nothing_cheaper_shown(options)


SDXL = """
name: sdxl-api
task: inference
model: sdxl
framework: pytorch
precision: [fp16]
inference: {mode: realtime, traffic: {requests_per_s: 0.5}, slo: {latency_p99_s: 15}}
placement: {countries: [US]}
deployment: {allowed: [cloud]}
horizon_months: 12
"""


def test_an_sdxl_api_holds_one_fast_gpu_all_year(cat):
    """0.5 images/s of SDXL (1024x1024, 20 steps, CFG) with a 15 s p99. One image takes ~1 s on an
    H100-class GPU and 2.5 s on an L40S: one H100/H200/B200-class GPU (or two slower ones) held 8,760 h,
    since realtime keeps a replica up. Its p99 is a few images long (queueing at batch 1), not the 11.6 s
    the old server rule reported. Cost = price x 8,760 h."""
    options = _plan(cat, SDXL)
    o = options[0]
    assert o["deployment"] == "cloud_on_demand" and o["count"] <= 2 and max(o["cost"]["replicas"]) == 1
    assert _held(o) == pytest.approx(_price(cat, o) * HOURS_PER_YEAR, rel=1e-6)
    assert o["performance"]["latency"]["e2e_s"]["p99"] < 6.0
    _nothing_cheaper_shown(options)


TINY = """
name: daily-churn-scores
task: inference
model: xgboost-gbt
framework: xgboost
inference: {mode: batch, traffic: {items: {per_day: 50000, window_hours: 1}}}
usage: {pattern: periodic}
placement: {countries: [US]}
deployment: {allowed: [cloud]}
horizon_months: 12
"""


def test_a_tiny_daily_job_pays_the_billing_minimum_on_a_small_cpu(cat):
    """50,000 XGBoost rows a day: about a second of work. Expert answer: the smallest CPU VM that starts,
    billed its minimum (60 s on AWS) plus boot each day: cents a month; never a GPU. Cost between price x
    60 s x 365 and price x (run + 10 min) x 365."""
    o = _plan(cat, TINY)[0]
    assert o["family"].endswith("CPU") and o["deployment"] == "cloud_on_demand" and o["count"] == 1
    price, run_s = _price(cat, o), o["performance"]["batch_run"]["finish_s"]
    assert price * 60 / SECONDS_PER_HOUR * NIGHTS_PER_YEAR <= _held(o)
    assert _held(o) <= price * (run_s + 600) / SECONDS_PER_HOUR * NIGHTS_PER_YEAR
    assert _held(o) < 20.0  # dollars a year


def test_a_big_spot_pretraining_run_pays_interruptions_per_instance(cat):
    """Llama-3.1-8B on 2T tokens in 45 days, checkpoints hourly, cloud, JAX. Expert answer: an 8-GPU
    B200-class box or two on spot, the run under the deadline even after interruptions. A synchronous job
    over N instances stops whenever any is reclaimed: x = N x 1/24 h x (30 min lost + 10 min restart),
    runtime = work / (1 - x). Cost = spot price x instances x hours, plus x / (1 - x) of it."""
    o = plan(load_spec(EXAMPLES / "jax-pretraining.yaml", catalog=cat), cat).to_dict()["options"][0]
    assert o["deployment"] == "cloud_spot"
    n = int(o["server"]["instances_per_replica"])
    hours = o["performance"]["time_to_train_s"] / SECONDS_PER_HOUR
    p = CostParams()
    x = n * p.spot_interruptions_per_hour_default * (60 / 2 / 60 + p.spot_restart_s / SECONDS_PER_HOUR)
    assert hours / (1 - x) < 45 * HOURS_PER_DAY  # within the deadline in expectation
    assert _held(o) == pytest.approx(_price(cat, o) * n * hours, rel=1e-3)
    assert o["cost"]["breakdown"]["interruption_overhead_usd"] == pytest.approx(_held(o) * x / (1 - x), rel=1e-3)


FINE_TUNE = """
name: ft-deadline
task: training
model: llama3.1-8b
framework: pytorch
precision: [bf16]
training: {method: full, tokens: 2e9, seq_len: 4096, global_batch: 256, deadline_days: 3,
           checkpoint_every_minutes: 30, dataset: {size_bytes: 20GB, location: object-storage}}
usage: {pattern: occasional, runs_per_year: 4}
placement: {countries: [US]}
deployment: {allowed: [cloud]}
horizon_months: 12
"""


def test_a_quarterly_full_fine_tune_rents_a_small_node_per_run(cat):
    """A full fine-tune of an 8B model on 2B tokens, 4 times a year, each within 3 days. Weights, grads and
    Adam state are ~130 GB: two 80 GB GPUs at least. Expert answer: 2-8 GPUs on demand for a day or two per
    run, nothing held between runs. Cost = price x instances x run hours x 4."""
    options = _plan(cat, FINE_TUNE)
    o = options[0]
    assert o["deployment"] == "cloud_on_demand" and 2 <= o["count"] <= 8
    hours = o["performance"]["time_to_train_s"] / SECONDS_PER_HOUR
    assert hours < 3 * HOURS_PER_DAY
    n = int(o["server"]["instances_per_replica"])
    assert o["cost"]["breakdown"]["compute_usd"] == pytest.approx(_price(cat, o) * n * hours * 4, rel=1e-6)
    _nothing_cheaper_shown(options)


def _service(model: str, traffic: str, slo: str, precision: str = "[fp16, int8]") -> str:
    return f"""
name: svc
task: inference
model: {model}
framework: pytorch
precision: {precision}
inference: {{mode: realtime, traffic: {traffic}, slo: {slo}}}
usage: {{pattern: continuous}}
placement: {{countries: [US]}}
deployment: {{allowed: [cloud]}}
horizon_months: 12
"""


@pytest.mark.parametrize(("model", "traffic", "slo"), [
    ("bert-base", "{requests_per_s: 200, input_tokens: {mean: 128, p99: 512}}", "{latency_p99_s: 0.1}"),
    ("resnet50", "{requests_per_s: 500}", "{latency_p99_s: 0.05}"),
])
def test_a_small_model_service_holds_one_small_device(cat, model, traffic, slo):
    """An embeddings API (BERT-base, 200 req/s, 100 ms) or image moderation (ResNet-50, 500 img/s, 50 ms):
    a few hundred GFLOP/s of work that one consumer GPU, an L4/T4 or a CPU VM carries. Expert answer: the
    cheapest single device that meets the p99, held all year (realtime keeps it up). Cost = price x
    8,760 h; nothing bigger than 48 GB."""
    options = _plan(cat, _service(model, traffic, slo))
    o = options[0]
    assert o["deployment"] == "cloud_on_demand" and o["count"] == 1 and max(o["cost"]["replicas"]) == 1
    assert o["family"].endswith("CPU") or _memory_gb(cat, o) <= 48
    assert _held(o) == pytest.approx(_price(cat, o) * HOURS_PER_YEAR, rel=1e-6)
    _nothing_cheaper_shown(options)


def test_a_small_moe_chat_fits_one_gpu(cat):
    """Qwen3-30B-A3B at 2 req/s: 30B weights (30 GB in fp8) but 3B active, so decoding is cheap. Expert
    answer: one 48-96 GB GPU held all year, not a TP group. Cost = price x 8,760 h."""
    text = _service("qwen3-30b-a3b", "{requests_per_s: 2, input_tokens: {mean: 1000, p99: 4000}, "
                    "output_tokens: {mean: 300, p99: 1000}}", "{ttft_p99_s: 2.0, tpot_p99_s: 0.05}",
                    precision="[fp8, bf16]")
    options = _plan(cat, text)
    o = options[0]
    assert o["count"] == 1 and 40 <= _memory_gb(cat, o) <= 192
    assert o["performance"]["memory"]["weights_bytes"] < o["performance"]["memory"]["capacity_bytes"]
    assert _held(o) == pytest.approx(_price(cat, o) * HOURS_PER_YEAR, rel=1e-6)
    _nothing_cheaper_shown(options)


SUMMARIES = """
name: nightly-summaries
task: inference
model: gemma-3-27b
precision: [fp8, bf16]
inference:
  mode: batch
  traffic: {items: {per_day: 100000, window_hours: 8}, input_tokens: {mean: 2000, p99: 6000},
            output_tokens: {mean: 200, p99: 500}}
usage: {pattern: periodic}
placement: {countries: [US]}
deployment: {allowed: [cloud]}
horizon_months: 12
"""


def test_nightly_llm_summaries_rent_per_run(cat):
    """100,000 documents a night (2,000 tokens in, 200 out) through a 27B model: ~220M tokens, a few GPU-
    hours at offline batch sizes. Expert answer: one node of 1-2 big GPUs on demand for a couple of hours a
    night, released. Cost = price x run hours x 30.4 x 12."""
    options = _plan(cat, SUMMARIES)
    o = options[0]
    assert o["deployment"] in ("cloud_on_demand", "cloud_spot") and o["count"] <= 2
    run = o["performance"]["batch_run"]
    assert run["finish_s"] < 8 * SECONDS_PER_HOUR and run["replicas"] == 1
    assert o["cost"]["breakdown"]["compute_usd"] == pytest.approx(
        _price(cat, o) * run["finish_s"] / SECONDS_PER_HOUR * NIGHTS_PER_YEAR, rel=1e-6)
    _nothing_cheaper_shown(options)


STEADY_70B = """
name: steady-70b-3y
task: inference
model: llama3.1-70b
precision: [fp8, bf16]
inference:
  mode: realtime
  traffic: {requests_per_s: 20, input_tokens: {mean: 1500, p99: 6000}, output_tokens: {mean: 300, p99: 1000}}
  # hand-checked at the prediction itself; at the default p90 the TTFT band (~1.9x) leaves a pair ~3 req/s:
  # 8 replicas, and the same answer (rent, not buy)
  slo: {ttft_p99_s: 2.0, tpot_p99_s: 0.06, risk: p50}
usage: {pattern: continuous}
placement: {countries: [US]}
deployment: {allowed: [cloud, on_prem]}
horizon_months: 36
"""


def test_a_steady_70b_for_three_years_rents_cheap_h100s_rather_than_buying(cat):
    """20 req/s of Llama 3.1 70B for 3 years, buying allowed. A 70B fp8 replica wants 2 H100s (TP2 inside
    one instance) at ~5 req/s: 5 replicas with the 20% headroom. At a neocloud's ~$1.3/GPU-hour 10 H100s
    held 3 years cost ~$340k; two bought 8x H100 servers plus power, colocation and care cost more over the
    same 3 years. Expert answer: rent, and the plan says buying costs more. Cost = price x 8,760 x 3 x 5."""
    plan_ = plan(parse_spec(STEADY_70B, catalog=cat), cat).to_dict()
    o = plan_["options"][0]
    assert o["deployment"] == "cloud_on_demand" and o["count"] == 2 and o["server"]["instances_per_replica"] == 1
    replicas = max(o["cost"]["replicas"])
    assert 4 <= replicas <= 6
    assert _held(o) == pytest.approx(_price(cat, o) * HOURS_PER_YEAR * 3 * replicas, rel=1e-6)
    onprem = [v[-1] for k, v in plan_["tco_by_mode"].items() if k.startswith("on_prem")]
    assert onprem and min(onprem) > o["cost"]["tco_usd"]
    _nothing_cheaper_shown(plan_["options"])


def test_a_hipaa_chat_with_confidential_computing_reserves_a_confidential_h100(cat):
    """An 8B chat under HIPAA + SOC 2 with confidential computing required, steady for 3 years. Only
    providers with a HIPAA BAA and confidential-computing GPU hosts qualify (GCP's confidential H100 VMs
    here); held 3 years, a 3-year commitment beats on-demand. Cost = reserved rate x 730 x 36."""
    o = plan(load_spec(EXAMPLES / "regulated-hipaa.yaml", catalog=cat), cat).to_dict()["options"][0]
    assert o["deployment"] == "cloud_reserved_3y" and o["count"] == 1 and max(o["cost"]["replicas"]) == 1
    assert o["cost"]["commitment_months"] == 36
    assert _held(o) == pytest.approx(_price(cat, o) * HOURS_PER_MONTH * 36, rel=1e-6)


def test_a_two_month_pilot_of_a_70b_rents_by_the_hour(cat):
    """The same 20 req/s 70B service as a 2-month pilot. Nobody buys a $300k server for 2 months (sold
    after two months it loses ~$60k) or commits a year: on-demand H100 pairs, 4 replicas held for the
    pilot. Cost = price x 730 h x 2 x replicas; nothing is committed."""
    o = _plan(cat, STEADY_70B.replace("horizon_months: 36", "horizon_months: 2"))[0]
    assert o["deployment"] == "cloud_on_demand" and o["cost"]["commitment_months"] == 0
    replicas = max(o["cost"]["replicas"])
    assert 4 <= replicas <= 6 and o["count"] == 2
    assert _held(o) == pytest.approx(_price(cat, o) * HOURS_PER_MONTH * 2 * replicas, rel=1e-6)


def test_business_hours_tabular_scoring_runs_on_one_cpu_vm_in_working_hours(cat):
    """The tabular-xgboost example: 200 credit scores/s in Singapore business hours, 20 ms at the server,
    24 months, managed preferred. XGBoost is branchy CPU work: one 4-core Xeon VM up ~217 h a month (10 h
    x 5 days x 52 / 12), off at night. Cost = price x (216.7 h x 24 + each morning's start-up)."""
    from infrafit.workload.spec_sections import BUSINESS_HOURS_PER_MONTH

    o = plan(load_spec(EXAMPLES / "tabular-xgboost.yaml", catalog=cat), cat).to_dict()["options"][0]
    assert o["family"].endswith("CPU") and o["deployment"] == "cloud_on_demand" and o["count"] == 1
    assert o["country"] == "SG" and max(o["cost"]["replicas"]) == 1
    starts_h = sum(o["cost"]["startup"]["starts_per_month"]) * o["cost"]["startup"]["startup_s"] / 3600
    assert 0 < starts_h < 24 * 22 * 0.5  # the VM starts each working morning: minutes of boot, paid
    assert _held(o) == pytest.approx(_price(cat, o) * (BUSINESS_HOURS_PER_MONTH * 24 + starts_h), rel=1e-6)


def test_the_edge_example_buys_an_edge_device_within_its_budget(cat):
    """30 frames/s of ResNet-50 int8 within 50 ms, frames never leave the plant, $25k total: one $399
    Jetson Orin Nano Super does it (~1,900 frames/s predicted); an 8-GPU server is absurd. Labour is the
    edge row's (4 h + 0.25 h per device) x $90 x 36 months, not an owned server's 40 h + 8 h."""
    top = plan(load_spec(EXAMPLES / "edge-vision.yaml", catalog=cat), cat).to_dict()["options"][0]
    assert top["accelerator"] == "nvidia_jetson_orin_nano_super" and top["count"] == 1
    assert top["cost"]["deployment"] == "on_prem"
    b = top["cost"]["breakdown"]
    assert top["cost"]["tco_usd"] - b["ops_labour_usd"] < 25_000
    assert b["ops_labour_usd"] == pytest.approx((4 + 0.25) * 90 * 36)
    # its power is the module's own 25 W (an SoC: no host beyond the accelerator), at low utilisation
    assert b["power_usd"] < 25 * 730 * 36 / 1000 * 2.0 * 0.5
