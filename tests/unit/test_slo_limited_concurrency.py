"""The SLO-limited operating point sits at the most requests in flight that meet the SLOs, not at the last
concurrency grid column that does: the grid's 1.25x steps would otherwise decide the replica count."""

from __future__ import annotations

import numpy as np
import pytest

from infrafit.catalog import load_catalog
from infrafit.perf.llm.capacity import CONCURRENCY_GRID, evaluate_llm, slo_limited_concurrency
from infrafit.perf.types import OperatingPoint
from infrafit.workload.spec import parse_spec


def test_bisection_finds_the_last_whole_concurrency_that_meets_the_slos():
    grid = np.array([8.0, 10.0, 12.0, 16.0])
    rate = np.array([[1.0, 1.2, 0.0, 0.0],    # fails from 12: the limit lies in (10, 12)
                     [1.0, 1.2, 1.4, 0.0],    # fails from 16: (12, 16)
                     [1.0, 1.2, 1.4, 1.6],    # meets them up to the grid's end: nothing to refine
                     [0.0, 0.0, 0.0, 0.0],    # meets none
                     [1.0, 1.3, 1.2, 0.0]])   # saturated at 10: the next column still meets them
    limit = np.array([11.0, 14.0, 99.0, 0.0, 99.0])
    asked: list[np.ndarray] = []

    def feasible(c: np.ndarray) -> np.ndarray:
        asked.append(c.copy())
        return c <= limit

    got = slo_limited_concurrency(rate, grid, feasible)
    np.testing.assert_array_equal(got, [11.0, 14.0, 16.0, 8.0, 10.0])
    assert all(c.shape == (5,) for c in asked) and len(asked) <= 2  # gaps of 2 and 4: at most log2(4) rounds


CHAT = """
name: t
task: inference
model: llama3.1-70b
precision: [fp8]
inference:
  mode: realtime
  traffic: {requests_per_s: 5, input_tokens: {mean: 1500, p99: 6000}, output_tokens: {mean: 300, p99: 1200}}
  slo: {ttft_p99_s: 1.0, tpot_p99_s: 0.05}
"""


def _eval(point: OperatingPoint | None = None):
    w = parse_spec(CHAT)
    h200 = load_catalog().accelerator("nvidia_h200_sxm")
    return evaluate_llm(w.model_arch(), [(h200, 8)], ("fp8",), lambda a: ["vllm"], w.inference.traffic,
                        w.inference.slo, tps=[8], point=point)


def test_the_planned_point_meets_the_slos_and_one_more_request_in_flight_does_not():
    ev = _eval()
    row = ev.rows[0]
    c = row["operating_point"]["concurrency"]
    assert c == int(c) and c not in CONCURRENCY_GRID  # between two grid columns
    lower = CONCURRENCY_GRID[CONCURRENCY_GRID < c].max()
    at_grid = _eval(OperatingPoint(concurrency=float(lower)))
    more = _eval(OperatingPoint(concurrency=c + 1))
    assert ev.terms[0]["meets_slos"] == 1.0 and more.terms[0]["meets_slos"] == 0.0
    assert at_grid.terms[0]["meets_slos"] == 1.0
    # the refined point carries more traffic per replica than the grid column below it
    assert ev.capacity[0] > at_grid.capacity[0]
    # and its figures are the ones an estimate at that concurrency gives (plan equals estimate)
    same = _eval(OperatingPoint(concurrency=c))
    assert same.capacity[0] == pytest.approx(ev.capacity[0], rel=1e-12)
    assert same.slo["ttft_p99_s"][0][0] == pytest.approx(ev.slo["ttft_p99_s"][0][0], rel=1e-12)
