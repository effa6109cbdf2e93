"""Predict a bench measurement on the local device: a roofline over the FLOPs and bytes actually run.

``time = max(flops / (peak x eff_compute), bytes / (bandwidth x eff_memory)) + ops x op_overhead_s``
(the roofline of Williams, Waterman & Patterson, CACM 2009, via :func:`infrafit.perf.core.roofline_time_s`,
plus a per-operator dispatch cost that dominates tiny shapes on a CPU). The local CPU's peak comes
from detection (:func:`infrafit.bench.hardware.cpu_peak_flops_per_s`), its bandwidth from the STREAM
triad. Before calibration the efficiencies are 1 (the ideal roofline) and the overhead 0; ``infrafit
calibrate`` fits them and writes ``perf_profiles_bench.csv``, which :func:`load_efficiency` reads from
the catalog overlay folder (``--catalog-dir`` / ``INFRAFIT_CATALOG``).
"""

from __future__ import annotations

import csv
import io
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from infrafit import safe_io
from infrafit.bench.hardware import HostInfo, cpu_peak_flops_per_s
from infrafit.perf import CALIBRATION_COLUMNS, CALIBRATION_FILE, OPS_PER_LAYER, roofline_time_s
from infrafit.settings import overlay_dir as active_overlay

#: The overlay file and operator counts are shared with the performance models (perf.calibrated),
#: so what calibrate fits is what estimate and plan read.
EFFICIENCY_FILE = CALIBRATION_FILE
EFFICIENCY_COLUMNS = CALIBRATION_COLUMNS


@dataclass(frozen=True)
class Efficiency:
    eff_compute: float = 1.0
    eff_memory: float = 1.0
    op_overhead_s: float = 0.0
    source: str = "uncalibrated: ideal roofline (efficiency 1, no overhead)"


@dataclass(frozen=True)
class Device:
    """The measured device as the predictor sees it."""

    accelerator_id: str
    kind: str  # "cpu" | "gpu"
    peak_flops_per_s: dict[str, float]
    memory_bytes_per_s: float
    efficiency: dict[str, Efficiency]

    def eff(self, precision: str) -> Efficiency:
        return self.efficiency.get(precision) or self.efficiency.get("*") or Efficiency()


def local_cpu_device(host: HostInfo, memory_bytes_per_s: float, threads: int | None = None,
                     overlay_dir: str | Path | None = None) -> Device:
    """The local CPU: detected peaks, measured triad bandwidth, calibrated efficiency when present."""
    peaks = {p: cpu_peak_flops_per_s(host, p, threads) for p in ("fp32", "bf16", "fp16")}
    return Device(host.accelerator_id, "cpu", peaks, memory_bytes_per_s,
                  load_efficiency(host.accelerator_id, overlay_dir))


def cuda_device(accelerator_id: str, peak_flops_per_s: dict[str, float], memory_bytes_per_s: float,
                overlay_dir: str | Path | None = None) -> Device:
    """A GPU from the catalog (peaks and HBM bandwidth from its datasheet row)."""
    return Device(accelerator_id, "gpu", dict(peak_flops_per_s), memory_bytes_per_s,
                  load_efficiency(accelerator_id, overlay_dir))


def load_efficiency(accelerator_id: str, overlay_dir: str | Path | None = None) -> dict[str, Efficiency]:
    """Calibrated efficiencies for ``accelerator_id`` from the overlay folder (empty when none)."""
    folder = active_overlay(overlay_dir)
    path = Path(folder) / EFFICIENCY_FILE if folder else None
    if path is None or not path.exists():
        return {}
    out = {}
    text = safe_io.read_text_capped(path, safe_io.OVERLAY_MAX_BYTES, "calibration file")
    for row in csv.DictReader(io.StringIO(text, newline="")):
        if row.get("accelerator_id") == accelerator_id:
            out[row["precision"]] = Efficiency(float(row["eff_compute_fraction"]),
                                               float(row["eff_memory_fraction"]),
                                               float(row["op_overhead_s"]), row["source"])
    return out


def calibrated_bandwidth(accelerator_id: str, overlay_dir: str | Path | None = None) -> float | None:
    """``memory_bytes_per_s`` of ``accelerator_id`` in the overlay's accelerators.csv (a past triad)."""
    folder = active_overlay(overlay_dir)
    path = Path(folder) / "accelerators.csv" if folder else None
    if path is None or not path.exists():
        return None
    text = safe_io.read_text_capped(path, safe_io.OVERLAY_MAX_BYTES, "catalog overlay file")
    for row in csv.DictReader(io.StringIO(text, newline="")):
        if row.get("id") == accelerator_id and row.get("memory_bytes_per_s"):
            return float(row["memory_bytes_per_s"])
    return None


def roofline_s(device: Device, precision: str, flops: Any, nbytes: Any, ops: Any,
               eff: Efficiency | None = None) -> dict[str, np.ndarray]:
    """Predicted time and its terms (array-friendly, so ``calibrate`` can evaluate many rows at once)."""
    e = eff or device.eff(precision)
    peak = device.peak_flops_per_s.get(precision) or device.peak_flops_per_s["fp32"]
    time, t_c, t_m = roofline_time_s(flops, nbytes, peak, device.memory_bytes_per_s, e.eff_compute, e.eff_memory)
    overhead = np.asarray(ops, dtype=float) * e.op_overhead_s
    return {"time_s": time + overhead, "compute_s": t_c, "memory_s": t_m, "overhead_s": overhead}


def predict_step(device: Device, precision: str, counts: dict[str, float], kind: str, layers: int,
                 passes: float = 1.0) -> dict[str, Any]:
    """Predict one forward (``passes=1``) or training step (``passes=3``) from its counts."""
    ops = OPS_PER_LAYER.get(kind, 15) * layers * passes
    terms = roofline_s(device, precision, counts["flops"], counts["bytes"], ops)
    time_s = float(terms["time_s"])
    bound = "compute" if float(terms["compute_s"]) >= float(terms["memory_s"]) else "memory"
    e = device.eff(precision)
    return {"time_s": time_s, "compute_s": float(terms["compute_s"]), "memory_s": float(terms["memory_s"]),
            "overhead_s": float(terms["overhead_s"]), "bound": bound, "flops": counts["flops"],
            "bytes": counts["bytes"], "ops": ops, "precision": precision,
            "peak_flops_per_s": device.peak_flops_per_s.get(precision) or device.peak_flops_per_s["fp32"],
            "memory_bytes_per_s": device.memory_bytes_per_s, "eff_compute": e.eff_compute,
            "eff_memory": e.eff_memory, "op_overhead_s": e.op_overhead_s, "efficiency_source": e.source,
            "accelerator_id": device.accelerator_id}
