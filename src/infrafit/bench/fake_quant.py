"""Serving formats simulated in fp32 ("fake quantization"): each ``nn.Linear`` weight, and for W8A8/W4A4
formats its input, rounded to the format's grid and scaled back, so ``check-model`` can compare the answers
of an fp8, NVFP4 or INT4 model with fp32 ones on a CPU that has none of those kernels.

The rounding is the format's; the accumulation stays fp32 (real kernels accumulate in fp32 too), so what is
measured is the error the format's grid adds, the part of a quantized model's accuracy loss that depends on
the model's weights and activations, not on a kernel.

- ``fp8``: W8A8 in OCP FP8 E4M3 (max 448): one scale per output channel for the weights, one per token for
  the activations, computed as they arrive (vLLM's ``--quantization fp8`` dynamic scheme).
- ``fp4``: NVFP4 (W4A4): E2M1 values (0, 0.5, 1, 1.5, 2, 3, 4, 6) in blocks of 16 along the input dimension,
  each block's scale stored in FP8 E4M3 (NVIDIA, "Introducing NVFP4", 2025), weights and activations alike.
- ``int4``: W4A16: weights in asymmetric 4-bit integers, one scale and zero point per group of 128 inputs,
  rounded to nearest (the grid AWQ and GPTQ checkpoints store; their calibration, which picks better scales
  or compensates the rounding, is not simulated, so this is the format's worst case); activations unquantized.

The LM head is left at the model's precision, as serving stacks and checkpoints keep it
(``workload.quant``: embedding, LM head and router stay 16-bit).
"""

from __future__ import annotations

import copy
from typing import Any

FAKE_QUANT = ("fp8", "fp4", "int4")
FP8_E4M3_MAX = 448.0
E2M1_VALUES = (0.0, 0.5, 1.0, 1.5, 2.0, 3.0, 4.0, 6.0)
NVFP4_BLOCK = 16
INT4_GROUP = 128
#: Linear layers kept at the model's precision (serving checkpoints keep the LM head at 16 bits).
KEPT = ("lm_head",)


def fp8_e4m3(t: Any, dim: int = -1) -> Any:
    """``t`` rounded to FP8 E4M3 with one scale per slice along ``dim`` (amax / 448), scaled back."""
    import torch

    scale = t.abs().amax(dim=dim, keepdim=True).clamp(min=1e-12) / FP8_E4M3_MAX
    return (t / scale).to(torch.float8_e4m3fn).to(t.dtype) * scale


def _blocks(t: Any, size: int) -> tuple[Any, int]:
    """``t`` as rows of ``size`` along its last dimension (zero-padded), and the padding added."""
    import torch

    pad = (-t.shape[-1]) % size
    if pad:
        t = torch.nn.functional.pad(t, (0, pad))
    return t.reshape(-1, size), pad


def _unblock(b: Any, shape: tuple[int, ...], pad: int) -> Any:
    out = b.reshape(*shape[:-1], shape[-1] + pad)
    return out[..., : shape[-1]] if pad else out


def nvfp4(t: Any) -> Any:
    """``t`` rounded to NVFP4: E2M1 values in blocks of 16 along the last dimension, each block's scale
    (amax / 6) itself rounded to FP8 E4M3, scaled back."""
    import torch

    b, pad = _blocks(t, NVFP4_BLOCK)
    scale = (b.abs().amax(dim=-1, keepdim=True) / E2M1_VALUES[-1]).clamp(min=1e-12)
    scale = scale.to(torch.float8_e4m3fn).to(t.dtype).clamp(min=1e-12)
    grid = torch.tensor(E2M1_VALUES, dtype=t.dtype)
    x = (b / scale).clamp(-E2M1_VALUES[-1], E2M1_VALUES[-1])
    nearest = grid[(x.abs().unsqueeze(-1) - grid).abs().argmin(dim=-1)]
    return _unblock(torch.sign(x) * nearest * scale, tuple(t.shape), pad)


def int4_groups(w: Any) -> Any:
    """``w`` rounded to asymmetric 4-bit integers (0..15) with a scale and zero point per 128 inputs."""
    import torch

    b, pad = _blocks(w, INT4_GROUP)
    lo, hi = b.amin(dim=-1, keepdim=True), b.amax(dim=-1, keepdim=True)
    scale = ((hi - lo) / 15.0).clamp(min=1e-12)
    zero = torch.round(-lo / scale)
    q = torch.clamp(torch.round(b / scale) + zero, 0, 15)
    return _unblock((q - zero) * scale, tuple(w.shape), pad)


def _quantizers(precision: str) -> tuple[Any, Any]:
    """(weight rounding, activation rounding or None) of a format."""
    if precision == "fp8":
        return (lambda w: fp8_e4m3(w, dim=1)), (lambda x: fp8_e4m3(x, dim=-1))
    if precision == "fp4":
        return nvfp4, nvfp4
    if precision == "int4":
        return int4_groups, None
    raise ValueError(f"no simulated format {precision!r}; one of {', '.join(FAKE_QUANT)}")


def fake_quantized(model: Any, precision: str) -> Any:
    """A copy of ``model`` whose ``nn.Linear`` layers (but ``KEPT``) compute on ``precision``'s grid."""
    import torch

    weights, acts = _quantizers(precision)

    class _Linear(torch.nn.Module):
        def __init__(self, linear: Any) -> None:
            super().__init__()
            with torch.no_grad():
                self.weight = torch.nn.Parameter(weights(linear.weight.detach().float()), requires_grad=False)
            self.bias = linear.bias

        def forward(self, x: Any) -> Any:
            return torch.nn.functional.linear(acts(x) if acts is not None else x, self.weight, self.bias)

    out = copy.deepcopy(model)
    for module in list(out.modules()):
        for child_name, child in list(module.named_children()):
            if isinstance(child, torch.nn.Linear) and child_name not in KEPT:
                setattr(module, child_name, _Linear(child))
    return out
