"""Physical bounds of the training model: no estimate above the compute-efficiency ceiling, TPU
8-bit (AQT int8) training only where submitters use it, MoE imbalance and all-to-all costs."""

from __future__ import annotations

import itertools
import json
import subprocess
import sys
from dataclasses import replace
from pathlib import Path

import pytest

from infrafit.catalog import load_catalog
from infrafit.perf.training.profile import COMPUTE_EFFICIENCY_MAX, load_profile
from infrafit.perf.training.run import train_run, training_precision
from infrafit.perf.training.shape import from_model_arch
from infrafit.perf.training.step import MOE_CAPACITY_FACTOR, Chip, executed_flops_per_token, raw_terms
from infrafit.workload.models import resolve_model

CATALOG = load_catalog()
ROOT = Path(__file__).resolve().parents[2]
MODELS = ("llama3.1-8b", "llama3.1-70b", "mixtral-8x7b")
CHIPS = ("h100", "v5p", "v5e", "mi300x", "b200", "gaudi3")
COUNTS = (8, 64, 256)
SEQ = 4096


def _shape(name: str):
    return from_model_arch(resolve_model(name))


def test_profile_efficiencies_respect_the_ceiling():
    prof = load_profile()
    assert prof.efficiency_bound() <= COMPUTE_EFFICIENCY_MAX <= 0.86
    gens = {g for (p, g, _c) in prof.values if p == "compute_efficiency_generation"}
    for g in gens:
        for cls in ("transformer", "lora", "cnn", "diffusion"):
            assert 0.0 < prof.compute_efficiency(g, cls) <= prof.efficiency_bound()


@pytest.mark.parametrize("model", MODELS)
def test_no_estimate_in_the_grid_exceeds_the_efficiency_bound(model):
    """MFU at the executed precision (and bf16 MFU of bf16 runs) never above the ceiling."""
    shape = _shape(model)
    bound = load_profile().efficiency_bound()
    for chip, count in itertools.product(CHIPS, COUNTS):
        acc = CATALOG.accelerator(chip)
        gbs = max(count, 4_000_000 // SEQ // count * count)
        for precision in (None, "bf16"):
            run = train_run(shape, acc, count, seq_len=SEQ, global_batch=gbs, precision=precision, top=1)
            assert 0.0 < run.peak_fraction <= bound, (model, chip, count, run.precision, run.peak_fraction)
            if run.precision == "bf16":
                assert run.mfu_fraction <= bound, (model, chip, count, run.mfu_fraction)


def test_jax_pretraining_example_on_v5p_256_is_plausible():
    out = subprocess.run([sys.executable, "-m", "infrafit", "estimate", str(ROOT / "examples/jax-pretraining.yaml"),
                          "--accelerator", "v5p", "--count", "256", "--json"], capture_output=True, text=True,
                         check=True, cwd=ROOT)
    mfu = json.loads(out.stdout)["throughput"]["mfu_fraction"]
    assert 0.3 <= mfu <= 0.8


def test_tpus_train_int8_only_when_racing():
    """AQT int8 on TPUs for a time-to-train competition; MaxText's default (bf16) otherwise; GPUs fp8."""
    shape = _shape("llama3.1-8b")
    v5p, h100 = CATALOG.accelerator("v5p"), CATALOG.accelerator("h100")
    assert training_precision(v5p, None, shape)[0] == "bf16"
    assert training_precision(v5p, None, shape, fastest=True)[0] == "int8"
    assert training_precision(h100, None, shape)[0] == "fp8"
    assert training_precision(h100, None, shape, fastest=True)[0] == "fp8"
    assert training_precision(v5p, "bf16", shape, fastest=True)[0] == "bf16"


def test_moe_imbalance_pads_only_the_routed_experts():
    moe = _shape("mixtral-8x7b")
    dense = replace(moe, num_experts=0, experts_per_token=0)
    base = executed_flops_per_token(replace(moe, num_experts=1), SEQ, "full", "selective")
    padded = executed_flops_per_token(moe, SEQ, "full", "selective")
    routed = 2.0 * moe.layers * moe.experts_per_token * moe.mlp_params(moe.moe_ffn or moe.ffn)
    assert float(padded - base) == pytest.approx(3.0 * (MOE_CAPACITY_FACTOR - 1.0) * routed, rel=1e-9)
    assert float(executed_flops_per_token(dense, SEQ, "full", "selective")) < float(padded)


def test_moe_all_to_all_grows_with_expert_parallelism_and_leaves_the_domain():
    moe = _shape("mixtral-8x7b")
    chip = Chip.from_accelerator(CATALOG.accelerator("h100"), "bf16")
    kw = dict(seq_len=SEQ, global_batch=256, method="full", tp=1, pp=1, dp=64, cp=1, micro_batch=1, vpp=1,
              zero_stage=1, recompute="selective")
    comm = {ep: float(raw_terms(moe, chip, ep=ep, **kw).mp_comm_raw_s) for ep in (1, 2, 8)}
    assert comm[1] == 0.0 < comm[2] < comm[8]
    out = replace(chip, scaleup_domain_size=4)  # ep 8 no longer inside the scale-up domain
    assert float(raw_terms(moe, out, ep=8, **kw).mp_comm_raw_s) > comm[8]
