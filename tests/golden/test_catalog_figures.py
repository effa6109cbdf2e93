"""Golden checks: well-known published figures in the built-in catalog (dense, per chip)."""

from __future__ import annotations

import pytest

from infrafit.catalog import load_catalog
from infrafit.units import GB, TB, TFLOPS

# (alias, precision, dense peak TFLOP/s, memory GB, bandwidth TB/s, citation)
GOLDEN = [
    ("h100", "bf16", 989.0, 80.0, 3.35, "NVIDIA H100 SXM datasheet: 1979 TFLOPS bf16 with sparsity, 3.35 TB/s"),
    ("mi300x", "bf16", 1307.4, 192.0, 5.3,
     "AMD Instinct MI300X data sheet: 1307.4 TFLOPS bf16 dense, 192 GB, 5.3 TB/s"),
    ("v5e", "bf16", 197.0, 16.0, 0.819, "Google Cloud TPU v5e docs: 197 TFLOPS bf16, 16 GB HBM2, 819 GB/s"),
    ("h200", "bf16", 989.0, 141.0, 4.8, "NVIDIA H200 datasheet: 141 GB, 4.8 TB/s"),
    ("b200", "fp8", 4500.0, 180.0, 8.0, "NVIDIA DGX B200: 72 PFLOPS fp8 sparse / 8 GPUs / 2"),
]


@pytest.mark.parametrize(("alias", "precision", "tflops", "mem_gb", "bw_tb", "cite"), GOLDEN)
def test_published_figures(alias: str, precision: str, tflops: float, mem_gb: float, bw_tb: float, cite: str) -> None:
    acc = load_catalog(overlay_dir="").accelerator(alias)
    assert acc.peak(precision) == pytest.approx(tflops * TFLOPS, rel=0.005), cite
    assert acc.memory_bytes == pytest.approx(mem_gb * GB, rel=0.005), cite
    assert acc.memory_bytes_per_s == pytest.approx(bw_tb * TB, rel=0.005), cite


def test_tpu_rows_are_per_chip_and_cpu_peaks_follow_the_rule() -> None:
    cat = load_catalog(overlay_dir="")
    v5p = cat.accelerator("v5p")
    assert v5p.peak("bf16") == pytest.approx(459 * TFLOPS)  # per chip (2 TensorCores), not per core
    spr = cat.accelerator("intel_xeon_8480plus")
    # 56 cores x 2.0 GHz base x 1024 BF16 FLOP/cycle/core (Intel AMX)
    assert spr.peak("bf16") == pytest.approx(56 * 2.0e9 * 1024)
    assert spr.kind == "cpu" and spr.cores == 56
