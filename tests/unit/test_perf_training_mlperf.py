"""MLPerf Training v5.0/v5.1 presets (llama3.1-405b, llama3.1-8b, flux1): convergence points, evaluation
cadence, the FLUX.1 MMDiT shape, and end-to-end time-to-train rows through ``perf.validate``."""

from __future__ import annotations

import dataclasses
import math

import pytest

from infrafit.catalog import load_catalog
from infrafit.perf.training.step import executed_flops_per_token
from infrafit.perf.validate.mlperf_training import (
    BENCHMARKS,
    FLUX1_SHAPE,
    FLUX1_TOKENS_PER_SAMPLE,
    benchmark_for_workload,
    evaluations,
    samples_to_converge,
)
from infrafit.perf.validate.run import ValidateContext, predict_rows
from infrafit.workload.models import get_model

NEW = ("llama3.1-405b", "llama3.1-8b", "flux1")


@pytest.fixture(scope="module")
def ctx() -> ValidateContext:
    return ValidateContext(load_catalog(), None)


def _row(workload: str, acc: str, count: int, gbs: int, rid: str = "r") -> dict[str, str]:
    return {"row_id": rid, "accelerator_id": acc, "accelerator_count": str(count), "task": "training",
            "workload": f"mlperf-train/{workload}", "global_batch_size": str(gbs),
            "metric_kind": "time_to_train_min", "metric_value": "1"}


@pytest.mark.parametrize("name", NEW)
def test_rcp_points_reproduced_and_interpolated_linearly(name: str) -> None:
    bench = benchmark_for_workload(f"mlperf-train/{name}")
    assert bench is BENCHMARKS[name] and bench.rcp_unit == "samples"
    for gbs, mean in bench.rcp:
        assert samples_to_converge(bench, gbs) == pytest.approx(mean)
    (b0, v0), (b1, v1) = bench.rcp[0], bench.rcp[1]
    assert samples_to_converge(bench, (b0 + b1) / 2) == pytest.approx((v0 + v1) / 2)


def test_eval_cadence_follows_the_rules() -> None:
    big = BENCHMARKS["llama3.1-405b"]  # every 18,432 sequences, FLOOR(0.0026 GBS + 12) skipped
    s = samples_to_converge(big, 1152)
    assert evaluations(big, s, 1152) == math.floor(s / 18432) - math.floor(0.0026 * 1152 + 12)
    small = BENCHMARKS["llama3.1-8b"]  # CEIL(12288 / GBS) x GBS when GBS does not divide 12,288
    every = math.ceil(12288 / 96) * 96
    assert evaluations(small, samples_to_converge(small, 96), 96) == math.floor(278_640 / every)
    assert BENCHMARKS["flux1"].eval_samples == 8 * 29_696


def test_flux_shape_matches_the_library_transformer() -> None:
    comp = {c.name: c for c in get_model("flux1-schnell").components}["transformer"]
    assert FLUX1_SHAPE.params_total() == pytest.approx(comp.params)
    assert 11.8e9 < comp.params < 12.0e9  # published: about 11.9B
    # the preset's per-token forward work (bidirectional attention) covers the counted FLOPs to 1%
    fwd = float(executed_flops_per_token(FLUX1_SHAPE, FLUX1_TOKENS_PER_SAMPLE, "full", "none")) / 3.0
    assert fwd * FLUX1_TOKENS_PER_SAMPLE == pytest.approx(comp.flops_fwd, rel=0.01)


def test_new_benchmarks_predict_and_scale(ctx: ValidateContext) -> None:
    rows = [_row("llama3.1-8b", "nvidia_b200_sxm", 8, 32, "a"), _row("llama3.1-8b", "nvidia_b200_sxm", 64, 32, "b"),
            _row("llama3.1-405b", "nvidia_gb200_per_gpu", 512, 1152, "c"),
            _row("llama3.1-405b", "nvidia_gb200_per_gpu", 2048, 1152, "d"),
            _row("flux1", "nvidia_b200_sxm", 8, 512, "e"), _row("flux1", "nvidia_b200_sxm", 64, 512, "f")]
    preds, skipped = predict_rows(rows, ctx)
    assert skipped == []
    for small, large in (("a", "b"), ("c", "d"), ("e", "f")):
        assert 0 < preds[large] < preds[small]  # more chips at the same batch: sooner, not 8x sooner
        assert preds[small] / preds[large] < 8.0


def test_time_floor_is_the_compute_at_peak(ctx: ValidateContext) -> None:
    """No prediction beats the RCP samples' training FLOPs at the chips' fp8 dense peak."""
    acc = ctx.catalog.accelerator("nvidia_b200_sxm")
    bench = BENCHMARKS["llama3.1-8b"]
    shape_flops = 6.0 * get_model("llama3.1-8b").params_total() * bench.seq_len
    floor_min = samples_to_converge(bench, 32) * shape_flops / (8 * acc.peak("fp8")) / 60.0
    preds, _ = predict_rows([_row("llama3.1-8b", "nvidia_b200_sxm", 8, 32)], ctx)
    assert floor_min < preds["r"] < 5.0 * floor_min


def _round_row(round_: str, gbs: int, rid: str) -> dict[str, str]:
    return {**_row("llama3.1-405b", "nvidia_gb200_per_gpu", 512, gbs, rid), "round": round_}


def test_405b_rules_follow_the_row_round() -> None:
    base = BENCHMARKS["llama3.1-405b"]
    v50 = benchmark_for_workload("mlperf-train/llama3.1-405b", "v5.0")
    assert benchmark_for_workload("mlperf-train/llama3.1-405b", "v5.1") is base
    assert benchmark_for_workload("mlperf-train/llama3.1-405b", "") is base  # no round: the latest rules
    assert benchmark_for_workload("mlperf-train/llama3.1-405b", "v6.0") is base
    assert benchmark_for_workload("mlperf-train/llama3.1-8b", "v5.0") is BENCHMARKS["llama3.1-8b"]
    # v5.0: training_5.0.0 RCP less one evaluation (46,080 samples); eval every 46,080, none skipped
    assert dict(v50.rcp)[1152] == 322_560 and dict(base.rcp)[1152] == 313_344
    assert samples_to_converge(v50, 1152) == pytest.approx(322_560 - 46_080)
    assert evaluations(v50, samples_to_converge(v50, 1152), 1152) == math.floor((322_560 - 46_080) / 46_080)
    assert v50.max_global_batch == 9216 and base.max_global_batch == 0


def test_v50_and_v51_rows_at_the_same_batch_differ_by_the_rules(ctx: ValidateContext) -> None:
    from infrafit.perf.training.profile import load_profile
    from infrafit.perf.validate.training import plan_row

    profile = load_profile()
    gbs = 1152
    p50 = plan_row(_round_row("v5.0", gbs, "a"), ctx, profile)
    p51 = plan_row(_round_row("v5.1", gbs, "b"), ctx, profile)
    fwd = 5_760 / 3.0  # one evaluation: 5,760 sequences forward = a third of a training pass each
    s50, s51 = 322_560 - 46_080, 313_344
    evals50 = math.floor(s50 / 46_080)
    evals51 = math.floor(s51 / 18_432) - math.floor(0.0026 * gbs + 12)
    assert p50.a == pytest.approx((s50 + evals50 * fwd) / gbs)
    assert p51.a == pytest.approx((s51 + evals51 * fwd) / gbs)
    assert p50.raw == p51.raw  # same layout and step: only the samples on the clock differ
    preds, skipped = predict_rows([_round_row("v5.0", gbs, "a"), _round_row("v5.1", gbs, "b")], ctx)
    assert skipped == [] and 0 < preds["a"] < preds["b"]  # v5.0 converges one evaluation early
    # v5.0 capped GBS at 9,216: a larger batch is skipped under v5.0 and predicted under v5.1
    preds, skipped = predict_rows([_round_row("v5.0", 18_432, "c"), _round_row("v5.1", 18_432, "d")], ctx)
    assert "d" in preds and "c" not in preds and "9216" in skipped[0]["reason"]


def _shape_and_run(workload: str, acc: str, count: int, gbs: int, ctx: ValidateContext):
    from infrafit.perf.training.profile import load_profile
    from infrafit.perf.validate.training import _run, _shape_for

    bench = benchmark_for_workload(f"mlperf-train/{workload}")
    shape = _shape_for(bench.model, ctx)
    run = _run(shape, ctx.catalog.accelerator(acc), _row(workload, acc, count, gbs), bench.seq_len, gbs,
               bench.method, bench.lora_rank, load_profile(), fastest=True)
    return bench, shape, run


def test_lora_evaluates_173_sequences_at_a_forward_pass_each(ctx: ValidateContext) -> None:
    """The LoRA eval set is the 173 validation sequences MLPerf pins; one evaluation costs whole sequences per
    data-parallel rank (the busiest rank sets the time) at the forward pass's share of a LoRA training sample,
    which is about 1/2 (the backward skips the frozen weights' gradients), not full training's 1/3."""
    from infrafit.perf.validate.training import eval_cost_samples

    bench, shape, run = _shape_and_run("llama2-70b-lora", "nvidia_h100_sxm", 1024, 128, ctx)
    assert bench.eval_samples == 173.0
    dp = run.layout.dp
    assert dp > 1 and math.ceil(173 / dp) * dp > 173  # 173 does not split evenly: rounded up to whole sequences
    seq = bench.seq_len
    forward = 2.0 * shape.matmul_params_active() + shape.attention_flops_fwd_per_token(seq / 2.0)
    share = forward / float(executed_flops_per_token(shape, seq, "lora", run.layout.recompute))
    assert eval_cost_samples(shape, bench, run) == pytest.approx(math.ceil(173 / dp) * dp * share)
    full = float(executed_flops_per_token(shape, seq, "full", "none"))
    assert forward / full == pytest.approx(1.0 / 3.0)  # full training: forward 2N of 6N
    assert 0.45 < share < 0.5  # LoRA: forward 2N of the 4N its backward keeps (selective recompute adds none)
    # evaluation is on the clock: the same row with the eval set removed is faster
    no_eval = dataclasses.replace(bench, eval_samples=0.0)
    assert evaluations(no_eval, 11264.0, 128) == 0.0 and evaluations(bench, 11264.0, 128) == 11.0
