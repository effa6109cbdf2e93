"""search.evaluate: which tensor-parallel layouts are tried, and that their latencies are numbers."""

from __future__ import annotations

from types import SimpleNamespace

import pytest

from infrafit.catalog import load_catalog
from infrafit.perf.llm.capacity import evaluate_llm, tp_domain
from infrafit.workload.spec import parse_spec


@pytest.mark.parametrize(("host", "domain", "expected"), [
    (float("nan"), 1, 1),   # unknown host link: NaN is truthy, but there is no bandwidth to price TP with
    (None, 1, 1),
    (0.0, 1, 1),
    (3.2e10, 1, 8),         # PCIe card: up to 8 in one box
    (float("nan"), 256, 256),  # a TPU: its ICI domain, whatever the host link
])
def test_tp_domain(host, domain, expected):
    acc = SimpleNamespace(host_bytes_per_s=host, scaleup_domain_size=domain)
    assert tp_domain(acc) == expected


def test_a_chip_without_any_link_is_not_tensor_parallel():
    """RTX 4090 has no NVLink and no sourced host link: TP > 1 used to be tried, with NaN collectives, and
    the plan excluded the family with 'TTFT p99 inf'."""
    cat = load_catalog()
    w = parse_spec("""
name: t
task: inference
model: llama3.1-8b
precision: [fp8]
inference:
  mode: realtime
  traffic: {requests_per_s: 1, input_tokens: 1000, output_tokens: 100}
  slo: {ttft_p99_s: 5.0, tpot_p99_s: 0.2}
""")
    acc = cat.accelerator("nvidia_rtx_4090")
    ev = evaluate_llm(w.model_arch(), [(acc, 4)], ("fp8",), lambda a: ["tensorrt-llm"], w.inference.traffic,
                      w.inference.slo)
    assert {r["tp"] for r in ev.rows} == {1}
    l40s = evaluate_llm(w.model_arch(), [(cat.accelerator("nvidia_l40s"), 4)], ("fp8",), lambda a: ["tensorrt-llm"],
                        w.inference.traffic, w.inference.slo)
    assert {r["tp"] for r in l40s.rows} == {1, 2, 4}  # a PCIe card with a known host link still is


def test_a_moes_data_parallel_chips_are_one_expert_parallel_group():
    """DeepSeek-V3 on 8 H200: the chips TP leaves over run attention data parallel with the routed experts
    spread over all 8, so every such layout is ep = tp x dp (one engine, as the wide-EP validation rows
    are read), while a dense model's data-parallel engines share no experts (ep 1)."""
    cat = load_catalog()
    spec = """
name: t
task: inference
model: {model}
precision: [fp8]
inference:
  mode: realtime
  traffic: {{requests_per_s: 1, input_tokens: 2000, output_tokens: 400}}
  slo: {{ttft_p99_s: 5.0, tpot_p99_s: 0.2}}
"""
    h200 = cat.accelerator("nvidia_h200_sxm")
    moe = parse_spec(spec.format(model="deepseek-v3"))
    ev = evaluate_llm(moe.model_arch(), [(h200, 8)], ("fp8",), lambda a: ["vllm"], moe.inference.traffic,
                      moe.inference.slo)
    assert {(r["tp"], r["dp"]) for r in ev.rows} >= {(1, 8), (2, 4), (8, 1)}
    assert all(r["ep"] == (r["tp"] * r["dp"] if r["dp"] > 1 else 1) for r in ev.rows)
    dense = parse_spec(spec.format(model="llama3.1-8b"))
    ev = evaluate_llm(dense.model_arch(), [(h200, 8)], ("fp8",), lambda a: ["vllm"], dense.inference.traffic,
                      dense.inference.slo)
    assert {r["ep"] for r in ev.rows} == {1} and max(r["dp"] for r in ev.rows) == 8


def test_a_stated_ep_is_kept_and_estimate_reports_the_layout_it_ran(capsys):
    """``estimate --ep 2`` keeps 2 (the user's layout); without it the estimate's JSON reports the expert-
    parallel group it evaluated, as the plan does."""
    import json
    from pathlib import Path

    from infrafit.cli import main

    cat = load_catalog()
    moe = parse_spec("""
name: t
task: inference
model: deepseek-v3
precision: [fp8]
inference:
  mode: realtime
  traffic: {requests_per_s: 1, input_tokens: 2000, output_tokens: 400}
  slo: {ttft_p99_s: 5.0, tpot_p99_s: 0.2}
""")
    ev = evaluate_llm(moe.model_arch(), [(cat.accelerator("nvidia_h200_sxm"), 8)], ("fp8",), lambda a: ["vllm"],
                      moe.inference.traffic, moe.inference.slo, ep=2)
    assert {r["ep"] for r in ev.rows} == {2}
    spec = Path(__file__).resolve().parents[1] / "fixtures" / "specs" / "deepseek-v3-chat.yaml"
    assert main(["estimate", str(spec), "--accelerator", "h200", "--count", "8", "--json"]) == 0
    par = json.loads(capsys.readouterr().out)["parallelism"]
    assert par["ep"] == (par["tp"] * par["dp"] if par["dp"] > 1 else 1)
