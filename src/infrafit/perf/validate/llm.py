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

import re
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

import numpy as np

from infrafit.perf.core import admission_limited_rate
from infrafit.perf.llm.engine import Setup, max_concurrency, serve, static_batch_e2e_s
from infrafit.perf.llm.setup import EFFICIENCY_FIELDS, ConfigRow, build_setup, default_stack, with_checkpoint
from infrafit.perf.llm.shape import LLMShape, shape_from_arch
from infrafit.perf.profiles import Profiles, load_profiles
from infrafit.perf.types import SkipRow, ValidateContext
from infrafit.perf.validate.mlperf_llm import MLPerfLLM, preset, split_workload

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
    e2e_output_tokens: float | None = None  # output length the e2e limit is checked at (default: the mean)
    max_seqs: float | None = None  # requests in flight one engine admits (the harness's cap), None = unbounded
    tokens_per_sample: float | None = None
    count: int = 1
    #: ``mean`` rows (``metric_statistic``) compare TTFT with its mean over requests, others with its median
    statistic: str = "median"


def _num(row: dict[str, str], key: str) -> float | None:
    v = (row.get(key) or "").strip()
    try:
        return float(v) if v else None
    except ValueError:
        return None


#: ``metric_statistic`` values: over requests, the mean or the median; empty (not stated) reads as the median
STATISTICS = {"mean": "mean", "median": "median", "p50": "median", "": "median"}


def row_statistic(row: dict[str, str]) -> str:
    """``mean`` or ``median``: the statistic over requests a latency row reports (``metric_statistic``)."""
    text = (row.get("metric_statistic") or "").strip().lower()
    if text not in STATISTICS:
        raise SkipRow(f"metric_statistic {text!r} is not one of mean, median, p50 (or empty: not stated)")
    return STATISTICS[text]


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


_ID_LAYOUT = re.compile(r"_tp(\d+)_ep(\d+)_")


def layout_from_id(row: dict[str, str]) -> dict[str, str]:
    """``row`` with its parallel fields re-read from its id where the source's fields disagree with it.

    AIConfigurator's silicon sample writes some DeepSeek runs with their parallel fields multiplied by
    the expert-parallel degree (``count_check = id_suggests_N``: the id says ``tp8_ep8``, 8 GPUs in
    TensorRT-LLM naming; the fields say TP 64 on 64 GPUs). Most of those rows repeat, digit for digit,
    the TTFT and TPOT of the same run stated at N GPUs, so the id is right: the GPU count is N, EP is the
    id's, and the factor ``f = tp x attention_dp / N`` comes off attention DP where it divides it
    (TP 1 x DP 64 -> DP 8, each rank's batch 8x; TP 4 x DP 4 -> TP 4) and off TP otherwise (TP 64 -> 8);
    the client concurrency is the run's and stays. A flagged row whose
    id names no layout, or whose fields do not divide, is skipped: its GPU count is unknown."""
    flag = (row.get("count_check") or "").strip()
    if not flag.startswith("id_suggests_"):
        return row
    m = _ID_LAYOUT.search(row.get("row_id", ""))
    tp, adp = int(_num(row, "tp") or 1), max(int(_num(row, "attention_dp") or 1), 1)
    n = int(m.group(1)) if m else 0
    if not m or n < 1 or (tp * adp) % n:
        raise SkipRow(f"GPU count uncertain: count_check {flag!r}, and the id names no layout that the "
                      f"parallel fields (tp {tp} x attention_dp {adp}) divide into")
    f = tp * adp // n
    per_rank = 1  # how much each attention-DP rank's batch grows when DP shrinks
    if adp > 1 and adp % f == 0:
        adp, per_rank = adp // f, f
    elif tp % f == 0:
        tp //= f
    else:
        raise SkipRow(f"GPU count uncertain: count_check {flag!r}; neither tp {tp} nor attention_dp {adp} "
                      f"divides by the factor {f} the id implies")
    out = {**row, "tp": str(tp), "attention_dp": str(adp), "ep": m.group(2), "accelerator_count": str(n)}
    batch = _num(row, "batch_size")
    if batch is not None:  # the client load is unchanged, so each of the fewer DP ranks carries more of it
        out["batch_size"] = f"{batch * per_rank:g}"
    return out


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


def engine_part(acc: Any, engines: int) -> Any:
    """One of ``engines`` independent serving engines a harness runs on one chip: a CPU socket split into
    NUMA-node workers (Intel's MLPerf GPT-J harness runs one process per NUMA node and several workers
    per process, each pinned to its own cores with its own copy of the model). Each engine gets
    ``1 / engines`` of the chip's compute, memory bandwidth and memory (a decode step reads the whole
    model from its share of the bandwidth). The row's ``engines_per_chip`` says how many; its
    ``max_num_seqs`` caps the requests each engine admits."""
    if engines <= 1:
        return acc
    return replace(acc, peak_flops_per_s={k: v / engines for k, v in acc.peak_flops_per_s.items()},
                   memory_bytes=acc.memory_bytes / engines, memory_bytes_per_s=acc.memory_bytes_per_s / engines)


#: Sustained clock against board power under a power cap: dynamic power is ``C V^2 f`` and across the DVFS range
#: the voltage rises about in step with the clock, so power goes as ``f^3`` and the clock the cap allows as
#: ``power^(1/3)`` (the dynamic-power relation of Hennessy & Patterson, Computer Architecture 6th ed., sec. 1.5,
#: with voltage scaled together with frequency).
CLOCK_POWER_EXPONENT = 1.0 / 3.0


def power_limited(acc: Any, watts: float | None) -> Any:
    """``acc`` run at a board power of ``watts`` instead of its catalog ``tdp_w`` (a row's ``power_limit_w``):
    compute-bound kernels run at the clock that power sustains, so every compute peak scales by
    ``(watts / tdp_w) ** CLOCK_POWER_EXPONENT``; HBM runs on its own clock, so memory bandwidth does not move.
    NVIDIA's MLPerf v4.1 H200 "CTS" systems state a 1,000 W TGP against the catalog's 700 W: a factor 1.126,
    against the 1.114 (Offline) and 1.088 (Server) the same submitter measured between its 1,000 W and 700 W
    eight-GPU Llama 2 70B systems (the engine predicts 1.09x there: not every step is compute-bound). Unchanged
    when either power is unknown or they agree."""
    tdp = float(getattr(acc, "tdp_w", float("nan")) or float("nan"))
    if watts is None or not (watts > 0 and tdp > 0) or watts == tdp:
        return acc
    factor = (watts / tdp) ** CLOCK_POWER_EXPONENT
    return replace(acc, peak_flops_per_s={k: v * factor for k, v in acc.peak_flops_per_s.items()}, tdp_w=watts)


def prepare(row: dict[str, str], ctx: ValidateContext) -> Case:
    """A ``Case`` for ``row`` or ``SkipRow`` with the reason it cannot be modelled."""
    metric = (row.get("metric_kind") or "").strip()
    if metric not in LLM_METRICS:
        raise SkipRow(f"metric {metric!r} is not an LLM-inference metric")
    try:
        acc = ctx.catalog.accelerator(row["accelerator_id"])
    except Exception:  # noqa: BLE001
        raise SkipRow(f"accelerator {row.get('accelerator_id')!r} not in the catalog") from None
    watts = _num(row, "power_limit_w")
    if watts is not None and not float(acc.tdp_w or 0.0) > 0:  # nan (not published) compares False too
        raise SkipRow(f"power_limit_w {watts:g} is stated but the catalog has no tdp_w for {acc.id!r}, so the "
                      "clock that power sustains is unknown (add the chip's published board power to "
                      "accelerators.csv, or leave power_limit_w empty)")
    acc = power_limited(acc, watts)
    row = layout_from_id(row)
    workload = row["workload"].strip()
    mp = preset(workload)
    if workload.startswith("mlperf-inf/") and mp is None:
        raise SkipRow(f"no LLM preset for MLPerf workload {workload!r} (its dataset lengths and latency limits "
                      "are not in infrafit.perf.validate.mlperf_llm.PRESETS)")
    shape = _shape(mp.model if mp else workload, ctx, mp.beam_width if mp else 1)
    count = int(_num(row, "accelerator_count") or 1)
    stack = (row.get("software_stack_family") or "").strip() or default_stack(acc)
    precision = _precision(row, acc, mp is not None)
    engines = int(_num(row, "engines_per_chip") or 1)
    if engines > 1:  # the harness's own engines, each on a part of a chip: one replica each
        acc, count = engine_part(acc, engines), count * engines
        layouts: tuple[tuple[int, int, int, int], ...] = ((1, 1, 1, 1),)
    else:
        stated = _stated_layout(row, acc, shape)
        layouts = (stated,) if stated else _searched_layouts(acc, count, shape)
    base = Case(row_id=row["row_id"], metric_kind=metric, scope=(row.get("metric_scope") or "system").strip(),
                shape=shape, acc=acc, precision=precision, stack=stack, layouts=layouts,
                input_tokens=0.0, output_tokens=0.0, mode="fixed", count=count, max_seqs=_num(row, "max_num_seqs"),
                statistic=row_statistic(row))
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
                   e2e_limit_s=mp.e2e_limit_s, e2e_output_tokens=mp.max_output_tokens)


def _ambiguous_load(conc: float | None, batch: float | None, row: dict[str, str]) -> str:
    """Why a row whose client concurrency is not its batch x attention DP is not modelled."""
    ratio = f" ({conc / batch:g}x)" if conc and batch else ""
    return (f"concurrency {conc:g} is not batch_size {batch:g} x attention_dp {row.get('attention_dp') or 1}{ratio}: "
            "the run's replica count, attention data parallelism or client queueing is not recorded, so the "
            "load on one replica is unknown") if conc and batch else "concurrency does not match the batch"


def _table_case(base: Case, row: dict[str, str]) -> Case:
    isl, osl = _num(row, "input_tokens"), _num(row, "output_tokens")
    if isl is None or osl is None:
        raise SkipRow("input/output lengths not stated (dataset-driven) and no preset for this workload")
    case = replace(base, input_tokens=isl, output_tokens=osl)
    conc, batch = _num(row, "concurrency"), _num(row, "batch_size")
    if (row.get("concurrency_check") or "").strip() == "mismatch":
        raise SkipRow(_ambiguous_load(conc, batch, row))
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

    cases, skipped = prepare_many(rows, ctx)
    preds = predict_cases(cases) if cases else np.array([])
    out = {}
    for case, p in zip(cases, preds, strict=True):
        if np.isfinite(p) and p > 0:
            out[case.row_id] = float(p)
        else:
            layouts = ", ".join(f"tp{tp} pp{pp} dp{adp} ep{ep}" for tp, pp, adp, ep in case.layouts)
            skipped.append({"row_id": case.row_id,
                            "reason": f"no layout of this configuration holds the model ({layouts} on {case.count} "
                                      f"x {case.acc.id}): the weights leave no room for one sequence's KV cache"})
    return out, skipped


def predict(row: dict[str, str], ctx: ValidateContext) -> float:
    """One row's predicted metric (the validate dispatch's per-row interface)."""
    out, skipped = predict_many([row], ctx)
    if skipped:
        raise SkipRow(skipped[0]["reason"])
    return out[row["row_id"]]


@dataclass
class Expanded:
    cases: list[Case]
    setup: Setup
    sources: dict[str, np.ndarray]
    case_index: np.ndarray
    concurrency: np.ndarray
    groups: dict[int, np.ndarray]  # id(shape) -> entry indices
    shapes: dict[int, LLMShape]


def expand(cases: list[Case], profiles: Profiles | None = None) -> Expanded:
    rows: list[ConfigRow] = []
    case_index: list[int] = []
    conc: list[float] = []
    for i, c in enumerate(cases):
        grid = CONCURRENCY_GRID if c.mode in ("offline", "server") else np.array([c.concurrency])
        for tp, pp, adp, ep in c.layouts:
            cfg = with_checkpoint(ConfigRow(c.acc, c.precision, c.stack, tp, pp, adp, ep), c.shape)
            for cc in grid:
                rows.append(cfg)
                case_index.append(i)
                conc.append(float(cc) * (adp if c.mode in ("offline", "server") else 1))
    setup, _, sources = build_setup(rows, profiles)
    ci = np.asarray(case_index)
    shape_ids = np.array([id(cases[i].shape) for i in case_index])
    groups = {sid: np.nonzero(shape_ids == sid)[0] for sid in np.unique(shape_ids)}
    shapes = {id(c.shape): c.shape for c in cases}
    return Expanded(cases, setup, sources, ci, np.asarray(conc), groups, shapes)


def _with_values(ex: Expanded, values: np.ndarray | None) -> Setup:
    if values is None:
        return ex.setup
    return replace(ex.setup, **{f: values[idx] for f, idx in ex.sources.items() if f in EFFICIENCY_FIELDS})


def _entry_metrics(ex: Expanded, s: Setup) -> dict[str, np.ndarray]:
    n = len(ex.case_index)
    keys = ("ttft", "ttft_mean", "tpot", "ttft99", "tpot99", "rate", "offline_rate", "static_e2e", "cmax")
    out = {k: np.full(n, np.nan) for k in keys}
    c = ex.cases
    isl = np.array([c[i].input_tokens for i in ex.case_index])
    osl = np.array([c[i].output_tokens for i in ex.case_index])
    closed = np.array([c[i].mode != "server" for i in ex.case_index])  # MLPerf Server: Poisson arrivals
    for sid, idx in ex.groups.items():
        shape = ex.shapes[sid]
        sub = s.take(idx)
        sv = serve(shape, sub, ex.concurrency[idx], isl[idx], osl[idx], closed[idx])
        out["ttft"][idx], out["tpot"][idx] = sv.ttft_p50_s, sv.tpot_p50_s
        out["ttft_mean"][idx] = sv.ttft_mean_s
        out["ttft99"][idx], out["tpot99"][idx] = sv.ttft_p99_s, sv.tpot_p99_s
        out["rate"][idx], out["offline_rate"][idx] = sv.requests_per_s, sv.offline_requests_per_s
        out["static_e2e"][idx] = static_batch_e2e_s(shape, sub, ex.concurrency[idx], isl[idx], osl[idx])
        out["cmax"][idx] = max_concurrency(shape, sub, isl[idx] + osl[idx], isl[idx])
    return out


def _metric(case: Case, m: dict[str, np.ndarray], j: np.ndarray, replicas: np.ndarray) -> np.ndarray:
    """The row's metric for entries ``j`` of ``case``."""
    kind, osl, isl = case.metric_kind, case.output_tokens, case.input_tokens
    if case.mode == "static":
        e2e = m["static_e2e"][j]
        if kind == "e2e_latency_s":
            return e2e
        rate = case.concurrency / e2e
    elif case.mode == "offline":
        rate = m["offline_rate"][j]  # the throughput-optimal point: batch full, no latency limits
    else:
        rate = m["rate"][j]
    ttft = m["ttft_mean" if case.statistic == "mean" else "ttft"][j]
    if kind == "ttft_s":
        return ttft
    if kind in ("tpot_s", "per_token_latency_s"):
        return m["tpot"][j]
    if kind == "e2e_latency_s":
        return ttft + (osl - 1.0) * m["tpot"][j]
    if case.scope == "per_request" and kind == "output_tokens_per_s":
        return 1.0 / m["tpot"][j]
    out_tok = rate * osl * replicas
    if kind == "output_tokens_per_s":
        return out_tok if case.tokens_per_sample is None else rate * replicas * case.tokens_per_sample
    if kind == "total_tokens_per_s":
        return out_tok * (isl + osl) / osl
    return rate * replicas  # samples_per_s, queries_per_s


def evaluate(ex: Expanded, values: np.ndarray | None = None) -> np.ndarray:
    """Predicted metric of every case (NaN where no layout fits)."""
    s = _with_values(ex, values)
    m = _entry_metrics(ex, s)
    gpus = s.tp * s.pp * s.adp
    pred = np.full(len(ex.cases), np.nan)
    order = np.argsort(ex.case_index, kind="stable")
    bounds = np.searchsorted(ex.case_index[order], np.arange(len(ex.cases) + 1))
    for i, case in enumerate(ex.cases):
        j = order[bounds[i]:bounds[i + 1]]
        replicas = np.floor(case.count / gpus[j])
        # a layout holds the model when its weights leave room for at least one sequence's KV cache and
        # the accelerators give at least one replica; one that does not is never clamped to concurrency 1
        fits = (m["cmax"][j] >= 1.0) & (replicas >= 1)
        if not fits.any():
            continue  # NaN: reported as skipped, with the reason (predict_many)
        vals = _metric(case, m, j, replicas)
        if case.mode in ("fixed", "static"):
            pred[i] = vals[0] if fits[0] else np.nan
            continue
        ok = (ex.concurrency[j] <= m["cmax"][j]) & fits
        if case.max_seqs:  # the harness admits at most this many requests per engine (one scheduler per
            ok &= ex.concurrency[j] / s.adp[j] <= case.max_seqs  # attention-DP rank, as vLLM's --max-num-seqs)
            if case.mode == "server" and ok.any():
                queued = _admission_queue_metric(case, m, j[ok], ex.concurrency, s, replicas[ok])
                if np.isfinite(queued):
                    pred[i] = queued
                    continue
        if case.mode == "server":
            lim = np.ones_like(ok)
            if case.ttft_limit_s:
                lim &= m["ttft99"][j] <= case.ttft_limit_s
            if case.tpot_limit_s:
                lim &= m["tpot99"][j] <= case.tpot_limit_s
            if case.e2e_limit_s:
                # the p99 request is a long one: its own output length, not the mean (MLPerf GPT-J: 30-128
                # new tokens, mean 69), at the load the mean lengths set
                long_osl = case.e2e_output_tokens or case.output_tokens
                lim &= m["ttft99"][j] + (long_osl - 1) * m["tpot99"][j] <= case.e2e_limit_s
            if not (ok & lim).any() and ok.any():
                lim = ex.concurrency[j] == ex.concurrency[j][ok].min()
            ok = ok & lim  # a subset of Offline's entries, each rate capped by its Offline rate
        if not ok.any():  # every searched concurrency exceeds what fits: the smallest one of a fitting layout
            ok = fits & (ex.concurrency[j] == ex.concurrency[j][fits].min())
        pred[i] = np.nanmax(np.where(ok, vals, np.nan))
    return pred


def _admission_queue_metric(case: Case, m: dict[str, np.ndarray], j: np.ndarray, concurrency: np.ndarray,
                            s: Setup, replicas: np.ndarray) -> float:
    """MLPerf Server on an engine that admits at most ``max_num_seqs`` requests: Poisson arrivals beyond
    the admitted ones wait in the harness's queue for a free slot, and that wait counts in the p99 TTFT
    and end-to-end latency. The engine at full occupancy (the largest admitted concurrency) holds each
    request for the mean end-to-end time; the rate is the highest one whose p99 slot wait fits in what
    the limits leave after the engine's own p99 (``perf.core.admission_limited_rate``, M/M/c), never
    above the Offline rate. NaN (the caller's grid search instead) when no limit bounds the wait, a TPOT
    limit is missed, or the full engine already misses a limit by itself."""
    pick = int(np.argmax(concurrency[j]))
    k, osl = int(j[pick]), case.output_tokens
    if case.tpot_limit_s and m["tpot99"][k] > case.tpot_limit_s:
        return float("nan")
    budgets = []
    if case.e2e_limit_s:
        long_osl = case.e2e_output_tokens or osl
        budgets.append(case.e2e_limit_s - (m["ttft99"][k] + (long_osl - 1.0) * m["tpot99"][k]))
    if case.ttft_limit_s:
        budgets.append(case.ttft_limit_s - m["ttft99"][k])
    if not budgets or min(budgets) < 0.0:
        return float("nan")
    ranks = float(s.adp[k])
    slots = int(round(concurrency[k] / ranks))
    service = m["ttft"][k] + (osl - 1.0) * m["tpot"][k]
    rate = min(admission_limited_rate(slots, float(service), float(min(budgets))) * ranks, m["offline_rate"][k])
    queued = dict(m)
    queued["rate"] = m["rate"].copy()
    queued["rate"][k] = rate
    return float(_metric(case, queued, np.array([k]), np.array([replicas[pick]]))[0])


def predict_cases(cases: list[Case], profiles: Profiles | None = None) -> np.ndarray:
    return evaluate(expand(cases, profiles or load_profiles()))
