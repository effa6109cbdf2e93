"""Training memory per accelerator: weights, gradients, optimizer states, activations, adapters.

Every function takes numpy arrays (or scalars) of layout degrees, so the layout search evaluates
all candidates at once.

Sources:
* Mixed-precision Adam keeps fp16/bf16 weights (2 B) and gradients (2 B) plus fp32 master weights,
  momentum and variance (K = 12 B) per parameter: 16 B/param in all (Rajbhandari et al. 2020,
  "ZeRO", sec. 3.1). ZeRO-1 shards the optimizer states over data parallel ranks, ZeRO-2 also the
  gradients, ZeRO-3 (= PyTorch FSDP full sharding) also the weights (ZeRO sec. 5.1, Fig. 1).
* Activations per transformer layer (Korthikanti et al. 2022, "Reducing Activation Recomputation
  in Large Transformer Models", Table 2), bytes at 16-bit: no parallelism ``s b h (34 + 5 a s / h)``;
  tensor + sequence parallel ``/ t``; selective recomputation drops the ``5 a s / h`` score term;
  full recomputation keeps only each layer's input, ``2 s b h / t``. FlashAttention (Dao 2022) never
  stores the score matrix, so with it the no-recompute case is ``34 s b h / t``. The first pipeline
  stage keeps ``pp`` micro-batches in flight under 1F1B (Korthikanti sec. 4.2.3; Narayanan 2021).
* LoRA (Hu et al. 2021): frozen base, adapters ``r (d_in + d_out)`` per adapted matrix. QLoRA
  (Dettmers et al. 2023): 4-bit NF4 base with double quantisation, 4.127 bits per parameter.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from infrafit.perf.training.shape import TrainShape

#: Bytes per parameter of mixed-precision Adam (ZeRO sec. 3.1): weights, gradients, optimizer (K=12).
WEIGHT_BYTES_PER_PARAM = 2.0
GRAD_BYTES_PER_PARAM = 2.0
ADAM_STATE_BYTES_PER_PARAM = 12.0
#: QLoRA NF4 with double quantisation: 4 + 0.127 bits per parameter (Dettmers et al. 2023, sec. 3).
QLORA_BYTES_PER_PARAM = 4.127 / 8.0
#: Korthikanti et al. 2022 Table 2 coefficients (bytes per s*b*h per layer at 16-bit activations).
ACT_COEFF_STORED = 34.0
ACT_COEFF_SCORES = 5.0
ACT_COEFF_FULL_RECOMPUTE = 2.0
#: fp32 logits of the LM head kept for the loss (bytes per vocab entry per token).
LOGIT_BYTES = 4.0

RECOMPUTE_MODES = ("none", "selective", "full")
METHODS = ("full", "lora", "qlora")


@dataclass(frozen=True)
class MemoryParts:
    """Per-accelerator bytes of each part (arrays over candidates)."""

    weights_bytes: np.ndarray
    gradients_bytes: np.ndarray
    optimizer_bytes: np.ndarray
    activations_bytes: np.ndarray

    @property
    def total_bytes(self) -> np.ndarray:
        return self.weights_bytes + self.gradients_bytes + self.optimizer_bytes + self.activations_bytes


def lora_adapter_params(shape: TrainShape, rank: int, targets: str = "attention") -> float:
    """Adapter parameters: ``r (d_in + d_out)`` per adapted matrix (Hu et al. 2021, sec. 4.1).

    ``targets="attention"`` adapts q, k, v and o (the MLPerf Llama-2-70B LoRA reference adapts the
    fused qkv and o projections); ``"all"`` also adapts the MLP matrices.
    """
    h, hd = shape.hidden, shape.head_dim
    q_out, kv_out = shape.heads * hd, shape.kv_heads * hd
    per_layer = rank * ((h + q_out) + 2 * (h + kv_out) + (q_out + h))
    if targets == "all":
        n_mats = 3 if shape.gated_mlp else 2
        per_layer += n_mats * rank * (h + shape.ffn)
    return float(shape.layers * per_layer)


def param_split(shape: TrainShape) -> tuple[float, float]:
    """(non-expert params, routed-expert params); expert parallelism shards only the second."""
    experts = shape.expert_params() if shape.is_moe else 0.0
    return shape.params_total() - experts, experts


def params_per_chip(shape: TrainShape, tp, pp, ep) -> np.ndarray:
    """Parameters each chip holds before ZeRO sharding: non-expert / (tp pp), experts / (ep tp pp)."""
    dense, experts = param_split(shape)
    tp, pp, ep = (np.asarray(x, dtype=float) for x in (tp, pp, ep))
    return dense / (tp * pp) + experts / (ep * tp * pp)


def model_state_bytes(shape: TrainShape, tp, pp, dp, ep, zero_stage, method: str = "full",
                      lora_rank: int = 16) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(weights, gradients, optimizer) bytes per chip under ZeRO stage 0-3 (3 = FSDP full shard)."""
    p_chip = params_per_chip(shape, tp, pp, ep)
    dp = np.asarray(dp, dtype=float)
    zero = np.asarray(zero_stage)
    shard_opt = np.where(zero >= 1, dp, 1.0)
    shard_grad = np.where(zero >= 2, dp, 1.0)
    shard_w = np.where(zero >= 3, dp, 1.0)
    if method == "full":
        weights = p_chip * WEIGHT_BYTES_PER_PARAM / shard_w
        grads = p_chip * GRAD_BYTES_PER_PARAM / shard_grad
        opt = p_chip * ADAM_STATE_BYTES_PER_PARAM / shard_opt
        return weights, grads, opt
    base_bpp = QLORA_BYTES_PER_PARAM if method == "qlora" else WEIGHT_BYTES_PER_PARAM
    adapters = lora_adapter_params(shape, lora_rank) / (np.asarray(tp, float) * np.asarray(pp, float))
    weights = p_chip * base_bpp / shard_w + adapters * WEIGHT_BYTES_PER_PARAM
    grads = adapters * GRAD_BYTES_PER_PARAM / shard_grad
    opt = adapters * ADAM_STATE_BYTES_PER_PARAM / shard_opt
    return weights, grads, opt


def activation_bytes_per_layer(shape: TrainShape, seq_len, micro_batch, tp, cp, recompute,
                               flash_attention: bool = True) -> np.ndarray:
    """Korthikanti et al. 2022 Table 2 with tensor + sequence parallelism; ``cp`` splits the sequence."""
    s = np.asarray(seq_len, dtype=float) / np.asarray(cp, dtype=float)
    b = np.asarray(micro_batch, dtype=float)
    t = np.asarray(tp, dtype=float)
    h, a = float(shape.hidden), float(shape.heads)
    sbh_t = s * b * h / t
    score = 0.0 if flash_attention else ACT_COEFF_SCORES * a * np.asarray(seq_len, float) / h
    rc = np.asarray(recompute)
    stored = np.where(rc == "none", ACT_COEFF_STORED + score, ACT_COEFF_STORED)
    stored = np.where(rc == "full", ACT_COEFF_FULL_RECOMPUTE, stored)
    return sbh_t * stored


def activation_bytes(shape: TrainShape, seq_len, micro_batch, tp, pp, cp, microbatches, recompute,
                     flash_attention: bool = True) -> np.ndarray:
    """Activation bytes on the busiest (first) pipeline stage plus the fp32 logits of the loss.

    The first stage of 1F1B holds ``min(pp, m)`` micro-batches of its ``L / pp`` layers.
    """
    pp = np.asarray(pp, dtype=float)
    in_flight = np.minimum(pp, np.asarray(microbatches, dtype=float))
    per_layer = activation_bytes_per_layer(shape, seq_len, micro_batch, tp, cp, recompute, flash_attention)
    layers_per_stage = shape.layers / pp
    full_recompute = np.asarray(recompute) == "full"
    # Under full recomputation one layer's full activations are rebuilt at a time during backward.
    rebuilt = np.where(full_recompute, activation_bytes_per_layer(
        shape, seq_len, micro_batch, tp, cp, "selective", flash_attention), 0.0)
    logits = (np.asarray(seq_len, float) / np.asarray(cp, float)) * np.asarray(micro_batch, float) \
        * shape.vocab * LOGIT_BYTES / np.asarray(tp, float)
    encoder = 0.0  # a speech model's encoder layers (on the first stage) hold their frames' activations too
    if shape.encoder_layers and shape.encoder_tokens:
        encoder = activation_bytes_per_layer(shape, shape.encoder_tokens, micro_batch, tp, 1, recompute,
                                             flash_attention) * shape.encoder_layers * in_flight
    return per_layer * layers_per_stage * in_flight + rebuilt + logits + encoder


def memory_parts(shape: TrainShape, *, seq_len, micro_batch, tp, pp, dp, ep, cp, zero_stage, recompute,
                 microbatches, method: str = "full", lora_rank: int = 16,
                 flash_attention: bool = True) -> MemoryParts:
    """All four parts per chip for every candidate layout."""
    w, g, o = model_state_bytes(shape, tp, pp, dp, ep, zero_stage, method, lora_rank)
    if shape.is_transformer:
        act = activation_bytes(shape, seq_len, micro_batch, tp, pp, cp, microbatches, recompute, flash_attention)
    else:
        # CNN / UNet: every layer output at 16-bit is kept for backward.
        elems = shape.activation_elements_per_sample or 0.0
        act = np.asarray(micro_batch, float) * elems * WEIGHT_BYTES_PER_PARAM + 0.0 * np.asarray(tp, float)
    return MemoryParts(*(np.broadcast_arrays(w, g, o, act)))
