"""Prefix caching and speculative decoding in the engine and the planner (issue 15, features)."""

from __future__ import annotations

import copy

import numpy as np
import pytest
import yaml

from infrafit.catalog import load_catalog
from infrafit.errors import InfrafitError
from infrafit.perf import Config, estimate
from infrafit.perf.llm.engine import Speculation
from infrafit.perf.types import OperatingPoint
from infrafit.search.planner import plan
from infrafit.workload.spec import parse_spec

BASE = {"name": "rag", "task": "inference", "model": "gemma3-27b", "precision": ["fp8"],
        "inference": {"traffic": {"requests_per_s": 10, "input_tokens": {"mean": 4000, "p99": 8000},
                                  "output_tokens": {"mean": 200, "p99": 600}},
                      "slo": {"ttft_p99_s": 3.0, "tpot_p99_s": 0.08}},
        "placement": {"countries": ["US"]}, "deployment": {"allowed": ["cloud"]}, "horizon_months": 12}


def _est(changes: dict | None = None, concurrency: float = 16, count: int = 1):
    data = copy.deepcopy(BASE)
    for k, v in (changes or {}).items():
        if k == "prefix":
            data["inference"]["traffic"]["prefix"] = v
        else:
            data["inference"][k] = v
    cat = load_catalog()
    w = parse_spec(yaml.safe_dump(data), catalog=cat)
    return estimate(w, Config("nvidia_h100_sxm", count, "fp8", "vllm", count), cat,
                    point=OperatingPoint(concurrency=concurrency))


def test_expected_tokens_per_step_is_the_geometric_series():
    assert Speculation(3, 0.7).tokens_per_step() == pytest.approx((1 - 0.7 ** 4) / 0.3)
    assert Speculation(1, 0.5).tokens_per_step() == pytest.approx(1.5)


def test_a_prefix_cache_hit_skips_prefill_and_holds_the_prefix_once():
    none, hit = _est(), _est({"prefix": {"shared_tokens": 3000, "hit_rate": 1.0}})
    miss = _est({"prefix": {"shared_tokens": 3000, "hit_rate": 0.0}})
    assert miss.latency.ttft_s.p99 == pytest.approx(none.latency.ttft_s.p99)
    assert hit.latency.ttft_s.p99 < 0.5 * none.latency.ttft_s.p99  # 3/4 of each prompt is not recomputed
    assert hit.latency.tpot_s.p99 < none.latency.tpot_s.p99  # less prefill rides in the decode steps
    assert hit.memory.kv_cache_bytes < none.memory.kv_cache_bytes
    half = _est({"prefix": {"shared_tokens": 3000, "hit_rate": 0.5}})
    assert hit.latency.ttft_s.p99 < half.latency.ttft_s.p99 < none.latency.ttft_s.p99


def test_speculation_pays_off_when_decode_is_memory_bound_and_less_at_large_batches():
    eagle = {"speculative": {"method": "eagle", "tokens": 3, "acceptance_rate": 0.8}}
    small = _est(eagle, concurrency=1).latency.tpot_s.p50 / _est(concurrency=1).latency.tpot_s.p50
    large = _est(eagle, concurrency=256, count=2).latency.tpot_s.p50 / _est(concurrency=256, count=2).latency.tpot_s.p50
    assert small < 0.6  # ~2.95 tokens per verify step that costs about one step
    assert large > small  # verifying 4 tokens per sequence costs compute once the GEMMs are compute-bound
    low = _est({"speculative": {"method": "eagle", "tokens": 3, "acceptance_rate": 0.2}}, concurrency=1)
    assert low.latency.tpot_s.p50 > _est(eagle, concurrency=1).latency.tpot_s.p50


def test_a_draft_model_costs_its_steps_and_its_memory():
    draft = _est({"speculative": {"method": "draft_model", "draft_model": "gemma3-1b", "tokens": 4,
                                  "acceptance_rate": 0.7}}, concurrency=1)
    ngram = _est({"speculative": {"method": "ngram", "tokens": 4, "acceptance_rate": 0.7}}, concurrency=1)
    plain = _est(concurrency=1)
    assert draft.memory.weights_bytes > plain.memory.weights_bytes  # the draft's weights are resident too
    assert ngram.latency.tpot_s.p50 < draft.latency.tpot_s.p50 < plain.latency.tpot_s.p50


def test_bad_feature_specs_are_refused_with_a_fix():
    cat = load_catalog()
    bad = [
        {"speculative": {"method": "draft_model"}},
        {"speculative": {"method": "eagle", "draft_model": "gemma3-1b"}},
        {"speculative": {"method": "draft_model", "draft_model": "no-such-model"}},
        {"speculative": {"method": "eagle", "acceptance_rate": 1.0}},
        {"prefix": {"shared_tokens": 5000}},  # more than the mean prompt
    ]
    for change in bad:
        data = copy.deepcopy(BASE)
        if "prefix" in change:
            data["inference"]["traffic"]["prefix"] = change["prefix"]
        else:
            data["inference"].update(change)
        with pytest.raises(InfrafitError) as info:
            parse_spec(yaml.safe_dump(data), catalog=cat)
        assert "To fix" in str(info.value)


def test_the_planner_buys_less_for_a_cached_prefix():
    cat = load_catalog()
    data = copy.deepcopy(BASE)
    base = plan(parse_spec(yaml.safe_dump(data), catalog=cat), cat, top=1).options[0]
    data["inference"]["traffic"]["prefix"] = {"shared_tokens": 3000, "hit_rate": 0.9}
    cached = plan(parse_spec(yaml.safe_dump(data), catalog=cat), cat, top=1).options[0]
    assert cached.cost["tco_usd"] < base.cost["tco_usd"]
    assert np.isfinite(cached.performance["operating_point"]["requests_per_s"])
