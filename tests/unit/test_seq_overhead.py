"""A decode step's host work grows with the sequences it runs (issue 15 defect 7): scheduling, sampling
and detokenisation per sequence, one scheduler per attention-DP group."""

from __future__ import annotations

import pytest
import yaml

from infrafit.catalog import load_catalog
from infrafit.perf import Config, estimate, load_profiles
from infrafit.perf.types import OperatingPoint
from infrafit.workload.spec import parse_spec

SPEC = {"name": "chat", "task": "inference", "model": "llama3.1-8b", "precision": ["fp8"],
        "inference": {"traffic": {"requests_per_s": 10, "input_tokens": 1000, "output_tokens": 300}}}


def _overhead(concurrency: float) -> float:
    cat = load_catalog()
    w = parse_spec(yaml.safe_dump(SPEC), catalog=cat)
    est = estimate(w, Config("nvidia_h100_sxm", 1, "fp8", "vllm", 1), cat,
                   point=OperatingPoint(concurrency=concurrency))
    return float(est.breakdown["overhead_s"])


def test_the_step_overhead_grows_by_the_per_sequence_cost():
    per_seq = load_profiles().value("hopper", "vllm", "fp8", "decode", "seq_overhead")
    assert per_seq > 0
    assert _overhead(256) - _overhead(16) == pytest.approx(240 * per_seq, rel=1e-6)
