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
