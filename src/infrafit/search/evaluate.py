"""Evaluate many configurations of one workload at once: capacity within the SLOs, or time to train.

Three paths, each built on the performance package's array estimators:

- LLM inference (decoders): ``perf.llm.serve`` over (configurations x concurrency grid). A
  configuration's capacity is the largest request rate any concurrency sustains with TTFT p99 (at
  the p99 prompt), TPOT p99 and end-to-end p99 within the SLOs; the layout dimension (tensor
  parallel x attention data parallel inside a replica) is searched and the best kept.
- Other inference: ``perf.nonllm.nonllm_capacity`` (samples/s within the latency SLO, or offline).
- Training: ``perf.training.train_run`` (layout search per accelerator x count), pruned first by
  the ideal time ``model FLOPs / (count x peak)`` against the deadline.

Each returns an ``Evaluated`` (arrays over configurations) plus what a failing family lacked.
"""

from __future__ import annotations

from dataclasses import dataclass, field, fields, replace
from typing import Any

import numpy as np

from infrafit.search import operating as op
from infrafit.units import SECONDS_PER_DAY

#: Concurrency grid per replica for continuous batching (closed loop, requests in flight). Finer than
#: validate's grid (perf.rows_llm) and capped at 1,024: a serving plan sits where TTFT/TPOT SLOs bind,
#: while MLPerf Offline rows need the very large batches (up to 4,096) that validate searches.
CONCURRENCY_GRID = np.array([1, 2, 4, 8, 16, 24, 32, 48, 64, 96, 128, 192, 256, 384, 512, 768, 1024], float)
LLM_PRECISIONS_AUTO = ("bf16", "fp8", "fp4", "int8", "int4")
#: Keys of ``evaluate_training``'s pruned dict for physically impossible estimates (MFU > 1).
MODEL_ERROR_PREFIX = "model-error:"


@dataclass
class Evaluated:
    """Configurations (``rows``: accelerator id, count, precision, stack, layout) and their numbers."""

    rows: list[dict[str, Any]]
    fits: np.ndarray
    capacity: np.ndarray  # inference: requests (items)/s one replica sustains within the SLOs; training: NaN
    time_to_train_s: np.ndarray  # training: one run; inference: NaN
    metric: np.ndarray  # the front's second axis: p99 latency (s) or time to train (s)
    memory_bytes: np.ndarray  # per accelerator
    memory_capacity_bytes: np.ndarray
    slo: dict[str, tuple[np.ndarray, float]] = field(default_factory=dict)  # name -> (value per row, limit)
    terms: list[dict[str, float]] = field(default_factory=list)  # roofline terms of each row
    p50: dict[str, np.ndarray] = field(default_factory=dict)  # latency key (ttft_s, tpot_s, e2e_s) -> p50 (s)

    def take(self, idx: np.ndarray) -> Evaluated:
        idx = np.asarray(idx, dtype=int)
        return Evaluated([self.rows[i] for i in idx], self.fits[idx], self.capacity[idx], self.time_to_train_s[idx],
                         self.metric[idx], self.memory_bytes[idx], self.memory_capacity_bytes[idx],
                         {k: (v[idx], lim) for k, (v, lim) in self.slo.items()}, [self.terms[i] for i in idx],
                         {k: v[idx] for k, v in self.p50.items()})

    def __len__(self) -> int:
        return len(self.rows)


def tp_domain(acc) -> int:
    """Largest tensor-parallel group worth trying on ``acc``: its scale-up domain, or up to 8 chips
    of one box talking over PCIe when the catalog knows the host link. A chip with neither (an
    unknown host link is NaN in the catalog, and NaN is truthy) runs TP 1 only: its collectives would
    have no bandwidth to be priced with."""
    host = acc.host_bytes_per_s
    pcie = host is not None and bool(np.isfinite(host)) and host > 0
    return max(int(acc.scaleup_domain_size or 1), 8 if pcie else 1)


def _pow2_divisors(n: int, cap: int) -> list[int]:
    out, x = [], 1
    while x <= min(n, cap):
        if n % x == 0:
            out.append(x)
        x *= 2
    return out


def llm_precisions(acc, allowed: tuple[str, ...]) -> list[str]:
    """Precisions worth trying on ``acc``: allowed ones it runs natively (int4 is weight-only)."""
    base = [p for p in allowed if p != "fp32"] or list(allowed)
    return [p for p in base if p == "int4" or acc.peak(p) > 0] or base[:1]


def _grid_setup(setup):
    return replace(setup, **{f.name: np.asarray(getattr(setup, f.name), float)[:, None] for f in fields(setup)})


def ttft_p99_at_long_prompt(shape, grid, ttft_p99_s: np.ndarray, isl: float, isl99: float) -> np.ndarray:
    """TTFT p99 of a p99-length prompt: the model's queueing p99 under the mean traffic, with the
    request's own prefill at the p99 prompt length instead of the mean one.

    ``ttft_p99 = serve(mean lengths).ttft_p99 - prefill_alone(isl) + prefill_alone(isl_p99)``. The
    queue ahead of the request is made of typical prompts, so it is not re-priced at p99 lengths
    (doing so, as ``serve`` at ``isl_p99`` for everyone would, counts the tail twice)."""
    from infrafit.perf.llm.engine import prefill_alone_s

    if not isl99 or isl99 <= isl:
        return ttft_p99_s
    extra = prefill_alone_s(shape, grid, np.asarray(isl99, float)) - prefill_alone_s(shape, grid, np.asarray(isl, float))
    return ttft_p99_s + np.maximum(extra, 0.0)


def evaluate_llm(arch, pairs: list[tuple[Any, int]], precisions: tuple[str, ...], stacks_for, traffic, slo,
                 profiles=None, targets: tuple[float, ...] = ()) -> Evaluated:
    """Continuous-batching capacity of every (accelerator, count) x precision x stack x layout, at its
    SLO-limited load and at ``targets`` (fractions of that rate, ``search.operating``)."""
    from infrafit.perf.llm.engine import decode_step, max_concurrency, serve, weight_bytes_per_gpu
    from infrafit.perf.llm.setup import ConfigRow, build_setup
    from infrafit.perf.llm.shape import shape_from_arch

    shape = shape_from_arch(arch)
    rows, cfg = [], []
    for acc, n in pairs:
        domain = tp_domain(acc)
        for p in llm_precisions(acc, precisions):
            for st in stacks_for(acc):
                for tp in _pow2_divisors(n, domain):
                    rows.append(ConfigRow(acc, p, st, tp=tp, adp=n // tp))
                    cfg.append({"accelerator": acc.id, "count": n, "precision": p, "stack": st,
                                "tp": tp, "pp": 1, "dp": n // tp, "ep": 1})
    if not rows:
        return _empty()
    setup, plans, _ = build_setup(rows, profiles)
    isl, osl = float(traffic.input_tokens.mean), float(traffic.output_tokens.mean)
    isl99, osl99 = float(traffic.input_tokens.p99), float(traffic.output_tokens.p99)
    grid = _grid_setup(setup)
    conc = CONCURRENCY_GRID[None, :]
    sv = serve(shape, grid, conc, isl, osl)
    cmax = max_concurrency(shape, setup, isl + osl)
    fits = cmax >= 1
    ttft99 = ttft_p99_at_long_prompt(shape, grid, sv.ttft_p99_s, isl, isl99)
    tpot99 = sv.tpot_p99_s
    e2e99 = ttft99 + (osl99 - 1.0) * tpot99
    ok = np.ones_like(ttft99, bool)
    limits = {"ttft_p99_s": (ttft99, slo.ttft_p99_s), "tpot_p99_s": (tpot99, slo.tpot_p99_s),
              "e2e_p99_s": (e2e99, slo.e2e_p99_s or slo.latency_p99_s)}
    for value, limit in limits.values():
        if limit:
            ok &= value <= limit
    rate = np.where(ok & fits[:, None], sv.requests_per_s, 0.0)
    # Every configuration at its SLO-limited load, plus (latency, balanced) lighter loads: operating.py.
    ri, j, names = op.point_indices(rate, targets)
    j_max = np.where(rate.max(axis=1) > 0, np.argmax(rate, axis=1), 0)
    sub = _take_setup(setup, ri, len(rows))
    capacity = rate[ri, j]
    chosen_c = CONCURRENCY_GRID[j]
    in_flight = np.minimum(chosen_c, np.maximum(cmax[ri], 1))
    w = weight_bytes_per_gpu(shape, sub)
    kv_per_seq = shape.kv_elements(isl + osl) * sub.kv_bytes_per_element / np.minimum(sub.tp, shape.kv_shards_max)
    kv = kv_per_seq * in_flight / sub.adp
    step = decode_step(shape, sub, in_flight, np.full(len(ri), isl + osl / 2))
    terms = [{"gemm_compute_s": float(step["gemm_compute_s"][k]), "weights_read_s": float(step["gemm_memory_s"][k]),
              "kv_read_s": float(step["kv_read_s"][k]), "attention_compute_s": float(step["attention_compute_s"][k]),
              "collectives_s": float(step["collectives_s"][k]), "overhead_s": float(step["overhead_s"][k]),
              "concurrency": float(chosen_c[k]), "kv_max_concurrency": float(cmax[i]),
              "throughput_output_tokens_per_s": float(sv.output_tokens_per_s[i, j[k]])}
             for k, i in enumerate(ri)]
    for i, p in enumerate(plans):
        cfg[i]["notes"] = list(p.notes)
    out_rows = []
    for k, i in enumerate(ri):
        point = op.describe(names[k], f"{chosen_c[k]:.0f} requests in flight", float(capacity[k]),
                            float(rate[i, j_max[i]]), "ttft_p99_s", float(ttft99[i, j[k]]),
                            float(ttft99[i, j_max[i]]))
        out_rows.append({**cfg[i], "operating_point": point})
    slo_out = {k: (v[ri, j], float(lim)) for k, (v, lim) in limits.items() if lim}
    slo_out.setdefault("ttft_p99_s", (ttft99[ri, j], float("nan")))
    slo_out.setdefault("tpot_p99_s", (tpot99[ri, j], float("nan")))
    ttft50, tpot50 = sv.ttft_p50_s[ri, j], sv.tpot_p50_s[ri, j]
    p50 = {"ttft_s": ttft50, "tpot_s": tpot50, "e2e_s": ttft50 + (osl - 1.0) * tpot50}
    return Evaluated(out_rows, fits[ri], capacity, np.full(len(ri), np.nan), ttft99[ri, j], w + kv,
                     np.broadcast_to(np.asarray(setup.memory_bytes, float), (len(rows),))[ri], slo_out, terms, p50)


def _take_setup(setup, idx: np.ndarray, n: int):
    """The setup's per-configuration arrays (length ``n``) at ``idx``; scalars and broadcasts stay."""
    def pick(v):
        a = np.asarray(v)
        return a[idx] if a.ndim >= 1 and a.shape[0] == n else a
    return replace(setup, **{f.name: pick(getattr(setup, f.name)) for f in fields(setup)})


def evaluate_nonllm(arch, pairs: list[tuple[Any, int]], precisions: tuple[str, ...], latency_slo_s, realtime: bool,
                    work_shape: dict, targets: tuple[float, ...] = (), framework: str | None = None) -> Evaluated:
    """Samples/s per replica within the latency SLO (realtime) or offline (batch); realtime also at
    ``targets`` (fractions of the SLO-limited rate: smaller batches, ``search.operating``)."""
    from infrafit.perf.nonllm.model import _default_stack, nonllm_capacity
    from infrafit.perf.nonllm.work import sample_work

    if not pairs:
        return _empty()
    parts = []
    accs = [a for a, _ in pairs]
    counts = np.array([n for _, n in pairs], float)
    for p in precisions:
        cap = nonllm_capacity(arch, accs, counts, p, latency_slo_s=latency_slo_s if realtime else None, **work_shape)
        work = sample_work(arch, p, **work_shape)
        rate = cap["samples_per_s"] if realtime else cap["offline_samples_per_s"]
        lat = cap["p99_s"]
        batch = np.asarray(cap["batch"], float)
        points = [(i, op.MAX_RATE, float(batch[i]), float(rate[i]), float(lat[i])) for i in range(len(pairs))]
        if realtime and targets and latency_slo_s:
            grid, g_rate, g_p99 = op.nonllm_rate_grid(arch, accs, counts, p, latency_slo_s, work_shape)
            ri, j, names = op.point_indices(g_rate, targets)
            points += [(int(i), nm, float(grid[jj]), float(g_rate[i, jj]), float(g_p99[i, jj]))
                       for i, jj, nm in zip(ri, j, names, strict=True) if nm != op.MAX_RATE]
        for i, name, b, r, p99 in points:
            acc, n = pairs[i]
            point = op.describe(name, f"batch {b:g}", r, float(rate[i]), "latency_p99_s", p99, float(lat[i]))
            # p50: half a step of waiting, then the request's own step (perf.nonllm.latency_at_rate)
            p50 = 1.5 * b * n / r if r > 0 else float("nan")
            parts.append(({"accelerator": acc.id, "count": n, "precision": p,
                           "stack": _default_stack(acc, arch.kind, framework),
                           "tp": 1, "pp": 1, "dp": n, "ep": 1, "batch": b, "operating_point": point},
                          bool(cap["fits"][i]), r, p99, float(work.weight_bytes + b * work.activation_bytes),
                          float(acc.memory_bytes), p50))
    cfg, fits, rate_a, lat, mem, capb, p50 = zip(*parts, strict=True)
    lat_a = np.asarray(lat, float)
    slo = {"latency_p99_s": (lat_a, float(latency_slo_s))} if latency_slo_s and realtime else {}
    return Evaluated(list(cfg), np.asarray(fits), np.asarray(rate_a, float), np.full(len(cfg), np.nan), lat_a,
                     np.asarray(mem, float), np.asarray(capb, float), slo, [{} for _ in cfg],
                     {"e2e_s": np.asarray(p50, float)} if realtime else {})


def ideal_train_s(shape, acc, count: int, precision: str, seq_len: int, total_samples: float) -> float:
    """Time to train at 100 % of the chips' peak (PaLM model FLOPs): a lower bound for early pruning."""
    from infrafit.perf.training.run import model_flops_per_sample

    peak = acc.peak(precision) or acc.peak("bf16") or acc.peak("fp16")
    return model_flops_per_sample(shape, seq_len) * total_samples / max(count * peak, 1.0)


def peak_fraction(acc, mfu_fraction: float | None, precision: str) -> float:
    """Model FLOP/s as a fraction of the dense peak of the precision the run uses.

    ``perf.training`` reports MFU against the dense bf16 peak (its convention), so an fp8 run may
    show MFU above 1 while using about half of its fp8 peak; above 1 of the run's own precision is
    physically impossible."""
    if not mfu_fraction:
        return 0.0
    bf16 = acc.peak("bf16") or acc.peak("fp16")
    own = acc.peak(precision) or bf16
    return float(mfu_fraction) * bf16 / own if own else float(mfu_fraction)


def evaluate_training(workload, arch, pairs: list[tuple[Any, int]], precisions: tuple[str, ...],
                      deadline_s: float | None, max_counts_per_acc: int = 3) -> tuple[Evaluated, dict[str, str]]:
    """Best layout of each (accelerator, count, precision); pruned by the ideal-time lower bound.

    Returns the evaluated rows and, per accelerator id, why it was pruned (with its numbers)."""
    from infrafit.perf.training.layout import USABLE_MEMORY_FRACTION
    from infrafit.perf.training.run import train_run
    from infrafit.perf.training.shape import from_model_arch

    tr = workload.training
    shape = from_model_arch(arch)
    seq = int(tr.seq_len) if shape.is_transformer else 0
    total = float(tr.total_samples)
    pruned: dict[str, str] = {}
    impossible: dict[str, str] = {}
    out = []
    by_acc: dict[str, list[tuple[Any, int]]] = {}
    for acc, n in sorted(pairs, key=lambda x: x[1]):
        by_acc.setdefault(acc.id, []).append((acc, n))
    for acc_id, items in by_acc.items():
        taken = 0
        precs = [q for q in precisions if items[0][0].peak(q) > 0] or ["bf16"]
        for acc, n in items:
            if taken >= max_counts_per_acc:
                break
            gbs = int(tr.global_batch or max(n, (max(1, round(4_000_000 / max(seq, 1))) // n) * n))
            ran: list[tuple[float, str]] = []
            for p in precs:
                lb = ideal_train_s(shape, acc, n, p, seq, total)
                if deadline_s and lb > deadline_s:
                    pruned[acc_id] = f"{n} chips need at least {lb / SECONDS_PER_DAY:,.1f} days at 100 % of peak"
                    continue
                try:
                    run = train_run(shape, acc, n, seq_len=seq, global_batch=gbs, method=tr.method, precision=p,
                                    lora_rank=int(tr.lora_rank or 16), total_samples=total, top=1)
                except Exception as exc:  # noqa: BLE001 - a layout the model cannot build is one fewer candidate
                    pruned[acc_id] = str(exc).split(". To fix")[0]
                    continue
                lay = run.layout
                used = peak_fraction(acc, run.mfu_fraction, run.precision)
                if used > 1.0:  # more FLOP/s than the chips have: a model error, never ranked
                    impossible[acc_id] = (f"model error: {n} chips, {run.precision}: model FLOP/s = "
                                          f"{used:.0%} of the {run.precision} dense peak (excluded, not ranked)")
                    continue
                out.append(({"accelerator": acc.id, "count": n, "precision": run.precision, "stack": "default",
                             "tp": lay.tp, "pp": lay.pp, "dp": lay.dp, "ep": lay.ep, "cp": lay.cp,
                             "global_batch": gbs, "notes": list(run.notes)},
                            lay.fits, float(run.time_to_train_s or np.nan), lay.memory_bytes,
                            acc.memory_bytes * USABLE_MEMORY_FRACTION, {**lay.shares, "mfu_fraction": run.mfu_fraction,
                                                                   "peak_fraction": used}))
                if lay.fits and run.time_to_train_s:
                    ran.append((float(run.time_to_train_s), p))
            if not ran:
                continue
            taken += 1
            # Larger counts of the same chip keep the precision that won at the smallest count (the
            # step's compute/memory balance per chip changes little with data parallelism).
            precs = [min(ran)[1]]
            if deadline_s and min(ran)[0] <= deadline_s / 2:
                break  # comfortably inside the deadline: more chips only cost more
    pruned.update({MODEL_ERROR_PREFIX + k: v for k, v in impossible.items()})
    if not out:
        return _empty(), pruned
    cfg, fits, ttt, mem, capb, terms = zip(*out, strict=True)
    ttt_a = np.asarray(ttt, float)
    slo = {"time_to_train_s": (ttt_a, float(deadline_s))} if deadline_s else {}
    ev = Evaluated(list(cfg), np.asarray(fits), np.full(len(cfg), np.nan), ttt_a, ttt_a, np.asarray(mem, float),
                   np.asarray(capb, float), slo, list(terms))
    return ev, pruned


def _empty() -> Evaluated:
    z = np.zeros(0)
    return Evaluated([], z.astype(bool), z, z, z, z, z, {}, [])
