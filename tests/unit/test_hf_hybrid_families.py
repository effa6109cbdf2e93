"""Shipped configs whose blocks are not all attention + FFN resolve to the sizes their model cards state
(issue 15, model library breadth): Llama 4's interleaved MoE with a shared expert, Nemotron-H / Nemotron 3
hybrid Mamba-2 patterns (with MoE and latent MoE), and the NAS-pruned Llama-Nemotron blocks. Before, they
resolved 2-12x too large (Nemotron 3 Super: 1,495B)."""

from __future__ import annotations

import pytest

from infrafit.workload.hf_config import from_hf_config
from infrafit.workload.models import model_table, resolve_model

# (HF id, total params, active params or None for dense, KV bytes per token at bf16 or None): the model
# cards' totals (Llama 4: 109B/17B and 400B/17B; Nemotron-H 56B; Nemotron 3 Nano 31.6B/3.6B with
# embeddings; Nemotron 3 Super 120B/12B; Llama-3.3-Nemotron-Super 49.9B); KV from the configs' attention
# layers (Nemotron-H 56B: 10 of its 118 blocks, 8 KV heads of 128).
CARDS = [
    ("meta-llama/Llama-4-Scout-17B-16E-Instruct", 109e9, 17e9, None),
    ("meta-llama/Llama-4-Maverick-17B-128E-Instruct", 400e9, 17e9, None),
    ("nvidia/Nemotron-H-56B-Base-8K", 56e9, None, 10 * 8 * 128 * 2 * 2),
    ("nvidia/NVIDIA-Nemotron-3-Nano-30B-A3B-BF16", 31.6e9, 3.6e9, 6 * 2 * 128 * 2 * 2),
    ("nvidia/NVIDIA-Nemotron-3-Super-120B-A12B-FP8", 120e9, 12e9, None),
    ("nvidia/Llama-3_3-Nemotron-Super-49B-v1", 49.9e9, None, None),
]


@pytest.mark.parametrize(("hf_id", "total", "active", "kv"), CARDS)
def test_hybrid_and_interleaved_configs_resolve_to_their_published_size(hf_id, total, active, kv):
    m = resolve_model(hf_id)
    assert m.params_total() == pytest.approx(total, rel=0.03)
    if active is not None:
        assert m.params_active() == pytest.approx(active, rel=0.08)
    if kv is not None:
        assert m.kv_bytes_per_token("bf16") == pytest.approx(kv, rel=1e-9)


def test_mamba_blocks_carry_a_recurrent_state_not_a_kv_cache():
    """Nemotron-H's 54 Mamba-2 mixers: no KV cache, a heads x head_dim x state_size state each."""
    m = resolve_model("nvidia/Nemotron-H-56B-Base-8K")
    assert m.linear_attention_layers == 54 and m.softmax_layers == 10
    assert (m.linear_num_value_heads, m.linear_value_head_dim, m.linear_key_head_dim) == (256, 64, 256)


def test_llama4_interleave_step_sets_the_dense_layers():
    base = {"model_type": "llama4_text", "hidden_size": 512, "num_hidden_layers": 8, "num_attention_heads": 8,
            "num_key_value_heads": 2, "head_dim": 64, "intermediate_size": 256, "intermediate_size_mlp": 1024,
            "num_local_experts": 4, "num_experts_per_tok": 1, "vocab_size": 1000}
    every = from_hf_config({**base, "interleave_moe_layer_step": 1}, model_id="t")
    half = from_hf_config({**base, "interleave_moe_layer_step": 2}, model_id="t")
    assert (every.moe_layers, half.moe_layers) == (8, 4)
    assert half.dense_mlp_params() == 4 * 3 * 512 * 1024  # the dense layers at intermediate_size_mlp
    assert every.shared_expert_params() == 8 * 3 * 512 * 256  # one shared expert as wide as a routed one


def test_catalog_models_lists_the_shipped_configs_the_library_lacks():
    ids = {r["id"] for r in model_table()}
    assert "llama3.1-8b" in ids and "nvidia/Nemotron-H-56B-Base-8K" in ids
    row = next(r for r in model_table() if r["id"] == "meta-llama/Llama-4-Scout-17B-16E-Instruct")
    assert row["params_total"] == pytest.approx(109e9, rel=0.03) and "shipped config.json" in row["source"]


@pytest.mark.parametrize(("name", "resolved"), [
    ("llama3.2-1b", "meta-llama/Llama-3.2-1B-Instruct"), ("Llama-3.2-3B", "meta-llama/Llama-3.2-3B-Instruct"),
    ("phi-4-mini", "microsoft/Phi-4-mini-instruct")])
def test_a_shipped_config_resolves_by_its_bare_name_without_variant_suffixes(name, resolved):
    assert resolve_model(name).hf_id == resolved


def test_an_unknown_name_suggests_the_shipped_configs_too():
    from infrafit.errors import InputError

    with pytest.raises(InputError) as err:
        resolve_model("llama4-scout")
    assert "meta-llama/Llama-4-Scout-17B-16E-Instruct" in str(err.value)


def test_gemma4_moe_counts_its_top_k_experts_dense_mlp_and_global_layer_widths():
    """Gemma 4 26B-A4B (card: 25.2B total, 3.8B active): ``top_k_experts`` 8 of 128 routed experts, the
    dense MLP beside them in every layer (``enable_moe_block``) as a shared expert, and 5 global layers at
    head dim 512 with 2 KV heads whose K projection is also V (``attention_k_eq_v``). Before, the top-k
    was not read (1 expert a token: 1.8B active) and the global layers had the sliding layers' widths."""
    m = resolve_model("google/gemma-4-26B-A4B")
    text = m.params_total() - m.extra_params  # the vision tower is in extra_params
    assert text == pytest.approx(25.2e9, rel=0.01)
    assert m.params_active() == pytest.approx(3.8e9, rel=0.02)
    assert m.experts_per_token == 8 and m.num_shared_experts == 1 and m.shared_expert_intermediate_size == 2112
    assert (m.global_head_dim, m.global_kv_heads, m.global_k_eq_v) == (512, 2, True)
    d = m.hidden_size
    sliding = d * 16 * 256 * 2 + 2 * d * 8 * 256  # q, o, k, v
    full = d * 16 * 512 * 2 + d * 2 * 512  # q, o and one K=V projection
    assert m.attention_params() == pytest.approx(25 * sliding + 5 * full, rel=1e-12)
    # cache per token: 25 sliding layers (8 KV heads x 256, K and V; capped at the 1,024-token window)
    # and 5 global layers (2 x 512, K and V stored apart: they are normed and rotated differently)
    assert m.kv_bytes_per_token("bf16") == pytest.approx((25 * 2 * 8 * 256 + 5 * 2 * 2 * 512) * 2)
    ctx = 32_768
    assert m.kv_bytes(ctx, "bf16") == pytest.approx((25 * 4096 * 1024 + 5 * 2048 * ctx) * 2)
    # a global layer's scores and values at its own head dim: 2 x 16 heads x (512 + 512)
    one = m.flops_per_token_parts(ctx)["attention"] - m.flops_per_token_parts(ctx - 1)["attention"]
    assert float(one) == pytest.approx(5 * 2 * 16 * 1024)


def test_a_global_kv_head_count_that_does_not_divide_the_heads_is_refused():
    from infrafit.workload.arch import ModelArch

    with pytest.raises(ValueError, match="global_kv_heads 3 must divide"):
        ModelArch(id="x", name="x", kind="decoder", source="test", hidden_size=1024, num_layers=4,
                  num_attention_heads=16, head_dim=64, global_head_dim=128, global_kv_heads=3)


def test_llama4_chunked_layers_hold_at_most_one_chunk_of_kv():
    """Llama 4: 36 of 48 layers use RoPE and attend within their 8,192-token chunk, every 4th is a global
    NoPE layer (HF ``no_rope_layer_interval`` 4). A 128k-token sequence caches 12 global layers in full and
    36 chunked ones at one chunk: 7.65 GB at bf16, not the 25.8 GB of 48 full layers."""
    m = resolve_model("meta-llama/Llama-4-Scout-17B-16E-Instruct")
    assert (m.sliding_window, m.sliding_window_layers, m.full_attention_layers) == (8192, 36, 12)
    per_layer_token = 2 * 8 * 128 * 2  # K and V, 8 KV heads of 128, bf16
    ctx = 131_072
    assert m.kv_bytes(ctx, "bf16") == pytest.approx(per_layer_token * (12 * ctx + 36 * 8192))
    assert m.kv_bytes(4096, "bf16") == pytest.approx(per_layer_token * 48 * 4096)  # inside one chunk: all


def test_llama4_explicit_no_rope_layers_decide_which_layers_are_chunked():
    cfg = {"model_type": "llama4_text", "hidden_size": 1024, "num_hidden_layers": 8, "num_attention_heads": 8,
           "num_key_value_heads": 2, "head_dim": 128, "intermediate_size": 2048, "intermediate_size_mlp": 4096,
           "vocab_size": 1000, "num_local_experts": 4, "num_experts_per_tok": 1, "attention_chunk_size": 512,
           "no_rope_layers": [1, 1, 0, 1, 1, 1, 0, 0]}
    m = from_hf_config(cfg, model_id="tiny-llama4")
    assert (m.sliding_window, m.sliding_window_layers) == (512, 5)
