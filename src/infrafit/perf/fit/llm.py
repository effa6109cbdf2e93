"""Fit the LLM-inference efficiency profiles (src/infrafit/catalog/data/perf_profiles_llm.csv).

Re-runnable: ``.venv/bin/python scripts/fit_profiles_llm.py [--cv] [--dry-run]``.

What is fitted: the achieved fractions of peak (GEMM in prefill and decode, HBM bandwidth), the GEMM
tile-padding rows of dense and grouped expert GEMMs (``gemm_m_half``, ``expert_m_half``), the per-step,
per-layer, per-MoE-layer, per-sequence and per-request overheads and the prefill-burst fraction, keyed ONLY by
physical things (generation, serving stack, precision, phase, op class); see ``candidate_rows``. A key gets
its own row when the calibration sets have at least ``MIN_ROWS`` rows for it; otherwise it falls back to a
wider wildcard row. The chip's efficiencies (GEMM, HBM) are one
value per generation (and precision for fp4 GEMMs), never per stack: a per-stack value absorbed the models
that stack happened to be measured on; the stacks differ in their fixed and per-layer costs instead.

How: robust least squares on log(predicted / measured) (``scipy.optimize.least_squares``, soft-L1, the
exact Jacobian sparsity; see ``fit``) with each cited prior as one pseudo-row, parameters in log space, within
physical ranges (``BOUNDS``: efficiencies at most 0.9
of peak, 0.95 of HBM bandwidth; a per-step constant of 0.1-1 ms (scheduler, sampling, graph replay: the
calibration models have 48-94 layers, so the data alone cannot split a step's fixed cost between it and the
per-layer cost of 1-200 us), 1-500 ms per request). Inputs: benchmarks/data/calibration.csv (LLM inference
rows) and benchmarks/data/latency_calibration.csv. ``--cv`` reports leave-one-model-out and
leave-one-accelerator-out errors (the model or chip held out of the fit; each fold fits from the priors on
every row it does not hold out, as the shipped fit does on all rows, and rebuilds the set of fitted rows from
those training rows alone, so a held-out chip or model is treated exactly as an unseen one: the fit procedure
as a whole is what is validated; no random subsample, so the figures carry no seed).
"""

from __future__ import annotations

import argparse
import csv
import datetime as dt
import json
import sys
from collections import Counter
from pathlib import Path

import numpy as np

from infrafit.catalog import load_catalog
from infrafit.errors import CatalogError
from infrafit.perf.bands import metric_class
from infrafit.perf.llm.setup import EFFICIENCY_FIELDS, prefill_graph_stacks
from infrafit.perf.llm.shape import LLMShape
from infrafit.perf.profiles import PROFILE_COLUMNS, ProfileRow, Profiles, default_profiles_path
from infrafit.perf.types import ValidateContext
from infrafit.perf.validate.llm import evaluate, expand, prepare_many

ROOT = Path(__file__).resolve().parents[4]
DATA = ROOT / "benchmarks" / "data"
FIT_REPORT = ROOT / "benchmarks" / "llm_profile_fit.json"  # read by infrafit.perf.validate.accuracy_report
MIN_ROWS = 8
# Physical ranges: no kernel sustains more than ~90% of a datasheet peak (tensor cores) or ~95% of
# HBM bandwidth; overheads between a CUDA-graph launch (~10 us) and a slow Python scheduler step.
BOUNDS = {"gemm": (0.05, 0.9), "memory": (0.3, 0.95), "attention": (0.05, 0.9), "step_overhead": (1e-4, 1e-3),
          "seq_overhead": (1e-7, 2e-4),
          "request_overhead": (1e-3, 0.5), "burst": (0.0, 1.0), "memory_reserve": (0.02, 0.5),
          "gemm_m_half": (8.0, 512.0), "expert_m_half": (8.0, 512.0),
          "moe_layer_overhead": (1e-6, 0.01), "layer_overhead": (1e-7, 2e-4), "prefill_layer_overhead": (1e-7, 1e-3),
          "moe_token_overhead": (1e-16, 1e-10), "sparse_layer_overhead": (1e-7, 1e-3)}
FITTED = {"gemm", "memory", "step_overhead", "request_overhead", "burst", "gemm_m_half", "expert_m_half",
          "moe_layer_overhead", "seq_overhead", "layer_overhead", "moe_token_overhead", "sparse_layer_overhead"}
# The cited priors count as one pseudo-row each at this log-space width (a factor 1.65 either way; the
# priors' own ranges: 60-80% of peak for large GEMMs, 70-80% of HBM bandwidth, "a few ms" per step).
PRIOR_SIGMA_LOG = 0.5
MAX_EVALS = 100  # the trust-region solver's evaluation budget (it converges in 20-40 on the shipped sets)
# The solver stops on a small step (xtol) while a weakly coupled key (10 Ada rows) can still move: it is
# restarted from its own solution until a run gains less than RESTART_GAIN of the cost (2026-12-06: one
# restart took the cost from 82.31 to 82.23 and Ada's then separate decode GEMM efficiency from 0.47 to 0.64).
MAX_RESTARTS = 3
RESTART_GAIN = 1e-4
SOURCE = "fitted by scripts/fit_profiles_llm.py on benchmarks/data/calibration.csv + latency_calibration.csv"


def load_rows() -> list[dict[str, str]]:
    cal = [r for r in csv.DictReader((DATA / "calibration.csv").open()) if r["task"] == "inference"]
    lat = list(csv.DictReader((DATA / "latency_calibration.csv").open()))
    return cal + [r for r in lat if not r.get("exact_duplicate_of")]


def base_rows() -> list[ProfileRow]:
    """The priors (rows fitted on 0 rows, with their cited sources): the fall-back of every key."""
    return [r for r in _read() if r.rows_fitted == 0]


def _read() -> tuple[ProfileRow, ...]:
    from infrafit.perf.profiles import _parse

    return _parse(default_profiles_path())


def candidate_rows(cases: list) -> list[ProfileRow]:
    """The rows the fit varies, each keyed by physical things and backed by >= ``MIN_ROWS`` rows.

    - per generation: GEMM efficiency, one physical efficiency of the chip's GEMMs whatever the stack (a
      per-stack value absorbed the stacks' TTFT queueing and fixed costs: 0.48-0.90 on one chip) and
      whatever the phase (a decode step's GEMM is the same kernel at M = batch; ``gemm_m_half`` prices M;
      the row is keyed ``prefill/gemm`` and ``perf.llm.setup.EFFICIENCY_FIELDS`` reads it for both);
    - per generation: decode HBM efficiency, the share of the datasheet bandwidth a decode step's weight and
      KV streams reach on that chip, whatever the stack (per (generation, stack) it ranged 0.72-0.95 on
      Blackwell: SGLang's value was set by the MLA models it was measured on, and a new model inherited it);
    - per stack: decode-step constant (scheduler, launches, sampling), its part per layer and per MoE
      layer (the small kernels between GEMMs; router, top-k, permutation), its part per running sequence
      (scheduling, sampling, detokenisation of each sequence: TPOT at hundreds in flight), per-request
      overhead and the
      prefill-burst fraction (how bunched closed-loop arrivals stay: a scheduling trait), and with
      MoE rows the prefill cost per MoE layer of a pass (launches, EP dispatch sync) and per token-layer
      (routing, permute, un-permute), and the decode cost per MoE layer;
    - per generation at fp4: the prefill GEMM efficiency of the fp4 kernels.
    The GEMM tile-padding rows (``gemm_m_half``, dense) and ``expert_m_half`` (rows per expert of the
    grouped MoE GEMMs) are one global value each: physics of tiled kernels, not of a stack.
    """
    today = dt.date.today().isoformat()
    gen = Counter(c.acc.generation for c in cases)
    stacks = Counter(c.stack for c in cases)
    graphed = prefill_graph_stacks()
    rows: list[ProfileRow] = [ProfileRow("*", "*", "*", "*", "gemm_m_half", 64.0, len(cases), SOURCE, today)]
    moe = sum(1 for c in cases if c.shape.is_moe)
    if moe >= MIN_ROWS:
        rows.append(ProfileRow("*", "*", "*", "*", "expert_m_half", 64.0, moe, SOURCE, today))
    for s, n in stacks.items():
        if n >= MIN_ROWS:
            rows.append(ProfileRow("*", s, "*", "prefill", "burst", 0.2, n, SOURCE, today))
            rows.append(ProfileRow("*", s, "*", "decode", "step_overhead", 0.003, n, SOURCE, today))
            rows.append(ProfileRow("*", s, "*", "decode", "seq_overhead", 2e-5, n, SOURCE, today))
            rows.append(ProfileRow("*", s, "*", "decode", "layer_overhead", 2e-5, n, SOURCE, today))
            if s not in graphed:  # its passes with prompt tokens run eagerly
                rows.append(ProfileRow("*", s, "*", "prefill", "layer_overhead", 1e-4, n, SOURCE, today))
            rows.append(ProfileRow("*", s, "*", "prefill", "request_overhead", 0.02, n, SOURCE, today))
            moe_s = sum(1 for c in cases if c.stack == s and c.shape.is_moe)
            if moe_s >= MIN_ROWS:
                rows.append(ProfileRow("*", s, "*", "prefill", "moe_layer_overhead", 3e-4, moe_s, SOURCE, today))
                rows.append(ProfileRow("*", s, "*", "decode", "moe_layer_overhead", 3e-5, moe_s, SOURCE, today))
                rows.append(ProfileRow("*", s, "*", "prefill", "moe_token_overhead", 1e-12, moe_s, SOURCE, today))
            sparse_s = sum(1 for c in cases if c.stack == s and c.shape.indexed_layers)
            if sparse_s >= MIN_ROWS:
                rows.append(ProfileRow("*", s, "*", "decode", "sparse_layer_overhead", 1.2e-5, sparse_s, SOURCE,
                                       today))
    for g, n in gen.items():
        if n < MIN_ROWS:
            continue
        rows.append(ProfileRow(g, "*", "*", "prefill", "gemm", 0.5, n, SOURCE, today))
        rows.append(ProfileRow(g, "*", "*", "decode", "memory", 0.7, n, SOURCE, today))
    fp4 = Counter(c.acc.generation for c in cases if c.precision == "fp4")
    for g, n in fp4.items():
        if n >= MIN_ROWS:
            rows.append(ProfileRow(g, "*", "fp4", "prefill", "gemm", 0.4, n, SOURCE, today))
    return rows


def set_weights(cases: list) -> np.ndarray:
    """Each source set (published tables vs serving latencies) weighs the same in total."""
    lat = np.array([":" in c.row_id for c in cases])
    n_lat, n_cal = max(lat.sum(), 1), max((~lat).sum(), 1)
    return np.where(lat, 1.0, np.sqrt(n_lat / n_cal))


def prior_values(profiles: Profiles, free: np.ndarray) -> np.ndarray:
    """The cited prior of each free row: what its key resolves to among the priors alone (``base_rows``,
    rows fitted on 0 rows, each with its source); NaN where no prior covers the op class (the global tile
    paddings ``gemm_m_half`` and ``expert_m_half``, which every row identifies)."""
    base = Profiles(tuple(base_rows()))
    out = np.full(len(free), np.nan)
    for k, i in enumerate(free):
        r = profiles.rows[int(i)]
        try:
            out[k] = base.value(r.generation, r.stack, r.precision, r.phase, r.op_class)
        except CatalogError:
            pass
    return out


def jacobian_sparsity(ex, free: np.ndarray):  # noqa: ANN001, ANN201 - scipy.sparse is imported lazily
    """Which cases each free row can move: case i depends on row k when any of its expanded entries looks
    that row up (``Expanded.sources``). Exact, so the finite differences perturb rows that touch disjoint
    cases together (a chip generation's rows with another's) instead of one evaluation per row."""
    from scipy.sparse import coo_matrix

    lookup = {int(p): k for k, p in enumerate(free)}
    keys: list[np.ndarray] = []
    for field, idx in ex.sources.items():
        if field not in EFFICIENCY_FIELDS:
            continue
        idx = np.asarray(idx, dtype=int)
        col = np.array([lookup.get(int(p), -1) for p in range(int(idx.max()) + 1)])[idx]
        used = col >= 0
        keys.append(ex.case_index[used] * len(free) + col[used])
    pairs = np.unique(np.concatenate(keys)) if keys else np.zeros(0, dtype=int)
    rows, cols = np.divmod(pairs, len(free))
    return coo_matrix((np.ones(len(rows)), (rows, cols)), shape=(len(ex.cases), len(free)))


def fit(ex, measured: np.ndarray, profiles: Profiles, free: np.ndarray, max_evals: int = MAX_EVALS) -> np.ndarray:
    """Robust least squares on log errors over the profile values at indices ``free``, with the cited
    priors as one pseudo-row each (``PRIOR_SIGMA_LOG``).

    ``scipy.optimize.least_squares`` (trust-region reflective, soft-L1 loss at 0.1, the physical ``BOUNDS``
    as box constraints in log space, the exact Jacobian sparsity of ``jacobian_sparsity``). Each free row
    with a prior adds the residual ``ln(value / prior) / PRIOR_SIGMA_LOG`` under the same robust loss: a
    key the calibration rows decide moves freely (its rows outweigh one pseudo-row), one they barely
    constrain stays at its cited prior instead of drifting wherever the optimiser's path leaves it.
    The solver is restarted from its own solution while a run still lowers the cost by ``RESTART_GAIN``
    (at most ``MAX_RESTARTS`` times): a stop on a small step is not yet the optimum of a weakly coupled key."""
    from scipy.optimize import least_squares
    from scipy.sparse import eye, vstack

    values = np.array([r.value for r in profiles.rows])
    lo = np.log(np.maximum([bounds(profiles.rows[int(i)])[0] for i in free], 1e-18))
    hi = np.log(np.array([bounds(profiles.rows[int(i)])[1] for i in free]))
    prior = prior_values(profiles, free)
    has = np.isfinite(prior)
    x_prior = np.clip(np.log(np.where(has, prior, 1.0)), lo, hi)
    start = np.where(has, x_prior, np.log(np.maximum(values[free], 1e-18)))
    x0 = np.clip(start, lo + 1e-6, hi - 1e-6)
    set_w = set_weights(ex.cases)

    def resid(xv: np.ndarray) -> np.ndarray:
        v = values.copy()
        v[free] = np.exp(xv)
        p = evaluate(ex, v)
        r = np.log(np.where(np.isfinite(p) & (p > 0), p, 1e-9) / measured)
        return np.concatenate([np.clip(r, -3, 3) * set_w, ((xv - x_prior) / PRIOR_SIGMA_LOG)[has]])

    sparsity = vstack([jacobian_sparsity(ex, free), eye(len(free), format="csr")[np.flatnonzero(has)]])
    x, cost = x0, np.inf
    for _ in range(MAX_RESTARTS + 1):
        res = least_squares(resid, np.clip(x, lo + 1e-9, hi - 1e-9), bounds=(lo, hi), loss="soft_l1", f_scale=0.1,
                            x_scale="jac", diff_step=1e-3, jac_sparsity=sparsity, max_nfev=max_evals)
        improved = res.cost < cost * (1.0 - RESTART_GAIN)
        x, cost = (res.x, res.cost) if res.cost < cost else (x, cost)
        if not improved:
            break
    v = values.copy()
    v[free] = np.exp(x)
    return v


def bounds(row: ProfileRow) -> tuple[float, float]:
    """The physical range of a row's value: ``BOUNDS`` by phase and op class where the phases differ
    (``prefill_layer_overhead``: an eager pass costs more per layer than a graph-replayed step), else by op class."""
    return BOUNDS.get(f"{row.phase}_{row.op_class}", BOUNDS.get(row.op_class, (1e-9, 1e9)))


def mdape(pred: np.ndarray, meas: np.ndarray) -> float:
    ok = np.isfinite(pred)
    return float(np.median(np.abs(pred[ok] - meas[ok]) / meas[ok])) if ok.any() else float("nan")


def breakdown(cases: list, pred: np.ndarray, meas: np.ndarray) -> dict[str, dict[str, dict[str, float]]]:
    """MdAPE and rows per metric class (throughput, TTFT, TPOT), accelerator family and model, over the
    cases with a finite prediction (held-out rows only, for a cross-validation scheme)."""
    ok = np.isfinite(pred)
    keys = {"metric": [metric_class(c.metric_kind) for c in cases], "family": [c.acc.family for c in cases],
            "model": [c.shape.model_id for c in cases]}
    out: dict[str, dict[str, dict[str, float]]] = {}
    for by, labels in keys.items():
        lab = np.array(labels)
        out[by] = {str(g): {"rows": int((ok & (lab == g)).sum()), "mdape": mdape(pred[lab == g], meas[lab == g])}
                   for g in sorted(set(labels)) if (ok & (lab == g)).any()}
    return out


def run(cv: bool, dry_run: bool) -> dict:
    ctx = ValidateContext(load_catalog(), str(ROOT / "tests" / "fixtures" / "model_configs"))
    rows = load_rows()
    cases, skipped = prepare_many(rows, ctx)
    by_id = {r["row_id"]: float(r["metric_value"]) for r in rows}
    measured = np.array([by_id[c.row_id] for c in cases])
    profiles, free = profiles_for(cases)
    ex = expand(cases, profiles)
    values = fit(ex, measured, profiles, free)
    pred = evaluate(ex, values)
    report = {"cases": len(cases), "skipped": len(skipped), "mdape": mdape(pred, measured),
              "by": breakdown(cases, pred, measured), "cv": {}}
    if cv:
        report["cv"] = cross_validate(cases, measured)
    fitted = tuple(ProfileRow(r.generation, r.stack, r.precision, r.phase, r.op_class, float(v), r.rows_fitted,
                              r.source, r.retrieved_on) for r, v in zip(profiles.rows, values, strict=True))
    if not dry_run:
        write(fitted)
    return report


def profiles_for(cases: list) -> tuple[Profiles, np.ndarray]:
    """The priors overlaid with the rows the fit varies for ``cases`` (``candidate_rows``), and the
    indices of the free (fitted) rows."""
    cand = candidate_rows(cases)
    keys = {(r.generation, r.stack, r.precision, r.phase, r.op_class) for r in cand}
    prior = [r for r in base_rows() if (r.generation, r.stack, r.precision, r.phase, r.op_class) not in keys]
    profiles = Profiles(tuple(prior + cand))
    free = np.array([i for i, r in enumerate(profiles.rows) if r.rows_fitted > 0 and r.op_class in FITTED])
    return profiles, free


def architecture(shape: LLMShape) -> tuple:
    """What a held-out "model" is: its architecture, not its name. DeepSeek-R1 and -V3 are one network
    (the calibration set lists runs under both names), so holding out one name while the other trains
    would let the fit see the held-out model's own measurements."""
    return (shape.num_layers, shape.hidden_size, round(shape.params_total, -8), shape.num_experts,
            shape.experts_per_token, shape.attention_heads, shape.is_mla)


def cross_validate(cases: list, measured: np.ndarray, keep_predictions: bool = False) -> dict:
    """Hold out each model (latency set) and each accelerator: fit on the rest, predict the held-out.

    Each fold rebuilds the fitted rows from its training rows (``profiles_for``): a key backed only by
    the held-out chip or model is not fitted, and the held-out rows fall back as an unseen one's would."""
    out = {}
    for label, key in (("leave-one-model-out", lambda c: architecture(c.shape)),
                       ("leave-one-accelerator-out", lambda c: c.acc.id)):
        groups = Counter(key(c) for c in cases)
        preds = np.full(len(cases), np.nan)
        for g, n in groups.items():
            if n < 50:
                continue
            test = np.array([key(c) == g for c in cases])
            train = np.flatnonzero(~test)
            tr_cases = [cases[i] for i in train]
            profiles, free = profiles_for(tr_cases)
            ex_tr = expand(tr_cases, profiles)
            v = fit(ex_tr, measured[train], profiles, free)
            ex_te = expand([c for c, t in zip(cases, test, strict=True) if t], profiles)
            preds[test] = evaluate(ex_te, v)
        held = np.isfinite(preds)
        entry: dict[str, object] = {"rows": int(held.sum()), "mdape": mdape(preds[held], measured[held]),
                                    "by": breakdown(cases, preds, measured)}
        out[label] = entry
        if keep_predictions:  # the held-out prediction of each case (nan where its group was not held out)
            entry["predictions"] = preds
    return out


def write(rows: tuple[ProfileRow, ...]) -> None:
    path = default_profiles_path()
    with path.open("w", newline="") as fh:
        w = csv.writer(fh)
        w.writerow(PROFILE_COLUMNS)
        for r in rows:
            w.writerow([r.generation, r.stack, r.precision, r.phase, r.op_class, f"{r.value:.6g}", r.unit,
                        r.rows_fitted, r.source, r.retrieved_on])


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--cv", action="store_true", help="also run the cross-validation")
    ap.add_argument("--dry-run", action="store_true", help="do not write the profiles file")
    args = ap.parse_args(argv)
    report = run(args.cv, args.dry_run)
    report["fitted_on"] = dt.date.today().isoformat()
    if not args.dry_run:
        FIT_REPORT.write_text(json.dumps(report, indent=2) + "\n")
    print(report)
    return 0


if __name__ == "__main__":
    sys.exit(main())
