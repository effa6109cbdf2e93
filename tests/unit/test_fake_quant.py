"""Simulated serving formats for check-model (``bench.fake_quant``): each rounds to its format's grid, keeps
the LM head, and their errors order as the formats' widths do on the same model."""

from __future__ import annotations

from types import SimpleNamespace

import pytest

torch = pytest.importorskip("torch")

from infrafit.bench import fake_quant as fq  # noqa: E402
from infrafit.bench import shapes as sh  # noqa: E402
from infrafit.bench.check_model import precision_consistency  # noqa: E402
from infrafit.bench.models import build_model, make_inputs  # noqa: E402

TINY = SimpleNamespace(id="tiny-dec", kind="decoder", hidden_size=64, num_layers=2, num_attention_heads=4,
                       num_kv_heads=2, head_dim=16, intermediate_size=128, vocab_size=100, num_experts=None)


def test_fp8_keeps_e4m3_values_and_scales_per_slice():
    w = torch.tensor([[448.0, 1.0, -3.3, 0.0], [0.02, -0.01, 0.005, 0.0]])
    q = fq.fp8_e4m3(w, dim=1)
    assert q[0, 0] == 448.0 and q[0, 1] == 1.0 and q[0, 2] == -3.25  # E4M3 has 3 mantissa bits: 3.3 -> 3.25
    assert torch.allclose(q[1], w[1], rtol=0.07)  # the small row has its own scale: not flushed to zero


def test_nvfp4_rounds_each_block_of_16_to_e2m1():
    x = torch.linspace(-6.0, 6.0, 32).reshape(1, 32)
    q = fq.nvfp4(x)
    scale = 6.0 / 6.0  # amax 6 -> scale 1 (exact in E4M3)
    assert set((q.abs() / scale).unique().tolist()) <= set(fq.E2M1_VALUES)
    odd = fq.nvfp4(torch.randn(3, 20))  # padded to 32, padding dropped
    assert odd.shape == (3, 20)


def test_int4_uses_16_levels_per_group_of_128():
    w = torch.randn(4, 256)
    q = fq.int4_groups(w)
    for row in range(4):
        for g in range(2):
            assert len(q[row, g * 128:(g + 1) * 128].unique()) <= 16
    assert (q - w).abs().max() < (w.max() - w.min()) / 15


def test_formats_keep_the_lm_head_and_order_their_errors_by_width():
    shape = sh.shape_from_arch(TINY, 2)
    torch.manual_seed(0)
    model = build_model(shape)
    for p in fq.FAKE_QUANT:
        q = fq.fake_quantized(model, p)
        assert isinstance(q.lm_head, torch.nn.Linear)  # kept at the model's precision
        assert not any(type(m) is torch.nn.Linear for n, m in q.named_modules() if not n.endswith("lm_head"))
    res = precision_consistency(model, make_inputs(shape, 4, 16), ("fp32", "bf16", "fp8", "int4", "fp4"))
    err = {p: res[p]["rel_l2_error"] for p in ("bf16", "fp8", "int4", "fp4")}
    assert all(res[p]["status"] == "ok" for p in err) and "simulated" in res["fp8"]["note"]
    assert err["bf16"] < err["fp8"] < err["fp4"] and err["int4"] < err["fp4"]
