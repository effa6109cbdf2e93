"""A latency row says which statistic over requests it reports (calibration column ``metric_statistic``).

AIConfigurator's silicon rows are means (its e2e-accuracy scripts read the benchmark's ``mean_ttft``); a
prompt's queueing wait behind other prompts is skewed (M/D/1, ~exponential past the service), so its mean
is above its median by ``(1 - ln 2)`` of the mean wait. A ``mean`` row is compared with the model's mean
TTFT, any other with its median."""

from __future__ import annotations

import csv
from pathlib import Path

import numpy as np
import pytest

from infrafit.catalog import load_catalog
from infrafit.perf.core import md1_wait_s
from infrafit.perf.llm import engine as llm
from infrafit.perf.llm.setup import ConfigRow, build_setup
from infrafit.perf.llm.shape import shape_from_arch
from infrafit.perf.types import SkipRow, ValidateContext
from infrafit.perf.validate import llm as rows_llm
from infrafit.perf.validate.run import screen_row
from infrafit.workload.models import get_model

ROOT = Path(__file__).resolve().parents[2]
LATENCY = ROOT / "benchmarks" / "data" / "latency_calibration.csv"
CAT = load_catalog()
L8 = shape_from_arch(get_model("llama3.1-8b"))


def _serve(concurrency: float) -> llm.Serving:
    s, _, _ = build_setup([ConfigRow(CAT.accelerator("nvidia_h100_sxm"), "fp8", "vllm")])
    return llm.serve(L8, s, np.array([concurrency]), np.array([4000.0]), np.array([200.0]))


def test_the_mean_ttft_exceeds_the_median_by_the_skew_of_the_queueing_wait():
    sv = _serve(64.0)
    assert sv.prefill_utilisation[0] > 0.05  # prompts do queue behind each other at this load
    gap = sv.ttft_mean_s[0] - sv.ttft_p50_s[0]
    assert gap > 0
    # the gap is (1 - ln 2) of the mean M/D/1 wait: recover the wait from it and check it against the queue
    wait = gap / (1.0 - np.log(2.0))
    p_mixed = wait / md1_wait_s(sv.prefill_utilisation, 1.0)[0]  # M/D/1 wait is linear in the service time
    assert 0 < p_mixed < sv.ttft_p50_s[0]
    assert sv.ttft_mean_s[0] < sv.ttft_p99_s[0]


def test_one_client_alone_has_no_queue_so_mean_and_median_agree():
    sv = _serve(1.0)
    assert sv.ttft_mean_s[0] == pytest.approx(sv.ttft_p50_s[0])


def _row(statistic: str) -> dict[str, str]:
    return {"row_id": f"r-{statistic}", "accelerator_id": "nvidia_h100_sxm", "accelerator_count": "1",
            "task": "inference", "workload": "meta-llama/Llama-3.1-8B-Instruct", "precision": "fp8",
            "software_stack_family": "vllm", "input_tokens": "4000", "output_tokens": "200", "tp": "1",
            "metric_kind": "ttft_s", "metric_value": "0.5", "metric_scope": "per_request", "concurrency": "64",
            "metric_statistic": statistic}


def test_a_mean_row_is_predicted_with_the_mean_and_an_unstated_one_with_the_median():
    ctx = ValidateContext(CAT, None)
    mean, median, unstated = (rows_llm.prepare(_row(s), ctx) for s in ("mean", "median", ""))
    assert (mean.statistic, median.statistic, unstated.statistic) == ("mean", "median", "median")
    got_mean, got_median, got_unstated = rows_llm.predict_cases([mean, median, unstated])
    assert got_median == pytest.approx(got_unstated)
    sv = _serve(64.0)
    assert got_mean / got_median == pytest.approx(sv.ttft_mean_s[0] / sv.ttft_p50_s[0], rel=1e-6)
    assert got_mean > got_median
    # e2e latency carries the same TTFT statistic
    e2e = [rows_llm.prepare(dict(_row(s), metric_kind="e2e_latency_s"), ctx) for s in ("mean", "median")]
    e2e_mean, e2e_median = rows_llm.predict_cases(e2e)
    assert e2e_mean - e2e_median == pytest.approx(got_mean - got_median, rel=1e-6)


def test_an_unknown_statistic_is_refused_with_the_line_and_the_choices():
    reason = screen_row(dict(_row("p90"), _csv_line="12"))
    assert reason is not None and "CSV line 12" in reason and "metric_statistic 'p90'" in reason
    assert "mean, median or p50" in reason
    assert screen_row(dict(_row("Mean"), _csv_line="3")) is None  # case does not matter
    with pytest.raises(SkipRow, match="metric_statistic"):
        rows_llm.prepare(_row("p99"), ValidateContext(CAT, None))


def test_the_latency_set_states_its_statistic_on_every_row():
    with LATENCY.open(newline="") as fh:
        rows = list(csv.DictReader(fh))
    assert rows and all(r["metric_statistic"] == "mean" for r in rows)
    assert all("mean_ttft" in r["canon_notes"] for r in rows if r["source_type"] == "aiconfigurator-silicon")
    ttft = next(r for r in rows if r["metric_kind"] == "ttft_s")
    case = rows_llm.prepare(ttft, ValidateContext(CAT, str(ROOT / "tests" / "fixtures" / "model_configs")))
    assert case.statistic == "mean"
