"""The model shape the training estimators work on, and its parameter and FLOP counts.

``TrainShape`` is a plain frozen record of the numbers the training formulas need. It is built from
the model library's ``ModelArch`` (``from_model_arch``, duck-typed so this module does not depend on
the library's internals) or directly for the MLPerf presets in ``perf.mlperf_training``.

FLOP conventions (both documented in docs/performance-training.md):

* *Executed* FLOPs (what the chip does, used for time): causal attention computes on average half
  of the score matrix, so a token at sequence length ``s`` attends to ``s / 2`` keys
  (FlashAttention skips masked blocks; Dao 2022).
* *Model* FLOPs (what MFU is quoted against): the PaLM convention (Chowdhery et al. 2022,
  appendix B): ``6 N + 12 L H Q T`` per token, the attention term over the full sequence ``T``.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

#: Forward + backward = 3 x forward for the matmuls (Kaplan et al. 2020, sec. 2.1: C = 6 N per token).
TRAIN_FLOPS_PER_FWD = 3.0


@dataclass(frozen=True)
class TrainShape:
    """Architecture numbers of one model, enough for training FLOPs, memory and parallelism."""

    name: str
    kind: str  # decoder | encoder | cnn | diffusion | vit
    layers: int = 0
    hidden: int = 0
    heads: int = 0
    kv_heads: int = 0
    head_dim: int = 0
    ffn: int = 0
    vocab: int = 0
    gated_mlp: bool = True
    tied_embeddings: bool = False
    num_experts: int = 0
    experts_per_token: int = 0
    shared_experts: int = 0
    moe_ffn: int = 0
    first_dense_layers: int = 0
    attn_head_dim: float | None = None  # MLA: mean of the q.k and v head widths
    params_total_override: float | None = None
    params_active_override: float | None = None
    matmul_params_override: float | None = None
    expert_params_override: float | None = None
    # non-transformer models: forward FLOPs per sample at the reference input, and the elements of
    # every layer's output (the activation traffic of the element-wise ops).
    flops_per_sample_fwd: float | None = None
    activation_elements_per_sample: float | None = None
    # encoder-decoder speech models (Whisper): the encoder runs once per sample over its frames, beside the
    # decoder's ``seq_len`` tokens (``ModelArch.encoder_flops_fwd``: its matmuls, attention, cross K/V)
    encoder_flops_fwd_per_sample: float = 0.0
    encoder_layers: int = 0
    encoder_tokens: int = 0
    source: str = ""

    @property
    def is_transformer(self) -> bool:
        return self.layers > 0 and self.hidden > 0

    @property
    def is_moe(self) -> bool:
        return self.num_experts > 1

    # --- parameters -----------------------------------------------------------------------------
    def attention_params_per_layer(self) -> float:
        """q and o: h x (heads x head_dim); k and v: h x (kv_heads x head_dim) each (GQA)."""
        h, hd = self.hidden, self.head_dim
        return 2.0 * h * self.heads * hd + 2.0 * h * self.kv_heads * hd

    def mlp_params(self, width: int) -> float:
        """SwiGLU has three matrices (gate, up, down; Shazeer 2020), a plain MLP two."""
        return (3.0 if self.gated_mlp else 2.0) * self.hidden * width

    def _moe_layers(self) -> int:
        return max(0, self.layers - self.first_dense_layers) if self.is_moe else 0

    def expert_params(self) -> float:
        """Routed-expert weights of all MoE layers (the part expert parallelism shards)."""
        if self.expert_params_override is not None:
            return self.expert_params_override
        return self._moe_layers() * self.num_experts * self.mlp_params(self.moe_ffn or self.ffn)

    def dense_block_params(self, active: bool) -> float:
        """Every transformer-block weight except routed experts; plus the active experts if asked."""
        moe_l = self._moe_layers()
        dense_l = self.layers - moe_l
        width = self.moe_ffn or self.ffn
        p = self.layers * self.attention_params_per_layer() + dense_l * self.mlp_params(self.ffn)
        p += moe_l * (self.shared_experts * self.mlp_params(width) + self.hidden * self.num_experts)
        if active:
            p += moe_l * self.experts_per_token * self.mlp_params(width)
        return p

    def embedding_params(self) -> float:
        return self.vocab * self.hidden * (1.0 if self.tied_embeddings else 2.0)

    def params_total(self) -> float:
        if self.params_total_override is not None:
            return self.params_total_override
        return self.dense_block_params(active=False) + self.expert_params() + self.embedding_params()

    def params_active(self) -> float:
        if self.params_active_override is not None:
            return self.params_active_override
        if not self.is_moe:
            return self.params_total()
        return self.dense_block_params(active=True) + self.embedding_params()

    def matmul_params_active(self) -> float:
        """Weights a token multiplies by: active block weights plus the LM head (no embedding lookup)."""
        if not self.is_transformer:
            return self.params_active()
        if self.matmul_params_override is not None:
            return self.matmul_params_override
        return self.dense_block_params(active=True) + self.vocab * self.hidden

    # --- FLOPs ------------------------------------------------------------------------------------
    def _attn_width(self) -> float:
        return float(self.attn_head_dim or self.head_dim) * self.heads

    def attention_flops_fwd_per_token(self, context_len: float) -> float:
        """QK^T and AV: 2 x 2 x layers x heads x head_dim x context (multiply-adds count 2)."""
        return 4.0 * self.layers * self._attn_width() * context_len

    def train_flops_per_token(self, seq_len: float, *, causal: bool = True) -> float:
        """Executed training FLOPs per token: 6 x matmul params + 3 x forward attention.

        ``causal=True`` counts half the score matrix (the executed work); ``False`` gives the PaLM
        MFU convention ``6 N + 12 L H Q T`` (Chowdhery et al. 2022, appendix B).
        """
        ctx = seq_len / 2.0 if causal else seq_len
        return TRAIN_FLOPS_PER_FWD * (2.0 * self.matmul_params_active() + self.attention_flops_fwd_per_token(ctx))

    def fwd_flops_per_token(self, seq_len: float, *, causal: bool = True) -> float:
        ctx = seq_len / 2.0 if causal else seq_len
        return 2.0 * self.matmul_params_active() + self.attention_flops_fwd_per_token(ctx)


def _get(arch: Any, name: str, default: Any = 0) -> Any:
    value = getattr(arch, name, None)
    return default if value is None else value


def _call(arch: Any, method: str) -> float | None:
    fn = getattr(arch, method, None)
    return float(fn()) if callable(fn) else None


def from_model_arch(arch: Any) -> TrainShape:
    """Build a ``TrainShape`` from the model library's ``ModelArch`` (read by attribute).

    Parameter counts come from the library's own methods where it has them, so the two packages
    never disagree on a model's size.
    """
    kind = str(_get(arch, "kind", "decoder"))
    hidden = int(_get(arch, "hidden_size"))
    heads = int(_get(arch, "num_attention_heads"))
    head_dim = int(_get(arch, "head_dim", hidden // heads if heads else 0))
    nope, rope, v = (int(_get(arch, k)) for k in ("qk_nope_head_dim", "qk_rope_head_dim", "v_head_dim"))
    attn_hd = (nope + rope + v) / 2.0 if (nope or rope) and v else None
    is_transformer = bool(_get(arch, "is_transformer", hidden > 0))
    total = _call(arch, "params_total")
    active = _call(arch, "params_active")
    return TrainShape(
        name=str(_get(arch, "id", _get(arch, "name", "model"))),
        kind=kind,
        layers=int(_get(arch, "num_layers")) if is_transformer else 0,
        hidden=hidden if is_transformer else 0,
        heads=heads,
        kv_heads=int(_get(arch, "num_kv_heads", heads)),
        head_dim=head_dim,
        ffn=int(_get(arch, "intermediate_size")),
        vocab=int(_get(arch, "vocab_size")),
        gated_mlp=bool(_get(arch, "mlp_gated", kind == "decoder")),
        tied_embeddings=bool(_get(arch, "tie_word_embeddings", False)),
        num_experts=int(_get(arch, "num_experts")),
        experts_per_token=int(_get(arch, "experts_per_token")),
        shared_experts=int(_get(arch, "num_shared_experts")),
        moe_ffn=int(_get(arch, "moe_intermediate_size")),
        first_dense_layers=int(_get(arch, "first_dense_layers")),
        attn_head_dim=attn_hd,
        params_total_override=total,
        params_active_override=active,
        matmul_params_override=_call(arch, "matmul_params_per_token_active") if is_transformer else None,
        expert_params_override=_call(arch, "expert_params_total"),
        flops_per_sample_fwd=getattr(arch, "flops_per_sample_fwd", None),
        **_encoder(arch, kind, is_transformer),
        source=str(_get(arch, "source", "")),
    )


def _encoder(arch: Any, kind: str, is_transformer: bool) -> dict[str, Any]:
    """A speech model's encoder (per sample: its forward FLOPs, layers and frames); nothing for other kinds."""
    layers, frames = int(_get(arch, "encoder_layers")), int(_get(arch, "encoder_seq_len"))
    if kind != "speech" or not is_transformer or not (layers and frames):
        return {}
    return {"encoder_flops_fwd_per_sample": float(arch.encoder_flops_fwd()), "encoder_layers": layers,
            "encoder_tokens": frames}
