"""Validate on the full calibration sets and assert the issue-4 targets (a few seconds)."""

import pytest

from infrafit.perf.validate.run import validate_csv

DATA = "benchmarks/data"
CONFIGS = "tests/fixtures/model_configs"


@pytest.fixture(scope="module")
def latency():
    return validate_csv(f"{DATA}/latency_calibration.csv", CONFIGS)


@pytest.fixture(scope="module")
def calibration():
    return validate_csv(f"{DATA}/calibration.csv", CONFIGS)


def test_latency_set_predicted_and_tpot_target(latency):
    assert latency["predicted"] >= 0.9 * latency["rows"]
    assert latency["by"]["metric_kind"]["tpot_s"]["mdape"] <= 0.15  # issue 4 section 7


def test_latency_set_ttft_target(latency):
    assert latency["by"]["metric_kind"]["ttft_s"]["mdape"] <= 0.25


def test_calibration_targets(calibration):
    assert calibration["predicted"] >= 0.9 * calibration["rows"]
    assert calibration["mdape"] <= 0.15  # issue 4 section 7 (all tasks)
    for family, g in calibration["by"]["accelerator_family"].items():
        if g["rows"] >= 5:
            assert g["mdape"] <= 0.25, family


def test_llm_inference_rows_of_calibration_are_predicted(calibration):
    predicted = {r["row_id"] for r in calibration["results"]}
    assert {"365", "369", "1532", "1554"} <= predicted  # H200/B200 MLPerf and vendor LLM rows


def test_mlperf_mixtral_moe_rows_within_40_percent(calibration):
    """Mixtral-8x7B MLPerf Offline/Server rows (H100, H200, GH200; calibration.csv, MLCommons
    results) are predicted with physical grouped-GEMM padding, not a fudge factor: none is more
    than 40% low (the old per-stack ``expert_gemm`` constant put them ~5x low)."""
    import csv

    with open(f"{DATA}/calibration.csv", newline="") as fh:
        mixtral = {r["row_id"] for r in csv.DictReader(fh) if r["workload"] == "mlperf-inf/mixtral-8x7b"}
    got = [r for r in calibration["results"] if r["row_id"] in mixtral]
    assert len(got) >= 8
    for r in got:
        assert r["predicted"] / r["measured"] - 1.0 > -0.40, r["row_id"]
