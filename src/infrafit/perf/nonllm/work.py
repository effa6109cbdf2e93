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
* Speech (Whisper): encoder over the padded 30 s window (1,500 frames) plus decoder tokens at
  ``2 x decoder params`` each; the decoder is memory-bound at small batch, which the weight-bytes
  term of the roofline captures.
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
    passes: int = 1  # sequential model invocations per sample (diffusion steps)
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


def _speech(model: Any, bpe: float, weights: float, *, output_tokens: float | None, **_: Any) -> SampleWork:
    enc = _library_flops(model, None) or encoder_flops_per_sequence(model, WHISPER_ENCODER_POSITIONS)
    tokens = float(output_tokens or 100.0)
    params = _params(model)
    dec_params = params / 2.0  # Whisper's encoder and decoder have the same width and depth (Radford et al.)
    dec = tokens * 2.0 * dec_params
    d = float(_get(model, "hidden_size", 1280))
    io = WHISPER_ENCODER_POSITIONS * 2 * 80 * 4.0  # 3,000 x 80 mel frames, fp32 input
    act = WHISPER_ENCODER_POSITIONS * d * bpe * 8.0
    # every decoded token re-reads the decoder weights at small batch: passes = tokens
    return SampleWork(enc + dec, dec_params * bpe, io, act, "transformer", passes=int(tokens),
                      detail=(("encoder_flops", enc), ("decoder_flops", dec), ("output_tokens", tokens)))


def _tabular(model: Any, bpe: float, weights: float, **_: Any) -> SampleWork:
    flops = _library_flops(model, None) or float(_get(model, "flops_per_sample_fwd", 0.0))
    if not flops:
        raise InputError(f"tabular model {_get(model, 'id', '?')!r} has no operations per row",
                         fix="give num_trees and tree_depth, num_features, or flops_per_sample_fwd")
    features = float(_get(model, "num_features", 100) or 100)
    return SampleWork(flops, weights, features * 4.0, features * 4.0, "tabular")
