"""Fit the local device's efficiency from stored bench measurements and write a catalog overlay.

Model (see :mod:`infrafit.bench.predict`): ``t = max(F / (P e_c), B / (W e_m)) + n_ops x o``.
The fit chooses ``(e_c, e_m, o)`` per (accelerator, precision) on a log-spaced grid, minimising the
MdAPE it reports (the median, robust to the odd noisy point, of each row's APE on its stored quantity:
latency on time, throughput on rate), ties broken by the median absolute log error. It minimised the
median |log error| until 2026-12-07: over a quick bench's 4 rows that is the mean of the middle two,
which accepted fits matching two points and missing the others by 5x in the direction MdAPE punishes
(a run on a busy 2-core machine reported MdAPE 64% -> 471%); fitting the reported figure cannot end
worse than the uncalibrated point it contains (e_c = e_m = 1, o = 0, up to the grid's spacing). The grid (not a gradient
method) is deliberate: the max() makes the objective piecewise, and 3 parameters x ~60 values is
cheap. Reported errors are MdAPE = median |predicted - measured| / measured, on the stored quantity.

Outputs, in a folder usable as ``--catalog-dir`` / ``INFRAFIT_CATALOG``:
``accelerators.csv`` (the local CPU as a catalog accelerator row: detected peaks, triad bandwidth)
and ``perf_profiles_bench.csv`` (the fitted efficiencies; the catalog loader leaves ``perf_profiles*``
files to the packages that own them).
"""

from __future__ import annotations

import csv
from dataclasses import dataclass
from datetime import date
from pathlib import Path
from typing import Any

import numpy as np

from infrafit.bench.predict import EFFICIENCY_COLUMNS, EFFICIENCY_FILE
from infrafit.errors import InputError

FIT_KINDS = ("inference_latency", "training_throughput")
EFF_GRID = np.geomspace(1e-3, 1.5, 60)
OVERHEAD_GRID = np.concatenate([[0.0], np.geomspace(1e-7, 1e-2, 31)])


@dataclass(frozen=True)
class FitRow:
    """A measurement reduced to what the fit needs: measured step time and its roofline inputs."""

    measured_time_s: float
    flops: float
    bytes: float
    ops: float
    peak_flops_per_s: float
    memory_bytes_per_s: float
    stored_ape: float | None
    is_throughput: bool = False


def _step_time(row: dict[str, Any]) -> float:
    if row["kind"] == "inference_latency":
        return float(row["value"])
    tokens = float(row["params"].get("batch_size") or 1) * float(row["params"].get("seq_len") or 1)
    return tokens / float(row["value"])


def fit_rows(rows: list[dict[str, Any]]) -> dict[tuple[str, str], list[FitRow]]:
    """Group usable rows by (accelerator_id, precision)."""
    groups: dict[tuple[str, str], list[FitRow]] = {}
    for row in rows:
        pred = row.get("prediction") or {}
        if row["kind"] not in FIT_KINDS or not pred.get("flops") or not row["value"]:
            continue
        key = (str(pred.get("accelerator_id")), str(pred.get("precision")))
        ape = abs(row["error"]) if row.get("error") is not None else None
        groups.setdefault(key, []).append(FitRow(_step_time(row), float(pred["flops"]), float(pred["bytes"]),
                                                 float(pred["ops"]), float(pred["peak_flops_per_s"]),
                                                 float(pred["memory_bytes_per_s"]), ape,
                                                 row["kind"] != "inference_latency"))
    return groups


def _arrays(rows: list[FitRow]) -> dict[str, np.ndarray]:
    return {f: np.array([getattr(r, f) for r in rows], dtype=float)
            for f in ("measured_time_s", "flops", "bytes", "ops", "peak_flops_per_s", "memory_bytes_per_s")}


def predicted_times(rows: list[FitRow], eff_c: Any, eff_m: Any, overhead: Any) -> np.ndarray:
    """Predicted step times; broadcasts parameter grids against rows (rows on the last axis)."""
    a = _arrays(rows)
    t_c = a["flops"] / (a["peak_flops_per_s"] * np.asarray(eff_c)[..., None])
    t_m = a["bytes"] / (a["memory_bytes_per_s"] * np.asarray(eff_m)[..., None])
    return np.maximum(t_c, t_m) + a["ops"] * np.asarray(overhead)[..., None]


def ape(rows: list[FitRow], predicted_time: np.ndarray) -> np.ndarray:
    """APE of each row on its stored quantity: latency rows on time, throughput rows on 1/time."""
    meas = _arrays(rows)["measured_time_s"]
    thr = np.array([r.is_throughput for r in rows])
    return np.where(thr, np.abs(meas / predicted_time - 1.0), np.abs(predicted_time / meas - 1.0))


def mdape(rows: list[FitRow], predicted_time: np.ndarray) -> float:
    """MdAPE on each row's stored quantity (``ape``)."""
    return float(np.median(ape(rows, predicted_time)))


def fit_efficiency(rows: list[FitRow]) -> tuple[float, float, float]:
    """Grid search for ``(eff_compute, eff_memory, op_overhead_s)`` minimising the MdAPE that calibrate and
    ``validate`` report (``ape``, on each row's stored quantity), ties broken by the median |log error|."""
    measured = _arrays(rows)["measured_time_s"]
    ec, em, oh = np.meshgrid(EFF_GRID, EFF_GRID, OVERHEAD_GRID, indexing="ij")
    pred = predicted_times(rows, ec, em, oh)
    loss = np.median(ape(rows, pred), axis=-1)
    loss = loss + 1e-9 * np.median(np.abs(np.log(pred / measured)), axis=-1)
    i = np.unravel_index(int(np.argmin(loss)), loss.shape)
    return float(ec[i]), float(em[i]), float(oh[i])


NOTHING_TO_FIT = ("no stored measurement can be used for calibration (need 3 or more model-bench rows with a "
                  "prediction on one device and precision, or load-test results imported against a plan option)")
NOTHING_TO_FIT_FIX = ("run `infrafit bench run MODEL` first, or `infrafit bench import RESULT.json --option-from "
                      "PLAN.json --rank N` (both store rows in the same --db)")


def calibrate_rows(rows: list[dict[str, Any]], required: bool = True) -> list[dict[str, Any]]:
    """Fit each (accelerator, precision) group; report MdAPE before (as stored) and after. With
    ``required`` an empty result is an error (the serving fit may supply the rows otherwise)."""
    results = []
    for (acc, precision), group in sorted(fit_rows(rows).items()):
        if len(group) < 3:
            continue
        eff_c, eff_m, overhead = fit_efficiency(group)
        after = mdape(group, predicted_times(group, eff_c, eff_m, overhead))
        stored = [r.stored_ape for r in group if r.stored_ape is not None]
        results.append({"accelerator_id": acc, "precision": precision, "rows": len(group),
                        "eff_compute": eff_c, "eff_memory": eff_m, "op_overhead_s": overhead,
                        "mdape_before": float(np.median(stored)) if stored else None, "mdape_after": after,
                        "peak_flops_per_s": group[0].peak_flops_per_s,
                        "memory_bytes_per_s": float(np.median([r.memory_bytes_per_s for r in group]))})
    if not results and required:
        raise InputError(NOTHING_TO_FIT, fix=NOTHING_TO_FIT_FIX)
    return results


def _merge_csv(path: Path, columns: tuple[str, ...], new_rows: list[dict[str, Any]], key: tuple[str, ...]) -> None:
    """Write ``new_rows`` into ``path``, replacing rows with the same key and keeping the others."""
    kept: list[dict[str, Any]] = []
    new_keys = {tuple(str(r[k]) for k in key) for r in new_rows}
    if path.exists():
        with path.open(newline="") as fh:
            kept = [r for r in csv.DictReader(fh) if tuple(r.get(k, "") for k in key) not in new_keys]
    with path.open("w", newline="") as fh:
        writer = csv.DictWriter(fh, fieldnames=list(columns), extrasaction="ignore")
        writer.writeheader()
        writer.writerows(kept + new_rows)


VENDORS = {"GenuineIntel": "Intel", "AuthenticAMD": "AMD"}
ACCELERATOR_OVERLAY_COLUMNS = (
    "id", "name", "vendor", "family", "generation", "kind", "form_factor", "peak_fp32_flops_per_s",
    "peak_bf16_flops_per_s", "memory_bytes", "memory_type", "memory_bytes_per_s", "scaleup_link",
    "scaleup_bytes_per_s", "scaleup_domain_chips", "core_count", "clock_hz", "confidence", "derived", "notes",
    "source", "retrieved_on",
)


def accelerator_row(host: dict[str, Any], fit: dict[str, Any], peaks: dict[str, float], run_ids: str) -> dict[str, Any]:
    """The local CPU as a catalog ``accelerators.csv`` row (schema of infrafit.catalog.tables.ACCELERATORS)."""
    return {
        "id": fit["accelerator_id"], "name": host.get("cpu_model", "local CPU"),
        "vendor": VENDORS.get(host.get("cpu_vendor", ""), host.get("cpu_vendor") or "unknown"),
        "family": "local-cpu", "generation": f"cpu-family-{host.get('cpu_family', 0)}", "kind": "cpu",
        "form_factor": "CPU socket (as seen by this OS)", "peak_fp32_flops_per_s": peaks.get("fp32", ""),
        "peak_bf16_flops_per_s": peaks.get("bf16", ""), "memory_bytes": host.get("memory_bytes", 0),
        "memory_type": "measured by STREAM triad", "memory_bytes_per_s": fit["memory_bytes_per_s"],
        "scaleup_link": "none", "scaleup_bytes_per_s": 0, "scaleup_domain_chips": 1,
        "core_count": host.get("physical_cores", ""), "clock_hz": host.get("clock_hz", ""),
        "confidence": "medium", "derived": True,
        "notes": "peaks = cores x clock x FLOP/cycle of the detected ISA (infrafit bench isa_flops.csv); "
                 "bandwidth = measured triad",
        "source": f"infrafit bench on {host.get('hostname', 'this host')}, runs {run_ids}",
        "retrieved_on": date.today().isoformat(),
    }


def write_overlay(out_dir: Path, fits: list[dict[str, Any]], rows: list[dict[str, Any]],
                  serving: list[dict[str, Any]] | None = None) -> list[Path]:
    """Write (merge into) ``accelerators.csv`` and ``perf_profiles_bench.csv`` in ``out_dir``, and with
    ``serving`` fits (``bench.calibrate_serving``) ``perf_profiles_llm.csv``."""
    out_dir.mkdir(parents=True, exist_ok=True)
    written = []
    if serving:
        from infrafit.bench.calibrate_serving import profile_rows
        from infrafit.perf import PROFILE_COLUMNS, PROFILE_KEYS, PROFILE_OVERLAY_FILE

        llm_path = out_dir / PROFILE_OVERLAY_FILE
        _merge_csv(llm_path, PROFILE_COLUMNS, profile_rows(serving), PROFILE_KEYS)
        written.append(llm_path)
    if not fits:
        return written
    runs = ", ".join(sorted({r["run_id"] for r in rows}))
    eff_rows: list[dict[str, Any]] = []
    acc_rows: dict[str, dict[str, Any]] = {}
    for fit in fits:
        eff_rows.append({"accelerator_id": fit["accelerator_id"], "precision": fit["precision"],
                         "eff_compute_fraction": f"{fit['eff_compute']:.4g}",
                         "eff_memory_fraction": f"{fit['eff_memory']:.4g}",
                         "op_overhead_s": f"{fit['op_overhead_s']:.4g}", "fitted_rows_count": fit["rows"],
                         "source": f"infrafit calibrate over bench runs {runs}",
                         "retrieved_on": date.today().isoformat()})
        host: dict[str, Any] = next((r["host"] for r in rows if (r.get("prediction") or {}).get("accelerator_id")
                     == fit["accelerator_id"]), {})
        if fit["accelerator_id"].startswith("local-cpu"):
            peaks = acc_rows.get(fit["accelerator_id"], {}).get("_peaks", {})
            peaks[fit["precision"]] = fit["peak_flops_per_s"]
            acc_rows[fit["accelerator_id"]] = {**accelerator_row(host, fit, peaks, runs), "_peaks": peaks}
    eff_path, acc_path = out_dir / EFFICIENCY_FILE, out_dir / "accelerators.csv"
    _merge_csv(eff_path, EFFICIENCY_COLUMNS, eff_rows, ("accelerator_id", "precision"))
    written.append(eff_path)
    if acc_rows:
        _merge_csv(acc_path, ACCELERATOR_OVERLAY_COLUMNS, list(acc_rows.values()), ("id",))
        written.append(acc_path)
    return written
