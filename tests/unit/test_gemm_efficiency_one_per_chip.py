"""One GEMM efficiency per chip generation and precision, whatever the phase.

A decode step's GEMM at batch B is the same tiled kernel as a prefill GEMM with M = B; what a small M costs
is the tile-padding row (``gemm_m_half``), not a second efficiency. A separate decode value was identified
only by large-batch rows: on Hopper 0.79-0.81 fitted on all rows, 0.50 with the H200 left out of the fit."""

from __future__ import annotations

import csv
from dataclasses import replace

import numpy as np
import pytest

from infrafit.catalog import load_catalog
from infrafit.perf.fit.llm import candidate_rows
from infrafit.perf.llm.engine import decode_step
from infrafit.perf.llm.setup import ConfigRow, build_setup
from infrafit.perf.llm.shape import shape_from_arch
from infrafit.perf.profiles import Profiles, default_profiles_path, load_profiles
from infrafit.perf.types import ValidateContext
from infrafit.perf.validate.llm import prepare_many
from infrafit.workload.models import resolve_model


@pytest.fixture(scope="module")
def h100():
    return load_catalog().accelerator("nvidia_h100_sxm")


def test_both_phases_read_the_same_profile_row(h100):
    b200 = load_catalog().accelerator("nvidia_b200_sxm")
    rows = [ConfigRow(h100, "fp8", "vllm", tp=8), ConfigRow(b200, "fp4", "tensorrt-llm", tp=4),
            ConfigRow(h100, "bf16", "sglang", tp=2)]
    setup, _, sources = build_setup(rows)
    assert np.array_equal(sources["eff_decode_gemm"], sources["eff_prefill_gemm"])
    assert np.array_equal(setup.eff_decode_gemm, setup.eff_prefill_gemm)


def test_the_profile_file_has_no_decode_gemm_rows():
    with default_profiles_path().open(newline="") as fh:
        keys = [(r["phase"], r["op_class"]) for r in csv.DictReader(fh)]
    assert ("prefill", "gemm") in keys
    assert ("decode", "gemm") not in keys


def test_the_fit_varies_no_separate_decode_gemm_row():
    from infrafit.perf.fit.llm import ROOT, load_rows

    ctx = ValidateContext(load_catalog(), str(ROOT / "tests" / "fixtures" / "model_configs"))
    cases, _ = prepare_many(load_rows()[:400], ctx)
    rows = candidate_rows(cases)
    assert any((r.phase, r.op_class) == ("prefill", "gemm") for r in rows)
    assert not any((r.phase, r.op_class) == ("decode", "gemm") for r in rows)


def test_a_large_decode_batch_is_priced_by_the_chip_gemm_efficiency(h100):
    """Halving the one GEMM row slows a compute-bound decode step; nothing else moves it."""
    shape = shape_from_arch(resolve_model("llama-3.1-8b"))
    base = load_profiles()
    row = ConfigRow(h100, "fp8", "vllm", tp=1)
    idx = base.index("hopper", "vllm", "fp8", "prefill", "gemm")
    halved = Profiles(tuple(r if i != idx else replace(r, value=r.value / 2) for i, r in enumerate(base.rows)))
    full, slow = build_setup([row], base)[0], build_setup([row], halved)[0]
    assert float(slow.eff_decode_gemm[0]) == pytest.approx(float(full.eff_decode_gemm[0]) / 2)
    big = np.array([1024.0])
    fast_step = decode_step(shape, full, big, np.array([512.0]))
    slow_step = decode_step(shape, slow, big, np.array([512.0]))
    assert float(slow_step["gemm_compute_s"][0]) == pytest.approx(2 * float(fast_step["gemm_compute_s"][0]))


def test_an_overlay_row_keyed_decode_gemm_is_refused_not_ignored(tmp_path):
    from infrafit.errors import CatalogError
    from infrafit.perf.profiles import _parse

    with default_profiles_path().open(newline="") as fh:
        header = next(csv.reader(fh))
    old = tmp_path / "old_overlay.csv"
    old.write_text(",".join(header) + "\nhopper,*,*,decode,gemm,0.7,fraction,12,my runs,2026-11-01\n")
    with pytest.raises(CatalogError, match="old_overlay.csv:2 phase/op_class") as err:
        _parse(old)
    assert "prefill/gemm" in err.value.fix
