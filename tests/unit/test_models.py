"""Unit tests of the model library: lookup, resolution and the ModelArch formulas."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from pydantic import ValidationError

from infrafit.errors import InputError
from infrafit.workload.arch import ModelArch
from infrafit.workload.models import get_model, list_models, model_table, resolve_model

CALIBRATION = "benchmarks/data/calibration.csv"
LATENCY = "benchmarks/data/latency_calibration.csv"


@pytest.mark.parametrize(
    ("name", "arch_id", "precision"),
    [
        ("llama3.1-405b", "llama3.1-405b", None),
        ("meta-llama/Llama-3.1-70B", "llama3.1-70b", None),
        ("meta-llama/Meta-Llama-3.1-70B-Instruct", "llama3.1-70b", None),
        ("llama3.3-70b", "llama3.1-70b", None),
        ("llama3-8b", "llama3.1-8b", None),
        ("nvidia/DeepSeek-R1-NVFP4", "deepseek-r1", "fp4"),
        ("nvidia/Llama-3.1-8B-Instruct-FP8", "llama3.1-8b", "fp8"),
        ("nvidia/Qwen3-32B-NVFP4", "qwen3-32b", "fp4"),
        ("Qwen/Qwen3-235B-A22B-FP8", "qwen3-235b-a22b", "fp8"),
        ("zhipuai/GLM-5", "glm-5", None),
        ("meta-llama/Llama-2-70b-chat-hf", "llama2-70b", None),
        ("google/gemma-2-9b-it", "gemma2-9b", None),
        ("mistralai/Mixtral-8x7B-Instruct-v0.1", "mixtral-8x7b", None),
        ("EleutherAI/gpt-j-6b", "gptj-6b", None),
        ("openai/gpt-oss-120b", "gpt-oss-120b", "fp4"),
    ],
)
def test_names_resolve_to_the_base_architecture(name, arch_id, precision):
    m = get_model(name)
    assert m.id == arch_id
    if precision is not None:
        assert m.default_precision == precision


def test_precision_suffix_does_not_change_the_architecture():
    base, fp8 = get_model("llama3.1-8b"), get_model("nvidia/Llama-3.1-8B-Instruct-FP8")
    assert fp8.params_total() == base.params_total()
    assert base.default_precision is None and fp8.default_precision == "fp8"


def test_unknown_model_raises_input_error_with_suggestion():
    with pytest.raises(InputError) as e:
        get_model("llama3.1-7b")
    msg = str(e.value)
    assert "did you mean" in msg and "llama3.1-70b" in msg and "To fix:" in msg


@pytest.mark.parametrize("bad", ["", "   ", "no-such-model-at-all"])
def test_bad_names_raise_input_error(bad):
    with pytest.raises(InputError):
        get_model(bad)


def _model_workloads(path: str) -> set[str]:
    w = set(pd.read_csv(path, usecols=["workload"])["workload"].dropna())
    return {x for x in w if not x.startswith(("mlperf-", "maxtext-synthetic"))}


def test_every_calibration_model_workload_resolves():
    names = _model_workloads(CALIBRATION) | _model_workloads(LATENCY)
    assert len(names) > 10
    for n in sorted(names):
        assert get_model(n).params_total() > 0, n


def test_mlperf_architectures_are_in_the_library():
    for mid in ("gpt3-175b", "llama2-70b", "gptj-6b", "bert-large", "resnet50", "mixtral-8x7b"):
        assert get_model(mid).params_total() > 0


def test_resolve_model_reads_a_config_folder(tmp_path):
    cfg = {
        "model_type": "llama", "hidden_size": 1024, "num_hidden_layers": 4, "num_attention_heads": 8,
        "num_key_value_heads": 2, "intermediate_size": 2816, "vocab_size": 1000,
    }
    import json

    (tmp_path / "acme--tiny-1b.json").write_text(json.dumps(cfg))
    m = resolve_model("acme/tiny-1b", model_configs_dir=tmp_path)
    assert m.num_layers == 4 and m.num_kv_heads == 2
    with pytest.raises(InputError):
        resolve_model("acme/missing", model_configs_dir=tmp_path)


def test_model_table_rows_have_the_contract_columns():
    rows = model_table()
    library = [r for r in rows if not r["source"].startswith("shipped config.json")]
    assert len(library) == len(list_models()) >= 30 and len(rows) > len(library)  # then the shipped configs
    for r in rows:
        assert {"id", "name", "kind", "params_total", "params_active", "kv_bytes_per_token_bf16",
                "kv_bytes_per_token_fp8", "source"} <= set(r)
        assert r["source"]
        assert r["params_active"] <= r["params_total"] + 1


def test_kv_fp8_is_half_of_bf16():
    m = get_model("llama3.1-70b")
    assert m.kv_bytes_per_token("fp8") * 2 == m.kv_bytes_per_token("bf16")


def test_dense_params_active_equals_total_and_moe_is_smaller():
    assert get_model("llama3.1-8b").params_active() == get_model("llama3.1-8b").params_total()
    moe = get_model("deepseek-v3")
    assert moe.params_active() < 0.1 * moe.params_total()


def test_flops_accept_arrays_and_split_into_parts():
    m = get_model("llama3.1-8b")
    ctx = np.array([0, 1024, 8192])
    parts = m.flops_per_token_parts(ctx)
    assert parts["dense"].shape == (3,) and np.all(parts["attention"][1:] > 0)
    assert parts["attention"][0] == 0
    total = m.flops_per_token_fwd(ctx)
    np.testing.assert_allclose(total, parts["dense"] + parts["attention"])
    # dense part = 2 x params touched per token (Kaplan et al. 2020 C_fwd ~ 2N)
    assert parts["dense"][0] == pytest.approx(2 * m.matmul_params_per_token_active())


def test_attention_flops_follow_palm_formula_for_llama():
    m = get_model("llama3.1-70b")
    att = m.flops_per_token_parts(4096)["attention"]
    assert float(att) == pytest.approx(4 * 80 * 64 * 128 * 4096)


def test_sliding_window_caps_kv_and_attention():
    m = get_model("gemma2-9b")  # 21 of 42 layers slide over 4096 tokens
    per_layer = 2 * 8 * 256 * 2
    assert m.kv_bytes(32768, "bf16") == pytest.approx(21 * per_layer * 32768 + 21 * per_layer * 4096)
    short = m.kv_bytes(1000, "bf16")
    assert short == pytest.approx(42 * per_layer * 1000)


def test_gpt_oss_alternates_sliding_128_and_full():
    m = get_model("gpt-oss-120b")
    assert m.sliding_window == 128 and m.sliding_window_layers == 18 and m.full_attention_layers == 18
    per_layer = 2 * 8 * 64 * 2
    assert m.kv_bytes(10000, "bf16") == pytest.approx(18 * per_layer * 10000 + 18 * per_layer * 128)


def test_mla_attention_uses_qk_and_v_head_dims():
    m = get_model("deepseek-v3")
    att = float(m.flops_per_token_parts(1000)["attention"])
    assert att == pytest.approx(61 * 2 * 128 * (128 + 64 + 128) * 1000)


def test_moe_breakdown_adds_up():
    m = get_model("mixtral-8x7b")
    b = m.params_breakdown()
    parts = sum(v for k, v in b.items() if k != "total")
    assert parts == pytest.approx(b["total"])
    assert m.expert_params_total() == pytest.approx(32 * 8 * 3 * 4096 * 14336)


def test_prefill_flops_equals_sum_of_per_token_flops():
    for mid in ("llama3.1-8b", "gemma3-4b", "glm-5", "qwen3.5-397b-a17b"):
        m = get_model(mid)
        s = 3000
        direct = float(np.sum(m.flops_per_token_fwd(np.arange(1, s + 1))))
        assert m.flops_prefill(s) == pytest.approx(direct, rel=1e-9), mid


def test_weight_bytes_scale_with_precision():
    m = get_model("llama3.1-70b")
    assert m.weight_bytes("bf16") == pytest.approx(2 * m.params_total())
    # quantized: embedding and LM head stay bf16 (2 x 128,256 x 8,192 = 2.1e9 params), the rest 8 bits
    kept = m.embedding_params() + m.lm_head_params()
    assert m.weight_bytes("fp8") == pytest.approx(m.params_total() + kept)
    # NVFP4: 4 bits + one 8-bit scale per 16 weights = 4.5 bits
    assert m.weight_bytes("fp4") == pytest.approx((m.params_total() - kept) * 4.5 / 8 + 2 * kept)
    with pytest.raises(InputError):
        m.weight_bytes("fp7")


def test_model_arch_is_frozen_and_rejects_unknown_fields():
    m = get_model("llama3.1-8b")
    with pytest.raises(ValidationError):
        m.num_layers = 3  # type: ignore[misc]
    with pytest.raises(ValidationError):
        ModelArch(id="x", name="x", kind="decoder", source="s", bogus=1)


def test_mla_decode_attends_in_the_weight_absorbed_form():
    """Decode kernels (FlashMLA, vLLM, SGLang) score the cached latent + rope key and sum latent values:
    2 x heads x (2 x kv_lora_rank + rope) per cached token, 3.4x the decompressed form prefill uses."""
    m = get_model("deepseek-v3")
    absorbed = float(m.flops_per_token_parts(1000, absorbed=True)["attention"])
    assert absorbed == pytest.approx(61 * 2 * 128 * (2 * 512 + 64) * 1000)
    assert absorbed / float(m.flops_per_token_parts(1000)["attention"]) == pytest.approx(1088 / 320)
    dense = get_model("llama3.1-70b")  # no latent: the flag changes nothing
    assert float(dense.flops_per_token_parts(4096, absorbed=True)["attention"]) == pytest.approx(
        float(dense.flops_per_token_parts(4096)["attention"]))
