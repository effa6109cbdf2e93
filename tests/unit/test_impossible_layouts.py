"""Impossible layouts (issue 15 defect 9): a measurement whose stated layout cannot hold the model is
skipped with the reason, never predicted at a concurrency of 1 it could not run."""

from __future__ import annotations

import csv
from pathlib import Path

import numpy as np
import pytest

from infrafit.catalog import load_catalog
from infrafit.perf.types import ValidateContext
from infrafit.perf.validate.llm import predict_many, prepare

ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture(scope="module")
def ctx():
    return ValidateContext(load_catalog(), None)


def _row(**over) -> dict:
    with (ROOT / "benchmarks" / "data" / "latency_calibration.csv").open(newline="") as fh:
        row = dict(next(csv.DictReader(fh)))
    row.update(over)
    return row


def test_a_stated_layout_that_cannot_hold_the_model_is_skipped_with_the_reason(ctx):
    # Llama 3.1 405B in bf16 (~810 GB) stated on 4 x H100 80 GB at TP4: 320 GB cannot hold it
    row = _row(row_id="impossible", workload="meta-llama/Llama-3.1-405B", accelerator_id="nvidia_h100_sxm",
               accelerator_count="4", tp="4", precision="bf16", quant_gemm="bf16", quant_moe="", ep="1",
               attention_dp="1", moe_tp="", concurrency="8", batch_size="8")
    preds, skipped = predict_many([row], ctx)
    assert "impossible" not in preds
    assert len(skipped) == 1 and "holds the model" in skipped[0]["reason"] and "tp4" in skipped[0]["reason"]


def test_the_same_model_on_enough_memory_is_predicted(ctx):
    row = _row(row_id="possible", workload="meta-llama/Llama-3.1-405B", accelerator_id="nvidia_b200_sxm",
               accelerator_count="8", tp="8", precision="fp8", quant_gemm="fp8", quant_moe="", ep="1",
               attention_dp="1", moe_tp="", concurrency="8", batch_size="8")
    preds, skipped = predict_many([row], ctx)
    assert not skipped and np.isfinite(preds["possible"]) and preds["possible"] > 0


def test_prepare_keeps_the_stated_layout(ctx):
    case = prepare(_row(row_id="x", tp="4"), ctx)
    assert case.layouts and case.layouts[0][0] == 4
