"""Which weights a quantized checkpoint keeps at 16 bits, and what the quantized ones really take.

A "4-bit" or "8-bit" checkpoint does not hold every tensor at that width:

- **What stays 16-bit.** Quantizers target linear layers and leave some of them alone. NVIDIA ModelOpt's
  default configs disable ``*lm_head*``, ``*router*``, ``*mlp.gate.*`` and ``*block_sparse_moe.gate*``
  (``modelopt/torch/quantization/config.py``, ``_default_disabled_quantizer_cfg``), and the token
  embedding is an ``nn.Embedding``, not a linear layer, so it is never quantized. That is the default
  (``DEFAULT_KEPT``). A checkpoint can keep more: gpt-oss's MXFP4 checkpoint keeps attention too
  (``modules_to_not_convert``), Kimi K2.5's int4 checkpoint keeps attention, shared experts and dense
  MLP layers (compressed-tensors ``ignore``). ``scheme_from_config`` reads those lists; they hold at the
  checkpoint's own precision, and another precision (a re-quantization) keeps only the default.
- **Block scales.** Block formats store a scale per block (``FORMAT_BITS``): MXFP4 one 8-bit E8M0
  scale per 32 elements (OCP Microscaling Formats v1.0), 4.25 bits per weight; NVFP4 one FP8 E4M3 scale
  per 16 (NVIDIA, "Introducing NVFP4", 2025), 4.5 bits; AWQ/GPTQ int4 a 16-bit scale and a 4-bit zero
  per group of 128, 4.16 bits. 8-bit formats use per-tensor or per-channel scales (DeepSeek's 128x128
  fp8 blocks add 0.002 bits), 8 bits.

Tensor classes follow ``ModelArch.params_breakdown``: attention, dense_mlp, shared_experts,
routed_experts, router, embedding, lm_head; norms and other small tensors are counted as kept.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping
from typing import Any, Final

from infrafit.units import BITS_PER_BYTE, bytes_per_element

TENSOR_CLASSES: Final[tuple[str, ...]] = (
    "attention", "dense_mlp", "shared_experts", "routed_experts", "router", "embedding", "lm_head",
)
#: Kept at 16 bits by every common quantizer (ModelOpt defaults; embeddings are not linear layers).
DEFAULT_KEPT: Final[tuple[str, ...]] = ("router", "embedding", "lm_head")

_MX_BLOCK: Final = 32  # OCP MX v1.0: 32 elements share one 8-bit power-of-two scale
_NVFP4_BLOCK: Final = 16  # NVFP4: 16 elements share one FP8 E4M3 scale
_AWQ_GROUP: Final = 128  # AWQ/GPTQ default group size: one 16-bit scale and one 4-bit zero point
_SCALE_BITS_8: Final = 8.0
_SCALE_BITS_16: Final = 16.0

#: Bits one stored weight takes, its block scales included, by checkpoint format.
FORMAT_BITS: Final[dict[str, float]] = {
    "mxfp4": 4.0 + _SCALE_BITS_8 / _MX_BLOCK,
    "nvfp4": 4.0 + _SCALE_BITS_8 / _NVFP4_BLOCK,
    "int4_group128": 4.0 + (_SCALE_BITS_16 + 4.0) / _AWQ_GROUP,
}
#: The format a precision name stands for when the checkpoint does not say (``fp4``: NVFP4, the format
#: ModelOpt exports for Blackwell; ``int4``: AWQ/GPTQ with groups of 128).
DEFAULT_FORMAT: Final[dict[str, str]] = {"fp4": "nvfp4", "int4": "int4_group128"}

QUANTIZED: Final[frozenset[str]] = frozenset({"fp8", "int8", "fp4", "int4"})


def quantized_bits_per_weight(precision: str, checkpoint_bits: float | None = None) -> float:
    """Bits per quantized weight at ``precision`` with its scales: the checkpoint's own figure when
    given, else the precision's default format (8 for fp8/int8, 4.5 for fp4, 4.16 for int4)."""
    if checkpoint_bits:
        return float(checkpoint_bits)
    fmt = DEFAULT_FORMAT.get(precision)
    return FORMAT_BITS[fmt] if fmt else bytes_per_element(precision) * BITS_PER_BYTE


# --- reading a checkpoint's quantization config ------------------------------------------------------
_CLASS_PATTERNS: Final[tuple[tuple[str, re.Pattern[str]], ...]] = (
    ("lm_head", re.compile(r"lm_head|output_layer")),
    ("embedding", re.compile(r"embed")),
    ("shared_experts", re.compile(r"shared_expert")),
    ("router", re.compile(r"router|(mlp|moe)\.gate(\b|$|\.|\*)|e_score_correction_bias|block_sparse_moe\.gate")),
    ("attention", re.compile(r"self_attn|attention|attn")),
    ("dense_mlp", re.compile(r"mlp\\?\.\(?(gate|up|gate_up|down)")),
    ("routed_experts", re.compile(r"experts")),
)


def classes_of_patterns(patterns: Iterable[str]) -> tuple[str, ...]:
    """Tensor classes named by module names or patterns (``model.layers.*.self_attn``, ``lm_head``,
    ``re:.*shared_experts.*``); names of norms and other small tensors name no class."""
    found: set[str] = set()
    for raw in patterns:
        p = str(raw).lower().removeprefix("re:")
        if "norm" in p:  # input/post-attention layernorms: small, counted as kept anyway
            continue
        for cls, rx in _CLASS_PATTERNS:
            if rx.search(p):
                found.add(cls)
                break
    return tuple(c for c in TENSOR_CLASSES if c in found)


def _ignore_list(q: Mapping[str, Any]) -> list[str] | None:
    for key in ("modules_to_not_convert", "ignore", "exclude_modules", "ignored_layers"):
        v = q.get(key)
        if isinstance(v, str):  # some exporters write the list as its Python repr
            return re.findall(r"[^\s'\",\[\]]+", v)
        if isinstance(v, list):
            return [str(x) for x in v]
    return None


def _checkpoint_bits(q: Mapping[str, Any]) -> float | None:
    method = str(q.get("quant_method") or "").lower()
    algo = str(q.get("quant_algo") or (q.get("quantization") or {}).get("quant_algo") or "").lower()
    if method == "mxfp4" or algo == "mxfp4":
        return FORMAT_BITS["mxfp4"]
    if algo == "nvfp4":
        return FORMAT_BITS["nvfp4"]
    if method == "compressed-tensors":
        for group in (q.get("config_groups") or {}).values():
            w = (group or {}).get("weights") or {}
            bits, size = w.get("num_bits"), w.get("group_size")
            if bits and size:
                zero = 0.0 if w.get("symmetric", True) else float(bits)
                return float(bits) + (_SCALE_BITS_16 + zero) / float(size)
            if bits:
                return float(bits)
    if method in ("awq", "gptq") and q.get("bits") and q.get("group_size"):
        size = float(q["group_size"])
        return float(q["bits"]) + (_SCALE_BITS_16 + float(q["bits"])) / size if size > 0 else float(q["bits"])
    return None


def scheme_from_config(q: Mapping[str, Any] | None) -> dict[str, Any]:
    """``{"quant_kept": classes, "quant_bits_per_weight": bits}`` read from a ``quantization_config``
    (or ModelOpt ``hf_quant_config``); only the keys the config states."""
    if not q:
        return {}
    out: dict[str, Any] = {}
    inner = q.get("quantization", q) if isinstance(q.get("quantization"), Mapping) else q
    ignore = _ignore_list(inner)
    if ignore is not None:
        out["quant_kept"] = tuple(sorted(set(classes_of_patterns(ignore)) | set(DEFAULT_KEPT),
                                         key=TENSOR_CLASSES.index))
    bits = _checkpoint_bits(inner if inner is not q else q)
    if bits:
        out["quant_bits_per_weight"] = round(bits, 4)
    return out


def kept_classes(arch: Any, precision: str | None = None) -> tuple[str, ...]:
    """Tensor classes this model keeps at 16 bits when it runs quantized at ``precision``: its checkpoint's
    own scheme at the checkpoint's precision (or when ``precision`` is None), else ``DEFAULT_KEPT`` (a
    checkpoint quantized to another width by another tool follows that tool's defaults)."""
    kept = getattr(arch, "quant_kept", None)
    own = precision is None or precision == getattr(arch, "default_precision", None)
    return tuple(kept) if kept and own else DEFAULT_KEPT


def weight_bytes_by_class(arch: Any, precision: str, sixteen: str = "bf16") -> float:
    """Bytes of the whole model's weights at ``precision``: quantized classes at the format's bits
    (scales included), kept classes and untyped parameters at ``sixteen``."""
    total = float(arch.params_total())
    if precision not in QUANTIZED:
        return total * bytes_per_element(precision)
    parts = arch.params_breakdown()
    kept = set(kept_classes(arch, precision))
    key = {"lm_head": "lm_head_untied", "dense_mlp": "dense_mlp", "routed_experts": "routed_experts"}
    quantized = sum(parts[key.get(c, c)] for c in TENSOR_CLASSES if c not in kept)
    quantized = min(quantized, total)
    own = getattr(arch, "quant_bits_per_weight", None)
    bits = quantized_bits_per_weight(precision, own if precision == getattr(arch, "default_precision", None) else None)
    return quantized * bits / BITS_PER_BYTE + (total - quantized) * bytes_per_element(sixteen)
