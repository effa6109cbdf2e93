"""Turn configurations (accelerator, precision, stack, layout) into the arrays of ``llm.Setup``.

Precision rules (what runs at which width):

- ``bf16``/``fp16``/``fp32``: weights, GEMMs and KV at that width (bf16 falls back to fp16 on
  chips without bf16, e.g. Turing).
- ``fp8``: weights and GEMMs in fp8 (FP8 W8A8 as TensorRT-LLM/vLLM/SGLang run it) with an fp8 KV
  cache; on chips without fp8 the weights stay fp8-sized only where a weight-only kernel exists, so
  we fall back to 16-bit and say so.
- ``fp4``: NVFP4/MXFP4 weights and GEMMs on chips with fp4 tensor cores; fp8 elsewhere (noted).
- ``int8``: W8A8 on chips with int8 tensor throughput, otherwise weight-only int8 with 16-bit math.
- ``int4``: weight-only (AWQ/GPTQ/Marlin): 4-bit weights, 16-bit math, 16-bit KV.

Attention runs at 16-bit peak (FlashAttention-2/3 in bf16), or fp8 when the KV cache is fp8 and
the chip has fp8.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, replace
from typing import Any

import numpy as np

from infrafit.catalog.model import peer_link
from infrafit.perf.llm.engine import Setup
from infrafit.perf.policy import fallback_chain, first_native
from infrafit.perf.profiles import Profiles, load_profiles
from infrafit.units import BITS_PER_BYTE, bytes_per_element
from infrafit.workload.quant import QUANTIZED, quantized_bits_per_weight

DEFAULT_STACK_BY_VENDOR = {"NVIDIA": "tensorrt-llm", "AMD": "vllm", "Google": "jetstream", "Intel": "pytorch",
                           "AWS": "neuron"}


@dataclass(frozen=True)
class PrecisionPlan:
    requested: str
    weight: str
    gemm: str
    kv: str
    attention: str
    notes: tuple[str, ...] = ()


def _native(acc: Any, precision: str) -> str:
    """The nearest precision at or above ``precision`` that ``acc`` runs natively."""
    return first_native("llm_inference", precision, acc) or fallback_chain("llm_inference", precision)[-1]


def plan_precision(acc: Any, precision: str) -> PrecisionPlan:
    """Decide weight, GEMM, KV and attention precision on ``acc`` (see the module docstring)."""
    notes: list[str] = []
    sixteen = _native(acc, "bf16")
    if precision == "int4":
        return PrecisionPlan(precision, "int4", sixteen, sixteen, sixteen,
                             ("int4 is weight-only: 4-bit weights, 16-bit math",))
    if precision == "int8" and acc.peak("int8") <= 0:
        return PrecisionPlan(precision, "int8", sixteen, sixteen, sixteen,
                             (f"{acc.id} has no int8 tensor math: weight-only int8 with {sixteen} math",))
    if precision == "fp4" and acc.peak("fp4") <= 0:  # MXFP4/NVFP4 checkpoints on pre-Blackwell chips
        return PrecisionPlan(precision, "fp4", sixteen, sixteen, sixteen,
                             (f"{acc.id} has no fp4 tensor math: weight-only 4-bit (Marlin W4A16 kernels) with "
                              f"{sixteen} math",))
    gemm = _native(acc, precision)
    if gemm != precision:
        notes.append(f"{precision} is not native on {acc.id}: fell back to {gemm}")
    weight = gemm if gemm != "fp32" or precision == "fp32" else sixteen
    kv = "fp8" if weight in ("fp8", "fp4") and acc.peak("fp8") > 0 else sixteen
    attention = "fp8" if kv == "fp8" else sixteen
    return PrecisionPlan(precision, weight, gemm, kv, attention, tuple(notes))


def default_stack(acc: Any) -> str:
    if getattr(acc, "kind", "gpu") == "cpu":
        return "pytorch"
    return DEFAULT_STACK_BY_VENDOR.get(getattr(acc, "vendor", ""), "vllm")


def link_for(acc: Any, gpus: int, profiles: Profiles, stack: str) -> tuple[float, float, str]:
    """``(bytes_per_s, hop_latency_s, name)`` of the link an instance of ``gpus`` chips talks over
    (``Accelerator.peer_link``, the catalog's one missing-link rule)."""
    gen = acc.generation
    # Unknown (None): NaN bandwidth, so any collective over it is NaN and the configuration never
    # passes an SLO; the planner does not generate such layouts (perf.llm.capacity.tp_domain).
    bw, kind = peer_link(acc, gpus) or (float("nan"), "unknown")
    scope = "scaleup" if kind in ("none", "scaleup") else "scaleout"
    return bw, profiles.value(gen, stack, "*", scope, "link_latency"), kind


@dataclass(frozen=True)
class ConfigRow:
    """One configuration to set up: an accelerator object and the serving choices."""

    acc: Any
    precision: str
    stack: str
    tp: int = 1
    pp: int = 1
    adp: int = 1
    ep: int = 1
    #: the model checkpoint's own precision and bits per quantized weight (``LLMShape.checkpoint_*``):
    #: used when this row runs at that precision, else the precision's default format
    checkpoint_precision: str = ""
    checkpoint_bits: float = 0.0


def with_checkpoint(row: ConfigRow, shape: Any) -> ConfigRow:
    """``row`` told its model checkpoint's own precision and format (``LLMShape.checkpoint_*``)."""
    return replace(row, checkpoint_precision=shape.checkpoint_precision, checkpoint_bits=shape.checkpoint_bits)


#: Scale-up fabrics on which every chip reaches every other in one hop (small all-reduces: one-shot).
ONE_HOP_TOPOLOGIES = ("switch", "full_mesh")

#: Setup field -> (phase, op_class) of its profile lookup. Both phases' GEMMs read one row, keyed
#: ``prefill/gemm``: a decode step's GEMM at batch B is the same tiled kernel with M = B, and what M costs is
#: the tile-padding row (``gemm_m_half``), not a second efficiency. A separate decode value was identified only
#: by large-batch rows: on Hopper 0.79-0.81 fitted on all rows, 0.50 with the H200 left out of the fit.
EFFICIENCY_FIELDS = {
    "eff_prefill_gemm": ("prefill", "gemm"), "eff_decode_gemm": ("prefill", "gemm"),
    "eff_memory": ("decode", "memory"), "eff_attention": ("*", "attention"),
    "step_overhead_s": ("decode", "step_overhead"), "prefill_overhead_s": ("prefill", "request_overhead"),
    "memory_reserve_fraction": ("*", "memory_reserve"), "prefill_burst": ("prefill", "burst"),
    "gemm_m_half": ("*", "gemm_m_half"), "expert_m_half": ("*", "expert_m_half"),
    "token_budget": ("*", "token_budget"), "moe_layer_overhead_s": ("prefill", "moe_layer_overhead"),
    "seq_overhead_s": ("decode", "seq_overhead"), "layer_overhead_s": ("decode", "layer_overhead"),
    "moe_decode_layer_overhead_s": ("decode", "moe_layer_overhead"),
    "sparse_layer_overhead_s": ("decode", "sparse_layer_overhead"),
    "prefill_layer_overhead_s": ("prefill", "layer_overhead"),
    "moe_token_overhead_s": ("prefill", "moe_token_overhead"),
}


def _calibrated(accelerator_id: str, precision: str) -> dict[str, float]:
    """Compute and memory efficiencies that ``infrafit calibrate`` measured on this very accelerator
    at this precision (catalog overlay, ``--catalog-dir`` / ``INFRAFIT_CATALOG``); {} when none.
    They replace the fitted profile's GEMM and memory efficiencies for that device only."""
    from infrafit.perf.calibrated import calibration_for

    cal = calibration_for(accelerator_id, precision)
    if cal is None:
        return {}
    return {"eff_prefill_gemm": cal.eff_compute, "eff_decode_gemm": cal.eff_compute, "eff_memory": cal.eff_memory}


#: Recurrent-state width when the stack's row leaves it empty: the model's 16-bit dtype.
DEFAULT_STATE_BYTES_PER_ELEMENT = bytes_per_element("bf16")


def _stack_column(name: str) -> list[tuple[str, Any]]:
    """(stack id, value) of one stacks.csv column (the loader fills a column an overlay left out)."""
    from infrafit.catalog import load_catalog

    stacks = load_catalog().stacks
    return [(str(i), v) for i, v in zip(stacks["id"], stacks[name], strict=True)]


def state_widths() -> dict[str, float]:
    """Stack id -> bytes per element of the linear-attention/SSM state it keeps by default
    (stacks.csv ``recurrent_state_element_bytes``; SGLang float32, vLLM the model dtype)."""
    return {i: float(v) for i, v in _stack_column("recurrent_state_element_bytes")
            if v == v and v is not None}


def prefill_graph_stacks() -> frozenset[str]:
    """Stacks that run a pass carrying prompt tokens as a captured or compiled graph by default (stacks.csv
    ``prefill_pass_graphed``: vLLM V1's piecewise CUDA graphs, XLA, Neuron, ...): no eager per-layer cost."""
    return frozenset(i for i, v in _stack_column("prefill_pass_graphed") if bool(v))


def weight_widths(plan: PrecisionPlan, row: ConfigRow, sixteen: str) -> dict[str, float]:
    """Bytes per element of the quantized weights (block scales included; the checkpoint's own format
    when the row runs the checkpoint's precision) and of the weights kept at 16 bits."""
    own = plan.weight == row.checkpoint_precision
    if plan.weight not in QUANTIZED:
        width = bytes_per_element(plan.weight)
        return {"weight_bytes_per_element": width, "kept_bytes_per_element": width, "own_scheme": float(own)}
    bits = quantized_bits_per_weight(plan.weight, row.checkpoint_bits if own else None)
    return {"weight_bytes_per_element": bits / BITS_PER_BYTE, "kept_bytes_per_element": bytes_per_element(sixteen),
            "own_scheme": float(own)}


def build_setup(
    rows: Sequence[ConfigRow], profiles: Profiles | None = None
) -> tuple[Setup, list[PrecisionPlan], dict[str, np.ndarray]]:
    """Arrays of ``Setup`` for ``rows`` (one entry per row), the precision plan of each, and for each
    efficiency field the index of the profile row it came from (what the fitting script varies)."""
    prof = profiles or load_profiles()
    widths = state_widths()
    graphed = prefill_graph_stacks()
    found: dict[tuple[str, str, str], dict[str, int]] = {}  # the profile rows of one (generation, stack, math)
    # A planner search sets up thousands of layouts of a few (chip, precision, stack): what does not depend on
    # the layout is worked out once per (chip, precision, stack, checkpoint), each link once per (chip, chips),
    # and the columns are gathered from those tables by index.
    fixed: dict[tuple, int] = {}
    plan_of: list[PrecisionPlan] = []
    picked_of: list[dict[str, int]] = []
    base_of: list[dict[str, float]] = []
    links: dict[tuple, int] = {}
    link_of: list[tuple[float, float, float]] = []  # (bytes/s, hop latency s, one-hop fabric)

    def link(acc: Any, gpus: int, stack: str) -> int:
        key = (id(acc), gpus, stack)
        if key not in links:
            bw, lat, kind = link_for(acc, gpus, prof, stack)
            links[key] = len(link_of)
            link_of.append((bw, lat, float(kind == "scaleup" and acc.scaleup_topology in ONE_HOP_TOPOLOGIES)))
        return links[key]

    row_fixed, row_links, layouts = [], [], []
    for r in rows:
        fkey = (id(r.acc), r.precision, r.stack, r.checkpoint_precision, r.checkpoint_bits)
        if fkey not in fixed:
            plan = plan_precision(r.acc, r.precision)
            gen, st = r.acc.generation, r.stack
            key = (gen, st, plan.gemm)
            if key not in found:
                found[key] = {fld: prof.index(gen, st, plan.gemm, phase, op)
                              for fld, (phase, op) in EFFICIENCY_FIELDS.items()}
            fixed[fkey] = len(plan_of)
            plan_of.append(plan)
            picked_of.append(found[key])
            base_of.append({
                "peak_flops_per_s": r.acc.peak(plan.gemm), "attn_flops_per_s": r.acc.peak(plan.attention),
                "memory_bytes_per_s": r.acc.memory_bytes_per_s, "memory_bytes": r.acc.memory_bytes,
                **weight_widths(plan, r, sixteen=_native(r.acc, "bf16")),
                "kv_bytes_per_element": bytes_per_element(plan.kv),
                "state_bytes_per_element": widths.get(st, DEFAULT_STATE_BYTES_PER_ELEMENT),
                "eager_prefill": float(st not in graphed),  # passes with prompt tokens run outside CUDA graphs
                **{fld: prof.rows[idx].value for fld, idx in found[key].items()},
                **_calibrated(r.acc.id, plan.gemm),
            })
        row_fixed.append(fixed[fkey])
        # the TP group's all-reduces stay on its own link; pipeline stages talk over the link that joins
        # the TP x PP chips (the scale-out fabric past one scale-up domain); a MoE replica's all-to-alls
        # span all its chips
        row_links.append((link(r.acc, r.tp, r.stack), link(r.acc, r.tp * r.pp, r.stack),
                          link(r.acc, r.tp * r.pp * r.adp, r.stack)))
        layouts.append((r.tp, r.pp, r.adp, r.ep))
    fi = np.asarray(row_fixed, dtype=int)
    li = np.asarray(row_links, dtype=int).reshape(-1, 3)
    lay = np.asarray(layouts, dtype=float).reshape(-1, 4)
    link_table = np.asarray(link_of, dtype=float).reshape(-1, 3)
    if not base_of:
        empty = Setup(**{k: np.zeros(0) for k in Setup.__dataclass_fields__})
        return empty, [], {fld: np.zeros(0, dtype=int) for fld in EFFICIENCY_FIELDS}
    cols = {k: np.asarray([b[k] for b in base_of], dtype=float)[fi] for k in base_of[0]}
    for name, (which, col) in {"link_bytes_per_s": (0, 0), "link_latency_s": (0, 1), "one_hop": (0, 2),
                               "pp_link_bytes_per_s": (1, 0), "pp_link_latency_s": (1, 1),
                               "ep_link_bytes_per_s": (2, 0), "ep_link_latency_s": (2, 1)}.items():
        cols[name] = link_table[li[:, which], col]
    for j, name in enumerate(("tp", "pp", "adp", "ep")):
        cols[name] = lay[:, j]
    sources = {fld: np.asarray([p[fld] for p in picked_of], dtype=int)[fi] for fld in EFFICIENCY_FIELDS}
    return Setup(**cols), [plan_of[f] for f in row_fixed], sources

