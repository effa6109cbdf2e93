"""Batch work runs as many sequences as the KV cache holds: the serving grid stopped at 1,024 in flight, so a
chip that holds more (DeepSeek-V3.2 at fp4 on 8x B200: 5,342) was priced at the grid's throughput, not its own."""

from __future__ import annotations

import copy

import pytest

from infrafit.catalog import load_catalog
from infrafit.perf.llm.capacity import CONCURRENCY_GRID, OFFLINE_GRID_EXTRA
from infrafit.search.planner import plan
from infrafit.workload.spec import workload_from_data

BATCH = {"name": "dsv32-batch", "task": "inference", "model": "deepseek-ai/DeepSeek-V3.2",
         "inference": {"mode": "batch", "traffic": {"requests_per_s": 20, "input_tokens": {"mean": 3000, "p99": 8000},
                                                    "output_tokens": {"mean": 800, "p99": 2000}}},
         "deployment": {"allowed": ["cloud"]}, "hardware": {"accelerators": ["b200"]}, "horizon_months": 6}


@pytest.fixture(scope="module")
def cat():
    return load_catalog()


def _best(cat, data):
    return plan(workload_from_data(data, catalog=cat), cat, top=1).options[0]


def test_a_batch_job_fills_the_kv_cache_past_the_serving_grid(cat):
    best = _best(cat, BATCH)
    held = best.performance["breakdown"]["max_concurrency_per_replica"]
    used = best.performance["operating_point"]["concurrency"]
    assert held > CONCURRENCY_GRID[-1] and CONCURRENCY_GRID[-1] < used <= held


def test_never_more_in_flight_than_the_cache_holds_past_the_grid(cat):
    options = plan(workload_from_data(BATCH, catalog=cat), cat, top=5).options
    assert len(options) > 1
    for o in options:
        used = o.performance["operating_point"]["concurrency"]
        held = o.performance["breakdown"]["max_concurrency_per_replica"]
        assert used <= max(held, CONCURRENCY_GRID[-1]), o.offer_id
    assert OFFLINE_GRID_EXTRA[-1] == 4096  # the largest batch validate searches for MLPerf Offline rows


def test_a_realtime_service_keeps_the_serving_grid(cat):
    data = copy.deepcopy(BATCH)
    data["inference"]["mode"] = "realtime"
    data["inference"]["slo"] = {"ttft_p99_s": 600.0}
    assert _best(cat, data).performance["operating_point"]["concurrency"] <= CONCURRENCY_GRID[-1]
