"""The calibration overlay (perf_profiles_bench.csv) as the performance models read it (perf.calibrated)."""

from __future__ import annotations

import csv
from dataclasses import dataclass, field

import numpy as np
import pytest

from infrafit.errors import CatalogError
from infrafit.perf.calibrated import (
    CALIBRATION_COLUMNS,
    CALIBRATION_FILE,
    calibration_for,
    operators_per_pass,
)
from infrafit.perf.nonllm.model import capacity, devices, latency_at_rate
from infrafit.perf.nonllm.profile import NonLLMProfile
from infrafit.perf.nonllm.work import sample_work


@dataclass(frozen=True)
class Cpu:
    id: str = "local-cpu-test-8c"
    kind: str = "cpu"
    tdp_w: float = float("nan")
    memory_bytes: float = 64e9
    memory_bytes_per_s: float = 50e9
    peaks: dict = field(default_factory=lambda: {"fp32": 1e12})

    def peak(self, p: str) -> float:
        return self.peaks.get(p, 0.0)


@dataclass(frozen=True)
class Encoder:
    id: str = "enc"
    kind: str = "encoder"
    hidden_size: int = 256
    num_layers: int = 4
    intermediate_size: int = 1024
    num_attention_heads: int = 4
    params_override: float = 4e6


PROFILE = NonLLMProfile(eff_base={"transformer": 0.5}, device_log={"cpu": -0.3}, power_slope=0.0,
                        power_ref_w_per_tflops=0.35, step_overhead_s={"transformer": 2e-3}, memory_efficiency=0.8)


def _write(folder, eff_c, eff_m, overhead, acc="local-cpu-test-8c", precision="fp32"):
    with open(folder / CALIBRATION_FILE, "w", newline="") as fh:
        w = csv.DictWriter(fh, fieldnames=CALIBRATION_COLUMNS)
        w.writeheader()
        w.writerow({"accelerator_id": acc, "precision": precision, "eff_compute_fraction": eff_c,
                    "eff_memory_fraction": eff_m, "op_overhead_s": overhead, "fitted_rows_count": 9,
                    "source": "test", "retrieved_on": "2026-11-30"})


def _rate(folder, seq=128):
    work = sample_work(Encoder(), "fp32", seq_len=seq)
    return capacity(work, devices([Cpu()], "fp32", folder), [1], None, PROFILE).offline_samples_per_s[0]


def test_calibration_equal_to_the_profile_changes_nothing(tmp_path):
    """Plumbing check: a calibration that restates the profile's numbers gives the same prediction."""
    work = sample_work(Encoder(), "fp32", seq_len=128)
    prof_eff = float(PROFILE.efficiency("transformer", "cpu", np.nan)[0])
    _write(tmp_path, prof_eff, 0.8, 2e-3 / work.operators_per_pass)
    (tmp_path / "empty").mkdir()
    assert _rate(tmp_path) == pytest.approx(_rate(tmp_path / "empty"), rel=1e-9)


def test_lower_calibrated_efficiency_or_more_overhead_lowers_throughput(tmp_path):
    work = sample_work(Encoder(), "fp32", seq_len=128)
    prof_eff = float(PROFILE.efficiency("transformer", "cpu", np.nan)[0])
    per_op = 2e-3 / work.operators_per_pass
    _write(tmp_path, prof_eff, 0.8, per_op)
    same = _rate(tmp_path)
    _write(tmp_path, prof_eff / 4, 0.8, per_op)
    assert _rate(tmp_path) < 0.5 * same
    _write(tmp_path, prof_eff * 1.5, 0.8, per_op)
    assert _rate(tmp_path) > same
    _write(tmp_path, prof_eff, 0.8, per_op * 1000)
    assert _rate(tmp_path, seq=8) < _rate(tmp_path / "nope", seq=8)


def test_calibration_applies_only_to_its_accelerator_and_precision(tmp_path):
    _write(tmp_path, 0.01, 0.01, 1e-3, acc="some-other-cpu")
    assert calibration_for("local-cpu-test-8c", "fp32", tmp_path) is None
    _write(tmp_path, 0.01, 0.01, 1e-3, precision="bf16")
    assert calibration_for("local-cpu-test-8c", "fp32", tmp_path) is None
    assert calibration_for("local-cpu-test-8c", "bf16", tmp_path).eff_compute == 0.01


def test_latency_at_rate_uses_the_calibration(tmp_path):
    work = sample_work(Encoder(), "fp32", seq_len=128)
    (tmp_path / "none").mkdir()
    _, p50_default, _ = latency_at_rate(work, devices([Cpu()], "fp32", tmp_path / "none"), 1.0, PROFILE)
    _write(tmp_path, 0.01, 0.8, 0.0)
    _, p50_slow, _ = latency_at_rate(work, devices([Cpu()], "fp32", tmp_path), 1.0, PROFILE)
    assert p50_slow > p50_default


def test_bad_overlay_row_is_a_catalog_error_naming_the_line(tmp_path):
    _write(tmp_path, "lots", 0.5, 0.0)
    with pytest.raises(CatalogError, match=r"perf_profiles_bench.csv:2") as err:
        calibration_for("local-cpu-test-8c", "fp32", tmp_path)
    assert "To fix" in str(err.value)


def test_operators_per_pass_counts_layers():
    assert operators_per_pass(Encoder()) == 4 * 14
    assert operators_per_pass(Encoder(num_layers=8)) == 2 * operators_per_pass(Encoder())
    assert operators_per_pass(type("D", (), {"kind": "diffusion"})()) == 0.0
