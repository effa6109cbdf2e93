"""Linear-attention state (issue 15 defect 8): Gated DeltaNet layers (Qwen3-Next, Qwen3.5) keep a fixed
``heads x d_k x d_v`` state per sequence at the stack's state width (SGLang float32, vLLM the model's
16-bit dtype), not the KV-cache dtype; TP splits it over the value heads; each decode step reads and
writes it."""

from __future__ import annotations

import numpy as np
import pytest

from infrafit.catalog import load_catalog
from infrafit.perf.llm.engine import (
    cache_bytes_per_seq,
    decode_step,
    kv_shards,
    max_concurrency,
    state_bytes_per_seq,
)
from infrafit.perf.llm.setup import DEFAULT_STATE_BYTES_PER_ELEMENT, ConfigRow, build_setup
from infrafit.perf.llm.shape import shape_from_arch
from infrafit.workload.models import resolve_model

QWEN3_NEXT = "Qwen/Qwen3-Next-80B-A3B-Thinking"


@pytest.fixture(scope="module")
def next_shape():
    return shape_from_arch(resolve_model(QWEN3_NEXT))


def _setup(rows):
    return build_setup(rows)[0]


def test_state_is_counted_from_the_config(next_shape):
    arch = resolve_model(QWEN3_NEXT)
    # 36 Gated DeltaNet layers x 32 value heads x 128 x 128, plus the conv state (kernel 4: 3 columns of
    # 2 x 16 x 128 key channels + 32 x 128 value channels)
    recurrent = 36 * 32 * 128 * 128
    conv = 36 * (2 * 16 * 128 + 32 * 128) * 3
    assert next_shape.state_elements == pytest.approx(recurrent + conv)
    assert next_shape.state_shards_max == 32
    # the KV cache of the 12 softmax layers grows with the context; the state does not
    assert next_shape.kv_elements(0.0) == pytest.approx(0.0)
    assert float(arch.kv_bytes(1000.0, "fp8", with_state=False)) == pytest.approx(float(next_shape.kv_elements(1000.0)))
    dense = shape_from_arch(resolve_model("llama3.1-8b"))
    assert dense.state_elements == 0.0


def test_state_width_follows_the_stack_not_the_kv_dtype(next_shape):
    h100 = load_catalog().accelerator("nvidia_h100_sxm")
    s = _setup([ConfigRow(h100, "fp8", "sglang", tp=4), ConfigRow(h100, "fp8", "vllm", tp=4),
                ConfigRow(h100, "bf16", "vllm", tp=4), ConfigRow(h100, "fp8", "tensorrt-llm", tp=4)])
    assert list(s.state_bytes_per_element) == [4.0, 2.0, 2.0, DEFAULT_STATE_BYTES_PER_ELEMENT]
    assert list(s.kv_bytes_per_element) == [1.0, 1.0, 2.0, 1.0]  # the KV cache is fp8 under fp8 weights
    state = state_bytes_per_seq(next_shape, s)
    assert state[0] == pytest.approx(2.0 * state[1])  # float32 vs bf16
    assert state[1] == pytest.approx(state[2])  # fp8 KV does not shrink the state
    assert state[1] == pytest.approx(next_shape.state_elements * 2.0 / 4)


def test_tensor_parallelism_splits_the_state_over_the_value_heads(next_shape):
    h100 = load_catalog().accelerator("nvidia_h100_sxm")
    s = _setup([ConfigRow(h100, "bf16", "vllm", tp=1), ConfigRow(h100, "bf16", "vllm", tp=8)])
    state = state_bytes_per_seq(next_shape, s)
    assert state[0] / state[1] == pytest.approx(8.0)  # 32 value heads: 8 ways
    assert list(kv_shards(next_shape, s)) == [1.0, 2.0]  # 2 KV heads: the softmax cache splits only 2 ways
    kv = cache_bytes_per_seq(next_shape, s, 4000.0) - state
    assert kv[0] / kv[1] == pytest.approx(2.0)


def test_decode_reads_and_writes_the_state_every_step(next_shape):
    h100 = load_catalog().accelerator("nvidia_h100_sxm")
    s = _setup([ConfigRow(h100, "bf16", "vllm", tp=4)])
    batch, ctx = np.array([64.0]), np.array([2000.0])
    step = decode_step(next_shape, s, batch, ctx)
    kv = float(batch[0] * (cache_bytes_per_seq(next_shape, s, ctx) - state_bytes_per_seq(next_shape, s))[0])
    state = float(batch[0] * state_bytes_per_seq(next_shape, s)[0])
    bandwidth = float(s.memory_bytes_per_s[0] * s.eff_memory[0])
    assert float(step["kv_read_s"][0]) == pytest.approx((kv + 2.0 * state) / bandwidth)


def test_the_state_takes_memory_from_the_kv_pool(next_shape):
    h100 = load_catalog().accelerator("nvidia_h100_sxm")
    s = _setup([ConfigRow(h100, "bf16", "sglang", tp=4), ConfigRow(h100, "bf16", "vllm", tp=4)])
    cmax = max_concurrency(next_shape, s, np.array([1000.0, 1000.0]))
    # at 1k tokens the float32 state (79 MB a sequence) outweighs the KV cache: SGLang fits far fewer
    assert cmax[0] < 0.75 * cmax[1]
