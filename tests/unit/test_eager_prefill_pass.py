"""A scheduler pass that carries prompt tokens runs outside CUDA graphs on TensorRT-LLM and SGLang (their
piecewise prefill graphs are opt-in), so it pays a launch cost per layer that a graph-replayed decode step
does not; vLLM V1 replays such passes as piecewise graphs and compiled-graph stacks have no per-op dispatch
(stacks.csv ``prefill_pass_graphed``)."""

from __future__ import annotations

from dataclasses import replace

import numpy as np
import pytest

from infrafit.catalog import load_catalog
from infrafit.perf.fit.llm import bounds, candidate_rows
from infrafit.perf.llm.engine import (
    eager_pass_s,
    mixed_step_fraction,
    prefill_alone_s,
    prefill_passes,
    serve,
)
from infrafit.perf.llm.setup import ConfigRow, build_setup, prefill_graph_stacks
from infrafit.perf.llm.shape import shape_from_arch
from infrafit.perf.profiles import ProfileRow
from infrafit.workload.models import resolve_model


@pytest.fixture(scope="module")
def h100():
    return load_catalog().accelerator("nvidia_h100_sxm")


@pytest.fixture(scope="module")
def qwen():
    return shape_from_arch(resolve_model("qwen3-32b"))  # 64 layers


def test_the_stacks_table_says_which_stacks_replay_prefill_passes_as_graphs():
    graphed = prefill_graph_stacks()
    assert "vllm" in graphed
    assert "tensorrt-llm" not in graphed and "sglang" not in graphed and "pytorch" not in graphed
    # compiled-graph stacks (XLA on TPU, Neuron executables, OpenVINO) have no per-op host dispatch
    assert {"jetstream", "neuron", "openvino"} <= graphed


def test_an_eager_pass_costs_per_layer_and_a_graphed_one_nothing(h100, qwen):
    s = build_setup([ConfigRow(h100, "fp8", "tensorrt-llm", tp=8), ConfigRow(h100, "fp8", "vllm", tp=8)])[0]
    per_layer = float(s.prefill_layer_overhead_s[0])
    assert per_layer > 0
    eager = eager_pass_s(qwen, s)
    assert float(eager[0]) == pytest.approx(64 * per_layer)
    assert float(eager[1]) == 0.0
    deeper = replace(qwen, num_layers=128)
    assert float(eager_pass_s(deeper, s)[0]) == pytest.approx(2 * float(eager[0]))


def test_a_prompt_pays_the_eager_cost_once_per_pass(h100, qwen):
    s = build_setup([ConfigRow(h100, "fp8", "tensorrt-llm", tp=8)])[0]
    budget = float(s.token_budget[0])
    assert float(prefill_passes(s, np.array([budget]))[0]) == 1.0
    assert float(prefill_passes(s, np.array([budget + 1]))[0]) == 2.0
    without = replace(s, prefill_layer_overhead_s=np.zeros(1))
    isl = np.array([1024.0])
    extra = float(prefill_alone_s(qwen, s, isl)[0] - prefill_alone_s(qwen, without, isl)[0])
    assert extra == pytest.approx(float(eager_pass_s(qwen, s)[0]))


def test_the_share_of_mixed_steps_follows_the_prompt_arrivals(h100):
    s = build_setup([ConfigRow(h100, "fp8", "tensorrt-llm", tp=8)])[0]
    c, isl = np.array([16.0, 128.0, 128.0]), np.array([1024.0, 1024.0, 1024.0])
    osl = np.array([1024.0, 128.0, 1024.0])
    f = mixed_step_fraction(s, c, osl, isl)
    assert f == pytest.approx(1.0 - np.exp(-c / osl))
    # one prompt per step on average leaves 37% of the steps without one (Poisson), not none
    assert float(f[1]) == pytest.approx(1.0 - np.exp(-1.0))
    assert float(f[0]) < float(f[2]) < float(f[1])


def test_tpot_pays_the_eager_passes_of_the_steps_that_carry_prompts(h100, qwen):
    s = build_setup([ConfigRow(h100, "fp8", "tensorrt-llm", tp=8)])[0]
    without = replace(s, prefill_layer_overhead_s=np.zeros(1))
    c, isl, osl = np.array([128.0]), np.array([1024.0]), np.array([128.0])
    extra = float(serve(qwen, s, c, isl, osl).tpot_p50_s[0] - serve(qwen, without, c, isl, osl).tpot_p50_s[0])
    assert extra == pytest.approx(float((mixed_step_fraction(s, c, osl, isl) * eager_pass_s(qwen, s))[0]))
    assert extra > 0
    # alone (one request) there is no other prompt to stall it
    one = np.array([1.0])
    assert float(serve(qwen, s, one, isl, osl).tpot_p50_s[0]) == pytest.approx(
        float(serve(qwen, without, one, isl, osl).tpot_p50_s[0]))


def test_a_dense_models_data_parallel_groups_pay_their_own_mixed_steps(h100, qwen):
    s = build_setup([ConfigRow(h100, "fp8", "tensorrt-llm", tp=2, adp=2)])[0]
    without = replace(s, prefill_layer_overhead_s=np.zeros(1))
    c, isl, osl = np.array([128.0]), np.array([1024.0]), np.array([256.0])
    extra = float(serve(qwen, s, c, isl, osl).tpot_p50_s[0] - serve(qwen, without, c, isl, osl).tpot_p50_s[0])
    # each of the two groups schedules 64 sequences: prompts join it at 64 / 256 a step, not 128 / 256
    assert extra == pytest.approx(float(((1.0 - np.exp(-0.25)) * eager_pass_s(qwen, s))[0]))


def test_the_fit_varies_the_eager_cost_only_for_eager_stacks():
    class Case:
        def __init__(self, stack: str) -> None:
            self.stack, self.row_id, self.precision = stack, "x", "fp8"
            self.acc = load_catalog().accelerator("nvidia_h100_sxm")
            self.shape = shape_from_arch(resolve_model("qwen3-32b"))

    rows = candidate_rows([Case("vllm")] * 10 + [Case("tensorrt-llm")] * 10)
    eager = {r.stack for r in rows if (r.phase, r.op_class) == ("prefill", "layer_overhead")}
    assert eager == {"tensorrt-llm"}
    row = ProfileRow("*", "sglang", "*", "prefill", "layer_overhead", 1e-4, 1, "", "")
    assert bounds(row) == (1e-7, 1e-3)  # an eager pass may cost more per layer than a decode step
    assert bounds(replace(row, phase="decode")) == (1e-7, 2e-4)
