"""Fit the uncertainty bands (src/infrafit/catalog/data/perf_profiles_bands.csv) from residuals.

Re-runnable: ``.venv/bin/python scripts/fit_bands.py [--dry-run]`` (``make bands``).

A band is the 10th, 50th and 90th percentile of ``measured / predicted`` over the rows of one regime:
task kind (``llm`` serving, ``nonllm`` serving, ``training``) x metric class (``ttft``, ``tpot``,
``latency``, ``throughput``, ``time_to_train``) x whether the model and the chip were in the fit:

- ``unseen`` (the model or the chip was not in the fit): the held-out predictions of the cross-validations,
  which is what a user planning a new model or chip sees. LLM: the leave-one-model-out and
  leave-one-accelerator-out folds of ``perf.fit.llm.cross_validate``, pooled. Training: leave-one-workload-out
  and leave-one-accelerator-family-out folds of the training fit. Non-LLM serving has no cross-validated fit:
  its ``unseen`` band is its in-sample band, and its source says so (likely too narrow on new models).
- ``in_fit`` (model and chip both in the calibration sets): in-sample residuals of the packaged profiles.

A regime with fewer than ``MIN_ROWS`` rows falls back to the task kind's all-metric band, then to all
task kinds. Which models and chips were in each fit is written to ``perf_profiles_members.csv``, so the
regime of a prediction is known at run time without the calibration sets. Only the project's own
calibration sets are read (``benchmarks/data/``).

Coverage is reported honestly out of sample: the LLM ``unseen`` band fitted on the leave-one-model-out
residuals is checked on the leave-one-accelerator-out residuals and the other way round.
"""

from __future__ import annotations

import argparse
import csv
import datetime as dt
import json
import sys
from collections import defaultdict
from pathlib import Path
from typing import Any

import numpy as np

from infrafit.perf.bands import BANDS_FILE, MEMBERS_FILE, metric_class

ROOT = Path(__file__).resolve().parents[4]
DATA = ROOT / "benchmarks" / "data"
OUT_DIR = Path(__file__).resolve().parents[2] / "catalog" / "data"
BAND_COLUMNS = ("task_kind", "metric", "regime", "p10_ratio", "p50_ratio", "p90_ratio", "rows_count", "source",
                "retrieved_on")
MEMBER_COLUMNS = ("task_kind", "member", "id", "rows_count", "source", "retrieved_on")
MIN_ROWS = 20


def _task_kind(row: dict[str, str], llm_ids: set[str]) -> str:
    if row["task"] in ("training", "fine-tuning"):
        return "training"
    return "llm" if row["row_id"] in llm_ids else "nonllm"


def quantiles(ratios: np.ndarray) -> tuple[float, float, float]:
    r = ratios[np.isfinite(ratios) & (ratios > 0)]
    q = np.quantile(r, [0.1, 0.5, 0.9])
    return float(q[0]), float(q[1]), float(q[2])


def coverage(ratios: np.ndarray, band: tuple[float, float, float]) -> float:
    r = ratios[np.isfinite(ratios)]
    return float(np.mean((r >= band[0]) & (r <= band[2])))


def _llm_residuals(ctx) -> tuple[dict[str, Any], set[str]]:
    """Held-out ratios per scheme and metric class, and the LLM case ids (for the task kind of rows)."""
    from infrafit.perf.fit.llm import cross_validate, load_rows
    from infrafit.perf.validate.llm import prepare_many

    rows = load_rows()
    cases, _ = prepare_many(rows, ctx)
    by_id = {r["row_id"]: float(r["metric_value"]) for r in rows}
    measured = np.array([by_id[c.row_id] for c in cases])
    cv = cross_validate(cases, measured, keep_predictions=True)
    out: dict[str, Any] = {}
    classes = np.array([metric_class(c.metric_kind) for c in cases])
    for scheme, res in cv.items():
        ratio = measured / res["predictions"]
        out[scheme] = {m: ratio[classes == m] for m in sorted(set(classes))}
    members = {"model": {c.shape.model_id for c in cases}, "accelerator": {c.acc.id for c in cases}}
    return {"cv": out, "members": members, "counts": _counts(cases)}, {c.row_id for c in cases}


def _counts(cases) -> dict[tuple[str, str], int]:
    counts: dict[tuple[str, str], int] = defaultdict(int)
    for c in cases:
        counts[("model", c.shape.model_id)] += 1
        counts[("accelerator", c.acc.id)] += 1
    return counts


def _training_cv(rows: list[dict[str, str]], ctx) -> dict[str, dict[str, np.ndarray]]:
    """Held-out ratios of the training fit per scheme (leave one workload / accelerator family out)."""
    from infrafit.perf.fit.training import Ctx, fit, make_plans
    from infrafit.perf.training.profile import TrainingProfile
    from infrafit.perf.types import SkipRow
    from infrafit.perf.validate.training import predict_with

    tctx = Ctx()
    kept, _, _ = make_plans(rows, tctx, TrainingProfile({}))
    out: dict[str, dict[str, np.ndarray]] = {}
    for scheme, key in (("leave-one-workload-out", "workload"), ("leave-one-family-out", "accelerator_family")):
        ratios: dict[str, list[float]] = defaultdict(list)
        for group in sorted({r[key] for r in kept}):
            train = [r for r in kept if r[key] != group]
            profile, _, _ = fit(train, tctx, rounds=1)
            for r in (r for r in kept if r[key] == group):
                try:
                    p = predict_with(r, tctx, profile)
                except SkipRow:
                    continue
                ratios[metric_class(r["metric_kind"])].append(float(r["metric_value"]) / p)
        out[scheme] = {m: np.array(v) for m, v in ratios.items()}
    return out


def in_sample(ctx, llm_ids: set[str]) -> tuple[dict[tuple[str, str], np.ndarray], dict[str, list[dict]]]:
    """In-sample ratios by (task kind, metric class), and the rows of each task kind (for members)."""
    from infrafit.perf.validate.run import validate_rows

    ratios: dict[tuple[str, str], list[float]] = defaultdict(list)
    by_kind: dict[str, list[dict]] = defaultdict(list)
    for name in ("calibration.csv", "latency_calibration.csv"):
        rows = [r for r in csv.DictReader((DATA / name).open()) if not r.get("exact_duplicate_of")]
        result = validate_rows(rows, str(ROOT / "tests" / "fixtures" / "model_configs"), ctx.catalog)
        row_of = {r["row_id"]: r for r in rows}
        for res in result["results"]:
            row = row_of[res["row_id"]]
            kind = _task_kind(row, llm_ids)
            ratios[(kind, metric_class(res["metric_kind"]))].append(res["measured"] / res["predicted"])
            by_kind[kind].append(row)
    return {k: np.array(v) for k, v in ratios.items()}, by_kind


def band_rows(in_fit: dict[tuple[str, str], np.ndarray], unseen: dict[tuple[str, str], np.ndarray],
              sources: dict[tuple[str, str], str]) -> list[dict[str, Any]]:
    """One row per (task kind, metric class, regime) with enough rows, plus the fall-back rows."""
    today = dt.date.today().isoformat()
    out = []
    for regime, table in (("in_fit", in_fit), ("unseen", unseen)):
        pooled_kind: dict[str, list[np.ndarray]] = defaultdict(list)
        for (kind, metric), r in sorted(table.items()):
            pooled_kind[kind].append(r)
            if len(r) >= MIN_ROWS:
                out.append(_row(kind, metric, regime, r, sources.get((kind, regime), ""), today))
        for kind, parts in sorted(pooled_kind.items()):
            out.append(_row(kind, "*", regime, np.concatenate(parts), sources.get((kind, regime), ""), today))
        out.append(_row("*", "*", regime, np.concatenate([r for r in table.values()]), "all task kinds pooled", today))
    return out


def _row(kind: str, metric: str, regime: str, r: np.ndarray, source: str, today: str) -> dict[str, Any]:
    q10, q50, q90 = quantiles(r)
    return {"task_kind": kind, "metric": metric, "regime": regime, "p10_ratio": f"{q10:.4g}",
            "p50_ratio": f"{q50:.4g}", "p90_ratio": f"{q90:.4g}", "rows_count": int(np.isfinite(r).sum()),
            "source": f"scripts/fit_bands.py: {source}", "retrieved_on": today}


def run(dry_run: bool) -> dict[str, Any]:
    from infrafit.catalog import load_catalog
    from infrafit.perf.types import ValidateContext

    ctx = ValidateContext(load_catalog(), str(ROOT / "tests" / "fixtures" / "model_configs"))
    llm, llm_ids = _llm_residuals(ctx)
    ins, rows_by_kind = in_sample(ctx, llm_ids)
    unseen: dict[tuple[str, str], np.ndarray] = {}
    for metric in {m for scheme in llm["cv"].values() for m in scheme}:
        unseen[("llm", metric)] = np.concatenate([s[metric] for s in llm["cv"].values() if metric in s])
    tcv = _training_cv(rows_by_kind["training"], ctx)
    for metric in {m for scheme in tcv.values() for m in scheme}:
        unseen[("training", metric)] = np.concatenate([s[metric] for s in tcv.values() if metric in s])
    for (kind, metric), r in ins.items():
        if kind == "nonllm":
            unseen[(kind, metric)] = r
    sources = {
        ("llm", "in_fit"): "in-sample measured/predicted of the LLM rows of benchmarks/data/calibration.csv and "
                           "latency_calibration.csv under the packaged profiles",
        ("llm", "unseen"): "held-out measured/predicted of the LLM fit's leave-one-model-out and "
                           "leave-one-accelerator-out folds (perf.fit.llm.cross_validate), pooled",
        ("training", "in_fit"): "in-sample measured/predicted of the training rows of benchmarks/data/calibration.csv",
        ("training", "unseen"): "held-out measured/predicted of the training fit's leave-one-workload-out and "
                                "leave-one-accelerator-family-out folds, pooled",
        ("nonllm", "in_fit"): "in-sample measured/predicted of the non-LLM serving rows of "
                              "benchmarks/data/calibration.csv",
        ("nonllm", "unseen"): "no cross-validated non-LLM fit yet: the in-sample band (likely too narrow on a "
                              "new model)",
    }
    bands = band_rows(ins, unseen, sources)
    cover = {}
    schemes = list(llm["cv"])
    for a, b in ((schemes[0], schemes[1]), (schemes[1], schemes[0])):
        for metric in sorted(set(llm["cv"][a]) & set(llm["cv"][b])):
            if len(llm["cv"][a][metric]) >= MIN_ROWS:
                cover[f"llm {metric}: band from {a}, checked on {b}"] = coverage(llm["cv"][b][metric],
                                                                                  quantiles(llm["cv"][a][metric]))
    members = _members(llm, rows_by_kind, ctx)
    report = {"bands": bands, "coverage": cover, "members": len(members), "fitted_on": dt.date.today().isoformat()}
    if not dry_run:
        _write(OUT_DIR / BANDS_FILE, BAND_COLUMNS, bands)
        _write(OUT_DIR / MEMBERS_FILE, MEMBER_COLUMNS, members)
        (ROOT / "benchmarks" / "bands_fit.json").write_text(json.dumps(report, indent=1) + "\n")
    return report


def _members(llm: dict[str, Any], rows_by_kind: dict[str, list[dict]], ctx) -> list[dict[str, Any]]:
    from infrafit.perf.validate.run import row_model_id

    today = dt.date.today().isoformat()
    out = []
    for member in ("model", "accelerator"):
        for mid in sorted(llm["members"][member]):
            out.append({"task_kind": "llm", "member": member, "id": mid, "rows_count": llm["counts"][(member, mid)],
                        "source": "LLM rows of benchmarks/data/calibration.csv and latency_calibration.csv",
                        "retrieved_on": today})
    for kind in ("nonllm", "training"):
        counts: dict[tuple[str, str], int] = defaultdict(int)
        for r in rows_by_kind[kind]:
            counts[("model", row_model_id(r, ctx))] += 1
            counts[("accelerator", r["accelerator_id"])] += 1
        for (member, mid), n in sorted(counts.items()):
            out.append({"task_kind": kind, "member": member, "id": mid, "rows_count": n,
                        "source": f"{kind} rows of benchmarks/data/calibration.csv", "retrieved_on": today})
    return out


def _write(path: Path, columns: tuple[str, ...], rows: list[dict[str, Any]]) -> None:
    with path.open("w", newline="") as fh:
        w = csv.DictWriter(fh, fieldnames=list(columns))
        w.writeheader()
        w.writerows(rows)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--dry-run", action="store_true", help="do not write the bands files")
    args = ap.parse_args(argv)
    report = run(args.dry_run)
    for b in report["bands"]:
        print(f"{b['task_kind']:9} {b['metric']:14} {b['regime']:7} p10 {b['p10_ratio']:>7} p50 {b['p50_ratio']:>7} "
              f"p90 {b['p90_ratio']:>7}  rows {b['rows_count']}")
    for k, v in report["coverage"].items():
        print(f"coverage {k}: {v:.1%}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
