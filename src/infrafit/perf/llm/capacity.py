"""LLM serving capacity of many configurations at once: the one path ``plan`` and ``estimate`` share.

``evaluate_llm`` runs ``perf.llm.engine.serve`` over (configurations x a concurrency grid). A
configuration's SLO-feasible load curve is the request rate at each concurrency whose TTFT p99 (at
the p99 prompt), TPOT p99 and end-to-end p99 are within the SLOs and whose KV cache fits; its
operating point is chosen on that curve by ``perf.operating`` (the SLO-limited point, lighter ones,
or the one a caller names). The layout dimension (tensor parallel x attention data parallel inside a
replica) is searched unless fixed.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import fields, replace
from typing import TYPE_CHECKING, Any

import numpy as np

from infrafit.catalog.model import known_bandwidth
from infrafit.perf import operating as op
from infrafit.perf.llm.engine import (
    Serving,
    Setup,
    Speculation,
    cache_bytes_per_seq,
    decode_step,
    kv_shards,
    max_concurrency,
    prefill_alone_s,
    serve,
    weight_bytes_per_gpu,
)
from infrafit.perf.llm.setup import ConfigRow, build_setup, with_checkpoint
from infrafit.perf.llm.shape import LLMShape, shape_from_arch
from infrafit.perf.types import Evaluated, OperatingPoint

if TYPE_CHECKING:
    from infrafit.catalog import Accelerator
    from infrafit.workload.arch import ModelArch
    from infrafit.workload.spec_sections import Slo, Traffic

#: Concurrency grid per replica for continuous batching (closed loop, requests in flight). Finer than
#: validate's grid (perf.validate.llm) and capped at 1,024: a serving plan sits where TTFT/TPOT SLOs
#: bind, while MLPerf Offline rows need the very large batches (up to 4,096) that validate searches.
#: Steps of at most 1.25x above 8 (4 points per doubling): the rate grows ~10% a step near the SLO
#: limit, so the replica count is not decided by where the grid happens to fall (with 1.5x steps a
#: 70B on 2 H100s ran at 64 in flight, 4.7 requests/s, where ~80 meets the same SLOs at ~5.1).
CONCURRENCY_GRID = np.array([1, 2, 3, 4, 6, 8, 10, 12, 14, 16, 20, 24, 28, 32, 40, 48, 56, 64, 80, 96, 112, 128,
                             160, 192, 224, 256, 320, 384, 448, 512, 640, 768, 896, 1024], float)
#: More columns for batch work (``inference.mode: batch``): a standing queue keeps the batch as full as the KV
#: cache allows, and a chip that holds more than 1,024 sequences (DeepSeek-V3.2 at fp4 on 4x B200: 1,657) was
#: capped at 1,024 by the grid, so its throughput, and with it the replicas priced, was the grid's, not the chip's.
#: To 4,096, the largest batch validate searches for MLPerf Offline rows.
OFFLINE_GRID_EXTRA = np.array([1280, 1536, 1792, 2048, 2560, 3072, 3584, 4096], float)
#: Mean lengths when a spec states none (an LLM workload with only a request rate).
DEFAULT_INPUT_TOKENS = 1000.0
DEFAULT_OUTPUT_TOKENS = 200.0
#: A replica runs its tensor-parallel group over PCIe inside one box of at most this many chips.
PCIE_TP_MAX = 8


def tp_domain(acc: Any) -> int:
    """Largest tensor-parallel group worth trying on ``acc``: its scale-up domain, or up to 8 chips
    of one box talking over PCIe when the catalog knows the host link. A chip with neither (an
    unknown host link is NaN in the catalog) runs TP 1 only: its collectives would have no bandwidth
    to be priced with (``Accelerator.peer_link``)."""
    return max(int(acc.scaleup_domain_size or 1), PCIE_TP_MAX if known_bandwidth(acc.host_bytes_per_s) else 1)


def _pow2_divisors(n: int, cap: int) -> list[int]:
    out, x = [], 1
    while x <= min(n, cap):
        if n % x == 0:
            out.append(x)
        x *= 2
    return out


def llm_precisions(acc: Any, allowed: tuple[str, ...], checkpoint: str = "") -> list[str]:
    """Precisions worth trying on ``acc``: allowed ones it runs natively (int4 is weight-only), and a 4-bit
    float checkpoint's own fp4 where the chip has no fp4 math (gpt-oss-120b's MXFP4 on an H100: the published
    weights with weight-only W4A16 kernels, ``setup.plan_precision``; it was tried only as int4, a checkpoint
    that does not exist)."""
    base = [p for p in allowed if p != "fp32"] or list(allowed)
    return [p for p in base if p == "int4" or acc.peak(p) > 0 or (p == "fp4" and checkpoint == "fp4")] or base[:1]


def lengths(traffic: Traffic) -> tuple[float, float, float, float]:
    """(mean input, mean output, p99 input, p99 output) tokens of an inference traffic block."""
    isl_d, osl_d = traffic.input_tokens, traffic.output_tokens
    isl = float(isl_d.mean) if isl_d is not None and isl_d.mean else DEFAULT_INPUT_TOKENS
    osl = float(osl_d.mean) if osl_d is not None and osl_d.mean else DEFAULT_OUTPUT_TOKENS
    isl99 = float(isl_d.p99 or isl) if isl_d is not None else isl
    osl99 = float(osl_d.p99 or osl) if osl_d is not None else osl
    return isl, osl, isl99, osl99


def cached_prompt_tokens(traffic: Traffic) -> float:
    """Mean prompt tokens a prefix cache serves (``traffic.prefix``: shared tokens x hit rate), 0 without."""
    prefix = getattr(traffic, "prefix", None)
    return 0.0 if prefix is None else float(prefix.shared_tokens) * float(prefix.hit_rate)


#: Decoder layers of the model's own width one drafted token costs, per speculative method: an MTP module
#: is one transformer block (DeepSeek-V3 report section 2.2), EAGLE's draft head one decoder layer (Li et al.
#: 2024); n-gram prompt lookup runs no model.
HEAD_LAYERS = {"mtp": 1.0, "eagle": 1.0, "ngram": 0.0}


def speculation(spec: Any, shape: LLMShape) -> Speculation | None:
    """The engine's ``Speculation`` of ``inference.speculative`` (None without)."""
    if spec is None:
        return None
    draft = None
    if spec.method == "draft_model":
        from infrafit.workload.models import resolve_model

        draft = shape_from_arch(resolve_model(spec.draft_model))
    return Speculation(int(spec.tokens), float(spec.acceptance_rate), draft, HEAD_LAYERS.get(spec.method, 0.0))


def _grid_setup(setup: Setup) -> Setup:
    return replace(setup, **{f.name: np.asarray(getattr(setup, f.name), float)[:, None] for f in fields(setup)})


def ttft_p99_at_long_prompt(shape: LLMShape, grid: Setup, ttft_p99_s: np.ndarray, isl: float,
                            isl99: float, cached_tokens: float = 0.0) -> np.ndarray:
    """TTFT p99 of a p99-length prompt: the model's queueing p99 under the mean traffic, with the
    request's own prefill at the p99 prompt length instead of the mean one.

    ``ttft_p99 = serve(mean lengths).ttft_p99 - prefill_alone(isl) + prefill_alone(isl_p99)``. The
    queue ahead of the request is made of typical prompts, so it is not re-priced at p99 lengths
    (doing so, as ``serve`` at ``isl_p99`` for everyone would, counts the tail twice)."""
    if not isl99 or isl99 <= isl:
        return ttft_p99_s
    extra = (prefill_alone_s(shape, grid, np.asarray(isl99, float), cached_tokens)
             - prefill_alone_s(shape, grid, np.asarray(isl, float), cached_tokens))
    return ttft_p99_s + np.maximum(extra, 0.0)


#: Most pipeline stages the planner tries for a dense model too large for one scale-up domain.
PP_MAX = 8


def pipeline_degrees(acc: Any, n: int, degrees: Sequence[int], num_layers: int) -> list[tuple[int, int]]:
    """``(tp, pp)`` pipeline layouts worth searching for ``n`` chips of ``acc``: only past one scale-up
    domain (``tp_domain``), with TP filling the domain and ``pp = n / tp`` stages (2, 4 or 8, never
    more than the layers). This is the layout serving stacks document for a dense model beyond one node
    (vLLM: tensor parallel inside a node, pipeline parallel across nodes): the stages exchange only one
    activation per token, where a TP group across nodes would all-reduce twice per layer over the
    network. Inside one domain pipelining only adds hops (``engine.decode_step``), so it is not tried; nor over
    chips with no link the catalog knows (CPU slices of separate VMs: NaN figures, ``Accelerator.peer_link``)."""
    if n <= tp_domain(acc) or not degrees or acc.peer_link(n) is None:  # stages need a link the catalog knows
        return []
    tp = max(degrees)
    pp = n // tp
    if n % tp or pp < 2 or pp > min(PP_MAX, num_layers) or pp & (pp - 1):
        return []
    return [(tp, pp)]


def llm_layouts(pairs: Sequence[tuple[Any, int]], precisions: tuple[str, ...],
                stacks_for: Callable[[Any], list[str]], tps: Sequence[int] | None = None,
                pp: int | None = 1, ep: int = 1, num_layers: int = 0,
                checkpoint: str = "") -> tuple[list[ConfigRow], list[dict[str, Any]]]:
    """Every (accelerator, count) x precision x stack x tensor-parallel degree to evaluate (``tps``
    fixes the degrees; default: every power of two dividing the count inside ``tp_domain``). The
    chips of a replica left over by TP x PP run attention data parallel. ``pp`` None searches it: one
    stage, and for counts past one scale-up domain the ``pipeline_degrees`` of a ``num_layers`` model."""
    rows, cfg = [], []
    for acc, n in pairs:
        degrees = list(tps) if tps is not None else _pow2_divisors(n, tp_domain(acc))
        layouts = [(tp, pp or 1) for tp in degrees]
        if pp is None:
            layouts += pipeline_degrees(acc, n, degrees, num_layers)
        for p in llm_precisions(acc, precisions, checkpoint):
            for st in stacks_for(acc):
                for tp, stages in layouts:
                    dp = max(n // (tp * stages), 1)
                    rows.append(ConfigRow(acc, p, st, tp=tp, pp=stages, adp=dp, ep=ep))
                    cfg.append({"accelerator": acc.id, "count": n, "precision": p, "stack": st,
                                "tp": tp, "pp": stages, "dp": dp, "ep": ep})
    return rows, cfg


def linked_groups(rows: list[ConfigRow], cfg: list[dict[str, Any]]) -> tuple[list[ConfigRow], list[dict[str, Any]]]:
    """The layouts whose expert-parallel group has a link the catalog knows (``Accelerator.peer_link``): a
    mixture of experts' all-to-all over chips with none (32 CPU slices of separate VMs: no scale-up domain,
    no PCIe box that large, no stated scale-out network) has no bandwidth to be priced with, so, like a TP
    group past ``tp_domain``, it is not generated instead of evaluated to an uncomputed (NaN) capacity."""
    keep = [i for i, r in enumerate(rows) if r.ep <= 1 or r.acc.peer_link(r.ep) is not None]
    return [rows[i] for i in keep], [cfg[i] for i in keep]


def _grid_with(concurrency: float | None) -> np.ndarray:
    if concurrency is None or concurrency in CONCURRENCY_GRID:
        return CONCURRENCY_GRID
    return np.unique(np.append(CONCURRENCY_GRID, float(concurrency)))


def slo_limited_concurrency(rate: np.ndarray, grid: np.ndarray,
                            feasible: Callable[[np.ndarray], np.ndarray]) -> np.ndarray:
    """Per configuration, the most requests in flight that still meet every SLO: its SLO-limited grid column,
    moved by bisection on whole concurrencies toward the next column when that one fails (``feasible(c)``
    says per configuration whether ``c`` in flight meets them all). The grid's 1.25x steps would otherwise
    set the rate, and with it the replica count, by where a column happens to fall (up to 25 % apart)."""
    n, cols = rate.shape
    rows = np.arange(n)
    best = np.argmax(rate, axis=1)
    lo = np.asarray(grid, float)[best]
    nxt = np.minimum(best + 1, cols - 1)
    gap = (rate[rows, best] > 0) & (best + 1 < cols) & (rate[rows, nxt] <= 0)
    hi = np.where(gap, np.asarray(grid, float)[nxt], lo)
    while np.any(hi - lo > 1):
        open_ = hi - lo > 1
        mid = np.where(open_, np.floor((lo + hi) / 2.0), lo)
        good = feasible(mid)
        lo, hi = np.where(open_ & good, mid, lo), np.where(open_ & ~good, mid, hi)
    return lo


def _join(grid_values: Any, extra: Any, shape: tuple[int, int]) -> np.ndarray:
    """Values over (configurations x grid columns), ``shape``, with one more column per configuration."""
    return np.concatenate([np.broadcast_to(np.asarray(grid_values), shape),
                           np.broadcast_to(np.asarray(extra), (shape[0], 1))], axis=1)


def _joined(sv: Serving, extra: Serving, shape: tuple[int, int]) -> Serving:
    return Serving(**{f.name: _join(getattr(sv, f.name), getattr(extra, f.name), shape) for f in fields(sv)})


def _given_columns(rate: np.ndarray, grid: np.ndarray, point: OperatingPoint) -> tuple[np.ndarray, list[str]]:
    """Grid column of each configuration at the caller's point (``estimate --concurrency`` or
    ``--requests-per-s``); the SLO-limited point where the rate is more than any feasible point serves."""
    n = len(rate)
    if point.concurrency is not None:
        return np.full(n, int(np.flatnonzero(grid == float(point.concurrency))[0])), [op.GIVEN] * n
    j_max = np.where(rate.max(axis=1) > 0, np.argmax(rate, axis=1), 0)
    cols, names = [], []
    for i in range(n):
        j = op.covering_index(rate[i], float(point.requests_per_s or 0.0))
        cols.append(j_max[i] if j is None else j)
        names.append(op.MAX_RATE if j is None else op.GIVEN)
    return np.asarray(cols, dtype=int), names


def evaluate_llm(arch: ModelArch, pairs: Sequence[tuple[Accelerator, int]], precisions: tuple[str, ...],
                 stacks_for: Callable[[Accelerator], list[str]], traffic: Traffic, slo: Slo, profiles: Any = None,
                 targets: tuple[float, ...] = (), *, tps: Sequence[int] | None = None,
                 point: OperatingPoint | None = None, pp: int | None = 1, ep: int = 1,
                 speculative: Any = None, offline: bool = False) -> Evaluated:
    """Continuous-batching capacity of every (accelerator, count) x precision x stack x layout, at its
    SLO-limited load and at ``targets`` (fractions of that rate), or at the caller's ``point``.
    ``pp`` None (the planner) searches pipeline stages for a dense model past one scale-up domain; a
    mixture of experts spans instances by expert parallelism instead (``search.parts.join_offers``)."""
    shape = shape_from_arch(arch)
    search_pp = pp is None and not shape.is_moe
    rows, cfg = llm_layouts(pairs, precisions, stacks_for, tps, None if search_pp else (pp or 1), ep,
                            num_layers=int(shape.num_layers), checkpoint=shape.checkpoint_precision)
    rows = [with_checkpoint(r, shape) for r in rows]
    if shape.is_moe and ep == 1:  # chips left over by TP run attention data parallel with the experts over all
        # of them: one expert-parallel group of tp x dp ranks (``validate.llm.physical_layout``), not dp engines;
        # a stated ep (``estimate --ep``) is kept as given
        rows = [replace(r, ep=r.tp * r.adp) if r.adp > 1 else r for r in rows]
        cfg = [c | {"ep": int(c["tp"]) * int(c["dp"])} if int(c["dp"]) > 1 else c for c in cfg]
        rows, cfg = linked_groups(rows, cfg)
    if not rows:
        return Evaluated.empty()
    setup, plans, _ = build_setup(rows, profiles)
    isl, osl, isl99, osl99 = lengths(traffic)
    grid_c = _grid_with(point.concurrency if point is not None else None)
    if offline:  # batch work: as many in flight as the KV cache holds, past the serving grid's 1,024
        grid_c = np.unique(np.append(grid_c, OFFLINE_GRID_EXTRA))
    grid = _grid_setup(setup)
    cached = cached_prompt_tokens(traffic)
    spec = speculation(speculative, shape)
    draft = spec.draft if spec is not None else None
    cmax = max_concurrency(shape, setup, np.asarray(isl + osl), shared_tokens=cached, draft=draft)
    fits = cmax >= 1
    factors = {name: risk_factors(rows, arch, name, slo.risk)[:, None]
               for name in ("ttft_p99_s", "tpot_p99_s", "e2e_p99_s")}

    def measure(conc: np.ndarray) -> tuple[Serving, dict[str, tuple[np.ndarray, float | None]], np.ndarray, np.ndarray]:
        """Serving at ``conc`` in flight ((1, grid) or (configurations, 1)), its p99 figures against the SLOs,
        whether all hold (at the spec's risk) and the rate where they do (0 elsewhere)."""
        sv = serve(shape, grid, conc, np.asarray(isl), np.asarray(osl), cached_tokens=cached, speculation=spec)
        ttft99 = ttft_p99_at_long_prompt(shape, grid, sv.ttft_p99_s, isl, isl99, cached)
        tpot99 = sv.tpot_p99_s
        limits = {"ttft_p99_s": (ttft99, slo.ttft_p99_s), "tpot_p99_s": (tpot99, slo.tpot_p99_s),
                  "e2e_p99_s": (ttft99 + (osl99 - 1.0) * tpot99, slo.e2e_p99_s or slo.latency_p99_s)}
        ok = np.ones_like(ttft99, bool)
        if offline:  # past the serving grid, only as many in flight as the KV cache holds (the rest would queue)
            ok &= (conc <= CONCURRENCY_GRID[-1]) | (conc <= cmax[:, None])
        for name, (value, limit) in limits.items():
            if limit:
                ok &= value * factors[name] <= limit
        return sv, limits, ok, np.where(ok & fits[:, None], sv.requests_per_s, 0.0)

    sv, limits, ok, rate = measure(grid_c[None, :])
    conc = np.broadcast_to(grid_c, rate.shape)
    if point is None:  # the SLO-limited point at a whole concurrency between grid columns, not on the grid
        c_star = slo_limited_concurrency(rate, grid_c, lambda c: measure(c[:, None])[3][:, 0] > 0)
        finer = c_star > conc[np.arange(len(rate)), np.argmax(rate, axis=1)]
        if finer.any():
            sv_f, limits_f, ok_f, rate_f = measure(c_star[:, None])
            full = rate.shape
            sv = _joined(sv, sv_f, full)
            limits = {k: (_join(v, limits_f[k][0], full), lim) for k, (v, lim) in limits.items()}
            ok = _join(ok, ok_f & finer[:, None], full)
            rate = _join(rate, np.where(finer[:, None], rate_f, 0.0), full)
            conc = _join(conc, c_star[:, None], full)
    ttft99, tpot99 = limits["ttft_p99_s"][0], limits["tpot_p99_s"][0]
    e2e99 = limits["e2e_p99_s"][0]
    if point is None:
        ri, j, names = op.point_indices(rate, targets)
    else:
        ri = np.arange(len(rows))
        j, names = _given_columns(rate, grid_c, point)
    j_max = np.where(rate.max(axis=1) > 0, np.argmax(rate, axis=1), 0)
    sub = _take_setup(setup, ri, len(rows))
    # At a named point the figures hold whether or not the SLOs do (estimate reports, plan never asks).
    capacity = sv.requests_per_s[ri, j] if point is not None else rate[ri, j]
    chosen_c = conc[ri, j]
    in_flight = np.minimum(chosen_c, np.maximum(cmax[ri], 1))
    w = weight_bytes_per_gpu(shape, sub) + (0.0 if draft is None else weight_bytes_per_gpu(draft, sub))
    # a cached prefix is held once, not per sequence
    prefix = shape.kv_elements(min(cached, isl + osl)) * sub.kv_bytes_per_element / kv_shards(shape, sub)
    kv_per_seq = cache_bytes_per_seq(shape, sub, isl + osl) - prefix
    kv = kv_per_seq * in_flight / sub.adp + prefix
    step = decode_step(shape, sub, in_flight, np.full(len(ri), isl + osl / 2))
    n_pts = len(ri)
    reserve = np.broadcast_to(np.asarray(sub.memory_reserve_fraction, float), (n_pts,)) * np.maximum(
        np.broadcast_to(np.asarray(sub.memory_bytes, float), (n_pts,)) - w, 0.0)
    terms = [{"gemm_compute_s": float(step["gemm_compute_s"][k]), "weights_read_s": float(step["gemm_memory_s"][k]),
              "kv_read_s": float(step["kv_read_s"][k]), "attention_compute_s": float(step["attention_compute_s"][k]),
              "collectives_s": float(step["collectives_s"][k]), "overhead_s": float(step["overhead_s"][k]),
              "concurrency": float(chosen_c[k]), "kv_max_concurrency": float(cmax[i]),
              "weights_bytes": float(np.asarray(w)[k] if np.ndim(w) else w), "kv_cache_bytes": float(kv[k]),
              "memory_reserve_bytes": float(reserve[k]),
              "meets_slos": float(bool(ok[i, j[k]])),
              **{f"{RISK_FACTOR_PREFIX}{name}": float(f[i, 0]) for name, f in factors.items() if limits[name][1]},
              "throughput_output_tokens_per_s": float(sv.output_tokens_per_s[i, j[k]])}
             for k, i in enumerate(ri)]
    for i, p in enumerate(plans):
        cfg[i]["notes"] = list(p.notes)
        cfg[i]["precision_plan"] = {"weight": p.weight, "gemm": p.gemm, "kv": p.kv}
    out_rows = []
    for k, i in enumerate(ri):
        point_d = op.describe(names[k], f"{chosen_c[k]:.0f} requests in flight", float(capacity[k]),
                              float(rate[i, j_max[i]]), "ttft_p99_s", float(ttft99[i, j[k]]),
                              float(ttft99[i, j_max[i]]), concurrency=float(chosen_c[k]))
        out_rows.append({**cfg[i], "operating_point": point_d})
    slo_out = {k: (v[ri, j], float(lim)) for k, (v, lim) in limits.items() if lim}
    slo_out.setdefault("ttft_p99_s", (ttft99[ri, j], float("nan")))
    slo_out.setdefault("tpot_p99_s", (tpot99[ri, j], float("nan")))
    slo_out.setdefault("e2e_p99_s", (e2e99[ri, j], float("nan")))
    ttft50, tpot50 = sv.ttft_p50_s[ri, j], sv.tpot_p50_s[ri, j]
    p50 = {"ttft_s": ttft50, "tpot_s": tpot50, "e2e_s": ttft50 + (osl - 1.0) * tpot50}
    return Evaluated(out_rows, fits[ri], capacity, np.full(len(ri), np.nan), ttft99[ri, j], w + kv,
                     np.broadcast_to(np.asarray(setup.memory_bytes, float), (len(rows),))[ri], slo_out, terms, p50)


#: ``terms`` key prefix of the factor a row's predicted p99 ``figure`` is multiplied by before its SLO check
#: (``risk_factors``; 1 at risk p50), so that a refusal can quote the figure that was checked.
RISK_FACTOR_PREFIX = "risk_factor_"


def risk_factors(rows: Sequence[Any], arch: ModelArch, figure: str, risk: str) -> np.ndarray:
    """Per configuration, what its predicted ``figure`` is multiplied by before the SLO check: the
    band's ratio at ``risk`` for this model on that chip (``perf.bands``)."""
    from infrafit.perf.bands import slo_factor

    by_acc: dict[str, float] = {}
    for r in rows:
        if r.acc.id not in by_acc:
            by_acc[r.acc.id] = slo_factor("llm", figure, str(arch.id), r.acc.id, risk)
    return np.array([by_acc[r.acc.id] for r in rows])


def _take_setup(setup: Setup, idx: np.ndarray, n: int) -> Setup:
    """The setup's per-configuration arrays (length ``n``) at ``idx``; scalars and broadcasts stay."""
    def pick(v: Any) -> Any:
        a = np.asarray(v)
        return a[idx] if a.ndim >= 1 and a.shape[0] == n else a
    return replace(setup, **{f.name: pick(getattr(setup, f.name)) for f in fields(setup)})
