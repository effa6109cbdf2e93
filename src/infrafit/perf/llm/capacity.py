"""``capacity``: what each configuration sustains within the workload's SLOs, vectorized.

For LLM inference: every configuration x a grid of concurrencies is evaluated at once; a
configuration's capacity is the highest request rate at a concurrency whose p99 TTFT and TPOT meet
the SLOs and whose KV cache fits. This is what ``cost`` and ``search`` consume.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from infrafit.perf.llm.engine import max_concurrency, serve, weight_bytes_per_gpu
from infrafit.perf.llm.setup import ConfigRow, build_setup
from infrafit.perf.llm.shape import LLMShape
from infrafit.perf.types import Config
from infrafit.perf.validate.llm import CONCURRENCY_GRID

DEFAULT_INPUT_TOKENS = 1000.0
DEFAULT_OUTPUT_TOKENS = 200.0


@dataclass(frozen=True)
class LLMCapacity:
    """Per configuration arrays; ``requests_per_s`` and ``output_tokens_per_s`` are for all replicas."""

    requests_per_s: np.ndarray
    output_tokens_per_s: np.ndarray
    concurrency: np.ndarray  # per replica, at the capacity point
    ttft_p50_s: np.ndarray
    ttft_p99_s: np.ndarray
    tpot_p50_s: np.ndarray
    tpot_p99_s: np.ndarray
    max_concurrency: np.ndarray
    fits: np.ndarray
    weights_bytes: np.ndarray
    replicas: np.ndarray


def lengths(workload: Any) -> tuple[float, float]:
    """Mean input and output tokens of an inference workload (defaults when unstated)."""
    traffic = getattr(getattr(workload, "inference", None), "traffic", None)
    isl = getattr(getattr(traffic, "input_tokens", None), "mean", None) or DEFAULT_INPUT_TOKENS
    osl = getattr(getattr(traffic, "output_tokens", None), "mean", None) or DEFAULT_OUTPUT_TOKENS
    return float(isl), float(osl)


def slos(workload: Any) -> tuple[float, float]:
    slo = getattr(getattr(workload, "inference", None), "slo", None)
    ttft = getattr(slo, "ttft_p99_s", None) or np.inf
    tpot = getattr(slo, "tpot_p99_s", None) or np.inf
    return float(ttft), float(tpot)


def llm_capacity(
    shape: LLMShape, rows: Sequence[ConfigRow], counts: Sequence[int], input_tokens: float, output_tokens: float,
    ttft_p99_s: float = np.inf, tpot_p99_s: float = np.inf,
) -> LLMCapacity:
    """Capacity of each configuration row (``counts`` chips each) at the given lengths and SLOs."""
    n, g = len(rows), len(CONCURRENCY_GRID)
    setup, _, _ = build_setup(rows)
    idx = np.repeat(np.arange(n), g)
    s = setup.take(idx)
    conc = np.tile(CONCURRENCY_GRID.astype(float), n)
    sv = serve(shape, s, conc, input_tokens, output_tokens)
    cmax = max_concurrency(shape, s, input_tokens + output_tokens, input_tokens)
    ok = (conc <= cmax) & (sv.ttft_p99_s <= ttft_p99_s) & (sv.tpot_p99_s <= tpot_p99_s)
    rate = np.where(ok, sv.requests_per_s, -1.0).reshape(n, g)
    best = np.argmax(rate, axis=1)
    pick = np.arange(n) * g + best
    fits = rate.max(axis=1) > 0
    gpus = setup.tp * setup.pp * setup.adp
    replicas = np.floor(np.asarray(counts, dtype=float) / gpus)
    per = np.where(fits, sv.requests_per_s[pick], 0.0)
    return LLMCapacity(
        requests_per_s=per * replicas, output_tokens_per_s=per * replicas * output_tokens,
        concurrency=np.where(fits, conc[pick], 0.0), ttft_p50_s=sv.ttft_p50_s[pick], ttft_p99_s=sv.ttft_p99_s[pick],
        tpot_p50_s=sv.tpot_p50_s[pick], tpot_p99_s=sv.tpot_p99_s[pick], max_concurrency=cmax[pick],
        fits=fits, weights_bytes=weight_bytes_per_gpu(shape, setup), replicas=replicas,
    )


def capacity(workload: Any, configs: Sequence[Config], catalog: Any = None) -> LLMCapacity:
    """LLM-inference capacity of ``configs`` for ``workload`` (see ``llm_capacity``)."""
    from infrafit.catalog import load_catalog
    from infrafit.perf.llm.setup import default_stack
    from infrafit.perf.llm.shape import shape_from_arch

    cat = catalog or load_catalog()
    shape = shape_from_arch(workload.model_arch())
    rows = []
    for c in configs:
        acc = cat.accelerator(c.accelerator)
        rows.append(ConfigRow(acc, c.precision, c.stack or default_stack(acc), c.tp, c.pp, 1, c.ep))
    isl, osl = lengths(workload)
    ttft, tpot = slos(workload)
    return llm_capacity(shape, rows, [c.count for c in configs], isl, osl, ttft, tpot)
