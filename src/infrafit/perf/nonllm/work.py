"""Work per sample of the non-LLM model kinds: the FLOPs and bytes ladder.

Each function turns a model architecture (``infrafit.workload.arch.ModelArch``, or any object with
the same attributes) and the shape of one request into a ``SampleWork``: forward FLOPs per sample,
weight bytes read once per batch step, bytes in and out per sample, and the op class whose
efficiency applies. The performance model (``perf.nonllm``) turns that into time.

Formulas and sources:

* Dense transformer encoder (BERT, ViT, Whisper encoder): ``2 x N_matmul`` FLOPs per token for the
  linear layers (Kaplan et al., "Scaling Laws for Neural Language Models", 2020, table 1: forward
  pass ``2N + 2 n_layer n_ctx d_attn``) plus ``2 x 2 x layers x seq x d`` per token for the
  attention scores and the weighted sum over ``seq`` keys. ``N_matmul = layers x (4 d^2 + 2 d ff)``.
  Check: BERT-Large at 384 tokens = 246.9 GFLOP (OpenVINO Open Model Zoo
  ``bert-large-uncased-whole-word-masking-squad-int8-0001``: "GOps 246.93").
* CNN / ViT at their reference input: ``flops_per_sample_fwd`` of the model library
  (ResNet-50 v1.5 at 224x224: 4.1 GMACs = 8.2 GFLOP, He et al. 2016 table 1 / torchvision).
* Diffusion: ``steps x guidance_passes x UNet FLOPs per step`` (classifier-free guidance runs the
  UNet on the conditional and unconditional prompt: 2 passes; MLPerf SDXL reference
  ``steps=20``, ``guidance=8``, per benchmarks_reference.md section 2).
* Speech (Whisper, an encoder plus an autoregressive decoder; Radford et al. 2022, section 2.3):
  the encoder runs once over the padded 30 s window (1,500 positions), compute-bound, as its own
  phase (``prefix_flops``: its GEMMs do not overlap the decoder's memory reads), together with the
  cross-attention K/V projections of its output (``2 x 2 x d^2 x 1,500`` per decoder layer). Each
  decoded token then costs ``2 x`` the decoder's per-token matmul weights (self-attention 4 d^2,
  cross-attention query and output 2 d^2, MLP 2 d ff per layer, plus the ``vocab x d`` logits)
  plus attention over the 1,500 encoder positions and the tokens so far, and reads, per sequence,
  the cross-attention cache ``2 x layers x 1,500 x d`` elements (234.4 MiB for large-v2/v3 in
  fp16: whisper.cpp prints "kv cross size = 234.38 MB", ggml-org/whisper.cpp issue 89) and the
  self-attention cache of the tokens so far. At a batch of 64 that cache traffic is ~9x the
  decoder's weights, so batched decoding is memory-bound on it, not on the weights. Tokens per
  window: ``traffic.output_tokens`` when given, else 100 (150 spoken words a minute x 1.33 GPT-2
  BPE tokens a word over 30 s; Whisper allows at most 448).
* Tabular (gradient-boosted trees, linear models): ``flops_per_sample_fwd`` of the library entry
  counts comparisons (trees x depth) or multiply-adds; op class ``tabular`` (branchy, no matrix units).
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import Any

from infrafit.errors import InputError
from infrafit.perf.calibrated import operators_per_pass
from infrafit.units import bytes_per_element

#: Op class of each model kind: the key of the efficiency profile (physical: what the kernels are).
OP_CLASS_BY_KIND: dict[str, str] = {
    "cnn": "cnn",
    "vit": "transformer",
    "encoder": "transformer",
    "speech": "transformer",
    "diffusion": "diffusion-unet",
    "tabular": "tabular",
}

#: Whisper pads every request to 30 s of audio = 3,000 mel frames, halved by the stride-2 conv
#: stem to 1,500 encoder positions (Radford et al., "Robust Speech Recognition via Large-Scale Weak
#: Supervision", 2022, section 2.2 and the released model's ``max_source_positions = 1500``).
WHISPER_ENCODER_POSITIONS = 1500


@dataclass(frozen=True)
class SampleWork:
    """The work one sample (image, sequence, generated image, audio clip, table row) costs."""

    flops: float  # forward FLOPs for one sample, all passes included
    weight_bytes: float  # read once per batch step (per UNet step for diffusion)
    io_bytes: float  # activations in + out per sample that must cross HBM (fused kernels keep the rest on chip)
    activation_bytes: float  # peak live activations per sample (memory footprint)
    op_class: str
    passes: int = 1  # sequential model invocations per sample (diffusion steps, decoded tokens)
    prefix_flops: float = 0.0  # part of ``flops`` run once first as its own compute-bound phase (an encoder)
    kv_bytes_per_pass: float = 0.0  # per sample, read on every pass (a decoder's attention caches)
    detail: tuple[tuple[str, float], ...] = ()
    operators_per_pass: float = 0.0  # dispatched operators per invocation (perf.calibrated; 0 = unknown)


def _get(model: Any, name: str, default: Any = None) -> Any:
    value = getattr(model, name, default)
    return default if value is None else value


def _params(model: Any) -> float:
    override = _get(model, "params_override")
    if override:
        return float(override)
    fn = getattr(model, "params_total", None)
    return float(fn()) if callable(fn) else 0.0


def encoder_flops_per_sequence(model: Any, seq_len: float) -> float:
    """Forward FLOPs of a dense transformer encoder over one ``seq_len``-token sequence.

    ``seq x 2 x layers x (4 d^2 + 2 d ff)`` for the linear layers plus ``4 x layers x seq^2 x d`` for
    attention (Kaplan et al. 2020, table 1). Falls back to scaling ``flops_per_sample_fwd`` linearly
    when the layer fields are missing.
    """
    d, layers = _get(model, "hidden_size"), _get(model, "num_layers")
    ff = _get(model, "intermediate_size", 4 * d if d else None)
    if d and layers:
        linear = 2.0 * layers * (4.0 * d * d + 2.0 * d * ff) * seq_len
        attention = 4.0 * layers * seq_len * seq_len * d
        return linear + attention
    ref = _get(model, "flops_per_sample_fwd")
    if ref:
        return float(ref)
    raise InputError(f"model {_get(model, 'id', '?')!r} has neither layer sizes nor flops_per_sample_fwd",
                     fix="give hidden_size/num_layers/intermediate_size or flops_per_sample_fwd in the model entry")


def sample_work(model: Any, precision: str, *, seq_len: float | None = None, steps: int | None = None,
                guidance_passes: int | None = None, output_tokens: float | None = None) -> SampleWork:
    """The ``SampleWork`` of one request to ``model`` at ``precision``.

    ``seq_len`` (encoders: tokens per sequence; mean real tokens when the server removes padding),
    ``steps`` and ``guidance_passes`` (diffusion), ``output_tokens`` (speech: decoded tokens).
    """
    kind = _get(model, "kind")
    if kind not in OP_CLASS_BY_KIND:
        raise InputError(f"model kind {kind!r} is not a non-LLM kind",
                         fix=f"use one of {', '.join(OP_CLASS_BY_KIND)} (decoders go through perf.llm)")
    bpe = bytes_per_element(precision)
    weights = _params(model) * bpe
    builder: Any = {"encoder": _encoder, "vit": _image, "cnn": _image, "diffusion": _diffusion,
               "speech": _speech, "tabular": _tabular}[kind]
    work = builder(model, bpe, weights, seq_len=seq_len, steps=steps, guidance_passes=guidance_passes,
                   output_tokens=output_tokens)
    return replace(work, operators_per_pass=operators_per_pass(model))


def _library_flops(model: Any, seq_len: float | None) -> float | None:
    """``ModelArch.flops_per_sample`` when the library provides it (it knows components and CFG)."""
    fn = getattr(model, "flops_per_sample", None)
    if not callable(fn):
        return None
    try:
        return float(fn(int(round(seq_len)) if seq_len else None))
    except ValueError:
        return None


def _encoder(model: Any, bpe: float, weights: float, *, seq_len: float | None, **_: Any) -> SampleWork:
    seq = float(seq_len or _get(model, "reference_seq_len") or _get(model, "max_position_embeddings", 512))
    d = float(_get(model, "hidden_size", 1024))
    flops = _library_flops(model, seq) or encoder_flops_per_sequence(model, seq)
    act = seq * d * bpe * 8.0  # a layer's live tensors (input, QKV, FFN intermediate) ~ 8 x seq x d elements
    return SampleWork(flops, weights, 2.0 * seq * d * bpe, act, "transformer", detail=(("seq_len", seq),))


def _image(model: Any, bpe: float, weights: float, **_: Any) -> SampleWork:
    flops = _library_flops(model, None) or _get(model, "flops_per_sample_fwd")
    if not flops:
        raise InputError(f"model {_get(model, 'id', '?')!r} has no flops_per_sample_fwd",
                         fix="add flops_per_sample_fwd (forward FLOPs at the reference input) to the model entry")
    side = float(_get(model, "image_size", 224))
    io = side * side * 3.0 * bpe  # the input image; the logits are negligible
    act = 64.0 * io  # the widest early feature maps hold ~64 channels at a quarter of the input's pixels x 4
    return SampleWork(float(flops), weights, io, act, OP_CLASS_BY_KIND[_get(model, "kind")],
                      detail=(("image_size", side),))


def _diffusion(model: Any, bpe: float, weights: float, *, steps: int | None,
               guidance_passes: int | None, **_: Any) -> SampleWork:
    comps = tuple(_get(model, "components", ()))
    ref_steps = int(_get(model, "diffusion_steps", 20))
    n_steps = int(steps or ref_steps)
    cfg_ref = float(_get(model, "guidance_batch_factor", 2.0) or 2.0)
    passes = float(guidance_passes or cfg_ref)
    if comps:
        unet = next((c for c in comps if "unet" in c.name.lower() or "transformer" in c.name.lower()),
                    max(comps, key=lambda c: c.params))  # the denoiser: the largest network
        per_run = float(unet.flops_fwd)
        other = sum(c.flops_fwd * c.runs_per_sample for c in comps if c is not unet)
        step_weights = float(unet.params) * bpe
    else:
        per_run = float(_get(model, "flops_per_sample_fwd", 0.0))
        other, step_weights = 0.0, weights
    if not per_run:
        raise InputError(f"diffusion model {_get(model, 'id', '?')!r} has no UNet FLOPs per step",
                         fix="add components (UNet, encoders, VAE) or flops_per_sample_fwd to the model entry")
    flops = per_run * n_steps * passes + other
    side = float(_get(model, "image_size", 1024))
    latent = (side / 8.0) ** 2 * 4.0 * bpe  # the VAE downsamples 8x to 4 channels (Rombach et al. 2022)
    return SampleWork(flops, step_weights, 2.0 * latent * passes, 256.0 * latent * passes,
                      "diffusion-unet", passes=n_steps,
                      detail=(("steps", n_steps), ("guidance_passes", passes), ("unet_flops_per_run", per_run),
                              ("other_components_flops", other)))


#: Decoded tokens per 30 s window when the spec gives none: ~150 spoken words a minute x 1.33
#: GPT-2 BPE tokens per English word x 0.5 min (see the module docstring).
WHISPER_DEFAULT_TOKENS_PER_WINDOW = 100.0


def _speech(model: Any, bpe: float, weights: float, *, output_tokens: float | None, **_: Any) -> SampleWork:
    positions = float(_get(model, "encoder_seq_len", WHISPER_ENCODER_POSITIONS))
    tokens = float(output_tokens or WHISPER_DEFAULT_TOKENS_PER_WINDOW)
    d = float(_get(model, "hidden_size", 1280))
    layers = float(_get(model, "num_layers", 32))
    ff = float(_get(model, "intermediate_size", 4 * d))
    vocab = float(_get(model, "vocab_size", 51866))
    enc = _library_flops(model, None) or encoder_flops_per_sequence(model, positions)
    cross_proj = 2.0 * 2.0 * d * d * positions * layers  # K and V of the encoder output, once per window
    per_token_matmul = layers * (6.0 * d * d + 2.0 * d * ff) + vocab * d
    attention = 4.0 * layers * d * (positions + tokens / 2.0)  # scores + weighted sum, cross and self
    dec = tokens * (2.0 * per_token_matmul + attention)
    dec_weights = (layers * (8.0 * d * d + 2.0 * d * ff) + vocab * d) * bpe  # cross K/V weights included
    cross_kv = 2.0 * layers * positions * d * bpe
    self_kv = 2.0 * layers * tokens * d * bpe
    io = positions * 2.0 * float(_get(model, "num_mel_bins", 80)) * 4.0  # 3,000 mel frames, fp32 input
    act = positions * d * bpe * 8.0 + cross_kv + self_kv
    return SampleWork(enc + cross_proj + dec, dec_weights, io, act, "transformer", passes=int(round(tokens)),
                      prefix_flops=enc + cross_proj, kv_bytes_per_pass=cross_kv + self_kv / 2.0,
                      detail=(("encoder_flops", enc + cross_proj), ("decoder_flops", dec), ("output_tokens", tokens),
                              ("cross_kv_bytes", cross_kv)))


def _tabular(model: Any, bpe: float, weights: float, **_: Any) -> SampleWork:
    flops = _library_flops(model, None) or float(_get(model, "flops_per_sample_fwd", 0.0))
    if not flops:
        raise InputError(f"tabular model {_get(model, 'id', '?')!r} has no operations per row",
                         fix="give num_trees and tree_depth, num_features, or flops_per_sample_fwd")
    features = float(_get(model, "num_features", 100) or 100)
    return SampleWork(flops, weights, features * 4.0, features * 4.0, "tabular")
