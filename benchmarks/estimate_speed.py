"""How many LLM-inference configuration estimates per second infrafit computes (issue 4 §8).

One estimate = one (accelerator, precision, stack, layout, concurrency) configuration through the
full serving model (decode step rooflines, prefill, continuous batching, TTFT/TPOT p50/p99 with
queueing, KV-cache capacity). Run: ``.venv/bin/python benchmarks/estimate_speed.py``.
"""

from __future__ import annotations

import time

import numpy as np

from infrafit.catalog import load_catalog
from infrafit.perf import ConfigRow, build_setup, serve, shape_from_arch
from infrafit.workload.models import get_model

N = 1_000_000


def main() -> None:
    cat = load_catalog()
    shape = shape_from_arch(get_model("llama3.1-70b"))
    accs = [cat.accelerator(a) for a in ("nvidia_h100_sxm", "nvidia_h200_sxm", "nvidia_b200_sxm", "amd_mi300x")]
    rows = [ConfigRow(a, p, "vllm", tp) for a in accs for p in ("bf16", "fp8") for tp in (1, 2, 4, 8)]
    setup, _, _ = build_setup(rows)
    idx = np.arange(N) % len(rows)
    s = setup.take(idx)
    conc = np.tile(np.array([1, 4, 16, 64, 256], dtype=float), N // 5 + 1)[:N]
    isl = np.full(N, 1500.0)
    osl = np.full(N, 300.0)
    serve(shape, s.take(np.arange(1000)), conc[:1000], isl[:1000], osl[:1000])  # warm-up
    t0 = time.perf_counter()
    out = serve(shape, s, conc, isl, osl)
    dt = time.perf_counter() - t0
    assert np.isfinite(out.ttft_p99_s).all()
    print(f"{N:,} LLM-inference configuration estimates in {dt:.2f} s = {N / dt:,.0f} per second")


if __name__ == "__main__":
    main()
