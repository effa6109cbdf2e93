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
    assert 1e-9 < per < 1e-6  # tens of ns per token-layer: a hidden state moved k times each way through HBM
    t = moe_token_s(shape, s, np.array([1024.0, 8192.0]))
    assert t[1] == pytest.approx(8 * t[0])
    assert t[0] == pytest.approx(1024 * shape.num_moe_layers * per)


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
