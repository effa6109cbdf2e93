"""``validate``: predict every row of a CSV in the canonical calibration schema and report errors.

Rows are dispatched by (task, workload kind) to registered predictors. LLM inference goes to
``perf.rows_llm`` (vectorized over all its rows at once); non-LLM inference and training go to
``perf.rows_nonllm.predict`` and ``perf.rows_training.predict``, imported lazily (rows are skipped
with "no model for this workload kind yet" while a module is absent). A predictor is
``predict(row: dict[str, str], ctx: ValidateContext) -> float`` in the row's ``metric_kind`` units,
raising ``SkipRow(reason)``. Nothing here ever looks at a row's measured value before predicting.
"""

from __future__ import annotations

import csv
import importlib
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np

from infrafit.errors import InputError
from infrafit.perf.types import SkipRow, ValidateContext

Predictor = Callable[[dict[str, str], ValidateContext], float]
REQUIRED_COLUMNS = ("row_id", "accelerator_id", "accelerator_count", "task", "workload", "metric_kind",
                    "metric_value")
LAZY = {"training": "infrafit.perf.validate.training", "inference": "infrafit.perf.validate.nonllm"}


def workload_kind(row: dict[str, str], ctx: ValidateContext) -> str:
    """``decoder`` for LLMs, else the model library's kind (encoder, cnn, diffusion...), or ``unknown``."""
    from infrafit.perf.validate.llm import resolve_arch
    from infrafit.perf.validate.mlperf_llm import preset

    name = row.get("workload", "").strip()
    if preset(name):
        return "decoder"
    if name.startswith("mlperf-"):
        name = name.split("/", 1)[-1]
    try:
        return str(resolve_arch(name, ctx).kind)
    except SkipRow:
        return "unknown"


def _lazy(task: str) -> Predictor | None:
    try:
        mod = importlib.import_module(LAZY[task])
    except ImportError:
        return None
    return getattr(mod, "predict", None)


def _predictor(task: str, kind: str) -> Predictor | None:
    return _lazy(task) if task in LAZY else None


def read_rows(path: str | Path) -> list[dict[str, str]]:
    """The rows of a CSV in the canonical schema; bad files raise ``InputError`` naming the file."""
    p = Path(path)
    fix = "give the path of a CSV in the canonical calibration schema"
    if p.is_dir():
        raise InputError(f"{p}: is a directory, not a CSV file", fix=fix)
    if not p.is_file():
        raise InputError(f"{p}: no such file", fix=fix)
    try:
        with p.open(newline="", encoding="utf-8-sig") as fh:  # a BOM (Excel export) is not a column name
            reader = csv.DictReader(fh)
            missing = [c for c in REQUIRED_COLUMNS if c not in (reader.fieldnames or [])]
            if missing:
                raise InputError(f"{p}: missing columns {', '.join(missing)}",
                                 fix="use the canonical schema (see docs/performance.md, 'validate')")
            return [dict(r) for r in reader]
    except UnicodeDecodeError as exc:
        raise InputError(f"{p}: not UTF-8 text (byte {exc.start}: {exc.reason})",
                         fix="save the CSV as UTF-8") from None
    except (OSError, csv.Error) as exc:
        raise InputError(f"{p}: cannot be read as CSV ({exc})", fix=fix) from None


def _measured(row: dict[str, str]) -> float | None:
    try:
        v = float(row["metric_value"])
    except (TypeError, ValueError):
        return None
    return v if v > 0 else None


def predict_rows(rows: list[dict[str, str]], ctx: ValidateContext) -> tuple[dict[str, float], list[dict[str, str]]]:
    """Predictions by row id and skipped rows with reasons."""
    from infrafit.perf.validate.llm import predict_many

    preds: dict[str, float] = {}
    skipped: list[dict[str, str]] = []
    llm_rows = []
    for row in rows:
        task = (row.get("task") or "").strip()
        kind = workload_kind(row, ctx) if task == "inference" else "*"
        if task == "inference" and kind == "decoder":
            llm_rows.append(row)
            continue
        fn = _predictor(task, kind)
        if fn is None:
            skipped.append({"row_id": row["row_id"], "reason": f"no model for this workload kind yet ({task}/{kind})"})
            continue
        try:
            preds[row["row_id"]] = float(fn(row, ctx))
        except SkipRow as exc:
            skipped.append({"row_id": row["row_id"], "reason": exc.reason})
        except Exception as exc:  # noqa: BLE001 - one bad row must not stop the report
            skipped.append({"row_id": row["row_id"], "reason": f"predictor failed: {type(exc).__name__}: {exc}"})
    llm_preds, llm_skipped = predict_many(llm_rows, ctx)
    preds.update(llm_preds)
    skipped.extend(llm_skipped)
    return preds, skipped


def _group(results: list[dict[str, Any]], rows_by_id: dict[str, dict[str, str]], column: str) -> dict[str, dict]:
    groups: dict[str, list[float]] = {}
    for r in results:
        groups.setdefault(rows_by_id[r["row_id"]].get(column) or "unknown", []).append(r["ape"])
    return {k: {"rows": len(v), "mdape": float(np.median(v))} for k, v in sorted(groups.items())}


def summarize(rows: list[dict[str, str]], preds: dict[str, float], skipped: list[dict[str, str]]) -> dict[str, Any]:
    """The DESIGN.md ``validate --json`` shape."""
    results: list[dict[str, Any]] = []
    for row in rows:
        meas = _measured(row)
        if row["row_id"] not in preds:
            continue
        if meas is None:
            skipped.append({"row_id": row["row_id"], "reason": "measured value missing or not positive"})
            continue
        p = preds[row["row_id"]]
        results.append({"row_id": row["row_id"], "metric_kind": row["metric_kind"], "measured": meas,
                        "predicted": p, "ape": abs(p - meas) / meas})
    by_id = {r["row_id"]: r for r in rows}
    apes = [r["ape"] for r in results]
    return {
        "rows": len(rows), "predicted": len(results), "skipped": skipped,
        "mdape": float(np.median(apes)) if apes else None,
        "by": {"accelerator_family": _group(results, by_id, "accelerator_family"),
               "task": _group(results, by_id, "task"), "metric_kind": _group(results, by_id, "metric_kind")},
        "results": results,
    }


def validate_rows(rows: list[dict[str, str]], model_configs_dir: str | None = None, catalog: Any = None) -> dict:
    from infrafit.catalog import load_catalog

    ctx = ValidateContext(catalog or load_catalog(), model_configs_dir)
    preds, skipped = predict_rows(rows, ctx)
    return summarize(rows, preds, skipped)


def validate_csv(path: str | Path, model_configs_dir: str | Path | None = None) -> dict[str, Any]:
    """Predict each row of ``path`` and report the errors (DESIGN.md ``validate --json`` shape)."""
    if model_configs_dir is not None and not Path(model_configs_dir).is_dir():
        raise InputError(f"--model-configs {model_configs_dir}: not a folder",
                         fix="give a folder of <org>--<name>.json Hugging Face config files")
    return validate_rows(read_rows(path), str(model_configs_dir) if model_configs_dir else None)
