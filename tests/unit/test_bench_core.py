"""Bench internals: counts vs the real graph, timing, triad, storage, store durability, prediction."""

from __future__ import annotations

import math
from types import SimpleNamespace

import pytest

torch = pytest.importorskip("torch")

from infrafit.bench import shapes as sh  # noqa: E402
from infrafit.bench.hardware import HostInfo, cpu_peak_flops_per_s, parse_cpuinfo  # noqa: E402
from infrafit.bench.hostio import checkpoint_write, storage_sequential, triad  # noqa: E402
from infrafit.bench.models import build_model, make_inputs  # noqa: E402
from infrafit.bench.predict import Device, Efficiency, predict_step  # noqa: E402
from infrafit.bench.results import Measurement, history, record, start_run  # noqa: E402
from infrafit.bench.stats import median_ci_rel, time_repeated  # noqa: E402
from infrafit.store import connect  # noqa: E402

TINY_DECODER = SimpleNamespace(id="tiny-dec", kind="decoder", hidden_size=64, num_layers=4, num_attention_heads=4,
                               num_kv_heads=2, head_dim=16, intermediate_size=128, vocab_size=100, num_experts=None)
TINY_ENCODER = SimpleNamespace(id="tiny-enc", kind="encoder", hidden_size=32, num_layers=2, num_attention_heads=4,
                               num_kv_heads=None, head_dim=None, intermediate_size=64, vocab_size=50)


def _host(**kw) -> HostInfo:
    base = dict(cpu_model="Test CPU", cpu_vendor="GenuineIntel", cpu_family=6, logical_cores=8, physical_cores=8,
                clock_hz=2e9, isa_flags=("avx2", "fma"), memory_bytes=16e9, torch_threads=8)
    return HostInfo(**{**base, **kw})


def test_weight_params_match_the_torch_model():
    for arch in (TINY_DECODER, TINY_ENCODER):
        shape = sh.shape_from_arch(arch, 2)
        model = build_model(shape)
        matrices = sum(p.numel() for p in model.parameters() if p.dim() > 1)
        assert matrices == pytest.approx(sh.params(shape), rel=0.02)


def test_resnet_block_flops_match_published_resnet50():
    shape = sh.shape_from_arch(SimpleNamespace(id="resnet50", kind="cnn", image_size=224))
    # He et al. 2016 Table 1: 3.8e9 multiply-adds without the FC layer's share -> ~7.7-8.2e9 FLOPs
    assert 7.5e9 < sh.forward_counts(shape, 1, 1)["flops"] < 8.4e9
    assert sh.params(shape) == pytest.approx(23.5e6, rel=0.01)


def test_decoder_flops_scale_with_tokens_and_layers():
    one = sh.forward_counts(sh.shape_from_arch(TINY_DECODER, 1), 2, 16)
    two = sh.forward_counts(sh.shape_from_arch(TINY_DECODER, 2), 2, 16)
    assert two["flops"] > one["flops"] * 1.5
    assert sh.training_counts(sh.shape_from_arch(TINY_DECODER, 1), 2, 16)["flops"] > 3 * one["flops"]


def test_fit_to_budget_keeps_layer_shapes_and_cuts_layers_then_vocab():
    big = SimpleNamespace(**{**TINY_DECODER.__dict__, "vocab_size": 100_000, "num_layers": 80})
    shape = sh.fit_to_budget(sh.shape_from_arch(big), budget_bytes=4e6)
    assert shape.hidden_size == 64 and shape.intermediate_size == 128
    assert shape.vocab_size < 100_000 and 1 <= shape.num_layers < 80
    assert sh.params(shape) * 4 <= 4e6 * 1.01


def test_models_run_forward_and_backward():
    for arch in (TINY_DECODER, TINY_ENCODER, SimpleNamespace(id="r", kind="cnn", image_size=32)):
        shape = sh.shape_from_arch(arch, 2)
        model = build_model(shape)
        out = model(make_inputs(shape, 2, 8), all_positions=True)
        out.float().pow(2).mean().backward()
        assert all(p.grad is not None for p in model.parameters() if p.requires_grad and p.dim() > 1)


def test_isa_peak_uses_widest_unit_and_zen4_half_width():
    avx2 = cpu_peak_flops_per_s(_host(), "fp32")
    assert avx2 == pytest.approx(8 * 2e9 * 32)
    intel512 = cpu_peak_flops_per_s(_host(isa_flags=("avx2", "avx512f")), "fp32")
    zen4 = cpu_peak_flops_per_s(_host(isa_flags=("avx2", "avx512f"), cpu_vendor="AuthenticAMD", cpu_family=25), "fp32")
    assert intel512 == 2 * avx2 and zen4 == avx2
    amx = cpu_peak_flops_per_s(_host(isa_flags=("avx512f", "amx_bf16", "amx_tile")), "bf16")
    assert amx == pytest.approx(8 * 2e9 * 1024)


def test_parse_cpuinfo_reads_flags_and_cores():
    text = "processor\t: 0\nvendor_id\t: AuthenticAMD\ncpu family\t: 25\nmodel name\t: AMD EPYC\n" \
           "cpu MHz\t\t: 2596.1\ncpu cores\t: 2\nflags\t\t: fpu avx2 avx512f amx_bf16\nprocessor\t: 1\n"
    info = parse_cpuinfo(text)
    assert info["processors"] == 2 and info["family"] == 25 and "avx512f" in info["flags"]


def test_adaptive_timing_stops_when_median_is_tight():
    ticks = iter(range(10_000))
    timing = time_repeated(lambda: None, clock=lambda: float(next(ticks)), min_reps=5, budget_s=1e9, rel_ci=0.05)
    assert timing.n == 5 and timing.p50_s == pytest.approx(1.0)
    assert math.isinf(median_ci_rel([1.0, 2.0]))
    assert median_ci_rel([1.0] * 50 + [5.0]) == 0.0  # one outlier cannot move the median CI
    assert median_ci_rel([1.0, 1.0, 1.0, 5.0, 1.0, 1.0]) > 0  # few samples: the CI spans the outlier


def test_triad_positive_bandwidth():
    bandwidth, timing, params = triad(4e6, budget_s=0.2)
    assert bandwidth > 1e8 and timing.n >= 5 and params["stream_bytes"] == 3 * params["array_bytes"]


def test_storage_write_read_and_fsync_checkpoint(tmp_path):
    seq = storage_sequential(tmp_path, 1e6, reps=2)
    assert seq["write"].p50_s > 0 and seq["read"].p50_s > 0
    assert seq["cache_bypass"] in ("o_direct", "fadvise_dontneed", "none")
    ckpt = checkpoint_write(tmp_path, 5e5, reps=2)
    assert ckpt["timing"].n == 2 and not list(tmp_path.glob(".infrafit-*"))


def test_prediction_is_roofline_of_counts():
    device = Device("cpu-x", "cpu", {"fp32": 1e11}, 1e10, {"fp32": Efficiency(0.5, 1.0, 0.0)})
    pred = predict_step(device, "fp32", {"flops": 1e11, "bytes": 1e8}, "decoder", 1)
    assert pred["time_s"] == pytest.approx(2.0) and pred["bound"] == "compute"
    pred = predict_step(device, "fp32", {"flops": 1e6, "bytes": 1e10}, "decoder", 1)
    assert pred["time_s"] == pytest.approx(1.0) and pred["bound"] == "memory"


def test_each_measurement_is_committed_before_an_interrupt(tmp_path):
    db = tmp_path / "r.db"
    conn = connect(db)
    run = start_run(conn, {"cpu_model": "x"}, "test")
    with pytest.raises(KeyboardInterrupt):
        for i in range(5):
            if i == 3:
                raise KeyboardInterrupt
            record(conn, run, Measurement("inference_latency", {"i": i}, 0.1 * (i + 1), "s", {}, 0.2))
    # a second connection (as after a crash) sees every committed row
    rows = history(connect(db), run_id=run)
    assert [r["params"]["i"] for r in rows] == [2, 1, 0]
    assert rows[-1]["error"] == pytest.approx(1.0)
