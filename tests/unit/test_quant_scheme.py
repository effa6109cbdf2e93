"""Weight widths per tensor class (issue 15 defect 5): what a quantized checkpoint keeps at 16 bits,
block-scale overhead, and what that does to memory and the decode roofline."""

from __future__ import annotations

import numpy as np
import pytest

from infrafit.catalog import load_catalog
from infrafit.perf.llm import engine as llm
from infrafit.perf.llm.setup import ConfigRow, build_setup, with_checkpoint
from infrafit.perf.llm.shape import shape_from_arch
from infrafit.workload.models import get_model, resolve_model
from infrafit.workload.quant import (
    DEFAULT_KEPT,
    FORMAT_BITS,
    classes_of_patterns,
    kept_classes,
    quantized_bits_per_weight,
    scheme_from_config,
)

GB = 1e9


def test_block_formats_count_their_scales():
    assert FORMAT_BITS["mxfp4"] == pytest.approx(4.25)  # 8-bit E8M0 scale per 32
    assert FORMAT_BITS["nvfp4"] == pytest.approx(4.5)  # 8-bit E4M3 scale per 16
    assert quantized_bits_per_weight("fp4") == pytest.approx(4.5)
    assert quantized_bits_per_weight("fp4", 4.25) == pytest.approx(4.25)
    assert quantized_bits_per_weight("fp8") == pytest.approx(8.0)
    assert 4.1 < quantized_bits_per_weight("int4") < 4.2  # AWQ group 128: 16-bit scale + 4-bit zero


def test_patterns_name_tensor_classes_and_skip_norms():
    gpt_oss = ["model.layers.*.self_attn", "model.layers.*.mlp.router", "model.embed_tokens", "lm_head"]
    assert classes_of_patterns(gpt_oss) == ("attention", "router", "embedding", "lm_head")
    kimi = ["lm_head", "re:.*self_attn.*", "re:.*shared_experts.*", r"re:.*mlp\.(gate|up|gate_up|down)_proj.*"]
    assert set(classes_of_patterns(kimi)) == {"lm_head", "attention", "shared_experts", "dense_mlp"}
    qwen = ["lm_head", "model.layers.0.input_layernorm", "model.layers.0.mlp.gate",
            "model.layers.0.post_attention_layernorm"]
    assert classes_of_patterns(qwen) == ("router", "lm_head")  # "post_attention_layernorm" is not attention
    assert classes_of_patterns(["model.layers.3.mlp.experts.7.down_proj"]) == ("routed_experts",)


def test_scheme_from_configs():
    mx = scheme_from_config({"quant_method": "mxfp4", "modules_to_not_convert": ["model.layers.*.self_attn"]})
    assert mx["quant_bits_per_weight"] == pytest.approx(4.25)
    assert set(mx["quant_kept"]) == {"attention", *DEFAULT_KEPT}
    ct = scheme_from_config({"quant_method": "compressed-tensors", "ignore": ["lm_head"], "config_groups": {
        "g": {"weights": {"num_bits": 4, "group_size": 32, "symmetric": True, "type": "int"}}}})
    assert ct["quant_bits_per_weight"] == pytest.approx(4.5)  # 4 + 16/32
    modelopt = scheme_from_config({"quantization": {"quant_algo": "NVFP4", "exclude_modules": ["lm_head"]}})
    assert modelopt["quant_bits_per_weight"] == pytest.approx(4.5)
    assert scheme_from_config(None) == {} and scheme_from_config({"quant_method": "fp8"}) == {}


@pytest.mark.parametrize(("name", "published_gb"), [
    # checkpoint sizes as published on their Hugging Face pages (safetensors totals)
    ("openai/gpt-oss-120b", 65.3),  # 60.8 GiB: MXFP4 experts, bf16 attention, router, embedding, head
    ("openai/gpt-oss-20b", 13.8),  # 12.8 GiB
])
def test_mixed_width_checkpoints_match_their_size(name, published_gb):
    arch = resolve_model(name)
    assert arch.weight_bytes("fp4") / GB == pytest.approx(published_gb, rel=0.03)
    # one width for all (the old rule) is 10-25% under
    assert arch.params_total() * 0.5 / GB < 0.9 * published_gb


def test_library_models_read_their_shipped_checkpoint_scheme():
    assert set(kept_classes(get_model("gpt-oss-120b"))) >= {"attention", "router", "embedding", "lm_head"}
    assert get_model("gpt-oss-120b").quant_bits_per_weight == pytest.approx(4.25)
    kimi = resolve_model("moonshotai/Kimi-K2.5")
    assert {"attention", "shared_experts", "dense_mlp"} <= set(kept_classes(kimi))
    assert kept_classes(get_model("llama3.1-8b")) == DEFAULT_KEPT
    # a re-quantized name takes the shipped ModelOpt config of that name: DeepSeek NVFP4 keeps MLA in bf16
    assert "attention" in kept_classes(resolve_model("nvidia/DeepSeek-V3.1-NVFP4"))
    assert "attention" not in kept_classes(resolve_model("deepseek-v3.1"))


def _setup(arch, precision, acc_id="nvidia_h100_sxm", stack="vllm"):
    acc = load_catalog().accelerator(acc_id)
    shape = shape_from_arch(arch)
    s, _, _ = build_setup([with_checkpoint(ConfigRow(acc, precision, stack), shape)])
    return shape, s


def test_kept_tensors_stay_sixteen_bit_in_memory_and_in_the_roofline():
    shape, s = _setup(get_model("gpt-oss-120b"), "fp4")
    assert s.weight_bytes_per_element[0] == pytest.approx(4.25 / 8)  # MXFP4, weight-only on Hopper
    assert s.kept_bytes_per_element[0] == pytest.approx(2.0)
    held = llm.weight_bytes_per_gpu(shape, s)[0]
    assert held / GB == pytest.approx(get_model("gpt-oss-120b").weight_bytes("fp4") / GB, rel=0.01)
    # batch 1 reads the attention (kept) at 2 bytes and four experts a layer at 4.25 bits
    step = llm.decode_step(shape, s, np.array([1.0]), np.array([1000.0]))["gemm_memory_s"][0]
    quantized = shape.dense_matmul_params - shape.kept_matmul_params
    touched = llm.expected_distinct_experts(shape.num_experts, shape.experts_per_token, np.array([1.0]))[0]
    read = (quantized * 4.25 / 8 + shape.kept_matmul_params * 2.0
            + shape.num_moe_layers * touched * shape.expert_params * 4.25 / 8)
    assert step == pytest.approx(read / (s.memory_bytes_per_s[0] * s.eff_memory[0]))


def test_sixteen_bit_runs_have_one_width():
    shape, s = _setup(get_model("llama3.1-8b"), "bf16")
    assert s.weight_bytes_per_element[0] == s.kept_bytes_per_element[0] == 2.0
    assert llm.weight_bytes_per_gpu(shape, s)[0] == pytest.approx(2.0 * shape.params_total)


def test_a_requantized_precision_uses_the_default_format_and_kept_set():
    # gpt-oss asked at fp8: 8-bit weights, not the MXFP4 checkpoint's 4.25 bits
    shape, s = _setup(get_model("gpt-oss-120b"), "fp8")
    assert s.weight_bytes_per_element[0] == pytest.approx(1.0) and s.own_scheme[0] == 0
    # Kimi K2.5's int4 checkpoint keeps attention, shared experts and dense layers in bf16; an NVFP4
    # re-quantization of it keeps only the defaults, so it holds fewer 16-bit bytes
    kimi = resolve_model("moonshotai/Kimi-K2.5")
    assert kept_classes(kimi, "fp4") == DEFAULT_KEPT
    shape, own = _setup(kimi, "int4", "nvidia_b200_sxm")
    _, other = _setup(kimi, "fp4", "nvidia_b200_sxm")
    assert own.own_scheme[0] == 1 and other.own_scheme[0] == 0
    assert shape.kept_params > shape.default_kept_params
    held_int4 = llm.weight_bytes_per_gpu(shape, own)[0]
    assert held_int4 == pytest.approx(kimi.weight_bytes("int4"), rel=1e-6)
    assert llm.weight_bytes_per_gpu(shape, other)[0] == pytest.approx(kimi.weight_bytes("fp4"), rel=1e-6)
