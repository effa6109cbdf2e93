"""A calibration row whose client concurrency is not its batch x attention DP is skipped with the reason
(issue 15 defect 9: a row whose stated layout cannot be read is never silently modelled as something else)."""

from __future__ import annotations

import csv
from pathlib import Path

import pytest

from infrafit.catalog import load_catalog
from infrafit.perf.validate.llm import SkipRow, ValidateContext, prepare, prepare_many

ROOT = Path(__file__).resolve().parents[2]
LATENCY = ROOT / "benchmarks" / "data" / "latency_calibration.csv"


@pytest.fixture(scope="module")
def rows():
    return list(csv.DictReader(LATENCY.open()))


def _ctx():
    return ValidateContext(load_catalog(), str(ROOT / "tests" / "fixtures" / "model_configs"))


def test_a_concurrency_that_is_not_batch_times_attention_dp_is_skipped_with_the_reason(rows):
    mismatch = [r for r in rows if r["concurrency_check"] == "mismatch"]
    assert len(mismatch) == 50  # DeepSeek-V3.1/R1 NVFP4 at 448 in flight with batches of 56, Qwen3-32B, ...
    row = next(r for r in mismatch if r["workload"] == "nvidia/DeepSeek-V3.1-NVFP4")
    with pytest.raises(SkipRow) as info:
        prepare(row, _ctx())
    assert "concurrency 448 is not batch_size 56" in str(info.value) and "(8x)" in str(info.value)
    cases, skipped = prepare_many(mismatch, _ctx())
    assert not cases and len(skipped) == len(mismatch)


def test_the_same_row_with_a_consistent_load_is_modelled(rows):
    row = dict(next(r for r in rows if r["concurrency_check"] == "mismatch"
                    and r["workload"] == "nvidia/DeepSeek-V3.1-NVFP4"))
    row.update(concurrency_check="ok", concurrency=row["batch_size"])
    case = prepare(row, _ctx())
    assert case.concurrency == float(row["batch_size"])
