"""The MoE part of a prefill (issue 15 defect 3, in part): routing and token permutation scale with the
prompt's tokens (``moe_token_overhead``, per token and MoE layer), spread over the expert ranks, zero for a
dense model; only what does not shrink with the prompt stays a fixed cost per MoE layer of a pass."""

from __future__ import annotations

import numpy as np
import pytest

from infrafit.catalog import load_catalog
from infrafit.perf.llm.engine import moe_token_s, prefill_compute_s
from infrafit.perf.llm.setup import ConfigRow, build_setup
from infrafit.perf.llm.shape import shape_from_arch
from infrafit.workload.models import resolve_model


@pytest.fixture(scope="module")
def b200():
    return load_catalog().accelerator("nvidia_b200_sxm")


def test_routing_and_permutation_scale_with_the_prompt_tokens(b200):
    shape = shape_from_arch(resolve_model("deepseek-v3"))
    s = build_setup([ConfigRow(b200, "fp8", "vllm", tp=8)])[0]
    per = float(s.moe_token_overhead_s[0])
    assert 1e-14 < per < 1e-10  # around 1e-12 s per routed element: a few bf16 moves through HBM
    t = moe_token_s(shape, s, np.array([1024.0, 8192.0]))
    assert t[1] == pytest.approx(8 * t[0])
    assert t[0] == pytest.approx(1024 * shape.num_moe_layers * 8 * 7168 * per)  # top-8 of a 7,168 state


def test_fewer_and_narrower_routed_states_cost_less():
    """Mixtral (top-2 of 4,096) routes 7x fewer elements per token-layer than DeepSeek-V3 (top-8 of 7,168)."""
    s = build_setup([ConfigRow(load_catalog().accelerator("nvidia_h100_sxm"), "fp8", "vllm", tp=8)])[0]
    ds = shape_from_arch(resolve_model("deepseek-v3"))
    mx = shape_from_arch(resolve_model("mixtral-8x7b"))
    per_layer = [float(moe_token_s(sh, s, np.array([1000.0]))[0]) / sh.num_moe_layers for sh in (ds, mx)]
    assert per_layer[0] / per_layer[1] == pytest.approx((8 * 7168) / (2 * 4096))


def test_expert_ranks_split_it_and_dense_models_have_none(b200):
    moe = shape_from_arch(resolve_model("deepseek-v3"))
    s = build_setup([ConfigRow(b200, "fp8", "vllm", tp=8), ConfigRow(b200, "fp8", "vllm", tp=1, adp=8, ep=8)])[0]
    t = moe_token_s(moe, s, np.array([8192.0, 8192.0]))
    assert t[0] == pytest.approx(8 * t[1])  # eight expert ranks each route an eighth of the tokens
    dense = shape_from_arch(resolve_model("llama3.1-70b"))
    assert float(moe_token_s(dense, s, np.array([8192.0]))[0]) == 0.0


def test_the_prefill_compute_includes_it(b200):
    shape = shape_from_arch(resolve_model("deepseek-v3"))
    s = build_setup([ConfigRow(b200, "fp8", "vllm", tp=8)])[0]
    tokens = np.array([8192.0])
    with_it = float(prefill_compute_s(shape, s, tokens, tokens, one_group=True)[0])
    from dataclasses import replace

    without = float(prefill_compute_s(shape, replace(s, moe_token_overhead_s=np.zeros(1)), tokens, tokens,
                                      one_group=True)[0])
    assert with_it - without == pytest.approx(float(moe_token_s(shape, s, tokens)[0]))


def test_the_fixed_per_layer_prefill_cost_is_paid_only_with_a_real_all_to_all(b200):
    """A MoE prefill pass pays a fixed cost per MoE layer only when its tokens cross an all-to-all (EP or
    attention-DP ranks > 1: the dispatch/combine sync); with TP-sharded experts it pays the per-token part."""
    from infrafit.perf.llm.engine import moe_prefill_overhead_s

    moe = shape_from_arch(resolve_model("deepseek-v3"))
    s = build_setup([ConfigRow(b200, "fp8", "tensorrt-llm", tp=8),
                     ConfigRow(b200, "fp8", "tensorrt-llm", tp=1, adp=8, ep=8),
                     ConfigRow(b200, "fp8", "tensorrt-llm", tp=8, ep=8)])[0]
    fixed = moe_prefill_overhead_s(moe, s)
    assert fixed[0] == 0.0
    assert fixed[1] == pytest.approx(moe.num_moe_layers * float(s.moe_layer_overhead_s[1])) and fixed[1] > 0
    assert fixed[2] == pytest.approx(fixed[1])
