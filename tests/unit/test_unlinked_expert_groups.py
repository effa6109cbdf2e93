"""A mixture of experts' expert-parallel group over chips the catalog knows no link between is not generated:
DeepSeek-V3.2 on 32 CPU slices (four c7i.16xlarge VMs, no stated network between them) was evaluated to a NaN
capacity, and its family was excluded as "capacity nan > 0 SLO"."""

from __future__ import annotations

import math

import pytest

from infrafit.catalog import load_catalog
from infrafit.perf.llm.capacity import linked_groups, llm_layouts, pipeline_degrees
from infrafit.search.explain import family_fail_line
from infrafit.search.planner import plan
from infrafit.workload.spec import workload_from_data

BATCH_MOE = {"name": "moe-batch", "task": "inference", "model": "deepseek-ai/DeepSeek-V3.2",
             "inference": {"mode": "batch", "traffic": {
                 "requests_per_s": 20, "input_tokens": {"mean": 3000, "p99": 8000},
                 "output_tokens": {"mean": 800, "p99": 2000}}},
             "deployment": {"allowed": ["cloud"]}, "hardware": {"accelerators": ["intel_xeon_spr_4core", "nvidia_t4"]},
             "horizon_months": 6}


@pytest.fixture(scope="module")
def cat():
    return load_catalog()


def test_an_expert_group_without_a_known_link_is_not_generated(cat):
    cpu = cat.accelerators["intel_xeon_spr_4core"]
    assert cpu.peer_link(8) is not None and cpu.peer_link(32) is None  # one box of slices; past it, nothing stated
    rows, cfg = llm_layouts([(cpu, 8), (cpu, 32)], ("int4",), lambda a: ["pytorch"], tps=[1])
    rows = [r.__class__(**{**r.__dict__, "ep": r.tp * r.adp}) for r in rows]
    kept, kept_cfg = linked_groups(rows, cfg)
    assert [r.ep for r in kept] == [8] and [c["count"] for c in kept_cfg] == [8]
    gpu = cat.accelerators["nvidia_h100_sxm"]  # a scale-out network is stated: a 32-chip group is priced over it
    rows, cfg = llm_layouts([(gpu, 32)], ("fp8",), lambda a: ["vllm"], tps=[8])
    rows = [r.__class__(**{**r.__dict__, "ep": 32}) for r in rows]
    assert len(linked_groups(rows, cfg)[0]) == 1


def test_the_cpu_family_is_refused_for_what_stops_it_not_an_uncomputed_capacity(cat):
    w = workload_from_data(BATCH_MOE, catalog=cat)
    reason = next(e.reason for e in plan(w, cat, top=3).excluded if e.what == "Intel Xeon CPU")
    assert "nan" not in reason
    assert reason.startswith("does not fit:") and "intel_xeon_spr_4core" in reason


def test_a_batch_family_that_serves_nothing_says_so_in_words():
    assert family_fail_line("serve", "capacity", math.nan, 0.0, "8x a, int4") == (
        "serves no load: no rate could be computed at every configuration that fits (best: 8x a, int4)")
    assert family_fail_line("serve", "capacity", 0.0, 0.0, "8x a, int4").startswith("serves no load: 0 requests/s")


def test_pipeline_stages_are_not_generated_over_an_unknown_link(cat):
    """Llama-3.1-405B at int4 on 16 CPU slices was laid out as TP8 x PP2 over two VMs with no stated network:
    every figure NaN, and the Xeon line read "TTFT p99 ∞ > 3.00 s SLO"."""
    cpu, gpu = cat.accelerators["intel_xeon_spr_4core"], cat.accelerators["nvidia_h100_sxm"]
    assert pipeline_degrees(cpu, 16, [1, 2, 4, 8], 126) == []
    assert pipeline_degrees(gpu, 16, [1, 2, 4, 8], 126) == [(8, 2)]  # over the stated scale-out network


def test_a_figure_nothing_computed_is_said_in_words_not_infinity():
    line = family_fail_line("serve", "ttft_p99_s", math.nan, 3.0, "16x a, int4")
    assert line == "TTFT p99 could not be computed for any configuration that fits (best: 16x a, int4)"
