"""Predict one training row of the canonical calibration schema (``validate`` calls ``predict``).

Supported metric kinds: ``time_to_train_min`` (MLPerf Training: samples to converge from the RCPs
at the row's global batch / predicted throughput + timed evaluations + on-clock start-up),
``training_tokens_per_s``, ``training_sequences_per_s`` (whole system), ``mfu_fraction`` and
``model_tflops_per_accel`` (per chip). Parallel degrees the row states are pinned; the rest are
searched, as a submitter would have. Nothing here reads a row's measured value.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, replace
from typing import Any

from infrafit.errors import InfrafitError
from infrafit.perf.training.profile import TrainingProfile, load_profile, model_class_of
from infrafit.perf.training.run import DEFAULT_TOKENS_PER_STEP, TrainRun, model_flops_per_sample, train_run
from infrafit.perf.training.shape import TrainShape, from_model_arch
from infrafit.perf.training.step import Chip, Constants, RawTerms, combine, executed_flops_per_token, raw_terms
from infrafit.perf.types import SkipRow
from infrafit.perf.validate.mlperf_training import (
    PRESET_SHAPES,
    RESNET50_ACTIVATION_ELEMENTS,
    MlperfBenchmark,
    benchmark_for_workload,
    evaluations,
    samples_to_converge,
)
from infrafit.units import SECONDS_PER_MINUTE, TFLOPS

METRIC_KINDS = ("time_to_train_min", "training_tokens_per_s", "training_sequences_per_s", "mfu_fraction",
                "model_tflops_per_accel")
#: A non-MLPerf row stating no global batch takes DEFAULT_TOKENS_PER_STEP (perf.training.run).
#: PaLM trained at sequence length 2048 (Chowdhery et al. 2022, sec. 5); used when a row omits it.
DEFAULT_SEQ_LEN = 2048


def _int(row: dict[str, str], key: str) -> int:
    value = (row.get(key) or "").strip()
    try:
        return int(float(value)) if value else 0
    except ValueError:
        return 0


def _shape_for(name: str, ctx: Any) -> TrainShape:
    if name in PRESET_SHAPES:
        return PRESET_SHAPES[name]
    try:
        shape = from_model_arch(ctx.resolve_model(name))
    except InfrafitError as err:
        raise SkipRow(f"model {name!r} is not in the model library: {err.what}") from None
    if shape.kind == "cnn" and name.startswith("resnet50"):
        shape = replace(shape, activation_elements_per_sample=RESNET50_ACTIVATION_ELEMENTS)
    if not shape.is_transformer and not shape.flops_per_sample_fwd:
        raise SkipRow(f"model {name!r} has no FLOPs per sample in the library")
    return shape


def _accelerator(row: dict[str, str], ctx: Any):
    try:
        return ctx.catalog.accelerator(row["accelerator_id"])
    except InfrafitError as err:
        raise SkipRow(f"accelerator {row['accelerator_id']!r} not in the catalog: {err.what}") from None


def _run(shape: TrainShape, acc, row: dict[str, str], seq_len: int, gbs: int, method: str, lora_rank: int,
         profile: TrainingProfile, fastest: bool = False) -> TrainRun:
    fixed = {k: _int(row, k) for k in ("tp", "pp", "dp", "cp", "ep")}
    precision = (row.get("precision_executed") or row.get("precision") or "").strip() or None
    try:
        return train_run(shape, acc, _int(row, "accelerator_count"), seq_len=seq_len, global_batch=gbs,
                         method=method, precision=precision, lora_rank=lora_rank, fixed=fixed, profile=profile,
                         fastest=fastest)
    except InfrafitError as err:
        raise SkipRow(f"cannot lay out the run: {err.what}") from None


@dataclass(frozen=True)
class RowPlan:
    """A row reduced to profile-free numbers: the chosen layout's raw step terms and how the metric
    follows from the step time (``rate``: A / step; ``time``: (start-up + A x step) / 60)."""

    form: str  # "rate" | "time"
    a: float
    raw: RawTerms
    generation: str
    model_class: str


def _plan_mlperf(bench: MlperfBenchmark, row: dict[str, str], ctx: Any, profile: TrainingProfile) -> RowPlan:
    gbs = _int(row, "global_batch_size")
    if gbs <= 0:
        raise SkipRow("MLPerf training row without global_batch_size")
    if bench.max_global_batch and gbs > bench.max_global_batch:
        raise SkipRow(f"GBS {gbs} is above the {bench.max_global_batch} this round's rules allow")
    shape = _shape_for(bench.model, ctx)
    acc = _accelerator(row, ctx)
    # a time-to-train competition: with no precision stated, the submitter's fastest 8-bit format
    run = _run(shape, acc, row, bench.seq_len, gbs, bench.method, bench.lora_rank, profile, fastest=True)
    samples = samples_to_converge(bench, gbs)
    eval_samples = evaluations(bench, samples, gbs) * eval_cost_samples(shape, bench, run)
    a = (samples + eval_samples) / gbs
    raw = _raw(shape, acc, run, bench.seq_len, gbs, bench.method, bench.lora_rank)
    return RowPlan("time", a, raw, str(acc.generation), model_class_of(shape.kind, bench.method))


def eval_cost_samples(shape: TrainShape, bench: MlperfBenchmark, run: TrainRun) -> float:
    """One evaluation's cost in training samples of the run: ``ceil(E / dp) x dp`` sequences (the
    ``eval_samples`` split over the data-parallel ranks in whole sequences, so the busiest rank sets the
    time: 173 sequences over 128 ranks take two sequence times, not 1.35) at a forward pass's share of
    one training sample. That share is the forward FLOPs over the executed training FLOPs of the run's
    own method and recomputation: 1/3 for full training (forward 2N of 6N; Kaplan et al. 2020), about
    1/2 for LoRA, whose backward skips the frozen weights' gradients, lower with activation recomputation;
    1/3 for non-transformer models, whose FLOPs are not counted per token."""
    dp = max(int(run.layout.dp), 1)
    sequences = math.ceil(bench.eval_samples / dp) * dp
    if not shape.is_transformer:
        return sequences / 3.0
    seq = bench.seq_len
    forward = 2.0 * shape.matmul_params_active() + shape.attention_flops_fwd_per_token(
        seq / 2.0 if shape.kind == "decoder" else seq)
    trained = float(executed_flops_per_token(shape, seq, bench.method, run.layout.recompute))
    return sequences * forward / trained


def _raw(shape: TrainShape, acc, run: TrainRun, seq_len: int, gbs: int, method: str, lora_rank: int) -> RawTerms:
    lay = run.layout
    chip = Chip.from_accelerator(acc, run.precision)
    return raw_terms(shape, chip, seq_len=seq_len, global_batch=gbs, method=method, tp=lay.tp, pp=lay.pp,
                     dp=lay.dp, ep=lay.ep, cp=lay.cp, micro_batch=lay.micro_batch, vpp=lay.vpp,
                     zero_stage=lay.zero_stage, recompute=lay.recompute, lora_rank=lora_rank)


def plan_row(row: dict[str, str], ctx: Any, profile: TrainingProfile) -> RowPlan:
    """Resolve a row into a ``RowPlan`` (layout searched with ``profile``); ``SkipRow`` if impossible."""
    if (row.get("task") or "").strip() != "training":
        raise SkipRow("not a training row")
    kind = (row.get("metric_kind") or "").strip()
    if kind not in METRIC_KINDS:
        raise SkipRow(f"metric kind {kind!r} is not a training metric this model predicts")
    workload = (row.get("workload") or "").strip()
    if workload.startswith("mlperf-train/"):
        bench = benchmark_for_workload(workload, (row.get("round") or "").strip())
        if bench is None:
            raise SkipRow(f"no preset for MLPerf benchmark {workload!r}")
        if kind != "time_to_train_min":
            raise SkipRow(f"{kind} is not reported for MLPerf training")
        return _plan_mlperf(bench, row, ctx, profile)
    shape = _shape_for(workload, ctx)
    acc = _accelerator(row, ctx)
    if _int(row, "cp") > 1 and not _int(row, "seq_len"):
        raise SkipRow("context-parallel (long-context) row without seq_len")
    seq_len = _int(row, "seq_len") or DEFAULT_SEQ_LEN
    count = _int(row, "accelerator_count")
    gbs = _int(row, "global_batch_size") or max(count, DEFAULT_TOKENS_PER_STEP // seq_len // count * count)
    run = _run(shape, acc, row, seq_len, gbs, "full", 16, profile)
    raw = _raw(shape, acc, run, seq_len, gbs, "full", 16)
    model_flops = model_flops_per_sample(shape, seq_len) * gbs / count
    a = {"training_tokens_per_s": gbs * seq_len, "training_sequences_per_s": float(gbs),
         "mfu_fraction": model_flops / (acc.peak("bf16") or acc.peak("fp16") or 1.0),
         "model_tflops_per_accel": model_flops / TFLOPS}[kind]
    return RowPlan("rate", a, raw, str(acc.generation), model_class_of(shape.kind))


def evaluate(plan: RowPlan, profile: TrainingProfile) -> float:
    """The metric from a plan and the profile constants."""
    step = float(combine(plan.raw, Constants.from_profile(profile, plan.generation, plan.model_class)).total_s)
    if plan.form == "rate":
        return plan.a / step
    start_s = profile.get("run_overhead_s", plan.generation, plan.model_class)
    return (start_s + plan.a * step) / SECONDS_PER_MINUTE


def predict_with(row: dict[str, str], ctx: Any, profile: TrainingProfile) -> float:
    """``predict`` with an explicit efficiency profile (the fitting script varies it)."""
    return evaluate(plan_row(row, ctx, profile), profile)


def predict(row: dict[str, str], ctx: Any) -> float:
    """Predicted metric of one training row; raises ``SkipRow`` when it cannot be modelled honestly.

    ``ctx`` needs ``.catalog`` (with ``accelerator(id)``) and ``.resolve_model(name)``.
    """
    return predict_with(row, ctx, getattr(ctx, "training_profile", None) or load_profile())
