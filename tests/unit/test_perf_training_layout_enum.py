"""perf.training.layout._enumerate (vectorised) yields exactly the layouts of the plain nested loops
that define them, in the same order (the search's tie-breaking depends on it)."""

from __future__ import annotations

import itertools

import numpy as np
import pytest

from infrafit.perf.training import layout
from infrafit.perf.training.shape import from_model_arch
from infrafit.workload.models import resolve_model


def _reference(shape, count, seq_len, global_batch, domain, fixed, strict):
    """The definition, written as loops: every admissible (tp, pp, cp, ep, micro-batch, interleave,
    ZeRO stage, recompute)."""
    p2 = layout._pow2_upto
    tps = [t for t in p2(min(domain, 64, count)) if shape.heads % t == 0]
    pps = p2(min(shape.layers, count, 128))
    cps = p2(min(16, count)) if seq_len >= layout.LONG_CONTEXT_TOKENS else [1]
    eps = [e for e in p2(min(shape.num_experts, count)) if shape.num_experts % e == 0] or [1]
    rows = []
    for tp, pp, cp, ep in itertools.product(tps, pps, cps, eps):
        if any(k in fixed and fixed[k] != v for k, v in (("tp", tp), ("pp", pp), ("cp", cp), ("ep", ep))):
            continue
        if count % (tp * pp * cp):
            continue
        dp = count // (tp * pp * cp)
        if ("dp" in fixed and fixed["dp"] != dp) or dp % ep or (strict and global_batch % dp):
            continue
        per_dp = global_batch // dp if strict else 1
        for mbs in (b for b in p2(min(per_dp, 64)) if per_dp % b == 0):
            for vpp in ([1] if pp == 1 else [v for v in (1, 2, 4) if shape.layers >= pp * v]):
                for zero in ((1, 3) if dp > 1 else (0,)):
                    rows.extend((tp, pp, dp, ep, cp, mbs, vpp, zero, rc) for rc in layout.RECOMPUTE_CHOICES)
    return rows


@pytest.mark.parametrize("model", ["llama3.1-8b", "llama3.1-70b", "mixtral-8x7b", "deepseek-v3"])
def test_vectorised_enumeration_equals_the_loops(model):
    shape = from_model_arch(resolve_model(model))
    names = ("tp", "pp", "dp", "ep", "cp", "micro_batch", "vpp", "zero_stage", "recompute")
    for count, seq, gbs, dom, strict, fixed in itertools.product(
            (1, 8, 64, 384), (2048, 32768), (64, 2000), (8, 72), (True, False), ({}, {"tp": 2}, {"pp": 4, "dp": 2})):
        got = layout._enumerate(shape, count, seq, gbs, dom, fixed, strict)
        want = _reference(shape, count, seq, gbs, dom, fixed, strict)
        assert len(got["tp"]) == len(want)
        if want:
            cols = list(zip(*want, strict=True))
            for name, col in zip(names, cols, strict=True):
                assert np.array_equal(got[name], np.array(col, dtype=got[name].dtype)), (model, count, name)
