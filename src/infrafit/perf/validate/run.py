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
import io
import math
from collections.abc import Callable, Iterable, Iterator
from pathlib import Path
from typing import Any

import numpy as np

from infrafit import safe_io
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


def row_model_id(row: dict[str, str], ctx: ValidateContext) -> str:
    """The model library id of a row's workload (an MLPerf preset's model), else the name as written."""
    from infrafit.perf.validate.llm import resolve_arch
    from infrafit.perf.validate.mlperf_llm import preset

    name = row.get("workload", "").strip()
    mp = preset(name)
    if mp is not None:
        name = mp.model
    elif name.startswith("mlperf-"):
        name = name.split("/", 1)[-1]
    try:
        return str(resolve_arch(name, ctx).id)
    except SkipRow:
        return name


def row_band(row: dict[str, str], ctx: ValidateContext, predicted: float) -> dict[str, Any]:
    """The uncertainty band (``perf.bands``) of a row's prediction: p10/p90 and its regime."""
    from infrafit.perf.bands import band, in_fit, metric_class

    task = (row.get("task") or "").strip()
    kind = "training" if task in ("training", "fine-tuning") else (
        "llm" if workload_kind(row, ctx) == "decoder" else "nonllm")
    model_ok, acc_ok = in_fit(kind, row_model_id(row, ctx), (row.get("accelerator_id") or "").strip())
    regime = "in_fit" if model_ok and acc_ok else "unseen"
    b = band(kind, metric_class(row["metric_kind"]), regime)
    return {"p10": predicted * b.p10_ratio, "p90": predicted * b.p90_ratio, "regime": regime}


def _lazy(task: str) -> Predictor | None:
    try:
        mod = importlib.import_module(LAZY[task])
    except ImportError:
        return None
    return getattr(mod, "predict", None)


def _predictor(task: str, kind: str) -> Predictor | None:
    return _lazy(task) if task in LAZY else None


def iter_rows(path: str | Path) -> Iterator[dict[str, str]]:
    """The rows of a CSV in the canonical schema; bad files raise ``InputError`` naming the file."""
    p = Path(path)
    text = safe_io.read_text_capped(p, safe_io.CSV_MAX_BYTES, "validation CSV")
    reader = csv.DictReader(io.StringIO(text, newline=""))
    missing = [c for c in REQUIRED_COLUMNS if c not in (reader.fieldnames or [])]
    if missing:
        raise InputError(f"{p}: missing columns {', '.join(missing)}",
                         fix="use the canonical schema (see docs/performance.md, 'validate')")
    count = 0
    first_line: dict[str, int] = {}
    try:
        for r in reader:
            line = reader.line_num
            if count >= MAX_ROWS:
                raise InputError(f"{p}: more than {MAX_ROWS:,} rows",
                                 fix="split the file; validate reads at most that many rows (docs/limits.md)")
            row = {k: (v if isinstance(v, str) else "") for k, v in r.items() if k is not None}
            row[LINE_KEY] = str(line)
            rid = (row.get("row_id") or "").strip()
            if rid and rid in first_line:
                raise InputError(f"{p}:{line}: row_id {rid!r} repeats the row of line {first_line[rid]}",
                                 fix="give every row its own row_id (results are keyed by it)")
            first_line.setdefault(rid, line) if rid else None
            count += 1
            yield row
    except csv.Error as exc:
        raise InputError(f"{p}:{reader.line_num}: not a readable CSV ({exc})",
                         fix=f"fix the quoting; fields are at most {safe_io.CSV_FIELD_MAX_BYTES:,} bytes") from None


def read_rows(path: str | Path) -> list[dict[str, str]]:
    """Every row of ``path`` (``iter_rows`` as a list; ``validate`` itself streams)."""
    return list(iter_rows(path))


#: Rows ``validate`` reads at most (a 1M-row file would take minutes and gigabytes).
MAX_ROWS = 200_000
#: Where each row's CSV line is kept (not a CSV column).
LINE_KEY = "_csv_line"
_COUNT_COLUMNS = ("accelerator_count", "nodes", "tp", "pp", "dp", "cp", "ep", "batch_size", "global_batch_size",
                  "micro_batch_size", "max_num_seqs", "concurrency", "engines_per_chip")
_TOKEN_COLUMNS = ("input_tokens", "output_tokens", "seq_len", "mean_output_tokens_reported")
#: Largest accelerator count or parallel degree a row may state (the biggest published systems are
#: ~100k chips; 1e30 is a typo).
MAX_COUNT = 1_000_000
#: Largest board power a row may state (a GB300 superchip module is ~2.8 kW; 10 kW is a unit slip).
MAX_BOARD_POWER_W = 10_000


def screen_row(row: dict[str, str]) -> str | None:
    """Why a row cannot be predicted honestly (named with its CSV line), or None. Counts must be whole
    and positive, token lengths non-negative, the precision known, the measurement finite and positive."""
    from infrafit.perf.validate.llm import STATISTICS
    from infrafit.units import PRECISIONS

    where = f"CSV line {row.get(LINE_KEY, '?')}"
    if not (row.get("row_id") or "").strip():
        return f"{where}: row_id is empty"
    for col in _COUNT_COLUMNS:
        text = (row.get(col) or "").strip()
        if not text:
            continue
        try:
            value = float(text)
        except ValueError:
            return f"{where}: {col} {text!r} is not a number"
        if not (math.isfinite(value) and value == int(value) and 1 <= value <= MAX_COUNT):
            return f"{where}: {col} {text!r} must be a whole number from 1 to {MAX_COUNT:,}"
    for col in _TOKEN_COLUMNS:
        text = (row.get(col) or "").strip()
        if text:
            try:
                value = float(text)
            except ValueError:
                return f"{where}: {col} {text!r} is not a number"
            if not (math.isfinite(value) and value >= 0):
                return f"{where}: {col} {text!r} must be a finite number >= 0"
    watts = (row.get("power_limit_w") or "").strip()
    if watts:
        try:
            value = float(watts)
        except ValueError:
            return f"{where}: power_limit_w {watts!r} is not a number"
        if not (math.isfinite(value) and 1 <= value <= MAX_BOARD_POWER_W):
            return (f"{where}: power_limit_w {watts!r} must be the board power in watts, "
                    f"from 1 to {MAX_BOARD_POWER_W:,}")
    stat = (row.get("metric_statistic") or "").strip().lower()
    if stat not in STATISTICS:
        return (f"{where}: metric_statistic {stat!r} must be mean, median or p50 "
                "(or empty: not stated, read as the median)")
    prec = (row.get("precision") or "").strip().lower()
    if prec and prec not in PRECISIONS and prec not in ("mixed", "unknown"):
        return f"{where}: precision {prec!r} is unknown (one of {', '.join(PRECISIONS)})"
    if _measured(row) is None:
        return f"{where}: metric_value {row.get('metric_value')!r} is missing, not finite or not positive"
    return None


def _measured(row: dict[str, str]) -> float | None:
    try:
        v = float(row["metric_value"])
    except (TypeError, ValueError):
        return None
    return v if math.isfinite(v) and v > 0 else None


def predict_rows(rows: list[dict[str, str]], ctx: ValidateContext) -> tuple[dict[str, float], list[dict[str, str]]]:
    """Predictions by row id and skipped rows with reasons."""
    from infrafit.perf.validate.llm import predict_many

    preds: dict[str, float] = {}
    skipped: list[dict[str, str]] = []
    llm_rows = []
    for row in rows:
        bad = screen_row(row)
        if bad is not None:
            skipped.append({"row_id": row.get("row_id") or f"(line {row.get(LINE_KEY)})", "reason": bad})
            continue
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


#: Rows predicted at once: LLM rows are vectorised within a chunk; memory stays bounded by one
#: chunk plus one small result per predicted row, whatever the file's length.
CHUNK_ROWS = 5_000
_GROUPS = ("accelerator_family", "task", "metric_kind")


class _Totals:
    """What ``validate`` keeps across chunks: one small result per predicted row and the skips."""

    def __init__(self, ctx: ValidateContext | None = None) -> None:
        self.ctx = ctx
        self.rows = 0
        self.results: list[dict[str, Any]] = []
        self.groups: list[tuple[str, ...]] = []
        self.skipped: list[dict[str, str]] = []

    def add(self, rows: list[dict[str, str]], preds: dict[str, float], skipped: list[dict[str, str]]) -> None:
        self.rows += len(rows)
        self.skipped += skipped
        for row in rows:
            if row["row_id"] not in preds:
                continue
            meas = _measured(row)
            if meas is None:
                self.skipped.append({"row_id": row["row_id"], "reason": "measured value missing or not positive"})
                continue
            p = preds[row["row_id"]]
            result: dict[str, Any] = {"row_id": row["row_id"], "metric_kind": row["metric_kind"], "measured": meas,
                                      "predicted": p, "ape": abs(p - meas) / meas}
            if self.ctx is not None:
                band = row_band(row, self.ctx, p)
                result["band"] = band
                result["in_band"] = band["p10"] <= meas <= band["p90"]
            self.results.append(result)
            self.groups.append(tuple(row.get(g) or "unknown" for g in _GROUPS))

    def summary(self) -> dict[str, Any]:
        apes = [r["ape"] for r in self.results]
        by: dict[str, dict[str, dict]] = {}
        for k, name in enumerate(_GROUPS):
            groups: dict[str, list[float]] = {}
            for g, ape in zip(self.groups, apes, strict=True):
                groups.setdefault(g[k], []).append(ape)
            by[name] = {key: {"rows": len(v), "mdape": float(np.median(v))} for key, v in sorted(groups.items())}
        inside = [r["in_band"] for r in self.results if "in_band" in r]
        for k, name in enumerate(_GROUPS):
            cover: dict[str, list[bool]] = {}
            for g, r in zip(self.groups, self.results, strict=True):
                if "in_band" in r:
                    cover.setdefault(g[k], []).append(r["in_band"])
            for key, v in cover.items():
                by[name][key]["band_coverage"] = float(np.mean(v))
        return {"rows": self.rows, "predicted": len(self.results), "skipped": self.skipped,
                "mdape": float(np.median(apes)) if apes else None,
                "band_coverage": float(np.mean(inside)) if inside else None, "by": by, "results": self.results}


def summarize(rows: list[dict[str, str]], preds: dict[str, float], skipped: list[dict[str, str]]) -> dict[str, Any]:
    """The DESIGN.md ``validate --json`` shape of predictions for ``rows``."""
    totals = _Totals()
    totals.add(rows, preds, skipped)
    return totals.summary()


def validate_rows(rows: Iterable[dict[str, str]], model_configs_dir: str | None = None, catalog: Any = None) -> dict:
    """Predict ``rows`` (any iterable: a file's rows are streamed) chunk by chunk and summarise."""
    from infrafit.catalog import load_catalog

    ctx = ValidateContext(catalog or load_catalog(), model_configs_dir)
    totals = _Totals(ctx)
    chunk: list[dict[str, str]] = []
    for row in rows:
        chunk.append(row)
        if len(chunk) >= CHUNK_ROWS:
            totals.add(chunk, *predict_rows(chunk, ctx))
            chunk = []
    if chunk:
        totals.add(chunk, *predict_rows(chunk, ctx))
    return totals.summary()


def validate_csv(path: str | Path, model_configs_dir: str | Path | None = None) -> dict[str, Any]:
    """Predict each row of ``path`` and report the errors (DESIGN.md ``validate --json`` shape)."""
    if model_configs_dir is not None and not Path(model_configs_dir).is_dir():
        raise InputError(f"--model-configs {model_configs_dir}: not a folder",
                         fix="give a folder of <org>--<name>.json Hugging Face config files")
    return validate_rows(iter_rows(path), str(model_configs_dir) if model_configs_dir else None)
