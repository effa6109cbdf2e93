"""Predict LLM-inference rows of the canonical calibration schema.

A row becomes a ``Case``: the model, the accelerator, precision, stack, the parallel layouts to try
(the stated one, or every TP inside the scale-up domain as a submitter would search), the sequence
lengths and the concurrency or the scenario rule:

- a stated ``concurrency`` (serving latency rows): the steady state at that concurrency;
- a stated ``batch_size`` with ``per_batch`` scope: one static batch, end to end;
- a stated ``batch_size`` with a throughput metric: continuous batching at that many sequences;
- ``per_request`` scope without concurrency: a single request (concurrency 1);
- MLPerf Offline or a throughput table without a batch: the best throughput at any concurrency the
  KV cache holds; MLPerf Server/Interactive: the best throughput whose p99 TTFT/TPOT (or end-to-end)
  meet the scenario's limits.

``prepare`` turns rows into cases (or skip reasons), ``evaluate`` runs all cases at once on arrays.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

import numpy as np

from infrafit.perf.llm_setup import default_stack
from infrafit.perf.llm_shape import LLMShape, shape_from_arch
from infrafit.perf.mlperf_llm import MLPerfLLM, preset, split_workload
from infrafit.perf.types import SkipRow, ValidateContext

#: Concurrencies a submitter's layout search tries per replica; reaches 4,096 for MLPerf Offline batches
#: (the planner's own grid, search.evaluate, is finer and stops at 1,024 where serving SLOs bind).
CONCURRENCY_GRID = np.array([1, 2, 4, 8, 16, 32, 64, 128, 192, 256, 384, 512, 768, 1024, 1536, 2048, 3072, 4096])
LLM_METRICS = {"output_tokens_per_s", "total_tokens_per_s", "ttft_s", "tpot_s", "e2e_latency_s",
               "per_token_latency_s", "samples_per_s", "queries_per_s"}
PRECISIONS = {"fp32", "bf16", "fp16", "fp8", "fp4", "int8", "int4"}


@dataclass(frozen=True)
class Case:
    row_id: str
    metric_kind: str
    scope: str
    shape: LLMShape
    acc: Any
    precision: str
    stack: str
    layouts: tuple[tuple[int, int, int, int], ...]  # (tp, pp, adp, ep)
    input_tokens: float
    output_tokens: float
    mode: str  # fixed | static | offline | server
    concurrency: float = 1.0
    ttft_limit_s: float | None = None
    tpot_limit_s: float | None = None
    e2e_limit_s: float | None = None
    tokens_per_sample: float | None = None
    count: int = 1


def _num(row: dict[str, str], key: str) -> float | None:
    v = (row.get(key) or "").strip()
    try:
        return float(v) if v else None
    except ValueError:
        return None


def resolve_arch(name: str, ctx: ValidateContext) -> Any:
    """The ``ModelArch`` of a row's workload through the model library and ``--model-configs``."""
    key = f"arch:{name}"
    if key in ctx.cache:
        return ctx.cache[key]
    arch = None
    try:
        from infrafit.workload.models import resolve_model

        arch = resolve_model(name, ctx.model_configs_dir)
    except ImportError:
        arch = _arch_from_folder(name, ctx.model_configs_dir)
    except Exception as exc:  # noqa: BLE001 - any resolution failure is a skip with its reason
        arch = _arch_from_folder(name, ctx.model_configs_dir)
        if arch is None:
            raise SkipRow(f"model {name!r} not in the model library or --model-configs ({exc})") from None
    if arch is None:
        raise SkipRow(f"model {name!r} not in the model library or --model-configs")
    ctx.cache[key] = arch
    return arch


def _arch_from_folder(name: str, folder: str | None) -> Any:
    if not folder or "/" not in name:
        return None
    from infrafit.workload.hf_config import from_hf_config

    org, base = name.split("/", 1)
    for stem in (f"{org}--{base}", f"{org}--{base.removesuffix('-NVFP4').removesuffix('-FP8')}"):
        path = Path(folder) / f"{stem}.json"
        if path.is_file():
            return from_hf_config(path, model_id=name)
    base = base.removesuffix("-NVFP4").removesuffix("-FP8")
    hits = sorted(Path(folder).glob(f"*--{base}.json"))
    return from_hf_config(hits[0], model_id=name) if hits else None


def _shape(name: str, ctx: ValidateContext, beam: int) -> LLMShape:
    key = f"shape:{name}:{beam}"
    if key not in ctx.cache:
        arch = resolve_arch(name, ctx)
        if getattr(arch, "kind", None) != "decoder":
            raise SkipRow(f"{name} is not a decoder LLM (kind {getattr(arch, 'kind', '?')})")
        ctx.cache[key] = shape_from_arch(arch, beam_width=beam)
    return ctx.cache[key]


def _precision(row: dict[str, str], acc: Any, mlperf: bool) -> str:
    executed = (row.get("precision_executed") or "").strip()
    if executed in PRECISIONS:
        return executed
    p = (row.get("precision") or "").strip()
    if mlperf and p in ("fp16", "bf16") and acc.peak("fp8") > 0:
        # MLPerf closed division declares the checkpoint dtype; LLM submissions quantise within the
        # 99% accuracy target and run FP8 where the chip has it (NVIDIA v4.1 notes; reference README).
        return "fp8"
    if p in PRECISIONS:
        return p
    # Unstated: a submitter runs the narrowest width the chip does natively that keeps 99% accuracy.
    for cand in ("fp8", "int8", "bf16", "fp16") if mlperf else ("bf16", "fp16"):
        if acc.peak(cand) > 0:
            return cand
    return "fp32"


def _stated_layout(row: dict[str, str], acc: Any, shape: LLMShape) -> tuple[int, int, int, int] | None:
    tp, pp = _num(row, "tp"), _num(row, "pp")
    if tp is None:
        return None
    adp = max(int(_num(row, "attention_dp") or 1), 1)
    ep = max(int(_num(row, "ep") or 1), 1)
    return physical_layout(int(tp), int(pp or 1), adp, ep, acc, shape)


def physical_layout(tp: int, pp: int, adp: int, ep: int, acc: Any, shape: LLMShape) -> tuple[int, int, int, int]:
    """The layout a stated MoE ``tp`` can physically run as.

    Attention tensor parallelism splits the query heads, so its degree must divide the head count,
    and its two all-reduces per layer stay inside one scale-up domain in aggregated serving. A MoE
    deployment stated as a wider (or non-dividing) TP is the wide expert-parallel layout of
    TensorRT-LLM / SGLang DeepSeek serving: attention data-parallel on every GPU, the routed experts
    spread over all of them. For MLA (one shared latent per token, which TP cannot split) attention
    TP only replicates the KV cache, so such a layout runs attention fully data-parallel.
    """
    heads = shape.attention_heads
    domain = max(int(acc.scaleup_domain_size or 1), 1)
    fits = tp <= domain and (heads <= 0 or heads % tp == 0)
    if fits or not shape.is_moe:
        return tp, pp, adp, ep
    t = 1
    if not shape.is_mla:
        t = max(d for d in range(1, tp + 1) if tp % d == 0 and d <= domain and (heads <= 0 or heads % d == 0))
    return t, pp, adp * tp // t, max(ep, tp * adp)


def _searched_layouts(acc: Any, count: int, shape: LLMShape) -> tuple[tuple[int, int, int, int], ...]:
    domain = max(int(acc.scaleup_domain_size or 1), 1)
    # PCIe cards (no scale-up fabric) run TP up to one 8-GPU host over the PCIe switch.
    reach = domain if domain > 1 else 8
    tps = [t for t in (1, 2, 4, 8) if t <= count and count % t == 0 and t <= reach]
    if not tps:
        tps = [1]
    out = []
    for t in tps:
        ep = t if shape.is_moe else 1
        out.append((t, 1, 1, ep))
    return tuple(out)


def prepare(row: dict[str, str], ctx: ValidateContext) -> Case:
    """A ``Case`` for ``row`` or ``SkipRow`` with the reason it cannot be modelled."""
    metric = (row.get("metric_kind") or "").strip()
    if metric not in LLM_METRICS:
        raise SkipRow(f"metric {metric!r} is not an LLM-inference metric")
    try:
        acc = ctx.catalog.accelerator(row["accelerator_id"])
    except Exception:  # noqa: BLE001
        raise SkipRow(f"accelerator {row.get('accelerator_id')!r} not in the catalog") from None
    workload = row["workload"].strip()
    mp = preset(workload)
    if workload.startswith("mlperf-inf/") and mp is None:
        raise SkipRow(f"no LLM preset for MLPerf workload {workload!r} (its dataset lengths and latency limits "
                      "are not in infrafit.perf.mlperf_llm.PRESETS)")
    shape = _shape(mp.model if mp else workload, ctx, mp.beam_width if mp else 1)
    count = int(_num(row, "accelerator_count") or 1)
    stack = (row.get("software_stack_family") or "").strip() or default_stack(acc)
    precision = _precision(row, acc, mp is not None)
    stated = _stated_layout(row, acc, shape)
    layouts = (stated,) if stated else _searched_layouts(acc, count, shape)
    base = Case(row_id=row["row_id"], metric_kind=metric, scope=(row.get("metric_scope") or "system").strip(),
                shape=shape, acc=acc, precision=precision, stack=stack, layouts=layouts,
                input_tokens=0.0, output_tokens=0.0, mode="fixed", count=count)
    if mp is not None:
        return _mlperf_case(base, row, mp, count)
    return _table_case(base, row)


def _mlperf_case(base: Case, row: dict[str, str], mp: MLPerfLLM, count: int) -> Case:
    osl = _num(row, "mean_output_tokens_reported") or mp.mean_output_tokens
    scenario = (row.get("scenario") or "offline").strip().lower()
    if split_workload(row["workload"])[1]:
        scenario = "interactive"
    case = replace(base, input_tokens=mp.mean_input_tokens, output_tokens=osl, mode="offline",
                   tokens_per_sample=mp.tokens_per_sample_metric)
    if scenario == "offline":
        return case
    if scenario not in ("server", "interactive"):
        raise SkipRow(f"MLPerf scenario {scenario!r} is not modelled for LLMs (offline, server, interactive)")
    if scenario == "interactive":
        if mp.interactive_ttft_limit_s is None and mp.interactive_tpot_limit_s is None:
            raise SkipRow(f"{mp.workload} has no Interactive latency limits in the MLPerf rules we copied")
        return replace(case, mode="server", ttft_limit_s=mp.interactive_ttft_limit_s,
                       tpot_limit_s=mp.interactive_tpot_limit_s)
    return replace(case, mode="server", ttft_limit_s=mp.ttft_limit_s, tpot_limit_s=mp.tpot_limit_s,
                   e2e_limit_s=mp.e2e_limit_s)


def _table_case(base: Case, row: dict[str, str]) -> Case:
    isl, osl = _num(row, "input_tokens"), _num(row, "output_tokens")
    if isl is None or osl is None:
        raise SkipRow("input/output lengths not stated (dataset-driven) and no preset for this workload")
    case = replace(base, input_tokens=isl, output_tokens=osl)
    conc, batch = _num(row, "concurrency"), _num(row, "batch_size")
    if conc is not None:
        return replace(case, concurrency=max(conc, 1.0))
    if case.scope == "per_batch":
        return replace(case, mode="static", concurrency=batch or 1.0)
    if case.scope == "per_request":
        return replace(case, concurrency=1.0)
    if batch is not None:
        return replace(case, concurrency=batch)
    return replace(case, mode="offline")


def prepare_many(rows: list[dict[str, str]], ctx: ValidateContext) -> tuple[list[Case], list[dict[str, str]]]:
    """Cases for the rows that can be modelled, and ``{"row_id", "reason"}`` for the others."""
    cases, skipped = [], []
    for row in rows:
        try:
            cases.append(prepare(row, ctx))
        except SkipRow as exc:
            skipped.append({"row_id": row.get("row_id", ""), "reason": exc.reason})
    return cases, skipped


def predict_many(rows: list[dict[str, str]], ctx: ValidateContext) -> tuple[dict[str, float], list[dict[str, str]]]:
    """Predicted metric by row id for all modelable ``rows`` (vectorized), and the skipped ones."""
    from infrafit.perf.rows_llm_eval import predict_cases

    cases, skipped = prepare_many(rows, ctx)
    preds = predict_cases(cases) if cases else np.array([])
    out = {}
    for case, p in zip(cases, preds, strict=True):
        if np.isfinite(p) and p > 0:
            out[case.row_id] = float(p)
        else:
            skipped.append({"row_id": case.row_id, "reason": "no layout of this configuration fits in memory"})
    return out, skipped


def predict(row: dict[str, str], ctx: ValidateContext) -> float:
    """One row's predicted metric (the validate dispatch's per-row interface)."""
    out, skipped = predict_many([row], ctx)
    if skipped:
        raise SkipRow(skipped[0]["reason"])
    return out[row["row_id"]]
