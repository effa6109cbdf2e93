"""Evaluate many prepared LLM ``Case``s at once: expand layouts x concurrencies, run the arrays, reduce.

``Expanded`` keeps the arrays and, for each efficiency field, which profile row it came from, so the
fitting script can re-evaluate with new profile values without rebuilding anything.
"""

from __future__ import annotations

from dataclasses import dataclass, replace

import numpy as np

from infrafit.perf.llm import Setup, max_concurrency, serve, static_batch_e2e_s
from infrafit.perf.llm_setup import EFFICIENCY_FIELDS, ConfigRow, build_setup
from infrafit.perf.profiles import Profiles, load_profiles
from infrafit.perf.rows_llm import CONCURRENCY_GRID, Case


@dataclass
class Expanded:
    cases: list[Case]
    setup: Setup
    sources: dict[str, np.ndarray]
    case_index: np.ndarray
    concurrency: np.ndarray
    groups: dict[int, np.ndarray]  # id(shape) -> entry indices
    shapes: dict[int, object]


def expand(cases: list[Case], profiles: Profiles | None = None) -> Expanded:
    rows: list[ConfigRow] = []
    case_index: list[int] = []
    conc: list[float] = []
    for i, c in enumerate(cases):
        grid = CONCURRENCY_GRID if c.mode in ("offline", "server") else np.array([c.concurrency])
        for tp, pp, adp, ep in c.layouts:
            cfg = ConfigRow(c.acc, c.precision, c.stack, tp, pp, adp, ep)
            for cc in grid:
                rows.append(cfg)
                case_index.append(i)
                conc.append(float(cc) * (adp if c.mode in ("offline", "server") else 1))
    setup, _, sources = build_setup(rows, profiles)
    ci = np.asarray(case_index)
    shape_ids = np.array([id(cases[i].shape) for i in case_index])
    groups = {sid: np.nonzero(shape_ids == sid)[0] for sid in np.unique(shape_ids)}
    shapes = {id(c.shape): c.shape for c in cases}
    return Expanded(cases, setup, sources, ci, np.asarray(conc), groups, shapes)


def _with_values(ex: Expanded, values: np.ndarray | None) -> Setup:
    if values is None:
        return ex.setup
    return replace(ex.setup, **{f: values[idx] for f, idx in ex.sources.items() if f in EFFICIENCY_FIELDS})


def _entry_metrics(ex: Expanded, s: Setup) -> dict[str, np.ndarray]:
    n = len(ex.case_index)
    keys = ("ttft", "tpot", "ttft99", "tpot99", "rate", "offline_rate", "static_e2e", "cmax")
    out = {k: np.full(n, np.nan) for k in keys}
    c = ex.cases
    isl = np.array([c[i].input_tokens for i in ex.case_index])
    osl = np.array([c[i].output_tokens for i in ex.case_index])
    closed = np.array([c[i].mode != "server" for i in ex.case_index])  # MLPerf Server: Poisson arrivals
    for sid, idx in ex.groups.items():
        shape = ex.shapes[sid]
        sub = s.take(idx)
        sv = serve(shape, sub, ex.concurrency[idx], isl[idx], osl[idx], closed[idx])
        out["ttft"][idx], out["tpot"][idx] = sv.ttft_p50_s, sv.tpot_p50_s
        out["ttft99"][idx], out["tpot99"][idx] = sv.ttft_p99_s, sv.tpot_p99_s
        out["rate"][idx], out["offline_rate"][idx] = sv.requests_per_s, sv.offline_requests_per_s
        out["static_e2e"][idx] = static_batch_e2e_s(shape, sub, ex.concurrency[idx], isl[idx], osl[idx])
        out["cmax"][idx] = max_concurrency(shape, sub, isl[idx] + osl[idx], isl[idx])
    return out


def _metric(case: Case, m: dict[str, np.ndarray], j: np.ndarray, replicas: np.ndarray) -> np.ndarray:
    """The row's metric for entries ``j`` of ``case``."""
    kind, osl, isl = case.metric_kind, case.output_tokens, case.input_tokens
    if case.mode == "static":
        e2e = m["static_e2e"][j]
        if kind == "e2e_latency_s":
            return e2e
        rate = case.concurrency / e2e
    elif case.mode == "offline":
        rate = m["offline_rate"][j]  # the throughput-optimal point: batch full, no latency limits
    else:
        rate = m["rate"][j]
    if kind == "ttft_s":
        return m["ttft"][j]
    if kind in ("tpot_s", "per_token_latency_s"):
        return m["tpot"][j]
    if kind == "e2e_latency_s":
        return m["ttft"][j] + (osl - 1.0) * m["tpot"][j]
    if case.scope == "per_request" and kind == "output_tokens_per_s":
        return 1.0 / m["tpot"][j]
    out_tok = rate * osl * replicas
    if kind == "output_tokens_per_s":
        return out_tok if case.tokens_per_sample is None else rate * replicas * case.tokens_per_sample
    if kind == "total_tokens_per_s":
        return out_tok * (isl + osl) / osl
    return rate * replicas  # samples_per_s, queries_per_s


def evaluate(ex: Expanded, values: np.ndarray | None = None) -> np.ndarray:
    """Predicted metric of every case (NaN where no layout fits)."""
    s = _with_values(ex, values)
    m = _entry_metrics(ex, s)
    gpus = s.tp * s.pp * s.adp
    pred = np.full(len(ex.cases), np.nan)
    order = np.argsort(ex.case_index, kind="stable")
    bounds = np.searchsorted(ex.case_index[order], np.arange(len(ex.cases) + 1))
    for i, case in enumerate(ex.cases):
        j = order[bounds[i]:bounds[i + 1]]
        replicas = np.floor(case.count / gpus[j])
        vals = _metric(case, m, j, replicas)
        if case.mode in ("fixed", "static"):
            pred[i] = vals[0]
            continue
        ok = (ex.concurrency[j] <= np.maximum(m["cmax"][j], 1.0)) & (replicas >= 1)
        if case.mode == "server":
            lim = np.ones_like(ok)
            if case.ttft_limit_s:
                lim &= m["ttft99"][j] <= case.ttft_limit_s
            if case.tpot_limit_s:
                lim &= m["tpot99"][j] <= case.tpot_limit_s
            if case.e2e_limit_s:
                lim &= m["ttft99"][j] + (case.output_tokens - 1) * m["tpot99"][j] <= case.e2e_limit_s
            if not (ok & lim).any() and ok.any():
                lim = ex.concurrency[j] == ex.concurrency[j][ok].min()
            ok = ok & lim  # a subset of Offline's entries, each rate capped by its Offline rate
        if not ok.any():
            ok = ex.concurrency[j] == ex.concurrency[j].min()
        pred[i] = np.nanmax(np.where(ok, vals, np.nan))
    return pred


def predict_cases(cases: list[Case], profiles: Profiles | None = None) -> np.ndarray:
    return evaluate(expand(cases, profiles or load_profiles()))
