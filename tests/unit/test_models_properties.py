"""Monotonic laws of the model formulas (hypothesis)."""

from __future__ import annotations

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from infrafit.workload.models import list_models

DECODERS = [m for m in list_models() if m.kind in ("decoder", "speech")]
models = st.sampled_from(DECODERS)
contexts = st.integers(min_value=0, max_value=2_000_000)
precisions = st.sampled_from(["fp32", "bf16", "fp8", "fp4"])


@settings(max_examples=150, deadline=None)
@given(models, contexts, contexts)
def test_flops_per_token_never_decrease_with_context(m, a, b):
    lo, hi = sorted((a, b))
    assert m.flops_per_token_fwd(hi) >= m.flops_per_token_fwd(lo)


@settings(max_examples=150, deadline=None)
@given(models, contexts, st.integers(min_value=1, max_value=100_000))
def test_flops_per_token_grow_with_context_for_full_attention(m, c, extra):
    if m.full_attention_layers > 0 and not m.index_topk:
        assert m.flops_per_token_fwd(c + extra) > m.flops_per_token_fwd(c)


@settings(max_examples=150, deadline=None)
@given(models, contexts, contexts, precisions)
def test_kv_bytes_never_decrease_with_context(m, a, b, precision):
    lo, hi = sorted((a, b))
    assert m.kv_bytes(hi, precision) >= m.kv_bytes(lo, precision) >= 0


@settings(max_examples=80, deadline=None)
@given(models, st.lists(contexts, min_size=1, max_size=20))
def test_array_inputs_match_scalar_calls(m, ctx):
    arr = m.flops_per_token_fwd(np.array(ctx))
    kv = m.kv_bytes(np.array(ctx), "bf16")
    for i, c in enumerate(ctx):
        assert arr[i] == m.flops_per_token_fwd(c)
        assert kv[i] == m.kv_bytes(c, "bf16")


@settings(max_examples=80, deadline=None)
@given(models, st.integers(min_value=1, max_value=500_000))
def test_kv_bytes_never_exceed_per_token_bound_plus_state(m, c):
    assert m.kv_bytes(c, "bf16") <= c * m.kv_bytes_per_token("bf16") + m.state_bytes("bf16") + 1e-6
