"""Unit and property tests of the non-LLM inference model (perf.nonllm) on a tiny fixture device."""

from __future__ import annotations

from dataclasses import dataclass, field, replace

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from infrafit.errors import InputError
from infrafit.perf.nonllm.model import capacity, devices, executed_precision, nonllm_capacity
from infrafit.perf.nonllm.profile import NonLLMProfile, load_profile
from infrafit.perf.nonllm.work import encoder_flops_per_sequence, sample_work
from infrafit.perf.types import SkipRow
from infrafit.perf.validate.nonllm import predict


@dataclass(frozen=True)
class Acc:
    id: str = "fixture_gpu"
    kind: str = "gpu"
    tdp_w: float = 700.0
    memory_bytes: float = 80e9
    memory_bytes_per_s: float = 3.35e12
    peaks: dict = field(default_factory=lambda: {"bf16": 989e12, "fp8": 1979e12})

    def peak(self, p: str) -> float:
        return self.peaks.get(p, 0.0)


@dataclass(frozen=True)
class Model:
    id: str = "fixture-cnn"
    kind: str = "cnn"
    flops_per_sample_fwd: float = 8.2e9
    params_override: float = 25.6e6
    image_size: int = 224
    hidden_size: int | None = None
    num_layers: int | None = None
    intermediate_size: int | None = None


PROFILE = NonLLMProfile(eff_base={"cnn": 0.5, "transformer": 0.5, "diffusion-unet": 0.3, "tabular": 0.05},
                        device_log={"gpu": 0.0, "cpu": -0.3}, power_slope=0.5, power_ref_w_per_tflops=0.35,
                        step_overhead_s={"cnn": 1e-3, "transformer": 2e-3, "diffusion-unet": 1e-2, "tabular": 1e-4})


def test_int8_falls_back_to_fp8_when_the_catalog_lists_no_int8_peak():
    assert executed_precision(Acc(), "int8") == ("fp8", 1979e12)
    assert executed_precision(Acc(), "fp32") == ("fp32", 0.0)


def test_offline_throughput_is_peak_times_efficiency_over_flops_at_large_batch():
    work = sample_work(Model(), "fp8")
    cap = capacity(work, devices([Acc()], "fp8"), [1], None, PROFILE)
    ideal = 1979e12 * 0.5 / 8.2e9  # compute-bound asymptote, power term 0 at 700 W / 1979 TFLOPS > ref
    assert 0.95 * ideal <= cap.offline_samples_per_s[0] <= ideal  # 98% of the best batch, minus overhead


def test_replicas_scale_linearly_and_server_is_below_offline():
    work = sample_work(Model(), "fp8")
    cap = capacity(work, devices([Acc()], "fp8"), [8], 0.015, PROFILE)
    one = capacity(work, devices([Acc()], "fp8"), [1], 0.015, PROFILE)
    assert cap.offline_samples_per_s[0] == pytest.approx(8 * one.offline_samples_per_s[0])
    assert 0 < cap.server_samples_per_s[0] < cap.offline_samples_per_s[0]
    assert cap.server_p99_s[0] <= 0.015


def test_a_power_starved_chip_is_less_efficient():
    hot, cool = Acc(), Acc(id="pcie", tdp_w=350.0)
    eff = PROFILE.efficiency("cnn", np.array(["gpu", "gpu"], dtype=object),
                             devices([hot, cool], "fp8").w_per_tflops)
    assert eff[1] < eff[0]


def test_impossible_slo_gives_zero_server_throughput():
    work = sample_work(Model(), "fp8")
    cap = capacity(work, devices([Acc()], "fp8"), [1], 1e-4, PROFILE)
    assert cap.server_samples_per_s[0] == 0.0


def test_encoder_flops_match_the_transformer_formula():
    bert = Model(id="b", kind="encoder", hidden_size=1024, num_layers=24, intermediate_size=4096)
    # Kaplan et al. 2020: 2 x 24 x (4 d^2 + 2 d ff) per token + 4 L s^2 d attention
    assert encoder_flops_per_sequence(bert, 384) == pytest.approx(
        2 * 24 * (4 * 1024**2 + 2 * 1024 * 4096) * 384 + 4 * 24 * 384**2 * 1024)


def test_decoder_kind_is_refused_with_a_fix():
    with pytest.raises(InputError, match="To fix"):
        sample_work(Model(kind="decoder"), "bf16")


def test_vectorized_capacity_over_accelerators():
    out = nonllm_capacity(Model(), [Acc(), Acc(id="small", peaks={"fp8": 400e12}, tdp_w=300.0)], [1, 1], "fp8",
                          latency_slo_s=0.015)
    assert out["samples_per_s"].shape == (2,)
    assert out["samples_per_s"][0] > out["samples_per_s"][1] > 0


@settings(max_examples=30, deadline=None)
@given(st.floats(1e9, 1e13), st.floats(1e-5, 1e-1))
def test_offline_throughput_never_falls_with_batch(flops, overhead):
    prof = replace(PROFILE, step_overhead_s={"cnn": overhead})
    work = sample_work(Model(flops_per_sample_fwd=flops), "fp8")
    grid = np.array([1, 2, 4, 8, 16, 64, 256, 1024, 4096], dtype=float)
    rates = [capacity(work, devices([Acc()], "fp8"), [1], None, prof, batch_sizes=[b]).offline_samples_per_s[0]
             for b in grid]
    assert all(b >= a * (1 - 1e-12) for a, b in zip(rates, rates[1:], strict=False))


def test_built_in_profile_loads_with_sources():
    prof = load_profile()
    assert set(prof.eff_base) >= {"cnn", "transformer", "diffusion-unet", "tabular"}
    assert all(0 < v < 1 for v in prof.eff_base.values())


class Ctx:
    def __init__(self):
        from infrafit.catalog import load_catalog

        self.catalog = load_catalog()

    def resolve_model(self, name):
        from infrafit.workload.models import resolve_model

        return resolve_model(name)


def test_rows_skip_what_they_cannot_model():
    row = {"task": "inference", "workload": "mlperf-inf/resnet50", "scenario": "singlestream",
           "metric_kind": "samples_per_s", "accelerator_id": "nvidia_h100_sxm", "accelerator_count": "8"}
    with pytest.raises(SkipRow, match="scenario"):
        predict(row, Ctx())
    with pytest.raises(SkipRow, match="preset"):
        predict(row | {"workload": "mlperf-inf/unknown"}, Ctx())


def test_tree_ensemble_inference_is_pointer_chasing_not_matrix_work():
    """XGBoost-style inference: rows/s = node visits per second / visits per row, from the measured
    47.5 cycles per visit on a CPU core (Treelite benchmark), not the AMX int8 peak."""
    from infrafit.catalog import load_catalog
    from infrafit.perf.nonllm.model import nonllm_capacity
    from infrafit.workload.models import get_model

    catalog = load_catalog()
    xeon = catalog.accelerator("intel_xeon_8592plus")
    model = get_model("xgboost-gbt")  # 500 trees x (depth 8 + 1 leaf) = 4,500 visits per row
    cap = nonllm_capacity(model, [xeon], [1], "int8")
    expected = xeon.cores * xeon.clock_hz / 47.5 / 4500.0
    assert float(cap["offline_samples_per_s"][0]) == pytest.approx(expected, rel=0.1)
    # Doubling the trees halves the rows per second.
    bigger = model.model_copy(update={"num_trees": 1000})
    cap2 = nonllm_capacity(bigger, [xeon], [1], "int8")
    assert float(cap2["offline_samples_per_s"][0]) == pytest.approx(float(cap["offline_samples_per_s"][0]) / 2, rel=0.1)
