"""Small-message all-reduce on one-hop fabrics (issue 15 defect 2): on NVSwitch and full-mesh fabrics a
decode-sized all-reduce is one round (one-shot) or two (two-shot), a few microseconds, not a ring's
2 (n-1) latency-bound hops; the ring stays for links without all-to-all reach and for large messages."""

from __future__ import annotations

import numpy as np
import pytest

from infrafit.catalog import load_catalog
from infrafit.perf.core import one_hop_allreduce_time_s, ring_allreduce_time_s
from infrafit.perf.llm.engine import decode_step
from infrafit.perf.llm.setup import ConfigRow, build_setup
from infrafit.perf.llm.shape import shape_from_arch
from infrafit.workload.models import resolve_model

LAT = 2e-6  # the scale-up hop latency prior
BW = 450e9  # NVLink 4 per direction


def test_a_decode_sized_all_reduce_is_one_round_not_a_ring():
    msg = 4 * 4096 * 2  # batch 4 x hidden 4096 x bf16 = 32 kB
    ring = float(ring_allreduce_time_s(msg, 8, BW, LAT))
    one = float(one_hop_allreduce_time_s(msg, 8, BW, LAT))
    assert ring == pytest.approx(2 * 7 / 8 * msg / BW + 14 * LAT)  # 28.1 us
    assert one == pytest.approx(7 * msg / BW + 2 * LAT)  # one-shot: 4.5 us
    assert one < ring / 5


def test_large_messages_use_the_bandwidth_optimal_schedule():
    msg = 64e6
    one = float(one_hop_allreduce_time_s(msg, 8, BW, LAT))
    ring = float(ring_allreduce_time_s(msg, 8, BW, LAT))
    # two-shot moves what the ring moves in 4 latencies instead of 14: never slower than the ring
    assert one == pytest.approx(2 * 7 / 8 * msg / BW + 4 * LAT)
    assert one <= ring
    assert float(one_hop_allreduce_time_s(msg, 1, BW, LAT)) == 0.0


def _collectives(acc_id: str, tp: int) -> float:
    cat = load_catalog()
    shape = shape_from_arch(resolve_model("llama3.1-8b"))
    setup, _, _ = build_setup([ConfigRow(cat.accelerator(acc_id), "bf16", "vllm", tp=tp)])
    return float(decode_step(shape, setup, np.array([4.0]), np.array([2000.0]))["collectives_s"][0])


def test_nvswitch_tp8_decode_collectives_are_microseconds_per_layer():
    per_layer = _collectives("nvidia_h100_sxm", 8) / (2 * 32)
    assert per_layer < 10e-6  # one-shot on NVSwitch (the ring was ~28 us)


def test_fabrics_without_one_hop_reach_keep_the_ring():
    cat = load_catalog()
    assert cat.accelerator("nvidia_h100_sxm").scaleup_topology == "switch"
    assert cat.accelerator("amd_mi300x").scaleup_topology == "full_mesh"
    assert cat.accelerator("google_tpu_v5e").scaleup_topology == "torus"
    setup, _, _ = build_setup([ConfigRow(cat.accelerator("google_tpu_v5e"), "bf16", "vllm", tp=4)])
    assert float(setup.one_hop[0]) == 0.0
    h100, _, _ = build_setup([ConfigRow(cat.accelerator("nvidia_h100_sxm"), "bf16", "vllm", tp=8)])
    assert float(h100.one_hop[0]) == 1.0
    # on the torus the same 32-layer decode pays the ring's 2 (n-1) hops per all-reduce
    ring_per_layer = _collectives("google_tpu_v5e", 4) / (2 * 32)
    assert ring_per_layer >= 2 * 3 * setup.link_latency_s[0]
