"""Efficiencies that ``infrafit calibrate`` fitted on real hardware, read from the catalog overlay.

``infrafit calibrate`` (``infrafit.bench.calibrate``) fits, per (accelerator, precision), the model
``t = max(F / (P e_c), B / (W e_m)) + n_ops x o`` (the roofline of Williams, Waterman & Patterson,
CACM 2009, plus a per-operator dispatch cost) to measured step times, and writes the result to
``perf_profiles_bench.csv`` in the overlay folder (``--catalog-dir`` / ``INFRAFIT_CATALOG``). The
catalog loader leaves ``perf_profiles*`` files to the performance packages, so this module reads it.

The performance models use a calibration row only for the accelerator id and executed precision it
was fitted on (keys are physical: which device, which number format); everything else keeps the
fitted profile. The per-operator overhead becomes a per-invocation overhead through the operators
one forward pass dispatches (:func:`operators_per_pass`, the same count the bench predictor uses).
"""

from __future__ import annotations

import csv
import io
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path
from typing import Any

from infrafit import safe_io
from infrafit.errors import CatalogError
from infrafit.settings import overlay_dir as active_overlay

CALIBRATION_FILE = "perf_profiles_bench.csv"
CALIBRATION_COLUMNS = ("accelerator_id", "precision", "eff_compute_fraction", "eff_memory_fraction",
                       "op_overhead_s", "fitted_rows_count", "source", "retrieved_on")
#: Operators dispatched per layer by an eager (unfused) PyTorch forward of each block kind, counted on
#: the graphs ``infrafit.bench.models`` builds: decoder (2 RMSNorms of 4 ops, q/k/v/o, rotary, SDPA,
#: 3 MLP GEMMs, SiLU, mul, 2 adds), encoder (2 LayerNorms, q/k/v/o, SDPA, 2 GEMMs, GELU, 2 adds),
#: ResNet bottleneck (3 conv + 3 BN + 3 ReLU + add + shortcut).
OPS_PER_LAYER = {"decoder": 20, "encoder": 14, "vit": 14, "speech": 14, "cnn": 11}
RESNET50_BLOCKS = 16  # He et al. 2016, Table 1: 3 + 4 + 6 + 3 bottleneck blocks


@dataclass(frozen=True)
class Calibration:
    """One fitted row: fractions of the catalog peak FLOP/s and bandwidth, seconds per operator."""

    accelerator_id: str
    precision: str
    eff_compute: float
    eff_memory: float
    op_overhead_s: float
    source: str
    retrieved_on: str


def overlay_folder(overlay_dir: str | Path | None = None) -> Path | None:
    """The overlay folder: the argument, else ``INFRAFIT_CATALOG``, else none."""
    folder = active_overlay(overlay_dir)
    return Path(folder) if folder else None


def _number(path: Path, line: int, row: dict[str, str], column: str, upper: float) -> float:
    try:
        value = float(row[column])
    except (TypeError, ValueError):
        value = float("nan")
    if not 0.0 <= value <= upper:
        raise CatalogError(f"{column} must be a number in [0, {upper:g}] (got {row.get(column)!r})",
                           where=f"{path}:{line}", fix="re-run `infrafit calibrate` or correct the value")
    return value


@lru_cache(maxsize=8)
def _read(path: str, mtime_ns: int) -> dict[tuple[str, str], Calibration]:  # noqa: ARG001 - cache key
    out: dict[tuple[str, str], Calibration] = {}
    text = safe_io.read_text_capped(path, safe_io.OVERLAY_MAX_BYTES, "calibration file")
    reader = csv.DictReader(io.StringIO(text, newline=""))
    missing = [c for c in CALIBRATION_COLUMNS if c not in (reader.fieldnames or [])]
    if missing:
        raise CatalogError(f"missing columns {', '.join(missing)}", where=f"{path}:1",
                           fix=f"give the header {','.join(CALIBRATION_COLUMNS)} "
                               "(what `infrafit calibrate` writes)")
    for line, row in enumerate(reader, start=2):
        if not row["source"] or not row["retrieved_on"]:
            raise CatalogError("empty source or retrieved_on", where=f"{path}:{line}",
                               fix="say where the row comes from and when")
        key = (row["accelerator_id"], row["precision"])
        out[key] = Calibration(*key, _number(Path(path), line, row, "eff_compute_fraction", 1.5),
                               _number(Path(path), line, row, "eff_memory_fraction", 1.5),
                               _number(Path(path), line, row, "op_overhead_s", 1.0),
                               row["source"], row["retrieved_on"])
    return out


def calibrations(overlay_dir: str | Path | None = None) -> dict[tuple[str, str], Calibration]:
    """All rows of the overlay's ``perf_profiles_bench.csv`` by (accelerator_id, precision); {} when none."""
    folder = overlay_folder(overlay_dir)
    path = folder / CALIBRATION_FILE if folder else None
    if path is None or not path.is_file():
        return {}
    return _read(str(path), path.stat().st_mtime_ns)


def calibration_for(accelerator_id: str, precision: str,
                    overlay_dir: str | Path | None = None) -> Calibration | None:
    """The calibration fitted for this accelerator at this executed precision, if any."""
    return calibrations(overlay_dir).get((accelerator_id, precision))


def operators_per_pass(model: Any) -> float:
    """Operators one forward pass of ``model`` dispatches (0 when the kind has no count here).

    Transformer kinds: ``layers x OPS_PER_LAYER`` (speech: one decoder pass, as ``passes`` counts
    decoded tokens); CNNs: ResNet-style bottleneck blocks (the model's
    ``num_layers`` when given, else ResNet-50's 16) plus the stem (conv, BN, ReLU, pool) and head
    (pool, FC). Diffusion and tabular models get 0: their per-invocation overhead stays the profile's.
    """
    kind = str(getattr(model, "kind", ""))
    if kind not in OPS_PER_LAYER:
        return 0.0
    layers = getattr(model, "num_layers", None)
    if kind == "cnn":
        return float(OPS_PER_LAYER["cnn"] * int(layers or RESNET50_BLOCKS) + 6)
    return float(OPS_PER_LAYER[kind] * int(layers or 0))
