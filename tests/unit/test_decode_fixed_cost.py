"""The fixed cost of a decode step (issue 15 defect 1) and grouped-GEMM padding over the experts a step
touches (defect 4)."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

import numpy as np
import pytest

from infrafit.catalog import load_catalog
from infrafit.perf.core import expected_distinct_experts
from infrafit.perf.llm.engine import decode_fixed_s, decode_step, gemm_compute_s, rows_per_touched_expert
from infrafit.perf.llm.setup import ConfigRow, build_setup
from infrafit.perf.llm.shape import shape_from_arch
from infrafit.workload.models import resolve_model

CONFIGS = Path(__file__).resolve().parents[1] / "fixtures" / "model_configs"


@pytest.fixture(scope="module")
def h100():
    return load_catalog().accelerator("nvidia_h100_sxm")


def test_the_step_cost_grows_with_layers_not_one_constant(h100):
    s = build_setup([ConfigRow(h100, "bf16", "vllm", tp=8)])[0]
    dense = shape_from_arch(resolve_model("qwen3-8b"))  # 36 layers
    deeper = replace(dense, num_layers=72)
    one, two = float(decode_fixed_s(dense, s)[0]), float(decode_fixed_s(deeper, s)[0])
    assert two - one == pytest.approx(36 * float(s.layer_overhead_s[0]))
    assert one == pytest.approx(float(s.step_overhead_s[0]) + 36 * float(s.layer_overhead_s[0]))
    # the per-step constant is the small part: most of a 36-layer model's fixed cost is its layers
    assert float(s.step_overhead_s[0]) <= 1e-3
    step = decode_step(dense, s, np.array([4.0]), np.array([1000.0]))
    assert float(step["overhead_s"][0]) == pytest.approx(one + 4 * float(s.seq_overhead_s[0]))


def test_pipeline_stages_split_the_per_layer_cost(h100):
    shape = shape_from_arch(resolve_model("llama3.1-70b"))
    s = build_setup([ConfigRow(h100, "bf16", "vllm", tp=4, pp=1), ConfigRow(h100, "bf16", "vllm", tp=4, pp=2)])[0]
    fixed = decode_fixed_s(shape, s)
    per_layer = 80 * float(s.layer_overhead_s[0])
    assert float(fixed[0] - fixed[1]) == pytest.approx(per_layer / 2)


def test_moe_layers_add_their_routing_kernels_dense_layers_do_not(h100):
    s = build_setup([ConfigRow(h100, "fp8", "vllm", tp=8)])[0]
    moe = shape_from_arch(resolve_model("deepseek-v3"))
    as_dense = replace(moe, num_experts=1, expert_params=0.0, num_moe_layers=0)
    extra = float(decode_fixed_s(moe, s)[0] - decode_fixed_s(as_dense, s)[0])
    assert extra == pytest.approx(moe.num_moe_layers * float(s.moe_decode_layer_overhead_s[0]))
    assert extra > 0


def test_grouped_gemm_pads_only_the_experts_a_step_touches():
    shape = shape_from_arch(resolve_model("deepseek-v3"))  # 256 experts, top 8
    assert (shape.num_experts, shape.experts_per_token) == (256, 8)
    tokens = np.array([1.0, 4.0, 256.0, 8192.0])
    rows = rows_per_touched_expert(shape, tokens)
    touched = expected_distinct_experts(256, 8, tokens)
    assert np.allclose(rows, tokens * 8 / touched)
    assert rows[0] == pytest.approx(1.0)  # one token: 8 experts touched, one row each
    assert 1.0 < rows[1] < 1.1  # 4 tokens touch ~30.5 experts, not 32 rows spread over 256
    assert rows[3] == pytest.approx(8192 * 8 / 256, rel=1e-3)  # every expert touched: T k / E


def test_small_batch_moe_decode_is_bound_by_the_weights_it_reads(h100):
    """At batch 4 a DeepSeek-V3 decode step reads ~30 experts per layer; their GEMMs are a few rows each.
    Spreading the tile padding over all 256 experts made that compute the largest term of the step."""
    shape = shape_from_arch(resolve_model("deepseek-v3"))
    s = build_setup([ConfigRow(load_catalog().accelerator("nvidia_h200_sxm"), "fp8", "sglang", tp=8)])[0]
    step = decode_step(shape, s, np.array([4.0]), np.array([2000.0]))
    assert float(step["gemm_compute_s"][0]) < float(step["gemm_memory_s"][0])
    compute = gemm_compute_s(shape, s, np.array([4.0]), s.eff_decode_gemm)
    assert float(compute[0]) == pytest.approx(float(step["gemm_compute_s"][0]))


def test_sparse_attention_layers_add_their_indexer_kernels(h100):
    """A DeepSeek Sparse Attention layer (GLM-5, DeepSeek-V3.2) runs the lightning indexer and its top-k
    before the attention kernel each decode step: a cost per indexed layer that dense-attention layers
    (DeepSeek-V3's MLA) do not pay; split over pipeline stages like every per-layer cost."""
    s = build_setup([ConfigRow(h100, "fp8", "sglang", tp=8), ConfigRow(h100, "fp8", "sglang", tp=4, pp=2)])[0]
    glm = shape_from_arch(resolve_model(str(CONFIGS / "zai-org--GLM-5.json")))
    assert glm.indexed_layers == glm.num_layers == 78
    assert shape_from_arch(resolve_model("deepseek-v3")).indexed_layers == 0
    as_dense = replace(glm, indexed_layers=0)
    extra = decode_fixed_s(glm, s) - decode_fixed_s(as_dense, s)
    assert float(extra[0]) == pytest.approx(78 * float(s.sparse_layer_overhead_s[0])) and float(extra[0]) > 0
    assert float(extra[1]) == pytest.approx(float(extra[0]) / 2)  # two stages, half the layers each
