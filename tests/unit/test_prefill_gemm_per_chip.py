"""One prefill GEMM efficiency per chip generation and precision, whatever the stack (issue 15 defect 6).

Fitted per (generation, stack), it ranged 0.48 (TensorRT-LLM) to 0.90 (SGLang, the bound) on Hopper: the
stacks' TTFT differences (queueing, bunching, fixed request costs) were absorbed as a GEMM efficiency that a
new model on the same chip inherited. Those differences belong to the per-stack request overhead and burst
fraction; the GEMM kernels' share of peak is a property of the chip and precision."""

from __future__ import annotations

from types import SimpleNamespace

from infrafit.catalog import load_catalog
from infrafit.perf import load_profiles
from infrafit.perf.fit.llm import candidate_rows
from infrafit.perf.llm.setup import ConfigRow, build_setup


def _case(gen: str, chip: str, stack: str, precision: str = "fp8") -> SimpleNamespace:
    return SimpleNamespace(acc=SimpleNamespace(generation=gen, id=chip), stack=stack, precision=precision,
                           shape=SimpleNamespace(is_moe=False, indexed_layers=0))


def test_the_fit_varies_the_chip_efficiencies_per_generation_never_per_stack():
    cases = [_case("hopper", chip, stack) for stack in ("vllm", "sglang") for chip in ("h100", "h200")
             for _ in range(10)]
    cases += [_case("blackwell", "b200", stack, "fp4") for stack in ("vllm", "tensorrt-llm") for _ in range(10)]
    rows = candidate_rows(cases)
    prefill = {(r.generation, r.stack, r.precision) for r in rows if (r.phase, r.op_class) == ("prefill", "gemm")}
    assert prefill == {("hopper", "*", "*"), ("blackwell", "*", "*"), ("blackwell", "*", "fp4")}
    memory = {(r.generation, r.stack) for r in rows if (r.phase, r.op_class) == ("decode", "memory")}
    assert memory == {("hopper", "*"), ("blackwell", "*")}  # the chip's HBM efficiency, whatever the stack


def test_shipped_profiles_hold_no_stack_specific_prefill_gemm_efficiency():
    fitted = [r for r in load_profiles().rows if (r.phase, r.op_class) == ("prefill", "gemm") and r.rows_fitted]
    assert fitted and all(r.stack == "*" for r in fitted)
    h100 = load_catalog().accelerator("nvidia_h100_sxm")
    s = build_setup([ConfigRow(h100, "fp8", st) for st in ("vllm", "sglang", "tensorrt-llm")])[0]
    assert len(set(s.eff_prefill_gemm.tolist())) == 1
    assert len(set(s.eff_memory.tolist())) == 1
    fitted_memory = [r for r in load_profiles().rows if (r.phase, r.op_class) == ("decode", "memory") and r.rows_fitted]
    assert fitted_memory and all(r.stack == "*" for r in fitted_memory)
    assert len(set(s.prefill_overhead_s.tolist())) == 3  # the stacks differ in their fixed request cost
