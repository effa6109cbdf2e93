"""fp4 on a chip without fp4 math (issue 15 defect 5, in part): an MXFP4/NVFP4 checkpoint on Hopper runs as
weight-only 4-bit with 16-bit math (Marlin W4A16 kernels), not as fp8 W8A8."""

from __future__ import annotations

import numpy as np

from infrafit.catalog import load_catalog
from infrafit.perf.llm.engine import decode_step, prefill_alone_s
from infrafit.perf.llm.setup import ConfigRow, build_setup, plan_precision
from infrafit.perf.llm.shape import shape_from_arch
from infrafit.units import bytes_per_element
from infrafit.workload.models import resolve_model


def test_fp4_on_hopper_is_4_bit_weights_with_16_bit_math():
    h100 = load_catalog().accelerator("nvidia_h100_sxm")
    plan = plan_precision(h100, "fp4")
    assert plan.weight == "fp4" and plan.gemm == "bf16" and plan.kv == "bf16"
    assert any("weight-only 4-bit" in n for n in plan.notes)
    assert bytes_per_element(plan.weight) == 0.5


def test_fp4_on_blackwell_keeps_fp4_math():
    b200 = load_catalog().accelerator("nvidia_b200_sxm")
    plan = plan_precision(b200, "fp4")
    assert plan.weight == "fp4" and plan.gemm == "fp4"


def test_weight_only_fp4_decodes_faster_than_fp8_but_prefills_at_16_bit_speed():
    cat = load_catalog()
    shape = shape_from_arch(resolve_model("llama3.1-70b"))
    rows = [ConfigRow(cat.accelerator("nvidia_h100_sxm"), p, "vllm", tp=2) for p in ("fp4", "fp8", "bf16")]
    s, _, _ = build_setup(rows)
    step = decode_step(shape, s, np.ones(3), np.full(3, 2000.0))["gemm_memory_s"]
    assert step[0] < step[1] < step[2]  # half the weight bytes of fp8 to read per step
    prefill = prefill_alone_s(shape, s, np.full(3, 8000.0))
    assert prefill[0] > prefill[1]  # 16-bit tensor math, not fp8's
