"""--quick sizes big models to a time budget: fewer layers, then narrower layers, and says so."""

from __future__ import annotations

from types import SimpleNamespace

from infrafit.bench import shapes as sh
from infrafit.bench.hardware import HostInfo
from infrafit.bench.suite import QUICK_BUDGET_BYTES, Sizes, quick_weight_budget_bytes, scaled_shape

BIG = SimpleNamespace(id="big-dec", kind="decoder", hidden_size=4096, num_layers=32, num_attention_heads=32,
                      num_kv_heads=8, head_dim=128, intermediate_size=14336, vocab_size=128256, num_experts=None)


def _host(**kw) -> HostInfo:
    base = dict(cpu_model="Test CPU", cpu_vendor="GenuineIntel", cpu_family=6, logical_cores=8, physical_cores=8,
                clock_hz=2e9, isa_flags=("avx2", "fma"), memory_bytes=16e9, torch_threads=8)
    return HostInfo(**{**base, **kw})


def test_quick_narrows_a_big_model_within_the_budget_and_keeps_head_dim():
    shape = scaled_shape(BIG, _host(), quick=True)
    budget = quick_weight_budget_bytes(_host(), Sizes.default(True))
    assert sh.params(shape) * 4 <= budget * 1.01
    assert shape.num_layers == 1 and shape.head_dim == 128
    assert shape.num_attention_heads % shape.num_kv_heads == 0
    assert shape.hidden_size < BIG.hidden_size and shape.intermediate_size < BIG.intermediate_size
    for word in ("layers 32->1", "hidden 4096->", "heads 32->", "vocab 128256->"):
        assert word in shape.scaled_note


def test_full_run_keeps_per_layer_shapes_and_reports_only_layers_and_vocab():
    shape = scaled_shape(BIG, _host(), quick=False)
    assert (shape.hidden_size, shape.num_attention_heads, shape.intermediate_size) == (4096, 32, 14336)
    assert "hidden" not in shape.scaled_note and "layers 32->" in shape.scaled_note


def test_small_models_are_not_narrowed_by_quick():
    tiny = SimpleNamespace(**{**BIG.__dict__, "hidden_size": 64, "num_attention_heads": 4, "num_kv_heads": 2,
                              "head_dim": 16, "intermediate_size": 128, "vocab_size": 100, "num_layers": 2})
    shape = scaled_shape(tiny, _host(), quick=True)
    assert shape.scaled_note == "" and shape.num_layers == 2


def test_time_budget_shrinks_the_weight_budget_on_a_slow_cpu():
    fast = quick_weight_budget_bytes(_host(), Sizes.default(True))
    slow = quick_weight_budget_bytes(_host(physical_cores=1, torch_threads=1, clock_hz=1e8), Sizes.default(True))
    assert slow < fast <= QUICK_BUDGET_BYTES
    slow_shape = scaled_shape(BIG, _host(physical_cores=1, torch_threads=1, clock_hz=1e8), quick=True)
    assert sh.params(slow_shape) < sh.params(scaled_shape(BIG, _host(), quick=True))
