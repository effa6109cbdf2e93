"""The wait for a free slot of an engine that admits at most ``max_num_seqs`` requests (issue 15, CPU LLM
serving): Erlang C against its closed form, the admission-limited rate against a simulated M/M/c queue,
and the MLPerf Server rows that state an admission cap predicted through it."""

from __future__ import annotations

import csv
import heapq
import math

import numpy as np
import pytest

from infrafit.catalog import load_catalog
from infrafit.perf.core import admission_limited_rate, erlang_c
from infrafit.perf.fit.llm import ROOT
from infrafit.perf.types import ValidateContext
from infrafit.perf.validate.llm import predict_many


def _erlang_c_closed_form(c: int, a: float) -> float:
    top = a**c / math.factorial(c) * c / (c - a)
    return top / (sum(a**k / math.factorial(k) for k in range(c)) + top)


@pytest.mark.parametrize(("c", "a"), [(1, 0.3), (2, 1.5), (4, 2.0), (13, 11.0), (40, 35.5)])
def test_erlang_c_matches_the_closed_form(c, a):
    assert erlang_c(c, a) == pytest.approx(_erlang_c_closed_form(c, a), rel=1e-9)


def test_erlang_c_edges():
    assert erlang_c(1, 0.4) == pytest.approx(0.4)  # one server: an arrival waits with probability rho
    assert erlang_c(4, 0.0) == 0.0
    assert erlang_c(4, 4.0) == 1.0 and erlang_c(4, 9.0) == 1.0  # at or past saturation everyone waits
    assert erlang_c(2000, 1900.0) < 1.0  # the recursion stays finite where factorials overflow


def _p99_wait_s(slots: int, rate: float, service_s: float, n: int = 120_000) -> float:
    rng = np.random.default_rng(7)
    arrivals = np.cumsum(rng.exponential(1.0 / rate, n))
    services = rng.exponential(service_s, n)
    free = [0.0] * slots  # when each slot next frees up (FIFO: the earliest free slot takes the next arrival)
    waits = np.empty(n)
    for i in range(n):
        t = heapq.heappop(free)
        start = max(t, arrivals[i])
        waits[i] = start - arrivals[i]
        heapq.heappush(free, start + services[i])
    return float(np.quantile(waits[n // 10:], 0.99))


@pytest.mark.parametrize(("slots", "service_s", "budget_s"), [(4, 10.0, 5.0), (13, 6.0, 2.0)])
def test_the_admission_limited_rate_puts_the_p99_wait_at_the_budget(slots, service_s, budget_s):
    rate = admission_limited_rate(slots, service_s, budget_s)
    assert 0.0 < rate < slots / service_s
    assert _p99_wait_s(slots, rate, service_s) == pytest.approx(budget_s, rel=0.15)


def test_the_rate_grows_with_slots_and_budget_and_is_zero_without_room():
    base = admission_limited_rate(4, 10.0, 5.0)
    assert admission_limited_rate(8, 10.0, 5.0) > base
    assert admission_limited_rate(4, 10.0, 20.0) > base
    assert admission_limited_rate(4, 10.0, -0.1) == 0.0
    assert admission_limited_rate(0, 10.0, 5.0) == 0.0


def test_mlperf_server_rows_with_an_admission_cap_wait_for_free_slots():
    """Intel's Xeon GPT-J harness admits 4 requests per Server worker: the predicted Server rate is well
    below the Offline one, as measured (0.44 on Granite Rapids), where a full engine alone gave 0.84."""
    rows = {r["row_id"]: r for r in csv.DictReader((ROOT / "benchmarks/data/calibration.csv").open())}
    pair = [rows["581"], rows["582"]]  # 2 x Xeon 6980P, GPT-J int4: Offline, Server (max_num_seqs 4)
    assert pair[1]["scenario"] == "server" and pair[1]["max_num_seqs"] == "4"
    pred, skipped = predict_many(pair, ValidateContext(load_catalog(), str(ROOT / "tests/fixtures/model_configs")))
    assert not skipped
    ratio = pred["582"] / pred["581"]
    measured = float(pair[1]["metric_value"]) / float(pair[0]["metric_value"])
    assert measured == pytest.approx(0.436, abs=0.01)
    assert 0.25 < ratio < 0.65
