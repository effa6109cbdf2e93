"""Golden tests: training FLOPs, memory, MFU and MLPerf time to train against published numbers."""

from __future__ import annotations

import pytest

from infrafit.catalog import load_catalog
from infrafit.perf.training.memory import model_state_bytes
from infrafit.perf.training.shape import from_model_arch
from infrafit.perf.validate.training import predict
from infrafit.workload.models import resolve_model


class Ctx:
    catalog = load_catalog()

    @staticmethod
    def resolve_model(name: str):
        return resolve_model(name)


def _row(**kw) -> dict[str, str]:
    base = {"task": "training", "precision": "", "precision_executed": "", "tp": "", "pp": "", "dp": "",
            "cp": "", "ep": "", "seq_len": "", "global_batch_size": ""}
    base.update({k: str(v) for k, v in kw.items()})
    return base


def test_llama31_405b_pretraining_flops_match_meta():
    """Dubey et al. 2024 ("The Llama 3 Herd of Models", sec. 3.2.1): 3.8e25 FLOPs for 405B params on
    15.6T tokens; the 6 N T rule (plus attention at 8k context) must land within 5%."""
    shape = from_model_arch(resolve_model("llama3.1-405b"))
    total = shape.train_flops_per_token(8192, causal=True) * 15.6e12
    assert total == pytest.approx(3.8e25, rel=0.05)


def test_llama31_405b_model_state_is_16_bytes_per_param():
    """ZeRO (Rajbhandari et al. 2020, sec. 3.1): mixed-precision Adam keeps 16 B/param; 405B -> 6.5 TB."""
    shape = from_model_arch(resolve_model("llama3.1-405b"))
    w, g, o = model_state_bytes(shape, 1, 1, 1, 1, 0)
    assert float(w + g + o) == pytest.approx(16 * 405.85e9, rel=0.01)


def test_llama3_405b_mfu_on_h100():
    """Llama 3 405B pre-training on 8,192 H100s: 430 TFLOP/s per GPU, 43% BF16 MFU (Dubey et al. 2024,
    Table 4; calibration row 1652)."""
    row = _row(accelerator_id="nvidia_h100_sxm", accelerator_count=8192, workload="llama3.1-405b",
               precision="bf16", tp=8, pp=16, cp=1, metric_kind="model_tflops_per_accel")
    assert predict(row, Ctx()) == pytest.approx(430.0, rel=0.30)


def test_palm_540b_mfu_on_tpu_v4():
    """PaLM 540B on 6,144 TPU v4 chips: 46.2% MFU (Chowdhery et al. 2022, Table 3)."""
    row = _row(accelerator_id="google_tpu_v4", accelerator_count=6144, workload="palm-540b", tp=1,
               metric_kind="mfu_fraction")
    assert predict(row, Ctx()) == pytest.approx(0.462, rel=0.25)


@pytest.mark.parametrize(("acc", "count", "bench", "gbs", "minutes"), [
    # MLPerf Training v4.1 and v3.1 results (calibration rows 1250, 1087, 1254; mlcommons.org results)
    ("nvidia_h100_sxm", 512, "gpt3-175b", 2048, 49.795),
    ("nvidia_h100_sxm", 8, "resnet50", 3200, 13.579),
    ("nvidia_h100_sxm", 8, "llama2-70b-lora", 8, 27.928),
])
def test_mlperf_time_to_train(acc, count, bench, gbs, minutes):
    row = _row(accelerator_id=acc, accelerator_count=count, workload=f"mlperf-train/{bench}",
               global_batch_size=gbs, metric_kind="time_to_train_min")
    assert predict(row, Ctx()) == pytest.approx(minutes, rel=0.30)


def test_training_rows_of_the_calibration_set_meet_the_issue_targets():
    """Issue 4 section 7 on the training rows of benchmarks/data/calibration.csv: at least 90% predicted,
    MdAPE at most 15% and at most 25% for every accelerator family with at least 5 rows."""
    import csv
    from collections import defaultdict
    from pathlib import Path
    from statistics import median

    from infrafit.perf.types import SkipRow

    path = Path(__file__).resolve().parents[2] / "benchmarks" / "data" / "calibration.csv"
    with open(path, newline="", encoding="utf-8") as fh:
        rows = [r for r in csv.DictReader(fh) if r["task"] == "training"]
    ctx, apes, by_family = Ctx(), [], defaultdict(list)
    for row in rows:
        try:
            ape = abs(predict(row, ctx) / float(row["metric_value"]) - 1.0)
        except SkipRow:
            continue
        apes.append(ape)
        by_family[row["accelerator_family"]].append(ape)
    assert len(apes) >= 0.9 * len(rows)
    assert median(apes) <= 0.15
    for family, errors in by_family.items():
        if len(errors) >= 5:
            assert median(errors) <= 0.25, family


def test_xeon_amx_training_rows_are_predicted():
    """The three MLPerf Training CPU rows (2x16 / 2x32 Xeon 8480+, BERT and ResNet-50) set the CPU
    efficiency every unseen Xeon generation inherits (perf_generation_lineage.csv): all predicted,
    median error at most 15%."""
    import csv
    from pathlib import Path
    from statistics import median

    path = Path(__file__).resolve().parents[2] / "benchmarks" / "data" / "calibration.csv"
    with open(path, newline="", encoding="utf-8") as fh:
        rows = [r for r in csv.DictReader(fh)
                if r["task"] == "training" and r["accelerator_family"] == "Intel Xeon CPU"]
    assert len(rows) >= 3
    apes = [abs(predict(r, Ctx()) / float(r["metric_value"]) - 1.0) for r in rows]
    assert median(apes) <= 0.15
