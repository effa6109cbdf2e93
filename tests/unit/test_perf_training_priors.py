"""QLoRA dequantisation and compute precision, CPU (AMX) training efficiency, and the physical prior
for chip generations without calibration rows (vendor lineage instead of a plain median)."""

from __future__ import annotations

import csv
from importlib import resources

import numpy as np
import pytest

from infrafit.catalog import load_catalog
from infrafit.perf.training.memory import QLORA_BYTES_PER_PARAM
from infrafit.perf.training.profile import (
    TrainingProfile,
    generation_prior,
    load_lineage,
    load_profile,
)
from infrafit.perf.training.run import train_run, training_precision
from infrafit.perf.training.shape import from_model_arch
from infrafit.perf.training.step import (
    DEQUANT_BYTES_PER_WEIGHT,
    Chip,
    quantized_params_per_chip,
    raw_terms,
    step_times,
)
from infrafit.workload.models import resolve_model

CATALOG = load_catalog()
PROFILE = load_profile()
LLAMA70 = from_model_arch(resolve_model("llama3.1-70b"))
LAYOUT = dict(tp=1, pp=16, dp=1, ep=1, cp=1, micro_batch=1, vpp=1, zero_stage=0, recompute="selective")


# --- 1. QLoRA ------------------------------------------------------------------------------------
@pytest.mark.parametrize("chip, expected", [("nvidia_t4", "fp16"), ("h100", "bf16")])
def test_qlora_gemms_run_at_the_16_bit_compute_dtype(chip, expected):
    acc = CATALOG.accelerator(chip)
    prec, notes = training_precision(acc, "int4", LLAMA70, method="qlora")
    assert prec == expected
    assert any("NF4" in n for n in notes)
    assert training_precision(acc, None, LLAMA70, method="qlora")[0] == expected  # never fp8 either


def test_int4_is_not_a_training_gemm_precision_for_any_method():
    prec, notes = training_precision(CATALOG.accelerator("h100"), "int4", LLAMA70, method="full")
    assert prec == "bf16" and notes


def test_qlora_70b_on_16_t4_is_bounded_by_the_fp16_efficiency():
    """QA: 'MFU 54%' on 16x T4 was the int4 peak at work. At fp16 MFU (= peak fraction) cannot exceed
    the efficiency of the adapter class on the chip, and model FLOPs are below the executed ones."""
    acc = CATALOG.accelerator("nvidia_t4")
    run = train_run(LLAMA70, acc, 16, seq_len=4096, global_batch=64, method="qlora", precision="int4", top=1)
    assert run.precision == "fp16"
    assert run.mfu_fraction == pytest.approx(run.peak_fraction)
    assert run.mfu_fraction < PROFILE.compute_efficiency(str(acc.generation), "lora")


def test_dequant_moves_4_bit_in_and_16_bit_out_per_pass():
    chip = Chip.from_accelerator(CATALOG.accelerator("nvidia_t4"), "fp16")
    kw = dict(seq_len=4096, global_batch=64, **LAYOUT)
    qlora = raw_terms(LLAMA70, chip, method="qlora", **kw)
    lora = raw_terms(LLAMA70, chip, method="lora", **kw)
    assert float(lora.dequant_s) == 0.0
    weights = float(quantized_params_per_chip(LLAMA70, 1, 16, 1))
    assert DEQUANT_BYTES_PER_WEIGHT == pytest.approx(QLORA_BYTES_PER_PARAM + 2.0)
    per_pass = weights * DEQUANT_BYTES_PER_WEIGHT / chip.memory_bytes_per_s  # T4 is memory-bound here
    assert float(qlora.dequant_s) == pytest.approx(per_pass * 2 * 64)  # fwd + bwd, 64 micro-batches
    full = raw_terms(LLAMA70, chip, method="qlora", **{**kw, "recompute": "full"})
    assert float(full.dequant_s) == pytest.approx(1.5 * float(qlora.dequant_s))  # recompute: 3 passes
    t_q = step_times(LLAMA70, chip, PROFILE, method="qlora", **kw)
    t_l = step_times(LLAMA70, chip, PROFILE, method="lora", **kw)
    assert float(t_q.total_s) > float(t_l.total_s)


# --- 3. Unseen generations: lineage prior ------------------------------------------------------------
def _catalog_generations() -> set[str]:
    ref = resources.files("infrafit.catalog").joinpath("data", "accelerators.csv")
    with ref.open("r", encoding="utf-8", newline="") as fh:
        return {r["generation"] for r in csv.DictReader(fh)}


def test_every_catalog_generation_has_a_lineage_row_and_no_cycle():
    lineage = load_lineage()
    assert _catalog_generations() <= set(lineage)
    for gen in lineage:
        seen, step = set(), gen
        while step in lineage and step not in seen:
            seen.add(step)
            step = lineage[step].predecessor
        assert step not in seen, gen


def _without(*gens: str) -> TrainingProfile:
    return TrainingProfile({k: v for k, v in PROFILE.values.items()
                            if not (k[0] == "compute_efficiency_generation" and k[1] in gens)})


@pytest.mark.parametrize("held, ancestor", [("blackwell", "hopper"),
                                            ("gaudi3", "gaudi2"), ("granite-rapids", "sapphire-rapids"),
                                            ("tpu-v7", "tpu-v6e")])
def test_unseen_generation_takes_its_nearest_fitted_ancestor(held, ancestor):
    prof = _without(held)
    how, eff = prof.resolve_generation(held)
    assert how.startswith(ancestor)
    assert eff == PROFILE.get("compute_efficiency_generation", ancestor)
    assert prof.compute_efficiency(held, "transformer") == pytest.approx(
        min(eff, prof.efficiency_bound()))


def test_a_middle_generation_takes_the_geometric_mean_of_its_fitted_neighbours():
    prof = _without("hopper")
    how, eff = prof.resolve_generation("hopper")
    assert how.startswith("ampere and blackwell")
    amp, bw = (PROFILE.get("compute_efficiency_generation", g) for g in ("ampere", "blackwell"))
    assert eff == pytest.approx((amp * bw) ** 0.5)


def test_without_a_fitted_ancestor_the_vendor_kind_then_chip_class_median():
    # Ampere's ancestors (Volta) are not fitted: median of the fitted NVIDIA GPUs (ada, blackwell, hopper)
    prof = _without("ampere")
    how, eff = prof.resolve_generation("ampere")
    assert "NVIDIA gpu" in how
    assert eff == pytest.approx(np.median([PROFILE.get("compute_efficiency_generation", g)
                                           for g in ("ada", "blackwell", "hopper")]))
    # an AMD CPU never borrows a GPU's efficiency: only CPU generations count
    how, eff = PROFILE.resolve_generation("genoa")
    assert how == "median of fitted CPU generations"
    assert eff == PROFILE.get("compute_efficiency_generation", "sapphire-rapids")
    # an unknown generation (e.g. a catalog overlay) keeps the * row
    assert generation_prior(PROFILE, "no-such-gen")[1] == PROFILE.get("compute_efficiency_generation")


# --- 2. CPU (AMX) training ---------------------------------------------------------------------------
def test_xeon_6980p_training_takes_the_sapphire_rapids_efficiency():
    """QA: 2x Xeon 6980P trained at 44% of the AMX peak (the all-generation median). Granite Rapids has
    no calibration rows: its efficiency comes from the fitted Sapphire Rapids rows (MLPerf CPU runs)."""
    acc = CATALOG.accelerator("intel_xeon_6980p")
    shape = from_model_arch(resolve_model("llama3.1-8b"))
    run = train_run(shape, acc, 2, seq_len=4096, global_batch=64, top=1)
    spr = PROFILE.compute_efficiency("sapphire-rapids", "transformer")
    assert spr < 0.3  # the AMX rows are far below the accelerators' efficiency
    assert 0.0 < run.peak_fraction <= spr
    assert any("sapphire-rapids" in n for n in run.notes)
