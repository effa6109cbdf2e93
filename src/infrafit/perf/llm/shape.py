"""The few numbers of a decoder LLM that its inference cost depends on.

``LLMShape`` condenses a ``ModelArch`` (``infrafit.workload.arch``) into what the rooflines need:
parameters split into the part every token reads (attention, dense FFN, shared experts, LM head)
and the routed experts (read only when some token of the batch picks them), the KV cache per token,
and the attention FLOPs per token per context token. Every figure comes from the model library's
own ladder (``params_total``, ``expert_params_total``, ``matmul_params_per_token_active``,
``kv_bytes``, ``flops_per_token_parts``), so windows, MLA, sparse indexers and linear attention are
counted once, there.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import numpy as np

from infrafit.workload.quant import kept_classes


@dataclass(frozen=True)
class LLMShape:
    model_id: str
    num_layers: int
    hidden_size: int
    params_total: float
    #: matmul parameters every token reads (attention, dense FFN, shared experts, router, LM head)
    dense_matmul_params: float
    #: parameters of one routed expert in one layer (0 for dense models)
    expert_params: float
    num_moe_layers: int
    num_experts: int
    experts_per_token: int
    #: ways the KV cache splits under tensor parallelism (kv heads; 1 for MLA's shared latent)
    kv_shards_max: int
    #: KV-cache elements of one sequence of ``context`` tokens (softmax layers; windows applied)
    kv_elements_fn: Callable[[np.ndarray], np.ndarray]
    #: attention FLOPs of one token attending to ``context`` tokens (scores, values, indexers)
    attn_flops_fn: Callable[[np.ndarray], np.ndarray]
    beam_width: int = 1
    #: the same for a decode token (MLA attends in the weight-absorbed form); None: ``attn_flops_fn``
    decode_attn_flops_fn: Callable[[np.ndarray], np.ndarray] | None = None
    #: query heads per layer (attention tensor parallelism must divide it); 0 when unknown
    attention_heads: int = 0
    #: multi-head latent attention (one shared latent per token: TP does not split the KV cache)
    is_mla: bool = False
    #: layers whose attention is chosen by a lightning indexer (DeepSeek Sparse Attention: index_topk)
    indexed_layers: int = 0
    #: fixed per-sequence recurrent state of linear-attention layers (Gated DeltaNet: heads x d_k x d_v
    #: per layer, plus the short-convolution state), elements; kept at the stack's state width, not the KV's
    state_elements: float = 0.0
    #: ways that state splits under tensor parallelism (the value heads)
    state_shards_max: int = 1
    #: of ``dense_matmul_params``, those the checkpoint keeps at 16 bits at its own precision (LM head,
    #: router; more where it says so: gpt-oss keeps attention), read at the 16-bit width every step
    kept_matmul_params: float = 0.0
    #: of the non-expert weights held in memory, those it keeps at 16 bits (embedding, LM head, router, norms)
    kept_params: float = 0.0
    #: whether the routed experts are quantized with the rest (False only if the checkpoint keeps them)
    experts_quantized: bool = True
    #: the same two for any other quantized precision (``workload.quant.DEFAULT_KEPT``)
    default_kept_matmul_params: float = 0.0
    default_kept_params: float = 0.0
    #: the checkpoint's own precision and bits per quantized weight with scales (``workload.quant``)
    checkpoint_precision: str = ""
    checkpoint_bits: float = 0.0

    @property
    def expert_params_total(self) -> float:
        return float(self.num_moe_layers * self.num_experts * self.expert_params)

    @property
    def is_moe(self) -> bool:
        return self.num_experts > 1 and self.expert_params > 0

    def kv_elements(self, context_tokens: np.ndarray | float) -> np.ndarray:
        return np.asarray(self.kv_elements_fn(np.asarray(context_tokens, dtype=float)), dtype=float)

    def attn_flops(self, context_tokens: np.ndarray | float) -> np.ndarray:
        return np.asarray(self.attn_flops_fn(np.asarray(context_tokens, dtype=float)), dtype=float)

    def decode_attn_flops(self, context_tokens: np.ndarray | float) -> np.ndarray:
        fn = self.decode_attn_flops_fn or self.attn_flops_fn
        return np.asarray(fn(np.asarray(context_tokens, dtype=float)), dtype=float)


def _kept_parts(arch: Any, precision: str | None) -> tuple[float, float, bool]:
    """(kept matmul parameters read per token, kept non-expert parameters held, experts quantized)
    at ``precision`` (None: the checkpoint's own)."""
    kept = set(kept_classes(arch, precision))
    per_token = {"attention": arch.attention_params(), "dense_mlp": arch.dense_mlp_params(),
                 "shared_experts": arch.shared_expert_params(), "router": arch.router_params(),
                 "lm_head": arch.lm_head_params()}
    kept_matmul = sum(v for c, v in per_token.items() if c in kept)
    parts = arch.params_breakdown()
    held = {**{c: per_token[c] for c in ("attention", "dense_mlp", "shared_experts", "router")},
            "embedding": parts["embedding"], "lm_head": parts["lm_head_untied"]}
    quantized_held = sum(v for c, v in held.items() if c not in kept)
    non_expert = float(arch.params_total()) - float(arch.expert_params_total())
    return float(kept_matmul), max(non_expert - quantized_held, 0.0), "routed_experts" not in kept


def shape_from_arch(arch: Any, beam_width: int = 1) -> LLMShape:
    """Build the ``LLMShape`` of a decoder ``ModelArch`` from the model library's own ladder."""
    if not getattr(arch, "is_transformer", False) or arch.kind not in ("decoder",):
        raise ValueError(f"{arch.id} is a {arch.kind}, not a decoder LLM")
    experts = int(arch.num_experts or 0)
    moe_layers = int(arch.moe_layers) if experts > 1 else 0
    expert_params = arch.expert_params_total() / (moe_layers * experts) if moe_layers else 0.0
    top_k = int(arch.experts_per_token or 1)
    routed_active = moe_layers * top_k * expert_params
    dense = arch.matmul_params_per_token_active() - routed_active
    kept_matmul, kept_held, experts_q = _kept_parts(arch, None)
    default_matmul, default_held, _ = _kept_parts(arch, "another precision")  # not the checkpoint's: defaults
    kv_shards = 1 if arch.is_mla else int(arch.num_kv_heads or arch.num_attention_heads or 1)

    def kv_elements(ctx: np.ndarray) -> np.ndarray:
        return np.asarray(arch.kv_bytes(ctx, "fp8", with_state=False), dtype=float)  # fp8: one byte per element

    def attn_flops(ctx: np.ndarray) -> np.ndarray:
        return np.asarray(arch.flops_per_token_parts(ctx)["attention"], dtype=float)

    def decode_attn_flops(ctx: np.ndarray) -> np.ndarray:
        return np.asarray(arch.flops_per_token_parts(ctx, absorbed=True)["attention"], dtype=float)

    return LLMShape(
        model_id=str(arch.id), num_layers=int(arch.num_layers), hidden_size=int(arch.hidden_size),
        params_total=float(arch.params_total()), dense_matmul_params=float(dense),
        expert_params=float(expert_params), num_moe_layers=moe_layers, num_experts=max(experts, 1),
        experts_per_token=top_k, kv_shards_max=kv_shards, kv_elements_fn=kv_elements,
        attn_flops_fn=attn_flops, decode_attn_flops_fn=decode_attn_flops,
        beam_width=beam_width, attention_heads=int(arch.num_attention_heads or 0),
        is_mla=bool(arch.is_mla), indexed_layers=int(arch.softmax_layers) if arch.index_topk else 0,
        state_elements=float(arch.state_bytes("fp8")),
        state_shards_max=max(int(arch.linear_num_value_heads or 1), 1),
        kept_matmul_params=kept_matmul, kept_params=kept_held, experts_quantized=experts_q,
        default_kept_matmul_params=default_matmul, default_kept_params=default_held,
        checkpoint_precision=str(arch.default_precision or ""),
        checkpoint_bits=float(getattr(arch, "quant_bits_per_weight", None) or 0.0),
    )
