"""Every shipped Hugging Face config resolves, by its id and by its bare name (issue 15, library breadth);
encoders and Whisper sizes from published dimensions."""

from __future__ import annotations

import json

import pytest

from infrafit.perf import shape_from_arch
from infrafit.workload.models import HF_CONFIG_DIR, QUANT_SUFFIX, resolve_model

CONFIGS = sorted(p for p in HF_CONFIG_DIR.glob("*.json") if not p.name.endswith(QUANT_SUFFIX))


def test_all_shipped_configs_are_there_with_their_sources():
    assert len(CONFIGS) == 65 and len(list(HF_CONFIG_DIR.glob(f"*{QUANT_SUFFIX}"))) == 2
    sources = (HF_CONFIG_DIR / "SOURCES.md").read_text()
    assert all(p.name in sources for p in CONFIGS)


@pytest.mark.parametrize("path", CONFIGS, ids=lambda p: p.stem)
def test_each_config_resolves_by_hf_id_and_bare_name(path):
    hf = path.stem.replace("--", "/", 1)
    by_id = resolve_model(hf)
    by_name = resolve_model(hf.split("/", 1)[-1].upper())
    assert by_id.params_total() == pytest.approx(by_name.params_total())
    assert by_id.params_total() > 1e6
    if by_id.kind == "decoder":
        shape = shape_from_arch(by_id)
        assert shape.num_layers > 0 and shape.params_total > 0
    cfg = json.loads(path.read_text())
    declared = cfg.get("num_hidden_layers")
    if declared and by_id.kind == "decoder":
        if cfg.get("hybrid_override_pattern"):  # one job per block: the model is its mixer blocks
            pattern = cfg["hybrid_override_pattern"]
            assert by_id.num_layers == pattern.count("M") + pattern.count("*") and len(pattern) == declared
        elif cfg.get("block_configs"):  # NAS-pruned: the model is its attention blocks
            live = [b for b in cfg["block_configs"] if not b["attention"].get("no_op")]
            assert by_id.num_layers == len(live) and len(cfg["block_configs"]) == declared
        else:
            assert by_id.num_layers == declared


def test_a_modelopt_quant_config_sets_the_checkpoint_precision():
    assert resolve_model("nvidia/Qwen3-32B-NVFP4").default_precision == "fp4"


@pytest.mark.parametrize(("name", "published_params"), [
    ("bert-base", 110e6), ("distilbert", 66e6), ("roberta-base", 125e6), ("roberta-large", 355e6),
    ("whisper-small", 244e6), ("whisper-medium", 769e6), ("sentence-transformers/all-MiniLM-L6-v2", 22.7e6),
])
def test_encoders_and_whisper_match_their_published_sizes(name, published_params):
    assert resolve_model(name).params_total() == pytest.approx(published_params, rel=0.03)
