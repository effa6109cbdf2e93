"""Model architectures as data: parameter counts, forward FLOPs per token and KV-cache bytes.

Conventions (all counts are elements or FLOPs, one multiply-add = 2 FLOPs):

* Parameters are the weight matrices and embedding tables; biases and norm scales are left out
  (they are < 0.1% of any model here).
* Forward FLOPs of one token = ``2 x matmul params touched`` (Kaplan et al. 2020, "Scaling Laws
  for Neural Language Models", Table 1: C_forward ~ 2N) + attention score/value FLOPs
  ``2 x heads x (d_qk + d_v) x context`` per attention layer, which for d_qk = d_v = head_dim is the
  ``4 x layers x heads x head_dim x context`` of PaLM (Chowdhery et al. 2022, Appendix B: training
  = 6N + 12 L H Q T per token, i.e. forward 2N + 4 L H Q T).  Training callers use the Chinchilla
  rule (Hoffmann et al. 2022): training FLOPs ~ 3 x forward (6N per token).
* KV cache per token per softmax-attention layer: GQA/MHA ``2 x kv_heads x head_dim`` elements;
  MLA (DeepSeek-V2 paper, Sec. 2.1.2) ``kv_lora_rank + qk_rope_head_dim`` elements; DeepSeek sparse
  attention adds the indexer key (``index_head_dim``).  Sliding-window layers hold at most
  ``sliding_window`` tokens; linear-attention layers hold a fixed-size state.
"""

from __future__ import annotations

from typing import Literal

import numpy as np
from pydantic import BaseModel, ConfigDict, model_validator

from infrafit.units import bytes_per_element
from infrafit.workload.quant import weight_bytes_by_class

Kind = Literal["decoder", "encoder", "cnn", "vit", "diffusion", "speech", "tabular"]
KINDS: tuple[str, ...] = ("decoder", "encoder", "cnn", "vit", "diffusion", "speech", "tabular")
TRANSFORMER_KINDS: frozenset[str] = frozenset({"decoder", "encoder", "vit", "speech"})

#: FLOPs per (value head x d_k x d_v) of one gated delta-rule step: S^T k, the rank-1 update and S q
#: (three d_k x d_v matrix-vector products at 2 FLOPs per multiply-add; Yang et al. 2024, "Gated
#: Delta Networks", Sec. 3 recurrent form).
LINEAR_ATTN_FLOPS_PER_STATE_ELEMENT = 6.0


class Component(BaseModel):
    """One network of a multi-network pipeline (SDXL: UNet, text encoders, VAE decoder)."""

    model_config = ConfigDict(frozen=True, extra="forbid")
    name: str
    params: float
    flops_fwd: float  # forward FLOPs of one run (batch 1) at the model's reference input
    runs_per_sample: float = 1.0  # runs per generated item; 0 = not used at inference (VAE encoder)
    per_step: bool = False  # runs once per denoising step x guidance_batch_factor (the UNet)
    source: str = ""


#: Optional dimensions that must be positive when given.
_POSITIVE = ("hidden_size", "num_layers", "num_attention_heads", "num_kv_heads", "head_dim", "intermediate_size",
             "vocab_size", "max_position_embeddings", "num_experts", "experts_per_token", "moe_intermediate_size",
             "shared_expert_intermediate_size", "kv_lora_rank", "q_lora_rank", "qk_rope_head_dim", "qk_nope_head_dim",
             "v_head_dim", "index_n_heads", "index_head_dim", "index_topk", "sliding_window", "linear_num_key_heads",
             "linear_key_head_dim", "linear_num_value_heads", "linear_value_head_dim", "encoder_seq_len",
             "global_head_dim", "global_kv_heads",
             "reference_seq_len", "flops_per_sample_fwd", "params_override", "diffusion_steps", "image_size",
             "num_trees", "tree_depth", "num_features")
#: Counts that may be zero.
_NON_NEGATIVE = ("type_vocab_size", "num_shared_experts", "first_dense_layers", "sliding_window_layers",
                 "linear_attention_layers", "linear_conv_kernel_dim", "encoder_layers", "extra_params")
#: Upper bounds far above every published model (the largest: hidden 18,432 and 61-126 layers, vocab
#: ~262k, 384 experts), so only typos and hostile input trip them.
_UPPER = {"hidden_size": 1_000_000, "num_layers": 10_000, "num_attention_heads": 100_000, "head_dim": 100_000,
          "intermediate_size": 10_000_000, "vocab_size": 100_000_000, "num_experts": 100_000,
          "moe_intermediate_size": 10_000_000, "max_position_embeddings": 1_000_000_000, "num_trees": 10_000_000,
          "tree_depth": 1_000, "num_features": 10_000_000, "image_size": 100_000, "diffusion_steps": 100_000}


class ModelArch(BaseModel):
    """A model's architecture.  Frozen; derive figures with the methods, never store them twice."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    id: str
    name: str
    kind: Kind
    source: str
    retrieved_on: str | None = None
    default_precision: str | None = None
    #: tensor classes the quantized checkpoint keeps at 16 bits (``workload.quant``; None: the default
    #: embedding, LM head and router) and its bits per quantized weight, block scales included
    quant_kept: tuple[str, ...] | None = None
    quant_bits_per_weight: float | None = None
    family: str | None = None
    hf_id: str | None = None
    aliases: tuple[str, ...] = ()
    notes: str = ""
    # transformer fields
    hidden_size: int | None = None
    num_layers: int | None = None
    num_attention_heads: int | None = None
    num_kv_heads: int | None = None
    head_dim: int | None = None
    intermediate_size: int | None = None
    vocab_size: int | None = None
    max_position_embeddings: int | None = None
    tie_word_embeddings: bool = False
    mlp_gated: bool = True  # SwiGLU/GeGLU (3 matrices) vs plain GELU MLP (2 matrices)
    learned_positions: bool = False  # a learned position table of max_position_embeddings rows
    type_vocab_size: int = 0  # BERT token-type embeddings
    attn_output_gate: bool = False  # Qwen3-Next/3.5: q projection doubled to gate the output
    # MoE
    num_experts: int | None = None
    experts_per_token: int | None = None
    num_shared_experts: int = 0
    moe_intermediate_size: int | None = None
    shared_expert_intermediate_size: int | None = None
    first_dense_layers: int = 0
    # MLA (DeepSeek-V2/V3 family)
    kv_lora_rank: int | None = None
    q_lora_rank: int | None = None
    qk_rope_head_dim: int | None = None
    qk_nope_head_dim: int | None = None
    v_head_dim: int | None = None
    # DeepSeek sparse attention (lightning indexer; DeepSeek-V3.2, GLM-5)
    index_n_heads: int | None = None
    index_head_dim: int | None = None
    index_topk: int | None = None
    # attention windows and linear attention
    sliding_window: int | None = None
    sliding_window_layers: int = 0
    # full-attention layers with their own widths beside sliding-window layers (Gemma 4: head_dim 512 and 2
    # KV heads on its global layers, 256 and 8 on the sliding ones; ``global_k_eq_v``: one projection
    # gives K and V there, so no v_proj weights, while the cache still holds K and V, normed and rotated
    # differently)
    global_head_dim: int | None = None
    global_kv_heads: int | None = None
    global_k_eq_v: bool = False
    linear_attention_layers: int = 0
    linear_num_key_heads: int | None = None
    linear_key_head_dim: int | None = None
    linear_num_value_heads: int | None = None
    linear_value_head_dim: int | None = None
    linear_conv_kernel_dim: int = 4
    # encoder-decoder (Whisper)
    encoder_layers: int = 0
    encoder_seq_len: int | None = None
    # extras and non-LLM
    extra_params: float = 0.0  # e.g. a vision tower or conv stem: in the total, not per text token
    reference_seq_len: int | None = None  # encoders: the sequence length of flops_per_sample
    flops_per_sample_fwd: float | None = None
    params_override: float | None = None
    components: tuple[Component, ...] = ()
    diffusion_steps: int | None = None
    guidance_batch_factor: float = 1.0  # 2 with classifier-free guidance
    image_size: int | None = None
    # tabular
    num_trees: int | None = None
    tree_depth: int | None = None
    num_features: int | None = None

    # ------------------------------------------------------------------ sanity
    @model_validator(mode="after")
    def _physically_possible(self) -> ModelArch:
        """Refuse sizes no model has: non-positive dimensions, KV heads above attention heads (or not
        dividing them), experts per token above the experts, more special layers than layers, and
        dimensions far beyond any published model (which would make ``check-model`` allocate TBs)."""
        problems = [f"{name} must be > 0 (got {value})" for name in _POSITIVE
                    if (value := getattr(self, name)) is not None and value <= 0]
        problems += [f"{name} must be >= 0 (got {value})" for name in _NON_NEGATIVE if getattr(self, name) < 0]
        problems += [f"{name} {value:,} is beyond any real model (at most {upper:,})" for name, upper in _UPPER.items()
                     if (value := getattr(self, name)) is not None and value > upper]
        heads = self.num_attention_heads
        for name in ("num_kv_heads", "global_kv_heads"):
            kv = getattr(self, name)
            if heads and kv and kv > 0 and (kv > heads or heads % kv):
                problems.append(f"{name} {kv} must divide num_attention_heads {heads} (grouped-query attention)")
        if self.experts_per_token is not None and self.experts_per_token > (self.num_experts or 0):
            problems.append(f"experts_per_token {self.experts_per_token} exceeds num_experts {self.num_experts or 0}")
        layers = self.num_layers or 0
        for name in ("first_dense_layers", "sliding_window_layers", "linear_attention_layers"):
            if layers and getattr(self, name) > layers:
                problems.append(f"{name} {getattr(self, name)} exceeds num_layers {layers}")
        if problems:
            raise ValueError("; ".join(problems))
        return self

    # ------------------------------------------------------------------ structure
    @property
    def is_transformer(self) -> bool:
        return self.kind in TRANSFORMER_KINDS and bool(self.num_layers)

    @property
    def is_moe(self) -> bool:
        return bool(self.num_experts)

    @property
    def is_mla(self) -> bool:
        return self.kv_lora_rank is not None

    @property
    def _hd(self) -> int:
        return self.head_dim or (self.hidden_size or 0) // max(self.num_attention_heads or 1, 1)

    @property
    def _kv_heads(self) -> int:
        return self.num_kv_heads or self.num_attention_heads or 0

    @property
    def moe_layers(self) -> int:
        return (self.num_layers or 0) - self.first_dense_layers if self.is_moe else 0

    @property
    def softmax_layers(self) -> int:
        """Layers with softmax attention (and a KV cache)."""
        return (self.num_layers or 0) - self.linear_attention_layers

    @property
    def full_attention_layers(self) -> int:
        return self.softmax_layers - self.sliding_window_layers

    def _qk_dim(self) -> int:
        return (self.qk_nope_head_dim or 0) + (self.qk_rope_head_dim or 0) if self.is_mla else self._hd

    def _v_dim(self) -> int:
        return (self.v_head_dim or self._hd) if self.is_mla else self._hd

    @property
    def _own_global_widths(self) -> bool:
        """Whether the full-attention layers have widths of their own (``global_head_dim``)."""
        return bool(self.global_head_dim) and not self.is_mla

    def _global_widths(self) -> tuple[int, int]:
        """(head dim, KV heads) of a full-attention layer."""
        if not self._own_global_widths:
            return self._hd, self._kv_heads
        return int(self.global_head_dim or 0), int(self.global_kv_heads or self._kv_heads)

    # ------------------------------------------------------------------ parameters
    def _global_attn_layer_params(self) -> float:
        """One full-attention layer with its own widths: q and o at ``global_head_dim``, K (and V unless
        ``global_k_eq_v``) at ``global_kv_heads``."""
        d, h = self.hidden_size or 0, self.num_attention_heads or 0
        hd, kv = self._global_widths()
        q = d * h * hd * (2 if self.attn_output_gate else 1)
        return float(q + (1 if self.global_k_eq_v else 2) * d * kv * hd + h * hd * d)

    def _softmax_attn_layer_params(self) -> float:
        d, h = self.hidden_size or 0, self.num_attention_heads or 0
        if self.is_mla:
            qk = self._qk_dim()
            q = d * self.q_lora_rank + self.q_lora_rank * h * qk if self.q_lora_rank else d * h * qk
            kv_a = d * ((self.kv_lora_rank or 0) + (self.qk_rope_head_dim or 0))
            kv_b = (self.kv_lora_rank or 0) * h * ((self.qk_nope_head_dim or 0) + self._v_dim())
            o = h * self._v_dim() * d
            p = q + kv_a + kv_b + o
        else:
            hd = self._hd
            q = d * h * hd * (2 if self.attn_output_gate else 1)
            p = q + 2 * d * self._kv_heads * hd + h * hd * d
        if self.index_topk:  # lightning indexer: q from the q latent, one shared key, head weights
            q_in = self.q_lora_rank or d
            heads, dim = self.index_n_heads or 0, self.index_head_dim or 0
            p += q_in * heads * dim + d * dim
            p += d * heads
        return float(p)

    def _linear_attn_layer_params(self) -> float:
        """Gated DeltaNet layer (Qwen3-Next/3.5): in_proj_qkvz, in_proj_ba, conv1d, out_proj."""
        d = self.hidden_size or 0
        key_dim = (self.linear_num_key_heads or 0) * (self.linear_key_head_dim or 0)
        value_dim = (self.linear_num_value_heads or 0) * (self.linear_value_head_dim or 0)
        qkvz = d * (2 * key_dim + 2 * value_dim)
        ba = d * 2 * (self.linear_num_value_heads or 0)
        conv = (2 * key_dim + value_dim) * self.linear_conv_kernel_dim
        return float(qkvz + ba + conv + value_dim * d)

    def attention_params(self) -> float:
        """All attention weights over all decoder layers (and encoder layers, for Whisper)."""
        if not self.is_transformer:
            return 0.0
        if self._own_global_widths:
            p = self.sliding_window_layers * self._softmax_attn_layer_params()
            p += self.full_attention_layers * self._global_attn_layer_params()
        else:
            p = self.softmax_layers * self._softmax_attn_layer_params()
        p += self.linear_attention_layers * self._linear_attn_layer_params()
        if self.encoder_layers:  # decoder cross-attention (4 d^2) and encoder self-attention (4 d^2)
            d = self.hidden_size or 0
            p += (self.num_layers or 0) * 4 * d * d + self.encoder_layers * 4 * d * d
        return float(p)

    def _mlp_params(self, width: int | None) -> float:
        return float((3 if self.mlp_gated else 2) * (self.hidden_size or 0) * (width or 0))

    def dense_mlp_params(self) -> float:
        """MLP weights of the dense (non-MoE) layers, encoder layers included."""
        if not self.is_transformer:
            return 0.0
        dense_layers = (self.num_layers or 0) - self.moe_layers + self.encoder_layers
        return dense_layers * self._mlp_params(self.intermediate_size)

    def _expert_params(self) -> float:
        return self._mlp_params(self.moe_intermediate_size or self.intermediate_size)

    def _shared_params_per_layer(self) -> float:
        if not self.num_shared_experts:
            return 0.0
        width = self.shared_expert_intermediate_size or self.moe_intermediate_size
        return self.num_shared_experts * self._mlp_params(width)

    def expert_params_total(self) -> float:
        """Routed-expert weights over all MoE layers (what expert parallelism spreads out)."""
        return float(self.moe_layers * (self.num_experts or 0) * self._expert_params())

    def shared_expert_params(self) -> float:
        return float(self.moe_layers * self._shared_params_per_layer())

    def router_params(self) -> float:
        return float(self.moe_layers * (self.hidden_size or 0) * (self.num_experts or 0))

    def embedding_params(self) -> float:
        """Input token embedding (plus learned position and token-type tables)."""
        if not self.is_transformer:
            return 0.0
        d = self.hidden_size or 0
        p = (self.vocab_size or 0) * d + self.type_vocab_size * d
        if self.learned_positions:
            p += (self.max_position_embeddings or 0) * d
        return float(p)

    def lm_head_params(self) -> float:
        """Output projection to the vocabulary (a matmul even when tied to the input embedding)."""
        if self.kind not in ("decoder", "speech") or not self.is_transformer:
            return 0.0
        return float((self.vocab_size or 0) * (self.hidden_size or 0))

    def params_total(self) -> float:
        if self.params_override is not None:
            return float(self.params_override)
        if self.components:
            return float(sum(c.params for c in self.components))
        if not self.is_transformer:
            return 0.0
        untied_head = 0.0 if self.tie_word_embeddings else self.lm_head_params()
        return float(
            self.attention_params() + self.dense_mlp_params() + self.expert_params_total()
            + self.shared_expert_params() + self.router_params() + self.embedding_params()
            + untied_head + self.extra_params
        )

    def _active_mlp_params(self) -> float:
        active = self.moe_layers * (
            (self.experts_per_token or 0) * self._expert_params() + self._shared_params_per_layer()
            + (self.hidden_size or 0) * (self.num_experts or 0)
        )
        return float(self.dense_mlp_params() + active)

    def params_active(self) -> float:
        """Parameters one token uses: dense parts, routed ``experts_per_token`` + shared experts,
        embeddings and LM head (the convention of Mistral's 12.9B for Mixtral 8x7B).  Extra
        towers (vision) are left out.  Equals ``params_total`` minus extras for dense models."""
        if not self.is_moe:
            return self.params_total() - self.extra_params
        untied_head = 0.0 if self.tie_word_embeddings else self.lm_head_params()
        return float(self.attention_params() + self._active_mlp_params() + self.embedding_params() + untied_head)

    def matmul_params_per_token_active(self) -> float:
        """Weights multiplied per decoded token: attention, active MLP/experts, router, LM head;
        not the embedding lookup (OpenAI's "active parameters" convention for gpt-oss).  For
        Whisper the cross-attention K/V projections run once per sample and are left out."""
        if not self.is_transformer:
            return 0.0
        p = self.attention_params() + self._active_mlp_params() + self.lm_head_params()
        if self.encoder_layers:  # remove encoder layers and the cross K/V projections (per sample)
            d = self.hidden_size or 0
            p -= self.encoder_layers * (4 * d * d + self._mlp_params(self.intermediate_size))
            p -= (self.num_layers or 0) * 2 * d * d
        return float(p)

    def weight_bytes(self, precision: str) -> float:
        """Bytes of all weights at ``precision``: quantized tensors with their block scales, the tensors
        a quantized checkpoint keeps at 16 bits at 16 bits (``workload.quant``)."""
        return weight_bytes_by_class(self, precision)

    def params_breakdown(self) -> dict[str, float]:
        return {
            "attention": self.attention_params(), "dense_mlp": self.dense_mlp_params(),
            "routed_experts": self.expert_params_total(), "shared_experts": self.shared_expert_params(),
            "router": self.router_params(), "embedding": self.embedding_params(),
            "lm_head_untied": 0.0 if self.tie_word_embeddings else self.lm_head_params(),
            "extra": self.extra_params, "total": self.params_total(),
        }

    # ------------------------------------------------------------------ FLOPs
    def _attn_flops_per_context_token(self) -> float:
        """Score + value FLOPs per layer per attended token: 2 x heads x (d_qk + d_v)."""
        return 2.0 * (self.num_attention_heads or 0) * (self._qk_dim() + self._v_dim())

    def _global_attn_flops_per_context_token(self) -> float:
        """The same for a full-attention layer (its own head dim where ``global_head_dim`` is set)."""
        if not self._own_global_widths:
            return self._attn_flops_per_context_token()
        return 2.0 * (self.num_attention_heads or 0) * 2.0 * self._global_widths()[0]

    def _mla_absorbed_attn_flops_per_context_token(self) -> float:
        """MLA decode in the weight-absorbed form (DeepSeek-V2 paper, Sec. 2.1.2; FlashMLA, vLLM and SGLang
        decode kernels): each head scores the cached latent and rope key (``kv_lora_rank + qk_rope_head_dim``)
        and sums the latent values (``kv_lora_rank``) before the up-projection, so a cached token costs
        ``2 x heads x (2 x kv_lora_rank + qk_rope_head_dim)`` FLOPs, 3.4x the decompressed form's
        ``2 x heads x (d_qk + d_v)`` for DeepSeek-V3 (1,088 vs 320 per head). Its query and output
        projections through ``W_UK`` and ``W_UV`` are per token, as many FLOPs as the decompression
        matmul counted in the dense part."""
        r = float(self.kv_lora_rank or 0)
        return 2.0 * (self.num_attention_heads or 0) * (2.0 * r + (self.qk_rope_head_dim or 0))

    def flops_per_token_parts(self, context_len, absorbed: bool = False) -> dict[str, np.ndarray]:
        """Forward FLOPs of one token that attends to ``context_len`` tokens, split into
        ``dense`` (2 x matmul_params_per_token_active) and ``attention`` (scores and values,
        windows and sparse top-k respected, indexer and linear-attention state updates included).
        ``absorbed``: a decode token of an MLA model attends in the weight-absorbed form
        (``_mla_absorbed_attn_flops_per_context_token``); prefill runs the decompressed form."""
        c = np.asarray(context_len, dtype=float)
        if not self.is_transformer:
            return {"dense": np.zeros_like(c), "attention": np.zeros_like(c)}
        dense = np.full_like(c, 2.0 * self.matmul_params_per_token_active())
        per_tok = self._attn_flops_per_context_token()
        topk = self.index_topk
        attended = np.minimum(c, topk) if topk else c
        glob = (self._mla_absorbed_attn_flops_per_context_token() if absorbed and self.is_mla
                else self._global_attn_flops_per_context_token())
        att = self.full_attention_layers * glob * attended
        if self.sliding_window_layers:
            att = att + self.sliding_window_layers * per_tok * np.minimum(attended, self.sliding_window or 0)
        if self.index_topk:  # indexer scores every cached token: 2 x index_heads x index_head_dim
            att = att + self.softmax_layers * 2.0 * (self.index_n_heads or 0) * (self.index_head_dim or 0) * c
        if self.linear_attention_layers:
            state = (self.linear_num_value_heads or 0) * (self.linear_key_head_dim or 0)
            state *= self.linear_value_head_dim or 0
            att = att + self.linear_attention_layers * LINEAR_ATTN_FLOPS_PER_STATE_ELEMENT * state
        if self.encoder_layers and self.encoder_seq_len:  # cross-attention over the encoder output
            att = att + (self.num_layers or 0) * per_tok * self.encoder_seq_len
        return {"dense": dense, "attention": np.asarray(att, dtype=float)}

    def flops_per_token_fwd(self, context_len):
        parts = self.flops_per_token_parts(context_len)
        total = parts["dense"] + parts["attention"]
        return float(total) if np.ndim(total) == 0 else total

    def flops_prefill(self, seq_len):
        """Forward FLOPs of a causal prefill of ``seq_len`` tokens: sum over positions t = 1..S of
        flops_per_token_fwd(t) (closed form; windows respected).  Accepts arrays."""
        s = np.asarray(seq_len, dtype=float)
        if not self.is_transformer:
            return 0.0 if np.ndim(s) == 0 else np.zeros_like(s)

        def tri(n):  # sum_{t=1..n} t
            return n * (n + 1.0) / 2.0

        def capped(n, w):  # sum_{t=1..n} min(t, w)
            return np.where(n <= w, tri(n), tri(w) + (n - w) * w)

        per_tok = self._attn_flops_per_context_token()
        sum_att = capped(s, self.index_topk) if self.index_topk else tri(s)
        att = self.full_attention_layers * self._global_attn_flops_per_context_token() * sum_att
        if self.sliding_window_layers:
            cap = min(self.sliding_window, self.index_topk) if self.index_topk else self.sliding_window
            att = att + self.sliding_window_layers * per_tok * capped(s, cap)
        base = self.flops_per_token_parts(0.0)
        att = att + s * (float(base["attention"]))  # context-independent terms (linear attn, cross)
        if self.index_topk:
            att = att + self.softmax_layers * 2.0 * self.index_n_heads * self.index_head_dim * tri(s)
        total = s * float(base["dense"]) + att
        return float(total) if np.ndim(total) == 0 else total

    def component_runs(self, c: Component, steps: int | None = None) -> float:
        """Runs of a component per generated item: UNet = steps x guidance_batch_factor."""
        if c.per_step:
            return float((steps or self.diffusion_steps or 1) * self.guidance_batch_factor)
        return float(c.runs_per_sample)

    def flops_per_sample(self, seq_len: int | None = None, steps: int | None = None) -> float:
        """Forward FLOPs of one item: an encoder sequence (``seq_len`` or ``reference_seq_len``),
        an image (CNN/ViT at its reference size), a diffusion image (all components; the UNet
        ``steps`` (default ``diffusion_steps``) x ``guidance_batch_factor`` times), the Whisper
        encoder over one 30 s window, one row of a tabular model."""
        if self.components:
            return float(sum(c.flops_fwd * self.component_runs(c, steps) for c in self.components))
        if self.kind == "tabular":
            return self.tabular_ops_per_row()
        if self.kind == "encoder" and self.is_transformer:
            s = seq_len or self.reference_seq_len or self.max_position_embeddings or 0
            return float(s * self.flops_per_token_fwd(s))
        if self.kind == "speech" and self.encoder_layers:
            return self.encoder_flops_fwd()
        if self.flops_per_sample_fwd is not None:
            return float(self.flops_per_sample_fwd)
        raise ValueError(f"{self.id}: no per-sample FLOPs for kind {self.kind}")

    def encoder_flops_fwd(self) -> float:
        """Whisper-style encoder over ``encoder_seq_len`` frames: 2 x encoder matmul params per frame,
        bidirectional attention, and the decoder's cross-attention K/V projections (once per sample)."""
        d, s = self.hidden_size or 0, self.encoder_seq_len or 0
        layer = 4 * d * d + self._mlp_params(self.intermediate_size)
        att = self.encoder_layers * self._attn_flops_per_context_token() * s * s
        cross_kv = (self.num_layers or 0) * 2 * d * d * s
        return float(2.0 * (self.encoder_layers * layer * s + cross_kv) + att + 2.0 * self.extra_params * s)

    # ------------------------------------------------------------------ tabular
    def tabular_ops_per_row(self) -> float:
        """Inference operations per row.  Trees: one compare per level per tree (trees x depth) plus
        one add per tree; linear: 2 x features (multiply-add)."""
        if self.num_trees:
            return float(self.num_trees * ((self.tree_depth or 1) + 1))
        return float(2 * (self.num_features or 0))

    def tabular_train_ops(self, rows, epochs: float = 1.0):
        """Training operations.  Histogram gradient boosting (XGBoost ``hist``, Chen & Guestrin 2016
        Sec. 4.1; LightGBM, Ke et al. 2017): each tree level scans rows x features into histograms,
        so trees x depth x rows x features.  Linear models: 6 x rows x features per epoch
        (forward 2, backward 4 per weight and row).  Accepts arrays."""
        r = np.asarray(rows, dtype=float)
        f = float(self.num_features or 0)
        if self.num_trees:
            return self.num_trees * (self.tree_depth or 1) * r * f
        return 6.0 * r * f * epochs

    # ------------------------------------------------------------------ KV cache
    def _kv_elems_per_token_layer(self) -> float:
        if self.is_mla:
            e = float((self.kv_lora_rank or 0) + (self.qk_rope_head_dim or 0))
        else:
            e = 2.0 * self._kv_heads * self._hd
        if self.index_topk:
            e += float(self.index_head_dim or 0)
        return e

    def _global_kv_elems(self) -> float:
        """KV elements one token adds to a full-attention layer: K and V at the layer's own widths."""
        if not self._own_global_widths:
            return self._kv_elems_per_token_layer()
        hd, kv = self._global_widths()
        return 2.0 * kv * hd

    def kv_bytes_per_token(self, precision: str) -> float:
        """KV bytes one token adds over all softmax-attention layers (window caps not applied;
        use ``kv_bytes`` for a sequence)."""
        if not self.is_transformer or self.kind not in ("decoder", "speech"):
            return 0.0
        per_layer = self._kv_elems_per_token_layer()
        return (self.sliding_window_layers * per_layer + self.full_attention_layers * self._global_kv_elems()
                ) * bytes_per_element(precision)

    def state_bytes(self, precision: str) -> float:
        """Fixed per-sequence state: linear-attention recurrent state and conv state, Whisper's
        cross-attention K/V of the encoder output."""
        b = bytes_per_element(precision)
        n = 0.0
        if self.linear_attention_layers:
            hv, dk = self.linear_num_value_heads or 0, self.linear_key_head_dim or 0
            dv = self.linear_value_head_dim or 0
            key_dim = (self.linear_num_key_heads or 0) * dk
            conv = (2 * key_dim + hv * dv) * (self.linear_conv_kernel_dim - 1)
            n += self.linear_attention_layers * (hv * dk * dv + conv)
        if self.encoder_layers and self.encoder_seq_len:
            n += (self.num_layers or 0) * 2 * (self.hidden_size or 0) * self.encoder_seq_len
        return n * b

    def kv_bytes(self, context_len, precision: str, with_state: bool = True):
        """KV-cache bytes of one sequence of ``context_len`` tokens: full layers hold every token,
        sliding-window layers at most ``sliding_window``; plus the fixed ``state_bytes`` unless
        ``with_state`` is false (the LLM engine keeps that state at its own width)."""
        c = np.asarray(context_len, dtype=float)
        if not self.is_transformer or self.kind not in ("decoder", "speech"):
            out = np.zeros_like(c)
        else:
            per_layer = self._kv_elems_per_token_layer() * bytes_per_element(precision)
            out = self.full_attention_layers * self._global_kv_elems() * bytes_per_element(precision) * c
            if self.sliding_window_layers:
                out = out + self.sliding_window_layers * per_layer * np.minimum(c, self.sliding_window or 0)
            if with_state:
                out = out + self.state_bytes(precision)
        return float(out) if np.ndim(out) == 0 else out
