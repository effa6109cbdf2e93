"""Unit tests of the array rooflines and queueing formulas in perf.core."""

import numpy as np
import pytest

from infrafit.perf import core


def test_roofline_takes_the_slower_side():
    t, tc, tm = core.roofline_time_s(2e12, 1e9, 1e12, 1e12, 1.0, 1.0)
    assert tc == pytest.approx(2.0) and tm == pytest.approx(1e-3) and t == pytest.approx(2.0)
    t, _, _ = core.roofline_time_s(1e9, 2e12, 1e12, 1e12, 1.0, 0.5)
    assert t == pytest.approx(4.0)


def test_ring_allreduce_volume_and_latency():
    # 8 ranks: 2 x 7/8 of the message over the link, 14 hops
    t = core.ring_allreduce_time_s(8e9, 8, 1e9, 1e-6)
    assert t == pytest.approx(2 * 7 / 8 * 8 + 14e-6)
    assert core.ring_allreduce_time_s(8e9, 1, 1e9, 1e-6) == 0.0


def test_all_to_all_is_zero_on_one_rank_and_grows_with_bytes():
    assert core.all_to_all_time_s(1e9, 1, 1e9, 1e-6) == 0.0
    a, b = core.all_to_all_time_s(np.array([1e6, 2e6]), 4, 1e9, 0.0)
    assert b == pytest.approx(2 * a) and a == pytest.approx(0.75e6 / 1e9)


def test_expected_distinct_experts_limits():
    e = core.expected_distinct_experts(8, 2, np.array([0, 1, 1e6]))
    assert e[0] == 0.0 and e[1] == pytest.approx(2.0) and e[2] == pytest.approx(8.0)
    # formula check at B = 2: 8 (1 - (6/8)^2)
    assert core.expected_distinct_experts(8, 2, 2) == pytest.approx(8 * (1 - 0.75**2))


def test_md1_wait_matches_pollaczek_khinchine():
    assert core.md1_wait_s(0.5, 1.0) == pytest.approx(0.5)
    assert core.md1_wait_s(0.0, 1.0) == 0.0
    assert np.isfinite(core.md1_wait_s(1.5, 1.0))  # clipped, never infinite


def test_exponential_tail_and_kingman():
    assert core.exponential_tail_factor(0.99) == pytest.approx(np.log(100))
    # M/M/1 (ca2 = cs2 = 1) mean wait = rho/(1-rho) x service
    assert core.kingman_wait_s(0.5, 2.0, 1.0, 1.0) == pytest.approx(2.0)
