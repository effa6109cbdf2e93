"""The shapes of the scaled bench model, and the FLOPs and bytes it really executes.

A :class:`BenchShape` keeps the per-layer shapes of a library model (``ModelArch``) and changes only
the number of layers (and, when the embedding alone would not fit, the vocabulary), so a laptop can
run one layer of Llama-3.1-70B at its true width. The counts here are of the graph
:mod:`infrafit.bench.models` builds, so prediction and measurement talk about the same work.

FLOP conventions: a (M x K) @ (K x N) matmul is ``2 M K N`` FLOPs; causal attention over ``S``
tokens computes ``S (S + 1) / 2`` query-key pairs; training is 3x the forward FLOPs (backward = 2x
forward; Kaplan et al. 2020, "Scaling Laws for Neural Language Models", section 2.1). Bytes assume
each operator reads its operands and writes its result to memory once (no fusion, no cache reuse
across operators): an upper bound on DRAM traffic that the calibrated efficiency corrects.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import Any

from infrafit.errors import InputError
from infrafit.units import bytes_per_element

#: ResNet-50 bottleneck stages: (blocks, bottleneck width, stride); He et al. 2016, Table 1.
RESNET50_STAGES = ((3, 64, 1), (4, 128, 2), (6, 256, 2), (3, 512, 2))
RESNET_EXPANSION = 4
ELEMENTWISE_PASSES_PER_LAYER = 6  # 2 norms (read+write), residual adds, activation: passes over B*S*h


@dataclass(frozen=True)
class BenchShape:
    """A runnable model: transformer (decoder/encoder) or ResNet-style CNN."""

    model_id: str
    kind: str  # "decoder" | "encoder" | "cnn"
    num_layers: int
    full_num_layers: int
    hidden_size: int = 0
    num_attention_heads: int = 0
    num_kv_heads: int = 0
    head_dim: int = 0
    intermediate_size: int = 0
    vocab_size: int = 0
    full_vocab_size: int = 0
    image_size: int = 224
    moe_note: str = ""
    scaled_note: str = ""  # what --quick or the weight budget changed, for the output

    def to_json(self) -> dict[str, Any]:
        return dict(self.__dict__)


def shape_from_arch(arch: Any, num_layers: int | None = None) -> BenchShape:
    """Read the per-layer shapes of a ``ModelArch`` (duck-typed: any object with its fields).

    MoE layers run as their active dense equivalent: ``experts_per_token (+ shared)`` experts'
    worth of ``moe_intermediate_size`` in one SwiGLU MLP (same FLOPs per token as routing to them).
    """
    kind = str(getattr(arch, "kind", "decoder"))
    model_id = str(getattr(arch, "id", "model"))
    if kind in ("cnn",):
        full = len([b for s in RESNET50_STAGES for b in range(s[0])])
        n = full if num_layers is None else num_layers
        return BenchShape(model_id=model_id, kind="cnn", num_layers=max(1, min(n, full)), full_num_layers=full,
                          image_size=int(getattr(arch, "image_size", None) or 224))
    if kind not in ("decoder", "encoder"):
        raise InputError(f"model {model_id!r} is a {kind!r} model; the bench runs decoders, encoders and CNNs",
                         fix="pick a decoder (llama3.1-8b), an encoder (bert-large) or a CNN (resnet50)")
    hidden = int(arch.hidden_size)
    heads = int(arch.num_attention_heads)
    head_dim = int(getattr(arch, "head_dim", None) or hidden // heads)
    inter = int(arch.intermediate_size or 4 * hidden)
    note = ""
    experts = getattr(arch, "num_experts", None)
    if experts:
        active = int(getattr(arch, "experts_per_token", 1) or 1) + int(getattr(arch, "num_shared_experts", 0) or 0)
        inter = active * int(getattr(arch, "moe_intermediate_size", None) or inter)
        note = f"MoE run as its active dense equivalent: {active} experts x moe_intermediate_size"
    full_layers = int(arch.num_layers)
    return BenchShape(
        model_id=model_id, kind=kind, num_layers=full_layers if num_layers is None else num_layers,
        full_num_layers=full_layers, hidden_size=hidden, num_attention_heads=heads,
        num_kv_heads=int(getattr(arch, "num_kv_heads", None) or heads), head_dim=head_dim,
        intermediate_size=inter, vocab_size=int(arch.vocab_size or 0), full_vocab_size=int(arch.vocab_size or 0),
        moe_note=note,
    )


def layer_params(shape: BenchShape) -> float:
    """Parameters of one transformer layer (attention + SwiGLU/GELU MLP + norms) or one CNN block."""
    if shape.kind == "cnn":
        return cnn_params(shape) / max(1, shape.num_layers)
    h, q, kv = shape.hidden_size, shape.num_attention_heads * shape.head_dim, shape.num_kv_heads * shape.head_dim
    attn = h * q + 2 * h * kv + q * h
    mlp_mats = 3 if shape.kind == "decoder" else 2
    return float(attn + mlp_mats * h * shape.intermediate_size + 2 * h)


def embedding_params(shape: BenchShape) -> float:
    """Token embedding plus (for decoders) an untied LM head."""
    if shape.kind == "cnn":
        return 0.0
    copies = 2 if shape.kind == "decoder" else 1
    return float(copies * shape.vocab_size * shape.hidden_size)


def params(shape: BenchShape) -> float:
    if shape.kind == "cnn":
        return cnn_params(shape)
    return layer_params(shape) * shape.num_layers + embedding_params(shape)


def narrow_width(shape: BenchShape, layer_budget_params: float) -> BenchShape:
    """Fewer attention heads (head_dim kept, GQA group kept a divisor) and proportionally narrower
    hidden and MLP widths, until one layer has at most ``layer_budget_params`` (at least 1 head).

    Only ``--quick`` uses this: it changes the per-layer shapes, so the run is a smoke test of the
    pipeline, not a measurement of the model's layers. Layer parameters grow as width squared, so
    the first guess is ``sqrt(budget / params)``; then one head at a time until it fits.
    """
    heads, kv = shape.num_attention_heads, shape.num_kv_heads
    new_heads = max(1, min(heads, int(heads * (layer_budget_params / layer_params(shape)) ** 0.5)))
    while True:
        ratio = new_heads / heads
        new_kv = max(d for d in range(1, new_heads + 1) if new_heads % d == 0 and d <= max(1, round(kv * ratio)))
        narrow = replace(shape, num_attention_heads=new_heads, num_kv_heads=new_kv,
                         hidden_size=max(8, int(shape.hidden_size * ratio) // 8 * 8),
                         intermediate_size=max(8, int(shape.intermediate_size * ratio) // 8 * 8))
        if new_heads == 1 or layer_params(narrow) <= layer_budget_params:
            return narrow
        new_heads -= 1


def scaling_note(full: BenchShape, run: BenchShape) -> str:
    """What differs between the library model and the shape run, e.g. ``layers 32->1; hidden 4096->256``."""
    fields = (("layers", "num_layers", "full_num_layers"), ("vocab", "vocab_size", "full_vocab_size"))
    parts = [f"{name} {getattr(full, b)}->{getattr(run, a)}" for name, a, b in fields
             if getattr(run, a) != getattr(full, b)]
    for name, attr in (("hidden", "hidden_size"), ("heads", "num_attention_heads"), ("kv heads", "num_kv_heads"),
                       ("intermediate", "intermediate_size"), ("image", "image_size")):
        if getattr(run, attr) != getattr(full, attr):
            parts.append(f"{name} {getattr(full, attr)}->{getattr(run, attr)}")
    return "; ".join(parts)


def fit_to_budget(shape: BenchShape, budget_bytes: float, precision: str = "fp32",
                  narrow: bool = False) -> BenchShape:
    """Fewest changes that make the weights fit ``budget_bytes``: fewer layers, then a smaller vocab;
    with ``narrow`` (``--quick``) also fewer heads and narrower layers when one layer alone is over half."""
    bpe = bytes_per_element(precision)
    if shape.kind == "cnn":
        return shape
    if narrow and layer_params(shape) * bpe > budget_bytes / 2:
        shape = narrow_width(shape, budget_bytes / 2 / bpe)
    emb = embedding_params(shape) * bpe
    if emb > budget_bytes / 2:
        copies = 2 if shape.kind == "decoder" else 1
        vocab = max(256, int(budget_bytes / 2 / (copies * shape.hidden_size * bpe)))
        shape = replace(shape, vocab_size=min(vocab, shape.vocab_size))
        emb = embedding_params(shape) * bpe
    per_layer = layer_params(shape) * bpe
    layers = int(max(1, min(shape.num_layers, (budget_bytes - emb) // per_layer)))
    return replace(shape, num_layers=layers)


def _cnn_blocks(shape: BenchShape) -> list[tuple[int, int, int, int]]:
    """(in_channels, width, stride, spatial_in) of each bottleneck block run, first ``num_layers``."""
    blocks, in_ch, size = [], 64, shape.image_size // 4  # stem: 7x7/2 conv then 3x3/2 max-pool
    for count, width, stride in RESNET50_STAGES:
        for i in range(count):
            s = stride if i == 0 else 1
            blocks.append((in_ch, width, s, size))
            in_ch, size = width * RESNET_EXPANSION, size // s
    return blocks[: shape.num_layers]


def cnn_params(shape: BenchShape) -> float:
    total = 3 * 64 * 49.0
    for in_ch, width, stride, _ in _cnn_blocks(shape):
        out = width * RESNET_EXPANSION
        total += in_ch * width + 9 * width * width + width * out
        if stride != 1 or in_ch != out:
            total += in_ch * out
    return total


def _cnn_flops_bytes(shape: BenchShape, batch: int, bpe: float) -> tuple[float, float]:
    stem_out = shape.image_size // 2
    flops = 2.0 * batch * stem_out**2 * 3 * 64 * 49
    nbytes = bpe * batch * (3 * shape.image_size**2 + 64 * stem_out**2)
    for in_ch, width, stride, size in _cnn_blocks(shape):
        out_size, out = size // stride, width * RESNET_EXPANSION
        macs = size * size * in_ch * width + out_size**2 * (9 * width * width + width * out)
        acts = size * size * in_ch + out_size**2 * (2 * width + out)
        if stride != 1 or in_ch != out:
            macs += out_size**2 * in_ch * out
            acts += out_size**2 * out
        flops += 2.0 * batch * macs
        nbytes += bpe * (batch * acts * 2)  # each activation written once and read once
    nbytes += cnn_params(shape) * bpe
    return flops, nbytes


def forward_counts(shape: BenchShape, batch: int, seq_len: int, precision: str = "fp32") -> dict[str, float]:
    """FLOPs and bytes of one forward pass over ``batch`` x ``seq_len`` tokens (or ``batch`` images).

    Decoders compute logits for the last position only (prefill, as a server does); encoders have no
    head. Returns ``{"flops", "bytes", "tokens"}``.
    """
    bpe = bytes_per_element(precision)
    if shape.kind == "cnn":
        flops, nbytes = _cnn_flops_bytes(shape, batch, bpe)
        return {"flops": flops, "bytes": nbytes, "tokens": float(batch)}
    t = float(batch * seq_len)
    h, q = shape.hidden_size, shape.num_attention_heads * shape.head_dim
    kv = shape.num_kv_heads * shape.head_dim
    inter = shape.intermediate_size
    up_projections = 2 if shape.kind == "decoder" else 1  # SwiGLU has gate and up; GELU MLP has up
    layer_gemms = [(t, h, q), (t, h, kv), (t, h, kv), (t, q, h)]  # q, k, v, o projections
    layer_gemms += [(t, h, inter)] * up_projections + [(t, inter, h)]
    pairs = seq_len * (seq_len + 1) / 2 if shape.kind == "decoder" else float(seq_len * seq_len)
    attn_flops = 4.0 * batch * shape.num_attention_heads * pairs * shape.head_dim
    attn_bytes = bpe * batch * seq_len * (2 * q + 2 * kv)
    layer_flops = sum(2.0 * m * k * n for m, k, n in layer_gemms) + attn_flops
    layer_bytes = sum(bpe * (m * k + k * n + m * n) for m, k, n in layer_gemms) + attn_bytes
    layer_bytes += bpe * ELEMENTWISE_PASSES_PER_LAYER * 2 * t * h
    flops, nbytes = layer_flops * shape.num_layers, layer_bytes * shape.num_layers
    nbytes += bpe * t * h * 2  # embedding gather: read rows, write activations
    if shape.kind == "decoder":
        flops += 2.0 * batch * h * shape.vocab_size
        nbytes += bpe * (shape.vocab_size * h + batch * (h + shape.vocab_size))
    return {"flops": flops, "bytes": nbytes, "tokens": t}


def training_counts(shape: BenchShape, batch: int, seq_len: int, precision: str = "fp32") -> dict[str, float]:
    """One training step: 3x forward FLOPs (Kaplan et al. 2020) with the LM head over every token,
    and bytes of forward + backward (2x) + an AdamW update (read weight, grad, 2 moments; write 3)."""
    fwd = forward_counts(shape, batch, seq_len, precision)
    flops, nbytes = fwd["flops"], fwd["bytes"]
    if shape.kind == "decoder":  # training computes logits at every position, not only the last
        extra = batch * (seq_len - 1)
        flops += 2.0 * extra * shape.hidden_size * shape.vocab_size
        nbytes += bytes_per_element(precision) * extra * (shape.hidden_size + shape.vocab_size)
    n_params = params(shape)
    return {"flops": 3.0 * flops, "bytes": 3.0 * nbytes + 7 * 4.0 * n_params, "tokens": fwd["tokens"]}


def training_memory_bytes(shape: BenchShape, batch: int, seq_len: int) -> float:
    """Peak training memory in fp32 with AdamW: weights + grads + 2 moments (16 B/param) + activations.

    Activations per transformer layer: ``s b h (34 + 5 a s / h)`` bytes at 16-bit (Korthikanti et al.
    2022, "Reducing Activation Recomputation in Large Transformer Models", eq. 1), doubled for fp32.
    CNN: every block activation kept for backward (forward bytes / 2 as the stored half).
    """
    n_params = params(shape)
    state = 16.0 * n_params
    if shape.kind == "cnn":
        return state + forward_counts(shape, batch, 1)["bytes"] / 2
    s, b, h, a = seq_len, batch, shape.hidden_size, shape.num_attention_heads
    acts = 2.0 * s * b * h * (34 + 5 * a * s / h) * shape.num_layers
    logits = 4.0 * 2 * b * s * shape.vocab_size if shape.kind == "decoder" else 0.0
    return state + acts + logits
