"""Efficiency profile of the non-LLM models: data in ``catalog/data/perf_profiles_nonllm.csv``.

The achieved fraction of the datasheet peak is a product of physical factors only:

``eff = exp(base[op_class] + device[kind] + slope x min(0, ln(W_per_TFLOP / ref)))``

* ``base[op_class]``: what the kernels are (convolutions, transformer GEMMs, a UNet's mix of both,
  branchy tree traversal).
* ``device[kind]``: gpu (reference, 0), cpu, tpu, asic: how matrix units and compilers of that kind
  of device fill on these op classes.
* the power term: a chip whose TDP per peak TFLOP/s is below ``ref`` cannot hold its boost clock
  under a dense matrix load (H100 PCIe at 350 W vs the SXM part at 700 W for the same silicon), so
  its efficiency falls as ``(W_per_TFLOP / ref)^slope``. Chips without a published TDP get no term.

The per-step overhead ``step_overhead_s[op_class]`` (kernel launches, synchronisation, the
host round trip of one batch) makes small batches inefficient: a batch of ``b`` takes
``overhead + b x per_sample_time``, i.e. utilisation ``w / (w + w_half)`` with
``w_half = overhead x peak x eff`` of work. Every value is fitted by ``scripts/fit_profiles_nonllm.py``.
"""

from __future__ import annotations

import csv
import math
from dataclasses import dataclass, field
from functools import lru_cache
from pathlib import Path

import numpy as np

from infrafit.errors import CatalogError

PROFILE_PATH = Path(__file__).resolve().parents[2] / "catalog" / "data" / "perf_profiles_nonllm.csv"
COLUMNS = ("param", "op_class", "device_kind", "value", "unit", "source", "retrieved_on")
PARAMS = ("eff_base", "device_factor_log", "power_slope", "power_ref_w_per_tflops", "step_overhead_s",
          "memory_efficiency", "tree_cycles_per_node_visit", "tree_bytes_per_node_visit")
#: Measured, not fitted: kept as they are when the fit script rewrites the profile.
TREE_PARAMS = ("tree_cycles_per_node_visit", "tree_bytes_per_node_visit")
DEVICE_KINDS = ("gpu", "cpu", "tpu", "asic")


@dataclass(frozen=True)
class NonLLMProfile:
    """Fitted parameters; ``eff_base`` as a fraction of peak, overheads in seconds."""

    eff_base: dict[str, float]
    device_log: dict[str, float]
    power_slope: float
    power_ref_w_per_tflops: float
    step_overhead_s: dict[str, float]
    memory_efficiency: float = 0.8
    sources: dict[str, str] = field(default_factory=dict)
    #: Tree ensembles are pointer-chasing, not matrix work: a CPU core spends this many cycles per
    #: node visited; other accelerators move this many bytes of memory per node visited.
    tree_cycles_per_node_visit: float = math.nan
    tree_bytes_per_node_visit: float = math.nan

    def efficiency(self, op_class: str, kind, w_per_tflops) -> np.ndarray:
        """Achieved fraction of peak; ``kind`` and ``w_per_tflops`` may be arrays (NaN = unknown TDP)."""
        base = math.log(self.eff_base.get(op_class, self.eff_base.get("transformer", 0.3)))
        kinds = np.atleast_1d(np.asarray(kind, dtype=object))
        dev = np.array([self.device_log.get(str(k), 0.0) for k in kinds], dtype=float)
        wpt = np.atleast_1d(np.asarray(w_per_tflops, dtype=float))
        power = np.where(np.isfinite(wpt) & (wpt > 0) & (kinds == "gpu"),
                         np.minimum(0.0, np.log(np.where(wpt > 0, wpt, 1.0) / self.power_ref_w_per_tflops)), 0.0)
        return np.minimum(0.95, np.exp(base + dev + self.power_slope * power))

    def overhead_s(self, op_class: str) -> float:
        return self.step_overhead_s.get(op_class, self.step_overhead_s.get("transformer", 1e-3))


def _bad(path: Path, line: int, what: str) -> CatalogError:
    return CatalogError(what, where=f"{path}:{line}",
                        fix=f"give columns {', '.join(COLUMNS)} with a numeric value and a param among {PARAMS}")


def read_profile(path: Path = PROFILE_PATH) -> NonLLMProfile:
    """Parse and validate the profile CSV (the user's overlay may replace it)."""
    eff, dev, over, scalars, sources = {}, {}, {}, {}, {}
    with open(path, newline="") as fh:
        reader = csv.DictReader(fh)
        missing = [c for c in COLUMNS if c not in (reader.fieldnames or [])]
        if missing:
            raise _bad(path, 1, f"missing columns {missing}")
        for i, row in enumerate(reader, start=2):
            try:
                value = float(row["value"])
            except ValueError:
                raise _bad(path, i, f"value {row['value']!r} is not a number") from None
            param = row["param"]
            if param not in PARAMS or not row["source"] or not row["retrieved_on"]:
                raise _bad(path, i, f"unknown param {param!r} or empty source/retrieved_on")
            sources[f"{param}:{row['op_class']}:{row['device_kind']}"] = row["source"]
            if param == "eff_base":
                eff[row["op_class"]] = value
            elif param == "device_factor_log":
                dev[row["device_kind"]] = value
            elif param == "step_overhead_s":
                over[row["op_class"]] = value
            else:
                scalars[param] = value
    return NonLLMProfile(eff, dev, scalars.get("power_slope", 0.0), scalars.get("power_ref_w_per_tflops", 0.35),
                         over, scalars.get("memory_efficiency", 0.8), sources,
                         scalars.get("tree_cycles_per_node_visit", math.nan),
                         scalars.get("tree_bytes_per_node_visit", math.nan))


@lru_cache(maxsize=4)
def load_profile(path: str | None = None) -> NonLLMProfile:
    """The built-in profile (cached), or the one at ``path``."""
    return read_profile(Path(path) if path else PROFILE_PATH)
