"""The Hugging Face config reader against every real config in tests/fixtures/model_configs."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import yaml

from infrafit.errors import InputError
from infrafit.workload.hf_config import from_hf_config, precision_from_quant
from infrafit.workload.models import get_model, list_models

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures" / "model_configs"
CONFIGS = sorted(p for p in FIXTURES.glob("*.json") if not p.name.endswith(".hf_quant_config.json"))
LIBRARY_YAML = Path(__file__).resolve().parents[2] / "src/infrafit/workload/data/models.yaml"


def test_fixture_folder_is_present():
    assert len(CONFIGS) >= 20


@pytest.mark.parametrize("path", CONFIGS, ids=lambda p: p.name)
def test_every_fixture_config_parses_with_positive_counts(path):
    m = from_hf_config(path)
    assert m.params_total() > 1e8
    assert 0 < m.params_active() <= m.params_total()
    assert m.flops_per_token_fwd(4096) > 2 * m.matmul_params_per_token_active() - 1
    if m.kind == "decoder":
        assert m.kv_bytes_per_token("bf16") > 0


def _library_entries_with_configs():
    entries = yaml.safe_load(LIBRARY_YAML.read_text())
    return [(e["id"], e["config_file"]) for e in entries if e.get("config_file")]


@pytest.mark.parametrize(("mid", "config_file"), _library_entries_with_configs())
def test_library_entry_matches_its_source_config(mid, config_file):
    """The stored library fields still equal what the reader derives from the source config."""
    lib = get_model(mid)
    cfg = from_hf_config(FIXTURES / config_file)
    assert lib.params_total() == pytest.approx(cfg.params_total())
    assert lib.params_active() == pytest.approx(cfg.params_active())
    assert lib.kv_bytes_per_token("bf16") == cfg.kv_bytes_per_token("bf16")
    assert lib.kv_bytes(50_000, "fp8") == pytest.approx(cfg.kv_bytes(50_000, "fp8"))
    assert lib.flops_per_token_fwd(8192) == pytest.approx(cfg.flops_per_token_fwd(8192))


def test_quant_configs_set_precision():
    assert from_hf_config(FIXTURES / "nvidia--Qwen3-32B-NVFP4.json").default_precision == "fp4"
    assert from_hf_config(FIXTURES / "nvidia--DeepSeek-V3.1-NVFP4.json").default_precision == "fp4"
    assert from_hf_config(FIXTURES / "Qwen--Qwen3-32B.json").default_precision is None
    assert from_hf_config(FIXTURES / "openai--gpt-oss-120b.json").default_precision == "fp4"  # mxfp4
    assert from_hf_config(FIXTURES / "moonshotai--Kimi-K2.5.json").default_precision == "int4"
    assert from_hf_config(FIXTURES / "deepseek-ai--DeepSeek-V3.json").default_precision == "fp8"


@pytest.mark.parametrize(
    ("cfg", "expected"),
    [
        ({"quantization": {"quant_algo": "FP8"}}, "fp8"),
        ({"quant_method": "awq", "bits": 4}, "int4"),
        ({"quant_method": "gptq", "bits": 8}, "int8"),
        ({"quant_method": "bitsandbytes", "load_in_4bit": True}, "int4"),
        ({"quant_method": "something-new"}, None),
        (None, None),
    ],
)
def test_precision_from_quant(cfg, expected):
    assert precision_from_quant(cfg) == expected


def test_family_specific_structure():
    gpt_oss = from_hf_config(FIXTURES / "openai--gpt-oss-120b.json")
    assert (gpt_oss.sliding_window, gpt_oss.sliding_window_layers) == (128, 18)
    qwen35 = from_hf_config(FIXTURES / "Qwen--Qwen3.5-397B-A17B.json")  # nested text_config
    assert qwen35.linear_attention_layers == 45 and qwen35.full_attention_layers == 15
    assert qwen35.attn_output_gate and qwen35.num_shared_experts == 1
    kimi = from_hf_config(FIXTURES / "moonshotai--Kimi-K2.5.json")
    assert kimi.num_experts == 384 and kimi.is_mla and kimi.first_dense_layers == 1
    glm = from_hf_config(FIXTURES / "zai-org--GLM-5.json")
    assert glm.is_mla and glm.index_topk == 2048 and glm.num_layers == 78
    bert = from_hf_config(FIXTURES / "mlcommons--inference-bert-large.json")  # Google format, no model_type
    assert bert.kind == "encoder" and bert.tie_word_embeddings and not bert.mlp_gated
    mixtral = from_hf_config(FIXTURES / "mistralai--Mixtral-8x7B-v0.1.json")
    assert mixtral.moe_intermediate_size == 14336 and mixtral.experts_per_token == 2


def test_sparse_attention_caps_attended_tokens():
    glm = get_model("glm-5")
    a1, a2 = (float(glm.flops_per_token_parts(c)["attention"]) for c in (100_000, 200_000))
    per_tok = 2 * 64 * (256 + 256)
    # beyond index_topk only the indexer grows: 78 layers x 2 x 32 heads x 128 per extra token
    assert a2 - a1 == pytest.approx(78 * 2 * 32 * 128 * 100_000)
    assert a1 > 78 * per_tok * 2048


def test_whisper_config_dict():
    cfg = {
        "model_type": "whisper", "d_model": 1280, "encoder_layers": 32, "decoder_layers": 32,
        "encoder_attention_heads": 20, "decoder_attention_heads": 20, "decoder_ffn_dim": 5120,
        "encoder_ffn_dim": 5120, "vocab_size": 51866, "num_mel_bins": 128, "max_source_positions": 1500,
        "max_target_positions": 448,
    }
    m = from_hf_config(cfg, model_id="openai/whisper-large-v3")
    assert m.kind == "speech" and m.encoder_layers == 32
    assert m.params_total() == pytest.approx(get_model("whisper-large-v3").params_total(), rel=0.01)


def test_gemma2_and_gemma3_window_layer_counts():
    base = {"hidden_size": 2304, "num_hidden_layers": 26, "num_attention_heads": 8, "num_key_value_heads": 4,
            "head_dim": 256, "intermediate_size": 9216, "vocab_size": 256000, "sliding_window": 4096}
    assert from_hf_config({**base, "model_type": "gemma2"}).sliding_window_layers == 13
    g3 = from_hf_config({**base, "model_type": "gemma3_text", "num_hidden_layers": 34, "sliding_window": 1024})
    assert g3.sliding_window_layers == 29 and g3.tie_word_embeddings
    assert get_model("gemma3-4b").sliding_window_layers == 29


@pytest.mark.parametrize(
    "content", ["{not json", "[1, 2]", json.dumps({"model_type": "llama"}), "\xff\xfe"]
)
def test_bad_configs_raise_input_error(tmp_path, content):
    p = tmp_path / "config.json"
    p.write_bytes(content.encode("latin-1") if content.startswith("\xff") else content.encode())
    with pytest.raises(InputError) as e:
        from_hf_config(p)
    assert "To fix:" in str(e.value)


def test_missing_config_raises_input_error(tmp_path):
    with pytest.raises(InputError):
        from_hf_config(tmp_path / "nope.json")


def test_library_has_a_source_and_date_for_every_entry():
    for m in list_models():
        assert m.source and m.retrieved_on, m.id
