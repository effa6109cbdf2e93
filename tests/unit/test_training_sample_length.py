"""A training sample is as long as the model's own sequence: every model trained 4,096-token samples, so a
ViT-L/16 ImageNet run (197 tokens an image) was 33x its work, a BERT-large pre-training (512) ~10x, and a
Whisper fine-tuning modelled a 4,096-token decoder and no encoder."""

from __future__ import annotations

import pytest

from infrafit.catalog import load_catalog
from infrafit.errors import ProblemsError
from infrafit.perf.training.run import model_flops_per_sample
from infrafit.perf.training.shape import from_model_arch
from infrafit.search.planner import plan
from infrafit.workload.models import resolve_model
from infrafit.workload.spec import parse_spec


def _spec(model: str, training: str) -> str:
    return f"name: t\ntask: training\nmodel: {model}\ntraining: {training}\nhorizon_months: 1\n"


@pytest.mark.parametrize(("model", "tokens"), [("vit-l-16", 197), ("bert-large", 512), ("whisper-large-v3", 448),
                                               ("llama3.1-8b", 4096)])
def test_the_default_sample_length_is_the_model_context_capped_at_4096(model, tokens):
    w = parse_spec(_spec(model, "{samples: 1M}"))
    assert w.training.seq_len == tokens
    assert w.explain()["training"]["seq_len"]["default"] is True  # still marked as a default, not as given
    assert w.training.total_tokens == pytest.approx(1e6 * tokens)


def test_a_vit_sample_is_its_image_and_trains_at_three_times_its_forward_flops():
    arch = resolve_model("vit-l-16")
    w = parse_spec(_spec("vit-l-16", "{samples: 1M}"))
    flops = model_flops_per_sample(from_model_arch(arch), w.training.seq_len)
    # 3 x the published forward cost of one 224 px image (123.2 GFLOPs), within the attention convention
    assert flops == pytest.approx(3 * arch.flops_per_sample_fwd, rel=0.02)


def test_a_stated_length_beyond_the_context_or_a_vit_length_is_refused():
    with pytest.raises(ProblemsError, match="exceeds bert-large's context length"):
        parse_spec(_spec("bert-large", "{samples: 1M, seq_len: 4096}"))
    with pytest.raises(ProblemsError, match="a ViT's sequence is its image's patches"):
        parse_spec(_spec("vit-l-16", "{samples: 1M, seq_len: 1024}"))
    assert parse_spec(_spec("bert-large", "{samples: 1M, seq_len: 128}")).training.seq_len == 128


def test_a_speech_sample_trains_its_encoder_over_the_window_and_its_decoder_over_the_tokens():
    arch = resolve_model("whisper-large-v3")
    shape = from_model_arch(arch)
    assert shape.encoder_layers == 32 and shape.encoder_tokens == 1500
    assert shape.encoder_flops_fwd_per_sample == pytest.approx(arch.encoder_flops_fwd())
    decoder_only = model_flops_per_sample(shape, 448) - 3 * shape.encoder_flops_fwd_per_sample
    assert model_flops_per_sample(shape, 448) > 2 * decoder_only  # the encoder is most of a 30 s window's work


def test_bert_pretraining_time_follows_the_512_token_sample():
    """100M BERT-large samples: 6 x 0.34B x 512 ~ 1e20 FLOPs, about a day on two H100s at ~60% MFU."""
    cat = load_catalog()
    w = parse_spec(_spec("bert-large", "{samples: 100M}") + "hardware: {accelerators: [h100]}\n", catalog=cat)
    best = plan(w, cat, top=1).options[0]
    days = best.performance["time_to_train_s"] / 86400 * best.count / 2  # in two-H100 days
    assert 0.5 < days < 2.0  # was 12.8 days at 4,096-token samples
