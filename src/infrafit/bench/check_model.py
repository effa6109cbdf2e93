"""Migration checks: does the model give the same answers at lower precision, and which operators
would a target runtime lack?

Precision consistency: the fp32 model is the reference; the same weights cast to bf16/fp16, a copy with
int8 dynamic quantization of every ``nn.Linear`` (``torch.ao.quantization.quantize_dynamic``: int8
weights, activations quantized per batch at run time), and copies whose ``nn.Linear`` layers compute on the
fp8, NVFP4 or INT4 grid (``bench.fake_quant``), run on the same inputs. Reported: max
absolute error, relative L2 error ``||y - y_ref|| / ||y_ref||``, cosine similarity of the flattened
outputs, and top-1 agreement (argmax over the last axis: next-token logits for decoders, the
feature index for encoders and CNNs without a head).

Operator coverage: ``torch.export.export`` gives the graph; each ``call_function`` node's ATen op is
grouped by the innermost module in ``node.meta["nn_module_stack"]``; ONNX-based runtimes are checked
through ``data/aten_to_onnx.csv``, ATen-level runtimes (XLA, Neuron, Gaudi) by the ATen op itself,
against ``data/op_support.csv``. An op with no row for a runtime is ``unknown``, never ``supported``.
"""

from __future__ import annotations

import csv
import warnings
from functools import lru_cache
from importlib import resources
from typing import Any

import numpy as np

from infrafit.bench.fake_quant import FAKE_QUANT, fake_quantized

#: What each simulated format's figures are (``bench.fake_quant``).
FAKE_QUANT_NOTE = {
    "fp8": "simulated W8A8 FP8 E4M3 (per-channel weights, per-token activations), fp32 accumulation",
    "fp4": "simulated NVFP4 W4A4 (E2M1 in blocks of 16, FP8 block scales), fp32 accumulation",
    "int4": "simulated W4A16 INT4 round-to-nearest, groups of 128 (no AWQ/GPTQ calibration: its worst case)",
}

RUNTIMES = ("onnxruntime-cpu", "onnxruntime-cuda", "onnxruntime-rocm", "openvino", "xla-tpu", "neuron", "gaudi")
ONNX_RUNTIMES = ("onnxruntime-cpu", "onnxruntime-cuda", "onnxruntime-rocm", "openvino")
PRECISIONS = ("fp32", "bf16", "fp16", "int8", "fp8", "fp4", "int4")


def _csv(name: str) -> list[dict[str, str]]:
    text = resources.files("infrafit.bench").joinpath(f"data/{name}").read_text()
    return list(csv.DictReader(text.splitlines()))


@lru_cache(maxsize=1)
def support_table() -> dict[tuple[str, str], dict[str, str]]:
    """``(runtime, op) -> row`` from op_support.csv."""
    return {(r["runtime"], r["op"]): r for r in _csv("op_support.csv")}


@lru_cache(maxsize=1)
def onnx_mapping() -> dict[str, list[str]]:
    return {r["aten_op"]: r["onnx_ops"].split(";") for r in _csv("aten_to_onnx.csv")}


def base_op(target: str) -> str:
    """``aten.linear.default`` -> ``aten.linear``; ``aten.add.Tensor`` -> ``aten.add``."""
    parts = str(target).split(".")
    return ".".join(parts[:2]) if parts[0] == "aten" else str(target)


def compare_outputs(ref: Any, out: Any) -> dict[str, float]:
    """Max abs error, relative L2 error, cosine similarity and top-1 agreement of two output tensors."""
    r = ref.detach().float().cpu().numpy()
    o = out.detach().float().cpu().numpy()
    rf, of = r.reshape(-1).astype(np.float64), o.reshape(-1).astype(np.float64)
    denom = float(np.linalg.norm(rf) * np.linalg.norm(of))
    return {
        "max_abs_error": float(np.max(np.abs(rf - of))),
        "rel_l2_error": float(np.linalg.norm(rf - of) / max(float(np.linalg.norm(rf)), 1e-30)),
        "cosine_similarity": float(rf @ of / denom) if denom > 0 else float("nan"),
        "top1_agreement": float(np.mean(r.argmax(axis=-1) == o.argmax(axis=-1))),
    }


def _variant(model: Any, precision: str) -> tuple[Any, Any]:
    """The model at ``precision`` and the dtype its floating inputs need (None: keep fp32)."""
    import copy

    import torch

    from infrafit.bench.models import DTYPES

    if precision in FAKE_QUANT:  # simulated on the format's grid, computed in fp32 (bench.fake_quant)
        return fake_quantized(model, precision), None
    if precision == "int8":
        from torch.ao.quantization import quantize_dynamic

        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            return quantize_dynamic(copy.deepcopy(model), {torch.nn.Linear}, dtype=torch.qint8), None
    return copy.deepcopy(model).to(DTYPES[precision]), DTYPES[precision]


def precision_consistency(model: Any, x: Any, precisions: tuple[str, ...]) -> dict[str, dict[str, Any]]:
    """Run ``model`` at each precision on ``x``; compare with the fp32 output."""
    import torch

    with torch.inference_mode():
        ref = model(x)
    results: dict[str, dict[str, Any]] = {}
    for precision in precisions:
        if precision == "fp32":
            continue
        try:
            variant, dtype = _variant(model, precision)
            inp = x.to(dtype) if dtype is not None and x.is_floating_point() else x
            with torch.inference_mode():
                out = variant(inp)
            results[precision] = {"status": "ok", **compare_outputs(ref, out)}
            if precision in ("int8", *FAKE_QUANT) and not any(isinstance(m, torch.nn.Linear) for m in model.modules()):
                results[precision]["note"] = f"no nn.Linear layers: {precision} left the model in fp32"
            elif precision in FAKE_QUANT:
                results[precision]["note"] = FAKE_QUANT_NOTE[precision]
        except (RuntimeError, NotImplementedError, TypeError) as exc:  # e.g. an op without an fp16 CPU kernel
            results[precision] = {"status": "unsupported", "reason": f"{type(exc).__name__}: {str(exc)[:200]}"}
    return results


def graph_ops(model: Any, x: Any) -> dict[str, list[str]]:
    """``{module path: [ATen ops]}`` of the exported graph (``"(top)"`` for ops outside any submodule)."""
    import torch

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        exported = torch.export.export(model, (x,))
    layers: dict[str, list[str]] = {}
    for node in exported.graph.nodes:
        if node.op != "call_function":
            continue
        stack = node.meta.get("nn_module_stack") or {}
        path = list(stack.values())[-1][0] if stack else ""
        op = base_op(str(node.target))
        ops = layers.setdefault(path or "(top)", [])
        if op not in ops:
            ops.append(op)
    return layers


def op_status(runtime: str, aten_op: str, table: dict[tuple[str, str], dict[str, str]] | None = None,
              mapping: dict[str, list[str]] | None = None) -> dict[str, Any]:
    """``supported`` / ``unsupported`` / ``unknown`` for one ATen op on one runtime, with the evidence."""
    table = support_table() if table is None else table
    mapping = onnx_mapping() if mapping is None else mapping
    if runtime in ONNX_RUNTIMES:
        onnx_ops = mapping.get(aten_op)
        if not onnx_ops:
            return {"status": "unknown", "why": f"no ONNX lowering recorded for {aten_op}"}
        rows = {op: table.get((runtime, op)) for op in onnx_ops}
        missing = [op for op, row in rows.items() if row and row["support"] == "unsupported"]
        unknown = [op for op, row in rows.items() if row is None]
        if missing:
            return {"status": "unsupported", "why": f"ONNX {', '.join(missing)} not supported", "onnx_ops": onnx_ops}
        if unknown:
            return {"status": "unknown", "why": f"no support data for ONNX {', '.join(unknown)}", "onnx_ops": onnx_ops}
        first = next(r for r in rows.values() if r is not None)
        return {"status": "supported", "onnx_ops": onnx_ops, "source": first["source"]}
    row = table.get((runtime, aten_op))
    if row is None:
        return {"status": "unknown", "why": f"no support data for {aten_op} on {runtime}"}
    return {"status": row["support"], "source": row["source"], "note": row.get("note", "")}


def coverage(layers: dict[str, list[str]], runtimes: tuple[str, ...],
             table: dict[tuple[str, str], dict[str, str]] | None = None) -> dict[str, Any]:
    """Per runtime: counts by status and the unsupported/unknown ops layer by layer."""
    out: dict[str, Any] = {}
    all_ops = sorted({op for ops in layers.values() for op in ops})
    for runtime in runtimes:
        statuses = {op: op_status(runtime, op, table) for op in all_ops}
        by_layer = {}
        for layer, ops in layers.items():
            bad = [{"op": op, **statuses[op]} for op in ops if statuses[op]["status"] != "supported"]
            if bad:
                by_layer[layer] = bad
        counts = {s: sum(1 for v in statuses.values() if v["status"] == s)
                  for s in ("supported", "unsupported", "unknown")}
        out[runtime] = {"ops": len(all_ops), **counts, "ok": counts["unsupported"] == 0 and counts["unknown"] == 0,
                        "problems_by_layer": by_layer}
    return out
