"""Training step time over arrays of parallel layouts: compute, memory traffic, collectives, bubble.

One call evaluates every candidate layout (numpy struct-of-arrays). Per optimizer step:

``t_step = (t_compute + t_traffic + t_tp_exposed) x (1 + bubble) + t_dp_exposed + t_optimizer + t_overhead``

* ``t_compute`` = executed FLOPs / (chips x peak x efficiency); efficiency from the profile times a
  GEMM-size law ``w / (w + w_half)``, ``w = hidden / sqrt(tp)``.
* ``t_traffic``: element-wise ops stream the activations through HBM (bytes ~ Korthikanti's
  34 s b h per layer, times a fitted traffic factor), at the chip's memory bandwidth.
* Tensor parallel: 4 all-reduce-equivalents per layer per micro-batch (2 forward, 2 backward;
  Shoeybi et al. 2019, sec. 3; with sequence parallelism the same volume as reduce-scatter +
  all-gather, Korthikanti 2022 sec. 4.2.2); ring volume ``2 (n-1)/n x message`` per chip (Patarasuk &
  Yuan 2009). Expert parallel: 2 all-to-alls forward (dispatch, combine), 2 backward per MoE layer
  (Lepikhin et al. 2020, GShard sec. 2.2), each moving tokens x hidden x 2 B x top-k x capacity
  factor, the (ep-1)/ep share leaving the chip, over the scale-up link when ep x tp fits the domain,
  else over the scale-out network; full recomputation repeats the forward pair.
* MoE load imbalance: routed-expert GEMMs are sized for ``capacity factor x`` the mean load per
  expert (Switch Transformer, Fedus et al. 2022 JMLR, sec. 2.2 and Table 1: capacity factor 1.25;
  GShard sec. 2.2 likewise caps expert capacity above the mean); a dropless router runs at the pace of
  its most-loaded expert, the same effect. Routed-expert FLOPs are executed ``MOE_CAPACITY_FACTOR``
  times (model FLOPs are not).
  Context parallel: ring attention passes K and V around the ring (Liu et al. 2023).
* Pipeline bubble of 1F1B with ``v`` interleaved stages: ``(pp - 1) / (v m)`` (Narayanan et al. 2021,
  sec. 2.2).
* Data parallel gradient sync: reduce-scatter + all-gather (= all-reduce volume), hierarchical: inside
  the scale-up domain at its bandwidth, across domains at the scale-out bandwidth with the message
  split over the chips of the domain; ZeRO-3 adds a weight all-gather per forward and per backward
  (ZeRO sec. 7: 1.5x the data-parallel volume). It overlaps one micro-batch of compute.
* Optimizer: Adam reads and writes master weights, moments and gradients (about 32 bytes/param) at
  memory bandwidth on the chip's shard.
* Power-limited clocks: a chip cannot draw more than its board power (TDP), so sustained tensor
  throughput is at most ``TDP / energy per FLOP`` (DVFS lowers clocks until the power fits; Horowitz
  2014 "Computing's energy problem", ISSCC; NVIDIA H100 PCIe runs the SXM die at 350 W instead of
  700 W). ``t_compute = max(FLOPs / (peak x efficiency), FLOPs x e / TDP)`` per chip, with ``e`` the
  energy per dense bf16 FLOP of the chip generation (process node); an fp8 FLOP costs
  ``peak_bf16 / peak_fp8`` of it (same datapath width, half the operand bits).
* QLoRA dequantisation (``dequant_s``): the frozen base weights are stored in 4-bit NF4 with double
  quantisation (Dettmers et al. 2023, sec. 3) and every GEMM runs at the 16-bit compute dtype, so
  before each use a kernel reads the 4-bit weights (4.127 bits/param with the quantisation constants)
  and writes a 16-bit copy that the GEMM then reads as a bf16 LoRA would (bitsandbytes
  ``MatMul4Bit``: ``dequantize_4bit`` in the forward and again in the backward for the input
  gradient). Per micro-batch: 2 passes over the chip's quantised weights (3 with full recomputation),
  each ``max(bytes / HBM bandwidth, ops / vector FLOP/s)`` with ``DEQUANT_OPS_PER_WEIGHT`` ops per
  weight. Not fitted: it is counted with the element-wise traffic.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from infrafit.catalog.model import PCIE_BOX_CHIPS, peer_link
from infrafit.perf.training.memory import (
    ACT_COEFF_STORED,
    lora_adapter_params,
    params_per_chip,
)
from infrafit.perf.training.profile import TrainingProfile, model_class_of
from infrafit.perf.training.shape import TrainShape
from infrafit.units import BITS_PER_BYTE, GBIT

#: Bytes read + written per trainable parameter by one Adam update (fp32 w, m, v read and written,
#: bf16 grad read, bf16 weight copy written): 3 x 4 x 2 + 2 + 2 + 4 = 32.
OPTIMIZER_BYTES_PER_PARAM = 32.0
ACTIVATION_BYTES = 2.0  # bf16/fp16 activations on the wire
#: Expert capacity over the mean tokens per expert (Switch Transformer, Fedus et al. 2022, sec. 2.2,
#: Table 1: 1.25 in training); the padding (or the straggler expert of a dropless router) is executed.
MOE_CAPACITY_FACTOR = 1.25
#: NF4 dequantisation work per weight on the vector units: extract the 4-bit code (shift, mask),
#: look up the 16-entry NF4 table, multiply by the block absmax (the double-quantised absmax is
#: itself decoded once per 64-weight block, negligible per weight); bitsandbytes kDequantizeBlockwise.
DEQUANT_OPS_PER_WEIGHT = 4.0
#: Bytes moved per base weight per dequantisation: read NF4 + constants (4.127 bits), write 2 B.
DEQUANT_BYTES_PER_WEIGHT = 4.127 / 8.0 + 2.0


#: Link speed assumed when the catalog gives neither a scale-up link nor a host interface for a
#: chip: 8 Gb/s, below a single 10 GbE port, so an unknown link never makes a layout look cheap.
UNKNOWN_LINK_BYTES_PER_S = 8 * GBIT / BITS_PER_BYTE


@dataclass(frozen=True)
class Chip:
    """The accelerator numbers the step model needs (SI)."""

    generation: str
    peak_flops_per_s: float
    memory_bytes: float
    memory_bytes_per_s: float
    scaleup_bytes_per_s: float
    scaleup_domain_size: int
    scaleout_bytes_per_s: float
    tdp_w: float = 0.0  # board power; 0 = not published (no power cap)
    bf16_peak_flops_per_s: float = 0.0  # to express FLOPs of any precision in bf16-equivalent energy
    vector_flops_per_s: float = 0.0  # fp32 (non-tensor) peak: element-wise work such as dequantisation

    @classmethod
    def from_accelerator(cls, acc, precision: str) -> Chip:
        """From a catalog ``Accelerator``, links by the catalog's one rule (``Accelerator.peer_link``):
        the scale-up fabric inside its domain, else PCIe through the host bridge inside a box, else the
        scale-out network; across boxes the scale-out network, else the box's own peer link."""
        pair = peer_link(acc, 2)
        up = pair[0] if pair is not None else UNKNOWN_LINK_BYTES_PER_S
        across = peer_link(acc, max(int(acc.scaleup_domain_size or 1), PCIE_BOX_CHIPS) + 1)
        out = across[0] if across is not None else up
        peak = float(acc.peak(precision))
        bf16 = float(acc.peak("bf16") or acc.peak("fp16") or peak)
        return cls(str(acc.generation), peak, float(acc.memory_bytes),
                   float(acc.memory_bytes_per_s), up, max(1, int(acc.scaleup_domain_size or 1)), out,
                   _finite(getattr(acc, "tdp_w", 0.0)), bf16, _finite(acc.peak("fp32")))


def _finite(x) -> float:
    try:
        x = float(x)
    except (TypeError, ValueError):
        return 0.0
    return x if np.isfinite(x) and x > 0 else 0.0


def _ring(n, message_bytes):
    """Bytes each chip sends in a ring all-reduce of ``message_bytes`` over ``n`` chips."""
    n = np.asarray(n, dtype=float)
    return 2.0 * (n - 1.0) / np.maximum(n, 1.0) * message_bytes


def method_flop_factor(method: str) -> float:
    """Matmul FLOPs relative to full training: LoRA/QLoRA skip the weight-gradient GEMMs.

    Forward 2N + activation-gradient 2N of the 6N (Hu et al. 2021 keep the frozen weights' gradients
    out; the adapter GEMMs are r/h of the rest and ignored): 4/6 = 2/3.
    """
    return 1.0 if method == "full" else 2.0 / 3.0


def executed_flops_per_token(shape: TrainShape, seq_len: float, method: str, recompute) -> np.ndarray:
    """Executed FLOPs per token: matmuls x method factor, attention fwd+bwd (3x fwd), recomputation."""
    matmul_fwd = 2.0 * shape.matmul_params_active()
    # causal decoders attend on average to half the sequence; encoders attend to all of it
    attn_fwd = shape.attention_flops_fwd_per_token(seq_len / 2.0 if shape.kind == "decoder" else seq_len)
    # imbalance: routed experts run capacity-factor-padded GEMMs
    matmul_fwd = matmul_fwd + (MOE_CAPACITY_FACTOR - 1.0) * routed_expert_matmul_fwd_per_token(shape)
    base = 3.0 * matmul_fwd * method_flop_factor(method) + 3.0 * attn_fwd
    rc = np.asarray(recompute)
    extra = np.where(rc == "full", matmul_fwd + attn_fwd, 0.0)  # one more forward pass
    return base + extra


def executed_attention_flops_per_token(shape: TrainShape, seq_len: float, recompute) -> np.ndarray:
    """The attention-score part of ``executed_flops_per_token`` (QK^T and AV, fwd + bwd, recompute).

    8-bit recipes quantize the linear layers only; the fused attention kernel stays in bf16
    (Transformer Engine FP8 primer: fp8 for Linear/LayerNormLinear GEMMs; DeepSeek-AI 2024,
    DeepSeek-V3 report sec. 3.3.1: attention kept in bf16/fp32), so it runs at the bf16 peak."""
    attn_fwd = shape.attention_flops_fwd_per_token(seq_len / 2.0 if shape.kind == "decoder" else seq_len)
    return 3.0 * attn_fwd + np.where(np.asarray(recompute) == "full", attn_fwd, 0.0)


def routed_expert_matmul_fwd_per_token(shape: TrainShape) -> float:
    """Forward FLOPs per token in the routed experts: 2 x MoE layers x top-k x expert MLP weights."""
    if not shape.is_moe:
        return 0.0
    moe_layers = max(0, shape.layers - shape.first_dense_layers)
    return 2.0 * moe_layers * shape.experts_per_token * shape.mlp_params(shape.moe_ffn or shape.ffn)


@dataclass(frozen=True)
class StepTimes:
    """Per-step seconds of each term (arrays over candidates)."""

    compute_s: np.ndarray
    traffic_s: np.ndarray
    tp_comm_s: np.ndarray
    bubble_s: np.ndarray
    dp_comm_s: np.ndarray
    optimizer_s: np.ndarray
    overhead_s: np.ndarray

    @property
    def total_s(self) -> np.ndarray:
        return (self.compute_s + self.traffic_s + self.tp_comm_s + self.bubble_s + self.dp_comm_s
                + self.optimizer_s + self.overhead_s)

    def shares(self, i: int = 0) -> dict[str, float]:
        total = float(np.atleast_1d(self.total_s)[i])
        names = ("compute_s", "traffic_s", "tp_comm_s", "bubble_s", "dp_comm_s", "optimizer_s", "overhead_s")
        return {n.replace("_s", "_share"): float(np.atleast_1d(getattr(self, n))[i]) / total for n in names}


def _dp_sync_s(chip: Chip, grad_bytes, dp, inner):
    """Hierarchical ring: inside the domain over ``k`` chips, across domains over ``dp / k`` groups."""
    dp = np.asarray(dp, dtype=float)
    k = np.clip(np.floor(chip.scaleup_domain_size / np.asarray(inner, float)), 1.0, dp)
    groups = np.maximum(dp / k, 1.0)
    intra = _ring(k, grad_bytes) / chip.scaleup_bytes_per_s
    inter = _ring(groups, grad_bytes / k) / chip.scaleout_bytes_per_s
    return intra + inter


@dataclass(frozen=True)
class RawTerms:
    """Step terms at unit profile constants (arrays over candidates); ``combine`` applies the profile."""

    compute_unit_s: np.ndarray  # executed FLOPs / (chips x peak): the compute time at efficiency 1
    gemm_width: np.ndarray  # hidden / sqrt(tp); inf for non-transformers (no GEMM-size penalty)
    traffic_unit_s: np.ndarray  # stored-activation bytes / (chips x HBM bandwidth)
    mp_comm_raw_s: np.ndarray  # tensor/context/expert-parallel traffic, all of it
    bubble_factor: np.ndarray  # (pp - 1) / (v m)
    dp_sync_s: np.ndarray  # gradient (and ZeRO-3 weight) collectives per step
    microbatches: np.ndarray
    optimizer_s: np.ndarray
    power_unit_s: np.ndarray  # bf16-equivalent FLOPs / (chips x TDP): seconds per J/FLOP of energy; 0 = no cap
    dequant_s: np.ndarray  # QLoRA: dequantising the 4-bit base weights before each GEMM (0 otherwise)


@dataclass(frozen=True)
class Constants:
    """The profile constants one step needs (scalars or per-candidate arrays)."""

    efficiency: float | np.ndarray
    gemm_half_width: float | np.ndarray
    traffic_factor: float | np.ndarray
    mp_exposed: float | np.ndarray
    dp_overlap: float | np.ndarray
    step_overhead_s: float | np.ndarray
    energy_per_flop_j: float | np.ndarray = 0.0

    @classmethod
    def from_profile(cls, profile: TrainingProfile, generation: str, model_class: str) -> Constants:
        return cls(profile.compute_efficiency(generation, model_class), profile.get("gemm_half_width"),
                   profile.get("activation_traffic_factor", generation, model_class),
                   profile.get("tp_comm_exposed_fraction"), profile.get("dp_overlap_fraction"),
                   profile.get("step_overhead_s", generation, model_class),
                   profile.get("energy_per_flop_j", generation))


def combine(raw: RawTerms, k: Constants) -> StepTimes:
    """Apply the profile constants to the raw terms (vectorised over candidates or rows)."""
    finite = np.isfinite(raw.gemm_width)
    width = np.where(finite, raw.gemm_width, 1.0)
    size = np.where(finite, width / (width + k.gemm_half_width), 1.0)
    compute = np.maximum(raw.compute_unit_s / (k.efficiency * size), raw.power_unit_s * k.energy_per_flop_j)
    traffic = raw.traffic_unit_s * k.traffic_factor + raw.dequant_s
    mp = raw.mp_comm_raw_s * k.mp_exposed
    bubble = (compute + traffic + mp) * raw.bubble_factor
    hide = k.dp_overlap * (compute + traffic + mp) / raw.microbatches
    dp_exposed = np.maximum(raw.dp_sync_s - hide, 0.0)
    overhead = np.zeros_like(compute) + k.step_overhead_s
    return StepTimes(*np.broadcast_arrays(compute, traffic, mp, bubble, dp_exposed, raw.optimizer_s, overhead))


def raw_terms(shape: TrainShape, chip: Chip, *, seq_len: float, global_batch: float, method: str, tp, pp, dp,
              ep, cp, micro_batch, vpp, zero_stage, recompute, lora_rank: int = 16) -> RawTerms:
    """Profile-free step terms for every candidate (arrays broadcast together)."""
    tp, pp, dp, ep, cp, mbs, vpp = (np.asarray(x, dtype=float) for x in (tp, pp, dp, ep, cp, micro_batch, vpp))
    chips = tp * pp * dp * cp
    m = global_batch / (dp * mbs)  # micro-batches per pipeline per step
    # attention score FLOPs: flash attention runs them at bf16 whatever the GEMM precision
    attn: float | np.ndarray = 0.0
    if shape.is_transformer:
        width: np.ndarray = shape.hidden / np.sqrt(tp)
        flops = global_batch * (seq_len * executed_flops_per_token(shape, seq_len, method, recompute)
                                + 3.0 * shape.encoder_flops_fwd_per_sample * method_flop_factor(method))
        attn = global_batch * seq_len * executed_attention_flops_per_token(shape, seq_len, recompute)
        act_bytes = global_batch * (seq_len * shape.layers + shape.encoder_tokens * shape.encoder_layers) \
            * shape.hidden * ACT_COEFF_STORED
    else:
        width = np.full_like(np.asarray(tp, float), np.inf)
        flops = np.asarray(global_batch,
                           float) * 3.0 * float(shape.flops_per_sample_fwd or 0.0) * method_flop_factor(method)
        act_bytes = global_batch * float(shape.activation_elements_per_sample or 0.0) * ACTIVATION_BYTES
    bf16_peak = chip.bf16_peak_flops_per_s or chip.peak_flops_per_s
    attn_peak = min(bf16_peak, chip.peak_flops_per_s)
    compute_unit = ((flops - attn) / chip.peak_flops_per_s + attn / attn_peak) / chips
    bf16_flops = (flops - attn) * bf16_peak / chip.peak_flops_per_s + attn
    power_unit = bf16_flops / (chips * chip.tdp_w) if chip.tdp_w > 0 else np.zeros_like(compute_unit)
    traffic_unit = act_bytes / (chips * chip.memory_bytes_per_s)
    mp_raw = _model_parallel_comm_s(shape, chip, seq_len, mbs, m, tp, pp, ep, cp, recompute)
    trainable = _trainable_params_chip(shape, tp, pp, ep, method, lora_rank)
    zero = np.asarray(zero_stage)
    volume = np.where(zero >= 3, 1.5, 1.0)
    if method != "full":  # frozen base weights still gathered under ZeRO-3, adapters synced
        volume = volume + np.where(zero >= 3, params_per_chip(shape, tp, pp, ep) / np.maximum(trainable, 1.0), 0)
    sync = _dp_sync_s(chip, trainable * ACTIVATION_BYTES * volume, dp, tp * pp * cp)
    shard = np.where(zero >= 1, dp, 1.0)
    optimizer = trainable / shard * OPTIMIZER_BYTES_PER_PARAM / chip.memory_bytes_per_s
    bubble = (pp - 1.0) / (vpp * m)
    dequant = dequant_s(shape, chip, method, tp, pp, ep, m, recompute)
    return RawTerms(*np.broadcast_arrays(compute_unit, width, traffic_unit, mp_raw, bubble, sync, m, optimizer,
                                         power_unit, dequant))


def quantized_params_per_chip(shape: TrainShape, tp, pp, ep) -> np.ndarray:
    """Base weights QLoRA stores in 4 bits on one chip: the transformer blocks' linear layers (the
    embedding and LM head stay 16-bit: bitsandbytes skips ``lm_head``), experts split by ``ep``."""
    dense, experts = shape.params_total() - shape.embedding_params(), 0.0
    if shape.is_moe:
        experts = shape.expert_params()
        dense -= experts
    tp, pp, ep = (np.asarray(x, dtype=float) for x in (tp, pp, ep))
    return np.maximum(dense, 0.0) / (tp * pp) + experts / (ep * tp * pp)


def dequant_s(shape: TrainShape, chip: Chip, method: str, tp, pp, ep, microbatches, recompute) -> np.ndarray:
    """Seconds per step the busiest chip spends dequantising QLoRA's 4-bit base weights (module doc)."""
    if method != "qlora" or not shape.is_transformer:
        return np.zeros(np.broadcast(tp, pp).shape)
    weights = quantized_params_per_chip(shape, tp, pp, ep)
    vector = chip.vector_flops_per_s or chip.peak_flops_per_s
    per_pass = np.maximum(weights * DEQUANT_BYTES_PER_WEIGHT / chip.memory_bytes_per_s,
                          weights * DEQUANT_OPS_PER_WEIGHT / vector)
    passes = np.where(np.asarray(recompute) == "full", 3.0, 2.0)
    return per_pass * passes * np.asarray(microbatches, dtype=float)


def step_times(shape: TrainShape, chip: Chip, profile: TrainingProfile, **kwargs) -> StepTimes:
    """Seconds per optimizer step for every candidate (``raw_terms`` keyword arguments)."""
    raw = raw_terms(shape, chip, **kwargs)
    cls = model_class_of(shape.kind, kwargs.get("method", "full"))
    return combine(raw, Constants.from_profile(profile, chip.generation, cls))


def _trainable_params_chip(shape: TrainShape, tp, pp, ep, method: str, lora_rank: int):
    if method == "full":
        return params_per_chip(shape, tp, pp, ep)
    return lora_adapter_params(shape, lora_rank) / (tp * pp)


def _model_parallel_comm_s(shape: TrainShape, chip: Chip, seq_len, mbs, m, tp, pp, ep, cp, recompute):
    """Tensor-, context- and expert-parallel traffic per step on the busiest stage (seconds)."""
    if not shape.is_transformer:
        return np.zeros(np.broadcast(tp, pp).shape)
    layers = shape.layers / pp
    s_local = seq_len / cp
    msg = mbs * s_local * shape.hidden * ACTIVATION_BYTES
    passes = np.where(np.asarray(recompute) == "full", 6.0, 4.0)  # recompute repeats the forward pair
    tp_bw = np.where(tp <= chip.scaleup_domain_size, chip.scaleup_bytes_per_s, chip.scaleout_bytes_per_s)
    tp_s = layers * m * passes * _ring(tp, msg) / tp_bw
    kv_bytes = mbs * s_local * 2.0 * shape.kv_heads * shape.head_dim * ACTIVATION_BYTES / tp
    cp_bw = np.where(tp * cp <= chip.scaleup_domain_size, chip.scaleup_bytes_per_s, chip.scaleout_bytes_per_s)
    cp_s = layers * m * 3.0 * (cp - 1.0) * kv_bytes / cp_bw  # K,V forward once, grads back twice
    ep_s = 0.0
    if shape.is_moe:
        moe_frac = max(0, shape.layers - shape.first_dense_layers) / shape.layers
        a2a = msg / tp * shape.experts_per_token * MOE_CAPACITY_FACTOR * (ep - 1.0) / ep
        ep_bw = np.where(ep * tp <= chip.scaleup_domain_size, chip.scaleup_bytes_per_s,
                         chip.scaleout_bytes_per_s)
        ep_s = layers * moe_frac * m * passes * a2a / ep_bw
    return tp_s + cp_s + ep_s
