"""MLPerf LLM presets through ``validate``: DeepSeek-R1 end to end, row overrides, Interactive names, skips.

Synthetic rows in the canonical schema (reference README). The DeepSeek-R1 sanity band uses the LG51
figure copied in ``perf.mlperf_llm`` (NVIDIA 8xB200 Offline 33,379 output tokens/s, MLPerf Inference
v5.1); it is a physical-sanity bound (a factor of 3 either way), not a fitted target.
"""

import dataclasses

import numpy as np
import pytest

from infrafit.catalog import load_catalog
from infrafit.perf.types import SkipRow, ValidateContext
from infrafit.perf.validate import llm as rows_llm
from infrafit.perf.validate.llm import predict_cases
from infrafit.perf.validate.mlperf_llm import PRESETS, preset, split_workload
from infrafit.perf.validate.run import validate_rows

CONFIGS = "tests/fixtures/model_configs"
LG51_B200X8_OFFLINE_TOK_S = 33379.0  # benchmarks_reference.md §2, LG51 (MLPerf Inference v5.1)


def _row(rid, workload="mlperf-inf/deepseek-r1", scenario="offline", precision="fp4", acc="nvidia_b200_sxm",
         count=8, tps=""):
    return {"row_id": rid, "accelerator_id": acc, "accelerator_family": "", "accelerator_count": str(count),
            "nodes": "1", "task": "inference", "workload": workload, "accuracy_target": "99", "scenario": scenario,
            "precision": precision, "precision_executed": "", "software_stack_family": "tensorrt-llm",
            "input_tokens": "", "output_tokens": "", "batch_size": "", "tp": "", "pp": "", "dp": "", "ep": "",
            "metric_kind": "output_tokens_per_s", "metric_value": str(LG51_B200X8_OFFLINE_TOK_S),
            "metric_scope": "system", "mean_output_tokens_reported": tps, "source_type": "mlperf-inference",
            "round": "v5.1"}


@pytest.fixture(scope="module")
def ctx():
    return ValidateContext(load_catalog(), CONFIGS)


@pytest.fixture(scope="module")
def deepseek(ctx):
    rows = [_row("off-fp4"), _row("off-fp8", precision="fp8"), _row("srv-fp4", scenario="server"),
            _row("srv-fp8", scenario="server", precision="fp8")]
    out = validate_rows(rows, CONFIGS)
    return {r["row_id"]: r["predicted"] for r in out["results"]}, out["skipped"]


def test_deepseek_r1_preset_is_consistent_with_its_model():
    mp = PRESETS["mlperf-inf/deepseek-r1"]
    assert mp.model == "deepseek-r1" and mp.beam_width == 1  # greedy (IR51 FAQ)
    assert mp.input_tokens_source == "estimate"
    assert mp.mean_input_tokens < mp.max_input_tokens
    assert mp.interactive_ttft_limit_s is None and mp.interactive_tpot_limit_s is None  # none in v5.1
    assert mp.tpot_limit_s < mp.ttft_limit_s


def test_every_preset_mean_input_is_under_its_maximum():
    for mp in PRESETS.values():
        assert 0 < mp.mean_input_tokens <= mp.max_input_tokens, mp.workload


def test_deepseek_r1_rows_are_predicted_not_skipped(deepseek):
    preds, skipped = deepseek
    assert skipped == []
    assert set(preds) == {"off-fp4", "off-fp8", "srv-fp4", "srv-fp8"}


def test_deepseek_r1_offline_within_physical_band_of_lg51(deepseek, ctx):
    preds, _ = deepseek
    assert LG51_B200X8_OFFLINE_TOK_S / 3 < preds["off-fp4"] < 3 * LG51_B200X8_OFFLINE_TOK_S
    # Compute bound: every generated token costs at least 2 FLOPs per active parameter.
    acc = ctx.catalog.accelerator("nvidia_b200_sxm")
    arch = rows_llm.resolve_arch("deepseek-r1", ctx)
    assert preds["off-fp4"] < 8 * acc.peak("fp4") / (2.0 * arch.params_active())


def test_deepseek_r1_narrower_precision_and_server_limits_order(deepseek):
    preds, _ = deepseek
    assert preds["off-fp4"] > preds["off-fp8"]
    # Server (Poisson arrivals under p99 limits) never beats Offline on the same system
    assert preds["srv-fp4"] <= preds["off-fp4"] and preds["srv-fp8"] <= preds["off-fp8"]


LAW_GRID = {  # (workload, accelerator, count, precision, stack): LLM presets on chips of 4 vendors' generations
    "workloads": ("mlperf-inf/llama2-70b", "mlperf-inf/llama3.1-8b", "mlperf-inf/mixtral-8x7b",
                  "mlperf-inf/deepseek-r1", "mlperf-inf/gptj-6b", "mlperf-inf/llama3.1-405b"),
    "systems": (("nvidia_h100_sxm", 8, "fp8", "tensorrt-llm"), ("nvidia_h200_sxm", 1, "fp8", "tensorrt-llm"),
                ("nvidia_b200_sxm", 8, "fp4", "tensorrt-llm"), ("nvidia_l40s", 4, "fp8", "tensorrt-llm"),
                ("amd_mi300x", 8, "fp8", "vllm"), ("intel_gaudi2", 8, "bf16", "pytorch")),
}


def test_server_never_beats_offline_over_a_grid_of_configurations(ctx):
    """The law Server <= Offline on every (preset, chip, count, precision, stack) of the grid, for the
    Server and (where the rules have it) the Interactive limits: the same engine cannot process faster
    under random arrivals than with every sample queued at once."""
    pairs, cases = [], []
    for wl in LAW_GRID["workloads"]:
        for acc, count, prec, stack in LAW_GRID["systems"]:
            offline = rows_llm.prepare(_row("o", wl, "offline", prec, acc, count), ctx)
            for scen in ("server", "interactive"):
                try:
                    limited = rows_llm.prepare(_row("s", wl, scen, prec, acc, count), ctx)
                except SkipRow:
                    continue
                stacked = [dataclasses.replace(c, stack=stack) for c in (offline, limited)]
                pairs.append((wl, acc, scen, len(cases)))
                cases += stacked
    preds = predict_cases(cases)
    assert len(pairs) >= 40
    checked = strict = 0
    for wl, acc, scen, i in pairs:
        off, srv = preds[i], preds[i + 1]
        if not (np.isfinite(off) and off > 0):
            assert not (np.isfinite(srv) and srv > 0), (wl, acc, scen)  # nothing fits either way
            continue
        assert srv <= off, (wl, acc, scen, srv, off)
        checked += 1
        strict += srv < 0.999 * off
    assert checked >= 30
    assert strict >= 5  # the limits do bind somewhere: the law is not met by Server == Offline alone


def test_deepseek_r1_input_estimate_sensitivity_is_small(ctx):
    case = rows_llm.prepare(_row("s"), ctx)
    base = predict_cases([case])[0]
    # TP layouts replicate the MLA cache, so this Offline row is KV-bound (perf.validate.mlperf_llm
    # docstring): a shorter prompt frees little (+2.8%), a longer one costs KV room (-16%). Both stay small
    # against the ~3,700 output tokens, and a longer prompt never raises the throughput.
    short = predict_cases([dataclasses.replace(case, input_tokens=250.0)])[0] / base
    long = predict_cases([dataclasses.replace(case, input_tokens=1000.0)])[0] / base
    assert 1.0 <= short < 1.05
    assert 0.80 < long < 0.90


def test_reported_mean_output_overrides_preset(ctx):
    mp = preset("mlperf-inf/deepseek-r1")
    plain = rows_llm.prepare(_row("a"), ctx)
    reported = rows_llm.prepare(_row("b", tps="3000.5"), ctx)
    assert plain.output_tokens == mp.mean_output_tokens
    assert reported.output_tokens == 3000.5
    p_plain, p_rep = predict_cases([plain, reported])
    assert p_plain != p_rep


def test_interactive_suffix_resolves_to_base_preset_with_interactive_limits(ctx):
    assert split_workload("mlperf-inf/llama2-70b-interactive") == ("mlperf-inf/llama2-70b", True)
    assert split_workload("mlperf-inf/llama2-70b") == ("mlperf-inf/llama2-70b", False)
    mp = PRESETS["mlperf-inf/llama2-70b"]
    for row in (_row("i1", "mlperf-inf/llama2-70b-interactive", "server", "fp8"),
                _row("i2", "mlperf-inf/llama2-70b", "interactive", "fp8")):
        case = rows_llm.prepare(row, ctx)
        assert (case.mode, case.ttft_limit_s, case.tpot_limit_s) == (
            "server", mp.interactive_ttft_limit_s, mp.interactive_tpot_limit_s)
    server = rows_llm.prepare(_row("s", "mlperf-inf/llama2-70b", "server", "fp8"), ctx)
    assert server.tpot_limit_s == mp.tpot_limit_s > mp.interactive_tpot_limit_s


def test_rows_that_cannot_be_modelled_are_skipped_with_reasons():
    rows = [_row("no-int", scenario="interactive"), _row("ss", scenario="singlestream"),
            _row("lib", workload="mlperf-inf/qwen3-235b-a22b"), _row("unk", workload="mlperf-inf/no-such-net")]
    out = validate_rows(rows, CONFIGS)
    assert out["results"] == []
    reasons = {s["row_id"]: s["reason"] for s in out["skipped"]}
    assert "Interactive" in reasons["no-int"] and "deepseek-r1" in reasons["no-int"]
    assert "singlestream" in reasons["ss"]
    for rid, name in (("lib", "mlperf-inf/qwen3-235b-a22b"), ("unk", "mlperf-inf/no-such-net")):
        assert "preset" in reasons[rid] and name in reasons[rid], reasons[rid]


def test_skip_is_raised_by_prepare_for_unknown_mlperf_llm(ctx):
    with pytest.raises(SkipRow, match="no LLM preset"):
        rows_llm.prepare(_row("x", workload="mlperf-inf/qwen3-235b-a22b"), ctx)


def test_gptj_server_checks_its_end_to_end_limit_at_the_longest_output(ctx):
    """GPT-J Server's 20 s p99 bound (CONF41) is met by the long requests: beam search generates 30-128 new
    tokens (IR41 max_new_tokens 128), mean 69. The limit is checked at 128 tokens, so the rate that passes is
    lower than one checked at the mean length would be, never above Offline."""
    row = {**_row("g", "mlperf-inf/gptj-6b", "server", "int4", "intel_xeon_8592plus", 2), "round": "v4.1",
           "software_stack_family": "pytorch"}
    case = rows_llm.prepare(row, ctx)
    assert case.e2e_limit_s == 20.0 and case.e2e_output_tokens == 128.0 and case.output_tokens == 69.0
    at_mean = dataclasses.replace(case, e2e_output_tokens=None)
    offline = rows_llm.prepare({**row, "scenario": "offline"}, ctx)
    long_rate, mean_rate, off_rate = predict_cases([case, at_mean, offline])
    assert long_rate < mean_rate <= off_rate
