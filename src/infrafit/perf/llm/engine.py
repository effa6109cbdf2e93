"""LLM inference: prefill and decode rooflines, continuous batching, TTFT/TPOT with queueing.

Everything works on numpy arrays of configurations (``Setup``): one model (``LLMShape``), many
accelerators x layouts x precisions x concurrencies at once.

The ladder (each step a small function below):

1. *Decode step* at batch B (one new token for each of B sequences): GEMMs read the dense weights
   once and the routed experts the batch touches (``E (1 - (1 - k/E)^B)`` per layer) and do
   ``2 x active params`` FLOPs per token (routed experts as grouped GEMMs of ``B k / D`` rows per
   touched expert); attention reads each sequence's KV cache and does
   ``attn_flops_per_context_token x context`` FLOPs. Each op class is a roofline (time = max of
   compute and memory), plus a fixed per-step overhead of the serving stack (kernel launches,
   scheduler), plus tensor-parallel all-reduces (2 per layer; Megatron-LM, Shoeybi et al. 2019) and
   expert-parallel all-to-alls (dispatch + combine per MoE layer; GShard, Lepikhin et al. 2020).
2. *Prefill* of L tokens: compute-bound GEMMs (``2 x active params x L``) and causal attention
   (``attn_flops x L^2 / 2``), plus the weights read once and the all-reduces of L activations.
3. *Continuous batching* in steady state at concurrency C (Orca, Yu et al. OSDI 2022; chunked
   prefill, Sarathi-Serve, Agrawal et al. OSDI 2024): each decode step carries C sequences, and
   C / OSL new requests per step on average, whose prefill compute is mixed into the steps. TPOT =
   decode step + amortised prefill share; TTFT = the prefill, the step it joins and the queueing
   delay of the prefills of other arriving requests (M/D/1 at the prefill utilisation; its p99 from
   the exponential tail of the wait, Kingman 1962).
"""

from __future__ import annotations

from dataclasses import dataclass, fields, replace

import numpy as np

from infrafit.perf.core import (
    P99_EXPONENTIAL_TAIL,
    Z99,
    all_to_all_time_s,
    expected_distinct_experts,
    md1_wait_s,
    one_hop_allreduce_time_s,
    ring_allreduce_time_s,
)
from infrafit.perf.llm.shape import LLMShape

ACTIVATION_BYTES = 2.0  # activations travel in 16-bit between GPUs (TensorRT-LLM, vLLM, SGLang defaults)
P99_TAIL = P99_EXPONENTIAL_TAIL


@dataclass(frozen=True)
class Setup:
    """Arrays (broadcastable) describing many configurations of one model."""

    peak_flops_per_s: np.ndarray  # per chip, at the GEMM compute precision
    attn_flops_per_s: np.ndarray  # per chip, at the attention compute precision (16-bit or fp8)
    memory_bytes_per_s: np.ndarray
    memory_bytes: np.ndarray
    link_bytes_per_s: np.ndarray  # per chip, one direction, of the link the TP group's all-reduces use
    link_latency_s: np.ndarray
    ep_link_bytes_per_s: np.ndarray  # per chip, one direction, of the link the replica's all-to-alls use
    ep_link_latency_s: np.ndarray  # (the scale-out fabric when the replica spans instances)
    pp_link_bytes_per_s: np.ndarray  # per chip, one direction, of the link between pipeline stages
    pp_link_latency_s: np.ndarray  # (the scale-out fabric when the stages sit on separate instances)
    tp: np.ndarray
    pp: np.ndarray
    adp: np.ndarray  # attention data-parallel groups inside one instance
    ep: np.ndarray
    weight_bytes_per_element: np.ndarray  # quantized weights, block scales included (workload.quant)
    kept_bytes_per_element: np.ndarray  # weights a quantized checkpoint keeps at 16 bits (= the above if none)
    own_scheme: np.ndarray  # 1 when the row runs the checkpoint's own precision (its kept tensors), else 0
    kv_bytes_per_element: np.ndarray
    eff_prefill_gemm: np.ndarray
    eff_decode_gemm: np.ndarray
    eff_memory: np.ndarray
    eff_attention: np.ndarray
    step_overhead_s: np.ndarray
    prefill_overhead_s: np.ndarray
    memory_reserve_fraction: np.ndarray
    prefill_burst: np.ndarray
    gemm_m_half: np.ndarray  # GEMM rows (tokens) at which a kernel reaches half its large-M efficiency
    expert_m_half: np.ndarray  # rows per expert at which a grouped (MoE expert) GEMM reaches half its efficiency
    token_budget: np.ndarray  # tokens one scheduler step may carry (chunked-prefill budget of the stack)
    moe_layer_overhead_s: np.ndarray  # per MoE layer of one prefill pass: routing, permutation, dispatch sync
    moe_token_overhead_s: np.ndarray  # per routed hidden element (token x k x hidden) per MoE layer of a prefill
    seq_overhead_s: np.ndarray  # per running sequence per decode step: scheduling, sampling, detokenisation
    one_hop: np.ndarray  # 1 where the TP group's fabric reaches every peer in one hop (switch, full mesh)
    state_bytes_per_element: np.ndarray  # width of the linear-attention recurrent state the stack keeps
    layer_overhead_s: np.ndarray  # per layer per decode step: norms, rotary, kernel tails and small kernels
    moe_decode_layer_overhead_s: np.ndarray  # per MoE layer per decode step: router, top-k, permute, un-permute
    sparse_layer_overhead_s: np.ndarray  # per indexed (sparse-attention) layer per decode step: indexer, top-k
    prefill_layer_overhead_s: np.ndarray  # per layer of a pass carrying prompt tokens when it runs eagerly
    eager_prefill: np.ndarray  # 1 where the stack runs such passes eagerly, 0 where it runs them as a graph

    @property
    def gpus(self) -> np.ndarray:
        return self.tp * self.pp * self.adp

    def take(self, index: np.ndarray) -> Setup:
        """The configurations at ``index`` (fields must already be full arrays)."""
        return replace(self, **{f.name: np.asarray(getattr(self, f.name))[index] for f in fields(self)})

    def broadcast(self) -> Setup:
        arrays = np.broadcast_arrays(*(np.asarray(getattr(self, f.name), dtype=float) for f in fields(self)))
        return replace(self, **{f.name: a for f, a in zip(fields(self), arrays, strict=True)})


def _expert_width(shape: LLMShape, s: Setup) -> np.ndarray:
    kept = (s.own_scheme > 0) & (not shape.experts_quantized)
    return np.where(kept, s.kept_bytes_per_element, s.weight_bytes_per_element)


def _kept(shape: LLMShape, s: Setup) -> tuple[np.ndarray, np.ndarray]:
    """(matmul parameters read per token, non-expert parameters held) kept at 16 bits by this row: the
    checkpoint's own scheme at its precision, the default (embedding, LM head, router) otherwise."""
    own = s.own_scheme > 0
    return (np.where(own, shape.kept_matmul_params, shape.default_kept_matmul_params),
            np.where(own, shape.kept_params, shape.default_kept_params))


def weight_bytes_per_gpu(shape: LLMShape, s: Setup) -> np.ndarray:
    """Weights held by one chip: dense part split over TP x PP, experts over all chips of the instance.
    Quantized tensors at ``weight_bytes_per_element`` (block scales included), the ones the checkpoint
    keeps at 16 bits (embedding, LM head, router, ...: ``_kept``) at ``kept_bytes_per_element``."""
    kept = _kept(shape, s)[1]
    quantized = shape.params_total - shape.expert_params_total - kept
    dense = (quantized * s.weight_bytes_per_element + kept * s.kept_bytes_per_element) / (s.tp * s.pp)
    experts = shape.expert_params_total * _expert_width(shape, s) / s.gpus
    return dense + experts


def kv_shards(shape: LLMShape, s: Setup) -> np.ndarray:
    """Ways one sequence's KV cache splits: TP up to the KV-head count (replicated beyond), times PP."""
    return np.minimum(s.tp, shape.kv_shards_max) * s.pp


def state_shards(shape: LLMShape, s: Setup) -> np.ndarray:
    """Ways one sequence's linear-attention state splits: TP up to the value-head count, times PP."""
    return np.minimum(s.tp, shape.state_shards_max) * s.pp


def state_bytes_per_seq(shape: LLMShape, s: Setup) -> np.ndarray:
    """One sequence's fixed recurrent state on one chip (0 without linear-attention layers).

    Gated DeltaNet and similar layers keep a ``d_k x d_v`` matrix per value head instead of a KV cache
    that grows with the context. It is stored at the stack's state width (SGLang float32 by default,
    vLLM the model's 16-bit dtype), not the KV-cache dtype, and split over the value heads by TP.
    """
    return shape.state_elements * s.state_bytes_per_element / state_shards(shape, s)


def cache_bytes_per_seq(shape: LLMShape, s: Setup, context_tokens: np.ndarray | float) -> np.ndarray:
    """KV cache of one sequence of ``context_tokens`` on one chip plus its fixed recurrent state."""
    kv = shape.kv_elements(context_tokens) * s.kv_bytes_per_element / kv_shards(shape, s)
    return kv + state_bytes_per_seq(shape, s)


def max_concurrency(
    shape: LLMShape, s: Setup, context_tokens: np.ndarray, prompt_tokens: np.ndarray | None = None,
    shared_tokens: float = 0.0, draft: LLMShape | None = None,
) -> np.ndarray:
    """Requests of ``context_tokens`` whose KV cache fits next to the weights (per instance).

    Free memory = (capacity - weights) x (1 - reserve): the KV pool takes a fraction of what the
    weights leave, the rest covering activations, CUDA graphs and fragmentation (TensorRT-LLM's
    ``kv_cache_free_gpu_memory_fraction`` default 0.9 of the memory left after loading the weights).
    With beam search the ``prompt_tokens`` prefix is stored once and shared by the beams, each beam
    keeping only its own generated tokens (PagedAttention copy-on-write block sharing, Kwon et al.
    SOSP 2023 section 4.4); without ``prompt_tokens`` every beam holds the whole context.
    """
    weights = weight_bytes_per_gpu(shape, s) + (0.0 if draft is None else weight_bytes_per_gpu(draft, s))
    free = (s.memory_bytes - weights) * (1.0 - s.memory_reserve_fraction)
    ctx = np.asarray(context_tokens, dtype=float)
    prefix = np.zeros_like(ctx) if prompt_tokens is None else np.minimum(np.asarray(prompt_tokens, float), ctx)
    beams = float(shape.beam_width)
    elements = beams * shape.kv_elements(ctx) - (beams - 1.0) * shape.kv_elements(prefix)
    # a cached shared prefix is held once (its blocks are shared, like the beams' prompt) and not per sequence
    shared = np.minimum(shared_tokens, ctx)
    elements = elements - shape.kv_elements(shared)
    per_seq = elements * s.kv_bytes_per_element / kv_shards(shape, s) + beams * state_bytes_per_seq(shape, s)
    if draft is not None:  # the draft model keeps its own KV cache of every sequence
        per_seq = per_seq + cache_bytes_per_seq(draft, s, ctx)
    free = free - shape.kv_elements(shared) * s.kv_bytes_per_element / kv_shards(shape, s)
    return np.floor(np.maximum(free, 0.0) / np.maximum(per_seq, 1e-9) * s.adp)


def _collectives_s(shape: LLMShape, s: Setup, tokens: np.ndarray, group_tokens: np.ndarray | None = None) -> np.ndarray:
    """TP all-reduces (2 per layer) of one attention group's tokens, EP all-to-alls (2 per MoE layer),
    over the layers of one pipeline stage (``1 / pp`` of them: a chip takes part only in its stage's).

    ``tokens`` is the instance's total; ``group_tokens`` what the busiest attention group holds
    (``tokens / adp`` when spread evenly, the default).
    """
    tokens_per_group = tokens / s.adp if group_tokens is None else group_tokens
    msg = tokens_per_group * shape.hidden_size * ACTIVATION_BYTES
    ring = ring_allreduce_time_s(msg, s.tp, s.link_bytes_per_s, s.link_latency_s)
    t_ar = np.where(s.one_hop > 0, one_hop_allreduce_time_s(msg, s.tp, s.link_bytes_per_s, s.link_latency_s), ring)
    t_tp = 2.0 * shape.num_layers / s.pp * t_ar
    moe_ranks = np.where(shape.is_moe, np.maximum(s.ep, s.adp), 1.0)
    per_rank = tokens / s.gpus * shape.experts_per_token * shape.hidden_size * ACTIVATION_BYTES
    if not shape.is_moe:  # no all-to-all (and a dense replica's data-parallel groups need no link between them)
        return t_tp
    t_ep = 2.0 * shape.num_moe_layers / s.pp * all_to_all_time_s(per_rank, moe_ranks, s.ep_link_bytes_per_s,
                                                          s.ep_link_latency_s)
    return t_tp + t_ep


def _gemm_parts(
    shape: LLMShape, s: Setup, tokens: np.ndarray, one_group: bool = False, step_tokens: np.ndarray | None = None
) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """``(dense_flops, routed_flops, dense_rows, expert_rows)`` per chip: FLOPs of ``tokens`` and the
    GEMM M dimension (token rows) of the dense matmuls and of one routed expert's grouped GEMM in the
    step that carries them (``step_tokens``, default ``tokens``: they run alone)."""
    groups = 1.0 if one_group else s.adp
    rows = tokens if step_tokens is None else step_tokens
    dense = 2.0 * tokens / groups * shape.dense_matmul_params / (s.tp * s.pp)
    routed = 2.0 * tokens * shape.experts_per_token * shape.expert_params * shape.num_moe_layers / s.gpus
    expert_rows = rows_per_touched_expert(shape, rows)
    return dense, routed, rows / groups, expert_rows


def rows_per_touched_expert(shape: LLMShape, tokens: np.ndarray) -> np.ndarray:
    """Token rows each expert a step touches multiplies: ``T k / D(T)``, ``D`` the expected distinct experts.

    A grouped GEMM launches tiles only for the experts that received tokens (CUTLASS grouped GEMM,
    DeepGEMM's masked/contiguous layouts, Triton fused-MoE's block-aligned expert segments), so the
    padding is per touched expert. At large batches every expert is touched and this is ``T k / E``;
    at decode-sized batches of fine-grained MoEs (DeepSeek-V3, 256 experts, top 8, 4 tokens: 30 experts
    touched) each touched expert sees about one row, not ``32 / 256``.
    """
    t = np.asarray(tokens, dtype=float)
    touched = expected_distinct_experts(shape.num_experts, shape.experts_per_token, t)
    return t * shape.experts_per_token / np.maximum(touched, 1.0)


def gemm_row_efficiency(rows: np.ndarray, m_half: np.ndarray) -> np.ndarray:
    """Fraction of a kernel's large-M efficiency reached with ``rows`` token rows: ``M / (M + M_half)``.

    Tensor-core GEMMs compute whole tiles of 64-256 rows (CUTLASS, cuBLASLt), so a GEMM of M rows
    costs about as much as ``M + M_half`` rows; the smooth form of that padding. It matters for the
    grouped GEMMs of MoE experts, which see ``tokens x k / D(tokens)`` rows per touched expert.
    """
    m = np.maximum(np.asarray(rows, dtype=float), 1e-9)
    return m / (m + m_half)


def gemm_compute_s(
    shape: LLMShape, s: Setup, tokens: np.ndarray, eff: np.ndarray, one_group: bool = False,
    step_tokens: np.ndarray | None = None,
) -> np.ndarray:
    """Compute-bound GEMM time of ``tokens`` on the busiest chip, each part at its M-dependent efficiency.

    Routed experts run as grouped GEMMs (CUTLASS grouped GEMM, DeepGEMM, Triton fused-MoE): each
    expert the step touches multiplies only the ``M_e = tokens x k / D(tokens)`` rows routed to it
    (uniform routing, ``rows_per_touched_expert``), in tiles of 64-128 rows per expert, so its
    efficiency is the dense GEMM's times ``M_e / (M_e + M_half_expert)``. Few experts at large batch
    (Mixtral, 8 experts top-2: ``M_e = tokens / 4``) run near the dense efficiency; many fine-grained
    experts at mid-sized batches (DeepSeek-V3, 256 top-8, 256 tokens: ``M_e`` = 8.0) pay for mostly
    empty tiles.
    """
    dense, routed, m_dense, m_expert = _gemm_parts(shape, s, tokens, one_group, step_tokens)
    t_dense = dense / (s.peak_flops_per_s * eff * gemm_row_efficiency(m_dense, s.gemm_m_half))
    eff_expert = eff * gemm_row_efficiency(m_expert, s.expert_m_half)
    t_routed = routed / (s.peak_flops_per_s * eff_expert)
    return t_dense + np.where(routed > 0, t_routed, 0.0)


def _gemm_weight_bytes_per_gpu(shape: LLMShape, s: Setup, tokens: np.ndarray) -> np.ndarray:
    kept = _kept(shape, s)[0]
    quantized = shape.dense_matmul_params - kept
    dense = (quantized * s.weight_bytes_per_element + kept * s.kept_bytes_per_element) / (s.tp * s.pp)
    touched = expected_distinct_experts(shape.num_experts, shape.experts_per_token, tokens)
    routed = shape.num_moe_layers * touched * shape.expert_params * _expert_width(shape, s) / s.gpus
    return dense + np.where(shape.is_moe, routed, 0.0)


def pipeline_hop_s(shape: LLMShape, s: Setup, tokens: np.ndarray) -> np.ndarray:
    """One stage-to-stage send of ``tokens`` hidden states (0 without pipeline parallelism).

    Each TP rank of a stage sends its ``1 / tp`` slice of the 16-bit activations to its peer in the next
    stage, which all-gathers them (vLLM ``send_tensor_dict(..., all_gather_group=tp_group)``): one hop
    latency plus ``tokens x hidden x 2 / tp`` bytes over the link between the stages (the scale-out
    fabric when they sit on separate instances). The receiving stage's all-gather over its own scale-up
    link is small next to that and not counted."""
    msg = np.asarray(tokens, dtype=float) * shape.hidden_size * ACTIVATION_BYTES / s.tp
    hop = s.pp_link_latency_s + msg / np.maximum(s.pp_link_bytes_per_s, 1.0)
    return np.where(s.pp > 1, hop, 0.0)


def decode_step(shape: LLMShape, s: Setup, batch: np.ndarray, context_tokens: np.ndarray) -> dict[str, np.ndarray]:
    """One decode step of ``batch`` sequences at mean ``context_tokens``: time and its terms.

    With ``pp`` pipeline stages the running sequences form ``pp`` micro-batches that keep every stage
    busy (vLLM's virtual engines, one scheduler step each): a sequence's next token needs its micro-batch
    to pass every stage, so the step is ``pp`` stage times at ``batch / pp`` sequences, each stage
    holding ``1 / pp`` of the layers, plus a stage-to-stage send per stage. Pipelining buys memory (a
    model too large for one scale-up domain), not speed: the weights one token reads are those of a
    TP-only replica, and every hop adds its latency.
    """
    seqs = batch * shape.beam_width
    # one micro-batch: what one stage works on at a time; with fewer sequences than stages each runs alone
    # (a stage never works on part of a sequence), so the step is still pp stage times of one sequence
    mb = np.maximum(seqs / s.pp, np.minimum(seqs, 1.0))
    gemm_bytes = _gemm_weight_bytes_per_gpu(shape, s, mb)
    t_gemm_c = gemm_compute_s(shape, s, mb, s.eff_decode_gemm)
    t_gemm_m = gemm_bytes / (s.memory_bytes_per_s * s.eff_memory)
    seqs_group = mb / s.adp
    # the KV cache is read; a linear-attention state is read and written back every step
    kv_bytes = seqs_group * (cache_bytes_per_seq(shape, s, context_tokens) + state_bytes_per_seq(shape, s))
    attn_flops = seqs_group * shape.decode_attn_flops(context_tokens) / (s.tp * s.pp)
    t_attn_c = attn_flops / (s.attn_flops_per_s * s.eff_attention)
    t_attn_m = kv_bytes / (s.memory_bytes_per_s * s.eff_memory)
    t_comm = _collectives_s(shape, s, mb) + pipeline_hop_s(shape, s, mb)
    t_gemm = np.maximum(t_gemm_c, t_gemm_m)
    t_attn = np.maximum(t_attn_c, t_attn_m)
    stages = s.pp * np.ones_like(t_gemm + t_attn + t_comm)
    # every stage runs its layers' small kernels for each micro-batch; the host's scheduler step (its
    # constant, and its work per sequence of each attention-DP group) runs once per micro-batch there is
    micro_batches = np.minimum(s.pp, np.maximum(seqs, 1.0))
    per_step = s.step_overhead_s + seqs_group * s.seq_overhead_s
    overhead = stages * (decode_fixed_s(shape, s) - s.step_overhead_s) + micro_batches * per_step
    return {
        "time_s": stages * (t_gemm + t_attn + t_comm) + overhead, "gemm_s": stages * t_gemm,
        "gemm_compute_s": stages * t_gemm_c, "gemm_memory_s": stages * t_gemm_m,
        "attention_s": stages * t_attn, "attention_compute_s": stages * t_attn_c, "kv_read_s": stages * t_attn_m,
        "collectives_s": stages * t_comm, "overhead_s": overhead,
    }


def decode_fixed_s(shape: LLMShape, s: Setup) -> np.ndarray:
    """Fixed time of one decode step outside the rooflines: a per-step constant (scheduler, sampling
    launch, CUDA-graph replay) plus a cost per layer (the small kernels each layer runs between its
    GEMMs: norms, rotary, residual adds, kernel tails; they scale with layers x kernels per layer)
    and an extra cost per MoE layer (router GEMM, top-k, token permutation and un-permutation) and per
    sparse-attention layer (DeepSeek Sparse Attention: the lightning indexer's projections, its fp8 scoring
    of every cached token and the top-k selection run before the attention kernel, several small kernels a
    layer that a dense-attention layer does not run; their FLOPs and key bytes are in the rooflines)."""
    moe = shape.num_moe_layers * s.moe_decode_layer_overhead_s * (1.0 if shape.is_moe else 0.0)
    sparse = shape.indexed_layers * s.sparse_layer_overhead_s
    return s.step_overhead_s + shape.num_layers / s.pp * s.layer_overhead_s + (moe + sparse) / s.pp


def prefill_compute_s(
    shape: LLMShape, s: Setup, tokens: np.ndarray, prompt_tokens: np.ndarray, one_group: bool = False,
    step_tokens: np.ndarray | None = None,
) -> np.ndarray:
    """Compute time of ``tokens`` prefill tokens of prompts of ``prompt_tokens`` (weights not counted).

    Causal attention over a prompt of L tokens touches ``L^2 / 2`` (query, key) pairs. This is the
    marginal cost of prefill mixed into decode steps (the weights are being read anyway). By default
    the prompts spread over the attention data-parallel groups (the instance's throughput cost);
    ``one_group`` is one prompt's latency: its dense part and attention run on one group while the
    routed experts still spread over every chip. ``step_tokens``: all tokens of the step the prefill
    rides in (decode tokens included), which set the GEMMs' M dimension.
    """
    groups = 1.0 if one_group else s.adp
    attn = tokens * shape.attn_flops(prompt_tokens / 2.0) / (s.tp * s.pp * groups)
    t_gemm = gemm_compute_s(shape, s, tokens, s.eff_prefill_gemm, one_group, step_tokens)
    t = t_gemm + attn / (s.attn_flops_per_s * s.eff_attention) + moe_token_s(shape, s, tokens)
    return t + _collectives_s(shape, s, tokens, tokens if one_group else None)


def prefill_alone_s(shape: LLMShape, s: Setup, prompt_tokens: np.ndarray, cached_tokens: float = 0.0) -> np.ndarray:
    """A prompt's prefill on an otherwise idle instance: compute vs weights read once, plus overhead;
    with pipeline stages, each stage in turn and a send between them.
    ``cached_tokens`` of it are a prefix-cache hit: only the rest is computed, attending to the whole prompt
    (mean context ``(cached + prompt) / 2`` over the new tokens)."""
    new = np.maximum(np.asarray(prompt_tokens, float) - cached_tokens, 1.0)
    t_c = prefill_compute_s(shape, s, new, new + 2.0 * cached_tokens, one_group=True)
    t_w = _gemm_weight_bytes_per_gpu(shape, s, new) / (s.memory_bytes_per_s * s.eff_memory)
    # the prompt passes the ``pp`` stages one after another, each with ``1 / pp`` of the layers
    stages = s.pp * (np.maximum(t_c, t_w) + pipeline_hop_s(shape, s, new))
    eager = prefill_passes(s, new) * eager_pass_s(shape, s)
    return stages + s.prefill_overhead_s + moe_prefill_overhead_s(shape, s) + eager


def prefill_passes(s: Setup, tokens: np.ndarray) -> np.ndarray:
    """Scheduler passes a prompt of ``tokens`` takes: at most the stack's ``token_budget`` prompt tokens a
    pass (chunked prefill; TensorRT-LLM ``max_num_tokens``, vLLM ``max_num_batched_tokens``)."""
    return np.maximum(np.ceil(np.asarray(tokens, dtype=float) / s.token_budget), 1.0)


def eager_pass_s(shape: LLMShape, s: Setup) -> np.ndarray:
    """Launch cost of one scheduler pass that carries prompt tokens, beyond a graph-replayed decode step.

    Stacks replay CUDA graphs for decode-only batches; TensorRT-LLM's PyTorch backend and SGLang run a pass
    with prompt tokens eagerly by default (their piecewise prefill graphs are opt-in), so the host launches
    each layer's 20-30 kernels one by one and the pass pays ``prefill_layer_overhead`` per layer (fitted per
    stack; stacks.csv ``prefill_pass_graphed``). vLLM V1 replays such passes as piecewise graphs and the
    compiled-graph stacks (XLA, Neuron, OpenVINO) dispatch no op from the host: 0 there.
    Every pipeline stage launches its own layers in parallel with the others, so this is the whole model's
    count once (what one pass adds to a prompt's latency)."""
    return shape.num_layers * s.prefill_layer_overhead_s * s.eager_prefill


def mixed_step_fraction(s: Setup, c: np.ndarray, osl: np.ndarray, prompt_tokens: np.ndarray) -> np.ndarray:
    """Fraction of decode steps that carry prompt tokens at ``C`` in flight: ``C / OSL`` prompts join per
    step, each over ``prefill_passes`` passes; arriving as a Poisson stream they leave a step empty with
    probability ``exp(-C / OSL x passes)`` (so two prompts in one step share its eager pass)."""
    return 1.0 - np.exp(-(c / osl) * prefill_passes(s, prompt_tokens))


def moe_token_s(shape: LLMShape, s: Setup, tokens: np.ndarray) -> np.ndarray:
    """Per-token work of the MoE layers outside the expert GEMMs: routing (top-k), gathering each token's
    hidden state into expert order and scattering the k results back (permute / un-permute). It moves
    ``k x hidden`` elements per token and MoE layer, so it is charged per routed element
    (``moe_token_overhead``, seconds per element, per stack) and spread over the replica's expert ranks:
    DeepSeek-V3 (top-8 of 7,168) routes 7x the elements of Mixtral (top-2 of 4,096) per token."""
    if not shape.is_moe:
        return np.zeros_like(np.asarray(tokens, dtype=float))
    ranks = np.maximum(s.ep, s.adp) * s.pp
    elements = shape.experts_per_token * shape.hidden_size  # hidden-state elements routed per token and layer
    return np.asarray(tokens, dtype=float) * shape.num_moe_layers * elements * s.moe_token_overhead_s / ranks


def moe_prefill_overhead_s(shape: LLMShape, s: Setup) -> np.ndarray:
    """Fixed cost of one prefill pass through the MoE layers, outside the GEMM rooflines.

    Under expert parallelism (or attention-DP ranks feeding shared experts) each MoE layer of a prefill
    runs a synchronised dispatch and combine whose fixed latency (hundreds of microseconds per layer for
    DeepEP's normal-mode kernels, DeepEP README) does not shrink with the prompt; prefill passes are not
    CUDA-graph captured. With TP-sharded experts there is no all-to-all and no such cost: routing and
    permutation are per token (``moe_token_s``). A stack trait, zero for dense models.
    """
    all_to_all = np.maximum(s.ep, s.adp) > 1
    return shape.num_moe_layers * s.moe_layer_overhead_s * np.where(shape.is_moe & all_to_all, 1.0, 0.0)


def _burst_wait_s(
    shape: LLMShape, s: Setup, c: np.ndarray, isl: np.ndarray, p_mixed: np.ndarray, step: np.ndarray
) -> np.ndarray:
    """Wait of a new prompt behind the bunched prompts of its closed-loop wave.

    A fraction ``prefill_burst`` of the other ``C - 1`` prompts is queued ahead of it: their compute
    (``p_mixed`` each) and the scheduler passes that carry them. One pass takes at most the stack's
    ``token_budget`` prompt tokens per attention data-parallel rank (TensorRT-LLM ``max_num_tokens``,
    vLLM ``max_num_batched_tokens``, SGLang ``chunked_prefill_size``), and each pass also pays the
    stack's fixed step cost and that of its MoE layers (routing, permutation, EP sync); its
    weight read overlaps the queued prompts' compute, which is counted already.
    """
    ahead = s.prefill_burst * (c - 1.0)
    passes = ahead * isl / (s.token_budget * s.adp)
    return ahead * p_mixed + passes * (s.step_overhead_s + moe_prefill_overhead_s(shape, s) + eager_pass_s(shape, s))


@dataclass(frozen=True)
class Serving:
    """Steady state of one instance at a concurrency (arrays)."""

    ttft_p50_s: np.ndarray
    ttft_p99_s: np.ndarray
    #: the mean over requests (what ``vllm bench``'s ``mean_ttft_ms`` and AIConfigurator's silicon rows report):
    #: the M/D/1 wait enters at its mean, not at its median (``ln 2`` of it)
    ttft_mean_s: np.ndarray
    tpot_p50_s: np.ndarray
    tpot_p99_s: np.ndarray
    requests_per_s: np.ndarray  # per instance, at the requested concurrency and arrival process
    output_tokens_per_s: np.ndarray  # per instance
    offline_requests_per_s: np.ndarray  # per instance: the engine's throughput bound (``offline_rate``)
    decode_step_s: np.ndarray
    prefill_share_s: np.ndarray
    prefill_utilisation: np.ndarray


@dataclass(frozen=True)
class Speculation:
    """Speculative decoding (``inference.speculative``): ``tokens`` drafted per step, each accepted with
    probability ``acceptance_rate``; ``draft`` is the draft model's shape (None for heads and n-grams) and
    ``head_layers`` the decoder layers of the model's own width one drafted token costs (1 for an MTP or
    EAGLE head, 0 for n-gram prompt lookup)."""

    tokens: int
    acceptance_rate: float
    draft: LLMShape | None = None
    head_layers: float = 0.0

    def tokens_per_step(self) -> float:
        """Expected tokens one verify step emits: ``(1 - a^(k+1)) / (1 - a)`` (Leviathan et al. 2023, eq. 1)."""
        a, k = self.acceptance_rate, self.tokens
        return (1.0 - a ** (k + 1)) / (1.0 - a)


def speculative_step_s(shape: LLMShape, s: Setup, batch: np.ndarray, context_tokens: np.ndarray,
                       spec: Speculation) -> np.ndarray:
    """Time per emitted token with speculation: one verify pass of ``k + 1`` tokens per sequence (the GEMMs
    see ``batch (k + 1)`` rows; the KV cache is read once per sequence, attention computes every query) plus
    ``k`` draft steps, over the expected tokens per step."""
    k = spec.tokens
    v = decode_step(shape, s, batch * (k + 1), context_tokens)
    attention = np.maximum(v["attention_compute_s"], v["kv_read_s"] / (k + 1))
    verify = v["gemm_s"] + attention + v["collectives_s"] + v["overhead_s"]
    if spec.draft is not None:
        draft = k * decode_step(spec.draft, s, batch, context_tokens)["time_s"]
    else:
        one = decode_step(shape, s, batch, context_tokens)
        draft = k * spec.head_layers * (one["time_s"] - one["overhead_s"]) / shape.num_layers
    return (verify + draft) / spec.tokens_per_step()


def serve(
    shape: LLMShape, s: Setup, concurrency: np.ndarray, input_tokens: np.ndarray, output_tokens: np.ndarray,
    closed_loop: np.ndarray | bool = True, cached_tokens: float = 0.0, speculation: Speculation | None = None,
) -> Serving:
    """Continuous batching at ``concurrency`` requests in flight per instance (closed loop).

    Requests beyond what the KV cache holds wait for a slot (a whole request lifetime per
    ``C / C_max`` round). Closed-loop clients that start together stay bunched, so a new prompt
    also waits for a fraction ``prefill_burst`` of the other in-flight prompts' prefill (0 when the
    arrivals are perfectly staggered, 1 when they all arrive at once; a stack's scheduling trait).
    ``closed_loop`` False: Poisson arrivals (MLPerf LoadGen's Server scenario), which do not bunch;
    their queueing is the M/D/1 wait alone.

    ``offline_requests_per_s`` is the engine's throughput at C in flight with the batch kept full
    from a standing queue (MLPerf Offline: every sample is issued at once): each of the C slots turns
    over once per ``prefill + step + (OSL - 1) TPOT``, the prompts' prefill compute already inside
    TPOT. No queueing delay is charged: a queued prompt waits outside the batch (in LoadGen's queue)
    while the slots keep working, and the start-up wave (all C prompts at once) is paid once per run
    of thousands of samples, not once per request. ``requests_per_s`` (Little's law on the clients'
    view, ``C / (TTFT + (OSL - 1) TPOT)``) never exceeds it: under any arrival process the same engine
    processes at most its saturated throughput (work conservation), so a Poisson Server rate cannot
    beat the Offline rate of the same configuration.
    """
    c_req = np.maximum(np.asarray(concurrency, dtype=float), 1.0)
    osl = np.maximum(np.asarray(output_tokens, dtype=float), 1.0)
    isl = np.asarray(input_tokens, dtype=float)
    draft = speculation.draft if speculation is not None else None
    c_max = np.maximum(max_concurrency(shape, s, isl + osl, isl, cached_tokens, draft), 1.0)
    c = np.minimum(c_req, c_max)
    if speculation is None:
        step = decode_step(shape, s, c, isl + osl / 2.0)["time_s"]
    else:
        step = speculative_step_s(shape, s, c, isl + osl / 2.0, speculation)
    p_alone = prefill_alone_s(shape, s, isl, cached_tokens)
    # A prompt mixed into the running batch shares its step's GEMMs with the C decode tokens and the
    # other prompts of that step, up to the stack's per-step token budget (chunked prefill). A prefix-cache
    # hit computes only the prompt's uncached tokens.
    new = np.maximum(isl - cached_tokens, 1.0)
    step_tokens = c + np.minimum(np.maximum(new, c / osl * new), s.token_budget)
    p_mixed = prefill_compute_s(shape, s, new, new + 2.0 * cached_tokens, step_tokens=np.where(c > 1, step_tokens, new))
    # C / OSL prompts join the batch per step; at C = 1 there is no other request to mix with.
    # and the steps carrying them run eagerly (``eager_pass_s``): a fraction ``mixed_step_fraction`` pays it. A
    # dense model's data-parallel groups schedule apart, so a group sees its own C / adp; a MoE's expert layers
    # synchronise every group, so any group's prompt stalls them all
    groups = np.where(shape.is_moe, 1.0, s.adp)
    eager = mixed_step_fraction(s, c / groups, osl, new) * eager_pass_s(shape, s)
    share = np.where(c > 1, (c / osl) * p_mixed + eager, 0.0)
    tpot = step + share
    lifetime = p_alone + step + (osl - 1.0) * tpot
    rate = c / lifetime  # the engine's throughput at C in flight (``offline_rate``)
    rho = np.where(c > 1, rate * p_mixed * (c - 1) / c, 0.0)
    wait = md1_wait_s(rho, p_mixed)
    burst = np.where(closed_loop, _burst_wait_s(shape, s, c, new, p_mixed, step), 0.0)
    slot_wait = np.maximum(c_req / c_max - 1.0, 0.0) * lifetime
    # the M/D/1 wait is ~exponential past the service: its median is ln 2 of its mean
    ttft50 = p_alone + np.where(c > 1, 0.5 * step, 0.0) + wait * np.log(2.0) + burst + slot_wait
    ttft_mean = p_alone + np.where(c > 1, 0.5 * step, 0.0) + wait + burst + slot_wait
    ttft99 = p_alone + np.where(c > 1, step, 0.0) + wait * P99_TAIL + 2.0 * burst + slot_wait
    # Little's law on the clients' view, never above what the engine processes (see ``offline_rate``)
    engine = rate
    rate = np.minimum(c_req / (ttft50 + (osl - 1.0) * tpot), engine)
    # per-request TPOT varies with how many prompts land during its OSL steps (Poisson count)
    jitter = Z99 * np.sqrt(np.maximum(c / osl, 0.0) / osl) * p_mixed
    return Serving(
        ttft_p50_s=ttft50, ttft_p99_s=ttft99, ttft_mean_s=ttft_mean, tpot_p50_s=tpot, tpot_p99_s=tpot + jitter,
        requests_per_s=rate, output_tokens_per_s=rate * osl, offline_requests_per_s=engine, decode_step_s=step,
        prefill_share_s=share, prefill_utilisation=rho,
    )


def static_batch_e2e_s(
    shape: LLMShape, s: Setup, batch: np.ndarray, input_tokens: np.ndarray, output_tokens: np.ndarray
) -> np.ndarray:
    """End-to-end time of one static batch: prefill all prompts together, then ``osl`` decode steps."""
    b = np.maximum(np.asarray(batch, dtype=float), 1.0)
    isl = np.asarray(input_tokens, dtype=float)
    osl = np.maximum(np.asarray(output_tokens, dtype=float), 1.0)
    t_c = prefill_compute_s(shape, s, b * isl, isl)
    t_w = _gemm_weight_bytes_per_gpu(shape, s, b * isl) / (s.memory_bytes_per_s * s.eff_memory)
    prefill = np.maximum(t_c, t_w) + s.prefill_overhead_s + prefill_passes(s, b * isl) * eager_pass_s(shape, s)
    return prefill + (osl - 1.0) * decode_step(shape, s, b, isl + osl / 2.0)["time_s"]
